"""
The portal-server link's protocols (`ai_assistant.transport`): Evennia's own, sending at once.

"""

import socket

from django.conf import settings
from evennia.server.amp_client import AMPServerClientProtocol
from evennia.server.portal.amp_server import AMPServerProtocol
from evennia.server.portal.telnet import TelnetProtocol
from evennia.utils.utils import class_from_module
from twisted.internet.protocol import Protocol

from ai_assistant.transport import (
    PromptAMPClientProtocol,
    PromptAMPServerProtocol,
    PromptTelnetProtocol,
    SendAtOnceMixin,
)


class RecordingTransport:
    def __init__(self):
        self.no_delay = None

    def setTcpNoDelay(self, enabled):
        self.no_delay = enabled


class Plain(SendAtOnceMixin, Protocol):
    made = False

    def connectionMade(self):
        self.made = True


def test_connecting_turns_off_nagle_then_connects_as_before():
    transport = RecordingTransport()
    protocol = Plain()
    protocol.makeConnection(transport)
    assert transport.no_delay is True
    assert protocol.made and protocol.transport is transport


def test_a_transport_without_tcp_options_still_connects():
    protocol = Plain()
    protocol.makeConnection(object())
    assert protocol.made


def test_a_real_tcp_connection_gets_tcp_nodelay():
    from twisted.internet.tcp import Connection

    sock = socket.socket()
    try:
        connection = Connection(sock, None)
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
        Plain().makeConnection(connection)
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        sock.close()


def test_the_protocols_are_evennias_own_and_the_demo_game_uses_them():
    # tests.settings is the demo game's settings
    assert issubclass(PromptAMPServerProtocol, AMPServerProtocol)
    assert issubclass(PromptAMPClientProtocol, AMPServerClientProtocol)
    assert class_from_module(settings.AMP_SERVER_PROTOCOL_CLASS) is PromptAMPServerProtocol
    assert class_from_module(settings.AMP_CLIENT_PROTOCOL_CLASS) is PromptAMPClientProtocol
    assert issubclass(PromptTelnetProtocol, TelnetProtocol)
    assert class_from_module(settings.TELNET_PROTOCOL_CLASS) is PromptTelnetProtocol
