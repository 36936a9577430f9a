"""
What differs between Evennia 5 and 6 (`ai_assistant.shell.compat`), checked on the installed one.
`make test` runs on Evennia 6; `make test EVENNIA=5` (and CI) on Evennia 5.

"""

import importlib.util
from importlib.metadata import version

from django.conf import settings
from evennia import settings_default
from evennia.server.amp_client import AMPClientFactory

from ai_assistant import transport
from ai_assistant.shell import compat

# the demo game's module lists, which Evennia's defaults fill and newer versions extend
MODULE_SETTINGS = (
    "LOCK_FUNC_MODULES",
    "INPUT_FUNC_MODULES",
    "FUNCPARSER_OUTGOING_MESSAGES_MODULES",
    "FILE_HELP_ENTRY_MODULES",
    "SERVER_SERVICES_PLUGIN_MODULES",
    "PORTAL_SERVICES_PLUGIN_MODULES",
)


class FakeServer:
    amp_protocol = None


def test_the_version_is_the_installed_distributions():
    numbers = compat.evennia_version()
    assert numbers[0] in (5, 6)
    assert ".".join(map(str, numbers)) == version("evennia")


def test_the_amp_probe_tells_what_evennias_own_factory_does():
    factory = AMPClientFactory(FakeServer())
    assert factory.protocol is transport.PromptAMPClientProtocol  # the demo's setting
    built = factory.buildProtocol(None)
    assert compat.amp_client_protocol_honoured() is (type(built) is factory.protocol)


def test_evennia_5_and_6_up_to_6_1_ignore_the_client_protocol_setting():
    # evennia#3980: why the demo game and the README add the ai_assistant.transport plugin
    if compat.evennia_version() <= (6, 1, 0):
        assert compat.amp_client_protocol_honoured() is False


def test_where_evennia_honours_the_setting_the_plugin_changes_nothing(monkeypatch):
    from twisted.application import internet

    monkeypatch.setattr(transport, "amp_client_protocol_honoured", lambda: True)
    server = FakeServer()
    factory = AMPClientFactory(server)
    server.amp_service = internet.TCPClient("127.0.0.1", 4006, factory)
    assert transport.use_client_protocol(server) is False
    assert "buildProtocol" not in vars(factory)  # Evennia's own method, not replaced


def test_the_demo_game_keeps_every_module_evennia_adds():
    for name in MODULE_SETTINGS:
        evennias = [m for m in getattr(settings_default, name) if not m.startswith("server.")]
        ours = list(getattr(settings, name))
        missing = [m for m in evennias if not m.startswith("world.") and m not in ours]
        assert not missing, f"{name} leaves out Evennia's {missing}"


def test_every_module_the_demo_game_names_exists():
    # a module left over from another Evennia version (or a game folder) would fail at start
    for name in MODULE_SETTINGS:
        for module in getattr(settings, name):
            assert importlib.util.find_spec(module) is not None, f"{name}: {module}"


def test_evennia_6_adds_the_typing_input_functions():
    if compat.evennia_version() >= (6, 0):
        assert "evennia.server.is_typing" in settings.INPUT_FUNC_MODULES
