"""
The portal-server link's protocols (`ai_assistant.transport`): Evennia's own, sending at once,
and the plugin that makes the server use its end.

"""

import socket

from django.conf import settings
from evennia.server.amp_client import AMPClientFactory, AMPServerClientProtocol
from evennia.server.portal.amp_server import AMPServerProtocol
from evennia.server.portal.telnet import TelnetProtocol
from evennia.utils.utils import class_from_module
from twisted.internet.protocol import Protocol

from ai_assistant.transport import (
    PromptAMPClientProtocol,
    PromptAMPServerProtocol,
    PromptTelnetProtocol,
    SendAtOnceMixin,
    start_plugin_services,
    use_client_protocol,
    write_now,
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


class FakeServer:
    """Stands in for Evennia's server service: what `use_client_protocol` looks at."""

    amp_protocol = None


def _server_with_amp_client():
    from twisted.application import internet

    server = FakeServer()
    factory = AMPClientFactory(server)
    server.amp_service = internet.TCPClient("127.0.0.1", 4006, factory)
    return server, factory


def test_the_plugin_makes_the_server_build_the_configured_client_protocol():
    server, factory = _server_with_amp_client()
    assert factory.protocol is PromptAMPClientProtocol  # resolved from the setting by Evennia

    start_plugin_services(server)
    first = factory.buildProtocol(None)
    again = factory.buildProtocol(None)  # after the portal reconnects

    assert type(first) is PromptAMPClientProtocol
    assert type(again) is PromptAMPClientProtocol and again is not first
    assert server.amp_protocol is again and again.factory is factory


def test_without_an_amp_client_the_plugin_changes_nothing():
    server = FakeServer()
    assert use_client_protocol(server) is False
    assert server.amp_protocol is None


def _socket_pair():
    from twisted.internet.tcp import Connection

    ours, theirs = socket.socketpair()
    theirs.settimeout(0)
    connection = Connection(ours, Protocol())
    connection.connected = True
    return connection, ours, theirs


def _received(sock) -> bytes:
    try:
        return sock.recv(1024)
    except BlockingIOError:
        return b""


def test_write_now_sends_what_twisted_would_hold_until_the_next_poll():
    connection, ours, theirs = _socket_pair()
    try:
        connection.write(b"answer")
        assert _received(theirs) == b""  # Twisted buffers until the reactor polls

        write_now(connection)

        assert _received(theirs) == b"answer"
    finally:
        connection.stopWriting()
        ours.close()
        theirs.close()


def test_write_now_leaves_a_closing_or_unconnected_transport_alone():
    connection, ours, theirs = _socket_pair()
    try:
        connection.write(b"last words")
        connection.disconnecting = True
        write_now(connection)
        assert _received(theirs) == b""  # the reactor finishes a closing connection
        write_now(object())  # not a Twisted connection: nothing to do, no error
    finally:
        connection.stopWriting()
        ours.close()
        theirs.close()


def test_the_servers_output_to_the_portal_is_sent_as_it_is_written(monkeypatch):
    connection, ours, theirs = _socket_pair()

    def base_send(self, command, sessid, **kwargs):
        self.transport.write(f"{command}:{sessid}:{kwargs['text']}".encode())
        return "deferred"

    monkeypatch.setattr(AMPServerClientProtocol, "data_to_portal", base_send)
    protocol = PromptAMPClientProtocol()
    protocol.transport = connection
    try:
        assert protocol.data_to_portal("MsgServer2Portal", 7, text="You say, hi") == "deferred"
        assert _received(theirs) == b"MsgServer2Portal:7:You say, hi"
    finally:
        connection.stopWriting()
        ours.close()
        theirs.close()
