"""`AI_ASSISTANT_REHEARSAL = True`: in any game, with no other step (no start hook, no endpoint,
no key), every assistant answers with the contrib's offline rehearsal model in process, and
status says so. The setting is read at call time. `make serve REHEARSAL=1` sets it for the demo
game."""

import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.test import override_settings

from .helpers import AssistantTestCase

ROOT = Path(__file__).resolve().parent.parent
# a game that names no endpoint, key or model: only the one setting
ONLY_THE_SETTING = dict(
    AI_ASSISTANT_REHEARSAL=True,
    AI_ASSISTANT_BASE_URL=None,
    AI_ASSISTANT_API_KEY=None,
    AI_ASSISTANT_MODEL=None,
)


class TestRehearsalMode(AssistantTestCase):
    def status(self) -> str:
        self.char1.msg.reset_mock()
        self.char1.execute_cmd("@assistant/status Aria")
        return "\n".join(self.received(self.char1))

    def test_off_by_default(self):
        assert settings.AI_ASSISTANT_REHEARSAL is False
        assert "REHEARSAL" not in self.handler.overview.model_in_use()

    def test_the_setting_alone_gives_rehearsal_replies_and_status_names_the_model(self):
        with override_settings(**ONLY_THE_SETTING):
            self.char1.execute_cmd("say Hello Aria, how are you?")
            self.tick()
            heard = " ".join(self.received(self.char2))
            assert "Aria says" in heard and "(rehearsal" in heard
            status = self.status()
            assert "offline-rehearsal, in process" in status and "REHEARSAL" in status
            assert "gpt-4o-mini" not in status
        # the scripted endpoint the test case serves was never asked
        assert self.responder.requests == []

    def test_an_assistants_own_model_and_endpoint_give_way_to_it(self):
        self.handler.set_option("model", "some-big-model")
        with override_settings(AI_ASSISTANT_REHEARSAL=True):
            self.char1.execute_cmd("say Aria, my name is Bob")
            self.tick()
            assert "(rehearsal" in " ".join(self.received(self.char2))
            status = self.status()
            (model_line,) = [line for line in status.splitlines() if "model:" in line]
            assert "offline-rehearsal" in model_line and "some-big-model" not in model_line
            assert self.server.base_url not in status
        assert self.responder.requests == []

    def test_read_at_call_time(self):
        with override_settings(AI_ASSISTANT_REHEARSAL=True):
            self.char1.execute_cmd("say Hello Aria")
            self.tick()
        assert "(rehearsal" in " ".join(self.received(self.char2))
        assert self.responder.requests == []
        # switched off: the next turn goes to the endpoint the settings name
        from ai_assistant.testing.server import tool_call, tool_reply

        self.responder.add(
            tool_reply(tool_call("say", {"text": "Hello from the model."})),
            tool_reply(tool_call("noop", {"reason": "done"})),
        )
        self.char2.msg.reset_mock()
        self.char1.execute_cmd("say Hello again, Aria")
        self.tick()
        assert len(self.responder.requests) >= 1
        heard = " ".join(self.received(self.char2))
        assert "Hello from the model." in heard and "(rehearsal" not in heard


def test_make_serve_rehearsal_sets_the_setting_for_the_demo_game():
    """The demo's settings turn the environment `make serve REHEARSAL=1` passes into the
    setting, and the demo has no start hook of its own for it."""
    code = "from django.conf import settings; print(settings.AI_ASSISTANT_REHEARSAL)"
    for value, expected in (("1", "True"), ("0", "False")):
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "server.conf.settings",
            "AI_ASSISTANT_REHEARSAL": value,
            "PYTHONPATH": f"{ROOT / 'contrib'}{os.pathsep}{ROOT}",
        }
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.stdout.strip() == expected, done.stderr
    assert not (ROOT / "world" / "rehearsal.py").exists()
    assert not (ROOT / "server" / "conf" / "at_server_startstop.py").exists()
    makefile = (ROOT / "Makefile").read_text()
    assert "AI_ASSISTANT_REHEARSAL=$(REHEARSAL)" in makefile
