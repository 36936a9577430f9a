"""
Prompt connections for Evennia's portal and server (optional, recommended with busy assistants).

Evennia's portal and server talk over AMP, a TCP connection on the same machine. A player's
command crosses it to the server, and the server's answer crosses it back. Two delays sit on
that path when assistants keep the server busy:

- Nagle's algorithm: a small write waits until the previous one is acknowledged, and the other
  side delays its acknowledgement (up to 40 ms on Linux). The portal's telnet connections to
  players have the same delay on the way out. `SendAtOnceMixin` sets `TCP_NODELAY`.
- Twisted sends what the server writes when its reactor next polls for I/O, after the timed calls
  that are due, and assistants' turn steps are such calls: an answer would wait out a step
  before it leaves. `PromptAMPClientProtocol` hands each write to the socket as it is made.

Use it in `server/conf/settings.py`:

```python
AMP_SERVER_PROTOCOL_CLASS = "ai_assistant.transport.PromptAMPServerProtocol"  # the portal's end
AMP_CLIENT_PROTOCOL_CLASS = "ai_assistant.transport.PromptAMPClientProtocol"  # the server's end
TELNET_PROTOCOL_CLASS = "ai_assistant.transport.PromptTelnetProtocol"  # players' connections
# Evennia 5 and 6 (up to 6.1 at least) resolve AMP_CLIENT_PROTOCOL_CLASS but build their own
# class regardless (evennia#3980); this plugin makes the server build the class the setting
# names (on an Evennia that does so itself, it does nothing):
SERVER_SERVICES_PLUGIN_MODULES = [*SERVER_SERVICES_PLUGIN_MODULES, "ai_assistant.transport"]
```

The classes are Evennia's own protocols with these two changes; nothing else differs. A game
with its own telnet protocol class mixes `SendAtOnceMixin` into it instead. `make bench`
(benchmark 1) measures the effect: see docs/performance.md.

"""

from evennia.server.amp_client import AMPClientFactory, AMPServerClientProtocol
from evennia.server.portal.amp_server import AMPServerProtocol
from evennia.server.portal.telnet import TelnetProtocol
from evennia.utils import logger

from .shell.compat import amp_client_protocol_honoured, evennia_version


class SendAtOnceMixin:
    """Turns off Nagle's algorithm on the protocol's TCP connection as it is made."""

    def makeConnection(self, transport):
        """Turn on TCP_NODELAY when the transport has it, then connect as usual.

        Args:
            transport (ITransport): The connection's transport.

        """
        set_no_delay = getattr(transport, "setTcpNoDelay", None)
        if set_no_delay is not None:  # a TCP transport (not a pipe or a test's fake)
            set_no_delay(True)
        super().makeConnection(transport)


class PromptAMPServerProtocol(SendAtOnceMixin, AMPServerProtocol):
    """The portal's end of the portal-server link, sending without delay."""


def write_now(transport) -> None:
    """Hand what `transport` holds to the socket now, not when the reactor next polls.

    Twisted keeps a connection's writes in a buffer until its next poll for I/O, and the reactor
    runs its due timed calls before that poll. On a server whose timed calls include assistants'
    turn steps, a command's answer would wait out one such step before leaving.

    Args:
        transport (ITransport): The connection's transport; nothing is done unless it is
            connected and can write.

    """
    do_write = getattr(transport, "doWrite", None)
    if do_write is None or not getattr(transport, "connected", False):
        return
    if transport.disconnecting:
        return  # the reactor finishes a closing connection itself (doWrite's return value)
    # on a socket error doWrite stays registered and the reactor's next poll reports it
    do_write()


class PromptAMPClientProtocol(SendAtOnceMixin, AMPServerClientProtocol):
    """The server's end of the portal-server link. It sends without delay, and what the server
    sends to the portal (players' output) leaves as it is written."""

    def data_to_portal(self, command, sessid, **kwargs):
        """Send data to the portal, then write it to the socket at once.

        Args:
            command (Command): The AMP command to send.
            sessid (int): The session it is for.
            **kwargs: The data to send.

        Returns:
            Deferred: What the parent's `data_to_portal` returns.

        """
        sent = super().data_to_portal(command, sessid, **kwargs)
        write_now(self.transport)
        return sent


class PromptTelnetProtocol(SendAtOnceMixin, TelnetProtocol):
    """Evennia's telnet protocol for players, sending without delay (as MUD servers usually do):
    a command's answer does not wait on the player's acknowledgement of the previous line."""


def start_plugin_services(server):
    """Evennia's server-plugin hook (`SERVER_SERVICES_PLUGIN_MODULES`): see `use_client_protocol`.

    Args:
        server (EvenniaServerService): The server service.

    """
    use_client_protocol(server)


def use_client_protocol(server) -> bool:
    """Make the server's AMP connection use the `AMP_CLIENT_PROTOCOL_CLASS` setting.

    Evennia's `AMPClientFactory` resolves the setting into `factory.protocol` and then builds
    `AMPServerClientProtocol` by name (evennia#3980, in 5.0.1 and 6.1.0 alike). Called before the
    server connects to the portal (a services plugin is), this builds the resolved class
    instead, on every connection. On an Evennia that builds it itself, nothing is changed.

    Args:
        server (EvenniaServerService): The server service, whose `amp_service` connects.

    Returns:
        bool: True when the factory was found and changed.

    """
    if amp_client_protocol_honoured():
        return False
    client = getattr(server, "amp_service", None)
    factory = next(
        (arg for arg in getattr(client, "args", ()) if isinstance(arg, AMPClientFactory)), None
    )
    if factory is None:
        logger.log_warn("ai_assistant.transport: no AMP client factory found; nothing changed")
        return False

    def build_protocol(addr):
        factory.resetDelay()
        protocol = factory.protocol()
        protocol.factory = factory
        factory.server.amp_protocol = protocol
        return protocol

    factory.buildProtocol = build_protocol
    version = ".".join(map(str, evennia_version()))
    logger.log_info(
        f"ai_assistant.transport: Evennia {version} ignores AMP_CLIENT_PROTOCOL_CLASS "
        f"(evennia#3980); the server's end of the portal link is {factory.protocol.__name__}"
    )
    return True
