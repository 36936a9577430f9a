"""
Prompt connections for Evennia's portal and server (optional, recommended with busy assistants).

Evennia's portal and server talk over AMP, a TCP connection on the same machine. By default TCP
uses Nagle's algorithm: a small write waits until the previous one is acknowledged, and the other
side delays its acknowledgement (up to 40 ms on Linux) when it has nothing of its own to send.
A player's command crosses that link as a small write, so it can wait out that delay. The busier
the server (assistants speaking, turns resuming between commands), the more often a command lands
in the window: `make bench` measured a p99 command round trip of about 35 ms with 100 busy
assistants against 6 ms with none, and about 11 ms once the link sends at once. The portal's
telnet connections to players have the same delay on the way out.

Use it in `server/conf/settings.py`:

```python
AMP_SERVER_PROTOCOL_CLASS = "ai_assistant.transport.PromptAMPServerProtocol"  # the portal's end
AMP_CLIENT_PROTOCOL_CLASS = "ai_assistant.transport.PromptAMPClientProtocol"  # the server's end
TELNET_PROTOCOL_CLASS = "ai_assistant.transport.PromptTelnetProtocol"  # players' connections
```

The classes are Evennia's own protocols with `TCP_NODELAY` set when a connection is made (the
server's link is made again after each reload). Nothing else changes. The portal's end of the
link matters most: it carries players' commands to the server. A game with its own telnet
protocol class mixes `SendAtOnceMixin` into it instead.

"""

from evennia.server.amp_client import AMPServerClientProtocol
from evennia.server.portal.amp_server import AMPServerProtocol
from evennia.server.portal.telnet import TelnetProtocol


class SendAtOnceMixin:
    """Turns off Nagle's algorithm on the protocol's TCP connection as it is made."""

    def makeConnection(self, transport):
        set_no_delay = getattr(transport, "setTcpNoDelay", None)
        if set_no_delay is not None:  # a TCP transport (not a pipe or a test's fake)
            set_no_delay(True)
        super().makeConnection(transport)


class PromptAMPServerProtocol(SendAtOnceMixin, AMPServerProtocol):
    """The portal's end of the portal-server link, sending without delay."""


class PromptAMPClientProtocol(SendAtOnceMixin, AMPServerClientProtocol):
    """The server's end of the portal-server link, sending without delay."""


class PromptTelnetProtocol(SendAtOnceMixin, TelnetProtocol):
    """Evennia's telnet protocol for players, sending without delay (as MUD servers usually do):
    a command's answer does not wait on the player's acknowledgement of the previous line."""
