"""
Settings of the demo game that ships with evennia-ai-assistant.

Only what differs from Evennia's defaults is here. The database is SQLite (server/evennia.db3).
For a real game, see docs/operations.md (PostgreSQL, providers, costs).

"""

from evennia.settings_default import *  # noqa: F401,F403

SERVERNAME = "AI Assistant Demo"

# the demo has no web customisations of its own
# Evennia's website plus the assistant dashboard at /assistants/
ROOT_URLCONF = "server.conf.urls"
# the website's menu links builders to the dashboard on every page (README, Dashboard)
from ai_assistant.web.menu import add_menu_link  # noqa: E402

add_menu_link(TEMPLATES)  # noqa: F405

# the demo ships only the server/conf modules it changes; the rest are Evennia's own. Derived
# from Evennia's defaults rather than spelled out, because they differ between versions
# (Evennia 6 adds evennia.server.is_typing to INPUT_FUNC_MODULES).


def _evennias_own(modules):
    """Evennia's default modules, without those a game folder would hold."""
    return type(modules)(path for path in modules if not path.startswith(("server.", "world.")))


LOCK_FUNC_MODULES = _evennias_own(LOCK_FUNC_MODULES)  # noqa: F405
INPUT_FUNC_MODULES = _evennias_own(INPUT_FUNC_MODULES)  # noqa: F405
FUNCPARSER_OUTGOING_MESSAGES_MODULES = _evennias_own(
    FUNCPARSER_OUTGOING_MESSAGES_MODULES  # noqa: F405
)
FILE_HELP_ENTRY_MODULES = _evennias_own(FILE_HELP_ENTRY_MODULES)  # noqa: F405
PORTAL_SERVICES_PLUGIN_MODULES = _evennias_own(PORTAL_SERVICES_PLUGIN_MODULES)  # noqa: F405
# ai_assistant.transport: the server's end of the portal link uses AMP_CLIENT_PROTOCOL_CLASS
SERVER_SERVICES_PLUGIN_MODULES = [
    *_evennias_own(SERVER_SERVICES_PLUGIN_MODULES),  # noqa: F405
    "ai_assistant.transport",
    # Evennia 6 loses its SQLITE3_PRAGMAS on the connection it starts with; this restores them
    "ai_assistant.sqlite_pragmas",
]

# The database is SQLite (server/evennia.db3). AI_ASSISTANT_DEMO_DATABASE_URL points the demo at
# another one, e.g. postgres://evennia:secret@127.0.0.1:5432/evennia (`make bench-postgres`
# does, with a throwaway server; docs/operations.md). A real game sets DATABASES itself.
if os.environ.get("AI_ASSISTANT_DEMO_DATABASE_URL"):  # noqa: F405
    import dj_database_url

    DATABASES = {
        "default": dj_database_url.parse(os.environ["AI_ASSISTANT_DEMO_DATABASE_URL"])  # noqa: F405
    }

# `make serve PORT=4100` moves every port the game opens, from one base: telnet 4100, web 4101,
# the webclient's websocket 4102, the portal-server link (AMP) 4103, the internal web port 4104
# (and SSL 4105, SSH 4106, when a game turns them on). `make serve TELNET_PORT=5000 WEB_PORT=5001`
# moves those two (after PORT). Unset: Evennia's defaults (4000-4006). `make serve` checks that
# every port is free and prints them (world/serve_ports.py)


def _port_from_env(name, room=0):
    """A port number from the environment, or None when unset; a bad one stops the start.
    `room`: how many ports above it must exist too."""
    value = os.environ.get(name, "").strip()  # noqa: F405
    if not value:
        return None
    if not value.isdigit() or not 1 <= int(value) <= 65535 - room:
        raise ValueError(f"{name} must be a port number from 1 to {65535 - room}, not {value!r}")
    return int(value)


_BASE_PORT = _port_from_env("AI_ASSISTANT_DEMO_PORT", room=6)
if _BASE_PORT:
    TELNET_PORTS = [_BASE_PORT]
    # (the port browsers use, the internal one Evennia proxies it to)
    WEBSERVER_PORTS = [(_BASE_PORT + 1, _BASE_PORT + 4)]
    WEBSOCKET_CLIENT_PORT = _BASE_PORT + 2
    AMP_PORT = _BASE_PORT + 3
    SSL_PORTS = [_BASE_PORT + 5]
    SSH_PORTS = [_BASE_PORT + 6]
