"""`make serve REHEARSAL=1`: the demo game's start hook serves the offline rehearsal model in the
server's process, the assistants answer with it, and status says so."""

from django.conf import settings
from django.test import override_settings

from server.conf import at_server_startstop

from .helpers import AssistantTestCase


class TestRehearsalMode(AssistantTestCase):
    def test_off_by_default_and_nothing_starts(self):
        from world import rehearsal

        assert settings.AI_ASSISTANT_REHEARSAL is False
        at_server_startstop.at_server_start()
        assert rehearsal._running == []
        assert "REHEARSAL" not in self.handler.overview.model_in_use()

    @override_settings(AI_ASSISTANT_REHEARSAL=True)
    def test_the_start_hook_serves_the_rehearsal_model_and_status_says_so(self):
        from world import rehearsal

        at_server_startstop.at_server_start()
        self.addCleanup(at_server_startstop.at_server_stop)
        assert len(rehearsal._running) == 1
        assert settings.AI_ASSISTANT_BASE_URL == rehearsal._running[0].base_url
        self.char1.execute_cmd("say Hello Aria, how are you?")
        self.tick()
        heard = " ".join(self.received(self.char2))
        assert "Aria says" in heard and "(rehearsal" in heard
        self.char1.msg.reset_mock()
        self.char1.execute_cmd("@assistant/status Aria")
        status = "\n".join(self.received(self.char1))
        assert "offline-rehearsal at http://127.0.0.1:" in status and "REHEARSAL" in status
        at_server_startstop.at_server_stop()
        assert rehearsal._running == []
