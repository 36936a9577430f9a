"""
The ports `make serve` checks and tells players to connect to: those the game's settings end
with (`TELNET_PORTS`, `WEBSERVER_PORTS`, `WEBSOCKET_CLIENT_PORT`, `AMP_PORT`, `SSL_PORTS` and
`SSH_PORTS` when on, after `make serve PORT=...`, `TELNET_PORT=... WEB_PORT=...` and any
secret_settings.py), never a fixed 4000/4001.

    python -m world.serve_ports          # with DJANGO_SETTINGS_MODULE=server.conf.settings
    python -m world.serve_ports --check  # before the start

It prints where to connect. With `--check` it exits with status 2 and the reason when two of
the game's ports are the same, or when another program (another game) holds one of them:
Evennia would fail on that port, or half start beside the other game.

"""

import os
import socket
import sys


def player_ports(settings) -> dict:
    """The ports players and builders use, from the game's settings.

    Args:
        settings: Django's settings (or anything with the same attributes).

    Returns:
        dict: "telnet" (list of ports, empty when telnet is off), "web" (the browser's port, or
            None when the website is off) and "in_use" (every port the game listens on, with
            what it is for).

    """
    telnet = list(settings.TELNET_PORTS) if getattr(settings, "TELNET_ENABLED", True) else []
    web_enabled = getattr(settings, "WEBSERVER_ENABLED", True) and settings.WEBSERVER_PORTS
    web = settings.WEBSERVER_PORTS[0][0] if web_enabled else None
    in_use = [(port, "telnet") for port in telnet]
    if getattr(settings, "SSL_ENABLED", False):
        in_use += [(port, "telnet (SSL)") for port in settings.SSL_PORTS]
    if getattr(settings, "SSH_ENABLED", False):
        in_use += [(port, "SSH") for port in settings.SSH_PORTS]
    if web_enabled:
        for external, internal in settings.WEBSERVER_PORTS:
            in_use += [(external, "web"), (internal, "web (internal)")]
        if getattr(settings, "WEBSOCKET_CLIENT_ENABLED", True):
            in_use.append((settings.WEBSOCKET_CLIENT_PORT, "webclient websocket"))
    in_use.append((settings.AMP_PORT, "portal-server link (AMP)"))
    return {"telnet": telnet, "web": web, "in_use": in_use}


def clashes(in_use: list) -> list[str]:
    """Ports the game would open twice.

    Args:
        in_use (list): (port, what) pairs.

    Returns:
        list: One line per port used for two things.

    """
    seen: dict[int, str] = {}
    lines = []
    for port, what in in_use:
        if port in seen:
            lines.append(f"port {port} is both the {seen[port]} and the {what} port")
        seen.setdefault(port, what)
    return lines


def taken(in_use: list) -> list[str]:
    """Ports another program listens on already (on any address), so the game cannot.

    Each is bound for a moment the way Evennia's server binds it (`SO_REUSEADDR`, so a port
    a game stopped a moment ago still counts as free) and let go at once.

    Args:
        in_use (list): (port, what) pairs.

    Returns:
        list: One line per port that is taken.

    """
    lines = []
    for port, what in in_use:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("0.0.0.0", port))
            except OSError as err:
                lines.append(f"port {port} (the {what} port) is taken: {err.strerror}")
    return lines


def connect_lines(ports: dict) -> list[str]:
    """What `make serve` prints: where to connect with a MUD client and with a browser.

    Args:
        ports (dict): See `player_ports`.

    Returns:
        list: Lines of text.

    """
    lines = []
    if ports["telnet"]:
        where = " or ".join(f"localhost:{port}" for port in ports["telnet"])
        lines.append(f"Connect with a MUD client to {where}")
    if ports["web"] is not None:
        lines.append(f"Open the website in a browser at http://localhost:{ports['web']}/")
        lines.append(
            f"Builders see the assistant dashboard at http://localhost:{ports['web']}/assistants/"
        )
    if not lines:
        lines.append("Telnet and the website are both off in the game's settings.")
    shown = {*ports["telnet"], ports["web"]}
    others = [f"{port} ({what})" for port, what in ports["in_use"] if port not in shown]
    if others:
        lines.append(f"The game's other ports: {', '.join(others)}")
    return lines


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "server.conf.settings")
    from django.conf import settings

    try:
        ports = player_ports(settings)
    except ValueError as err:  # a bad PORT, TELNET_PORT or WEB_PORT, from the settings
        print(f"Not started: {err}", file=sys.stderr)
        return 2
    if "--check" in sys.argv[1:]:
        problems = clashes(ports["in_use"]) or taken(ports["in_use"])
        for line in problems:
            print(f"Not started: {line}. Choose other ports (make serve PORT=<base>).")
        return 2 if problems else 0
    print("\n".join(connect_lines(ports)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