if _port_from_env("AI_ASSISTANT_DEMO_TELNET_PORT"):
    TELNET_PORTS = [_port_from_env("AI_ASSISTANT_DEMO_TELNET_PORT")]
if _port_from_env("AI_ASSISTANT_DEMO_WEB_PORT"):
    WEBSERVER_PORTS = [
        (_port_from_env("AI_ASSISTANT_DEMO_WEB_PORT"), WEBSERVER_PORTS[0][1])  # noqa: F405
    ]

# the demo customises only characters and rooms (typeclasses/); the rest are Evennia's own
BASE_ACCOUNT_TYPECLASS = "evennia.accounts.accounts.DefaultAccount"
BASE_OBJECT_TYPECLASS = "evennia.objects.objects.DefaultObject"
BASE_EXIT_TYPECLASS = "evennia.objects.objects.DefaultExit"
BASE_CHANNEL_TYPECLASS = "evennia.comms.comms.DefaultChannel"
BASE_SCRIPT_TYPECLASS = "evennia.scripts.scripts.DefaultScript"

# ---- the AI assistant contrib ----
# Where the model lives. Unset values fall back to the openai SDK's environment variables
# (OPENAI_BASE_URL, OPENAI_API_KEY). Keep the key out of this file: secret_settings.py or env.
AI_ASSISTANT_BASE_URL = os.environ.get("AI_ASSISTANT_BASE_URL") or None  # noqa: F405
AI_ASSISTANT_API_KEY = os.environ.get("AI_ASSISTANT_API_KEY") or None  # noqa: F405
AI_ASSISTANT_MODEL = os.environ.get("AI_ASSISTANT_MODEL") or None  # noqa: F405
# Embeddings for recall (optional), from the chat endpoint or from a server of their own
AI_ASSISTANT_EMBEDDING_MODEL = os.environ.get("AI_ASSISTANT_EMBEDDING_MODEL") or None  # noqa: F405
AI_ASSISTANT_EMBEDDING_BASE_URL = (
    os.environ.get("AI_ASSISTANT_EMBEDDING_BASE_URL") or None  # noqa: F405
)
AI_ASSISTANT_EMBEDDING_API_KEY = (
    os.environ.get("AI_ASSISTANT_EMBEDDING_API_KEY") or None
)  # noqa: F405
# Rehearsal mode (`make serve REHEARSAL=1`): the contrib's offline rehearsal model answers in the
# server's process instead of a real one. For trying the game without a key; any game may set it.
AI_ASSISTANT_REHEARSAL = os.environ.get("AI_ASSISTANT_REHEARSAL") == "1"  # noqa: F405
# Game-wide overrides of per-assistant defaults (see docs/configuration.md), e.g.
# AI_ASSISTANT_DEFAULTS = {"tick_rate": 5, "max_react_iterations": 4}
AI_ASSISTANT_DEFAULTS = {}
# A model on a CPU may need a minute or more for one reply: the demo and `make serve` take the
# request timeout (seconds) and the retries from the environment, as they take the URL and model
for _name, _key in (
    ("AI_ASSISTANT_REQUEST_TIMEOUT", "request_timeout"),
    ("AI_ASSISTANT_MAX_RETRIES", "max_retries"),
):
    if os.environ.get(_name):  # noqa: F405
        # checked like any setting: a bad value is shown in @assistant/status
        AI_ASSISTANT_DEFAULTS[_key] = os.environ[_name]  # noqa: F405
# The portal-server link and players' telnet connections send at once (no Nagle delay, and the
# server's writes leave as they are made): player commands stay prompt while assistants keep
# the server busy (ai_assistant/transport.py, docs/operations.md). The server's end needs the
# ai_assistant.transport services plugin above (Evennia 5 and 6 ignore the client class setting).
AMP_SERVER_PROTOCOL_CLASS = "ai_assistant.transport.PromptAMPServerProtocol"
AMP_CLIENT_PROTOCOL_CLASS = "ai_assistant.transport.PromptAMPClientProtocol"
TELNET_PROTOCOL_CLASS = "ai_assistant.transport.PromptTelnetProtocol"

try:
    from server.conf.secret_settings import *  # noqa: F401,F403
except ImportError:
    pass
