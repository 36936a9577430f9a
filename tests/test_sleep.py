"""
Sleep in a real (test) Evennia world: transitions swap the ticker, every wake path, room lines,
consolidation over HTTP with structured outputs, and the builder switches.

"""

import json
from datetime import timedelta

from evennia.scripts.tickerhandler import TICKER_HANDLER
from evennia.utils.test_resources import EvenniaCommandTest

from ai_assistant.testing.server import text_reply, tool_call, tool_reply

from .helpers import SleepTestCase


def commands():
    from ai_assistant import commands

    return commands


def json_reply(data: dict):
    return text_reply(json.dumps(data))


class TestTransitions(SleepTestCase):
    def test_go_to_sleep_tool_swaps_ticker_and_tells_room(self):
        self.responder.add(
            tool_reply(tool_call("go_to_sleep", {"reason": "tired", "depth": "deep"}))
        )
        self.char1.execute_cmd("say Aria, you look tired, go rest.")
        self.tick()
        assert self.mode() == "sleep" and self.script.db.sleep_phase == "dreaming"
        (key,) = self.our_tickers()
        assert key[3] == 60
        assert self.script.db.ticker_subscription["interval"] == 60
        assert "Aria settles down and closes their eyes." in self.received(self.char2)
        assert self.script.db.mode_transition_reason == "tired"
        assert self.script.db.last_mode_transition

    def test_wake_swaps_back_and_sets_cooldown(self):
        self.builder_sleep()
        self.handler.brain.lifecycle.wake_up(self.clock.now(), "morning")
        (key,) = self.our_tickers()
        assert key[3] == 5 and self.mode() == "awake"
        assert "Aria stirs and opens their eyes." in self.received(self.char2)
        assert self.handler.status().cooldown_minutes_left == 60

    def test_reload_while_asleep_keeps_one_ticker_at_sleep_rate(self):
        self.builder_sleep()
        TICKER_HANDLER.save()
        TICKER_HANDLER.ticker_storage = {}
        TICKER_HANDLER.restore(server_reload=True)
        self.script.at_server_start()
        (key,) = self.our_tickers()
        assert key[3] == 60

    def test_announcements_configurable_and_off(self):
        self.script.db.config_overrides = {**self.overrides, "sleep_announcement": "{name} dozes."}
        self.builder_sleep()
        assert "Aria dozes." in self.received(self.char2)
        self.script.db.config_overrides = {**self.overrides, "wake_announcement": None}
        self.handler.brain.lifecycle.wake_up(self.clock.now(), "x")
        assert not any("opens their eyes" in text for text in self.received(self.char2))


class TestWakePaths(SleepTestCase):
    def test_scheduled_wake(self):
        self.builder_sleep(hours=1)
        self.tick(advance=60)
        assert self.mode() == "sleep"
        self.tick(advance=3600)
        assert self.mode() == "awake"
        assert self.script.db.mode_transition_reason == "Scheduled wake time reached"

    def test_urgent_event_wakes_light_sleeper_and_is_handled_after(self):
        self.builder_sleep(depth="light")
        self.char1.execute_cmd("whisper Aria = wake up, there is a fire!")
        self.tick(advance=60)
        assert self.mode() == "awake"
        assert "whisper from Char" in self.script.db.mode_transition_reason
        assert self.responder.requests == []  # the event waits for the awake tick
        self.responder.add(
            tool_reply(tool_call("whisper", {"target": "Char", "text": "A fire? Where?"})),
            tool_reply(tool_call("noop", {})),
        )
        self.tick()
        # a whisper is answered privately: Char hears it, Char2 beside them does not
        assert any("A fire? Where?" in text for text in self.received(self.char1))
        assert not any("A fire" in text for text in self.received(self.char2))

    def test_deep_sleeper_does_not_wake_by_itself_for_urgent_events(self):
        self.builder_sleep(depth="deep")
        # put to it in one sleep turn (one person's words), which may decide to stay asleep
        self.responder.add(tool_reply(tool_call("stay_asleep", {"reason": "it can wait"})))
        self.char1.execute_cmd("whisper Aria = wake up!")
        self.char1.execute_cmd("page Aria = WAKE UP")
        self.tick(advance=60)
        assert self.mode() == "sleep"
        (request,) = self.responder.requests
        assert {t["function"]["name"] for t in request["tools"]} == {"wake_up", "stay_asleep"}
        assert self.handler.status().pending_events == 2

    def test_wake_deferred_during_compacting(self):
        self.journal("Mira likes tea.", "Tobin keeps notes.")
        self.builder_sleep(depth="light")
        assert self.script.db.sleep_phase == "compacting"
        # the model is slow to help: the scoring call fails, so compacting is not done
        self.responder.add(text_reply("not json"))
        self.char1.execute_cmd("whisper Aria = are you awake?")
        self.tick(advance=60)
        assert self.mode() == "sleep"
        assert self.script.db.wake_deferred_reason.startswith("Urgent event: whisper")
        # compacting completes on the next tick, then the deferred wake happens at once
        self.responder.add(
            json_reply(
                {
                    "scores": [
                        {"entry_id": "j000000", "importance": 6},
                        {"entry_id": "j000001", "importance": 6},
                    ]
                }
            ),
            json_reply(
                {
                    "entries": [
                        {"entry_id": "j000000", "facts": ["Mira likes tea."]},
                        {"entry_id": "j000001", "facts": ["Tobin keeps notes."]},
                    ]
                }
            ),
        )
        self.tick(advance=60)
        assert self.mode() == "awake"
        assert self.handler.brain.long_term.count() == 2

    def test_builder_wake(self):
        self.builder_sleep(depth="deep")
        self.char1.permissions.add("Builder")
        self.char1.execute_cmd("@assistant/wake Aria=meeting")
        assert self.mode() == "awake" and self.script.db.mode_transition_reason == "meeting"


class TestConsolidationOverHttp(SleepTestCase):
    def test_structured_scoring_and_extraction_and_progress(self):
        self.journal("Mira said she loves jasmine tea.", "Aria greeted everyone.", "Bob said hi.")
        self.builder_sleep()
        self.responder.add(
            json_reply(
                {
                    "scores": [
                        {"entry_id": "j000000", "importance": 7},
                        {"entry_id": "j000001", "importance": 5},
                        {"entry_id": "j000002", "importance": 2},
                    ]
                }
            ),
            json_reply(
                {
                    "entries": [
                        {"entry_id": "j000000", "facts": ["Mira loves jasmine tea."]},
                        {"entry_id": "j000001", "facts": ["Aria greeted everyone."]},
                    ]
                }
            ),
        )
        self.tick(advance=60)
        sent = self.responder.requests
        assert [r["response_format"]["json_schema"]["name"] for r in sent] == [
            "ImportanceScores",
            "FactExtraction",
        ]
        assert self.script.db.consolidation_progress["processed_entries"] == 3
        assert self.script.db.sleep_phase == "dreaming"
        memories = self.handler.brain.long_term.recent(10)
        assert [m["text"] for m in memories] == ["Mira loves jasmine tea."]
        usage = self.handler.status().usage
        assert usage.calls == 2 and usage.prompt_tokens > 0


class TestSleepCommands(SleepTestCase, EvenniaCommandTest):
    def cmd(self, args):
        return self.call(commands().CmdAssistant(), args)

    def test_sleep_switch_and_bad_input(self):
        assert "'soon' is not a number of hours" in self.cmd("/sleep Aria=soon")
        assert "from 1 to 24" in self.cmd("/sleep Aria=30")
        assert "from 1 to 24" in self.cmd("/sleep Aria=0")
        assert self.mode() == "awake"
        text = self.cmd("/sleep Aria=2 deep quiet hours")
        assert "Aria is asleep (deep, 2 h)" in text
        assert self.script.db.sleep_initiated_by == "builder"
        assert self.script.db.sleep_reason == "quiet hours"
        assert "Already in sleep mode" in self.cmd("/sleep Aria")

    def test_builder_is_not_bound_by_safeguards(self):
        self.script.db.config_overrides = {**self.overrides, "min_activity_before_sleep": 50}
        self.script.db.sleep_cooldown_until = (self.clock.now() + timedelta(hours=1)).isoformat()
        assert "is asleep" in self.cmd("/sleep Aria")

    def test_wake_switch(self):
        said = self.cmd("/wake Aria")
        assert "Aria is not asleep." in said and "Aria: Aria" not in said  # her name once
        self.cmd("/sleep Aria")
        assert "Aria is awake." in self.cmd("/wake Aria")
        assert "No assistant called 'Zed'" in self.cmd("/wake Zed")

    def test_status_while_asleep(self):
        self.journal("a", "b", "c", "d")
        self.cmd("/sleep Aria=3 light night shift")
        text = self.cmd("/status Aria")
        for label in (
            "phase compacting, light sleep",
            "scheduled wake",
            "builder: night shift",
            "[--------------------] 0/4",
            "long-term memories",
            "sleep schedule",
        ):
            assert label in text, label

    def test_memory_switch(self):
        assert "no long-term memories yet" in self.cmd("/memory Aria")
        store = self.handler.brain.long_term
        store.add(
            "The east door sticks when it rains.",
            importance=7,
            now=self.clock.now(),
            source_entry_ids=["j000000"],
            provenance={"heard_from": "Tobin"},
        )
        store.add(
            "Mira likes tea.",
            importance=5,
            now=self.clock.now(),
            source_entry_ids=["j000001"],
            provenance={},
        )
        listing = self.cmd("/memory Aria")
        assert "2 memories" in listing and "Tobin" in listing
        found = self.cmd("/memory Aria=door")
        assert "east door" in found and "Mira" not in found
        assert "No memories of Aria matching 'dragons'" in self.cmd("/memory Aria=dragons")
        assert "at most 200" in self.cmd("/memory Aria=" + "x" * 201)

    def test_memory_search_with_embeddings(self):
        from ai_assistant.testing.server import bag_of_words_embedding

        self.script.db.config_overrides = {**self.overrides, "embedding_model": "embed-test"}
        store = self.handler.brain.long_term
        for text in ("The east door sticks when it rains.", "Mira likes green tea."):
            store.add(
                text,
                importance=5,
                now=self.clock.now(),
                source_entry_ids=["j0"],
                provenance={},
                vector=bag_of_words_embedding(text),
            )
        text = self.cmd("/memory Aria=does the door stick")
        assert "(embeddings)" in text and "east door" in text
        assert "Mira" not in text or text.index("east door") < text.index("Mira")
        assert self.server.embedding_requests == [["does the door stick"]]

    def test_memory_search_with_a_reranker(self):
        self.script.db.config_overrides = {**self.overrides, "recall_rerank_model": "rr"}
        store = self.handler.brain.long_term
        for text in ("The east door sticks when it rains.", "The door of the mill is green."):
            store.add(text, importance=5, now=self.clock.now(), source_entry_ids=[], provenance={})
        # the reranker puts the mill first, whatever the words say
        self.server.rerank_reply = lambda body: {
            "results": [
                {"index": i, "relevance_score": 9.0 if "mill" in doc else 0.0}
                for i, doc in enumerate(body["documents"])
            ]
        }
        text = self.cmd("/memory Aria=east door")
        assert text.index("mill") < text.index("door sticks")
        (body,) = self.server.rerank_requests
        assert body["model"] == "rr" and body["query"] == "east door"
        # a reranker that fails leaves the first pass's order
        self.server.rerank_reply = lambda body: {"results": "broken"}
        text = self.cmd("/memory Aria=east door")
        assert text.index("door sticks") < text.index("mill")


class TestScheduledSleep(SleepTestCase):
    def test_schedule_from_awake_tick_suspend_and_restore(self):
        from ai_assistant.clock import ManualClock

        self.script.db.config_overrides = {
            **self.overrides,
            "sleep_schedule_enabled": True,
            "sleep_start_hour": 2,
            "sleep_duration_hours": 4,
            "min_awake_ticks": 2,
        }
        game = ManualClock(self.clock.now().replace(hour=3, minute=0), time_factor=1.0)
        self.handler.game_clock = game
        self.tick()
        assert self.mode() == "awake"  # one awake tick so far
        self.tick()
        assert self.mode() == "sleep" and self.script.db.sleep_initiated_by == "schedule"
        (key,) = self.our_tickers()
        assert key[3] == 60
        # waking at the window's end (three game hours at factor 1)
        self.tick(advance=3 * 3600)
        assert self.mode() == "awake"

    def test_own_sleep_suspends_schedule_until_waking(self):
        self.script.db.config_overrides = {**self.overrides, "sleep_schedule_enabled": True}
        self.builder_sleep()
        assert self.script.db.sleep_schedule_suspended is True
        assert "(suspended)" in self.handler.status().schedule
        self.handler.brain.lifecycle.wake_up(self.clock.now(), "x")
        assert self.script.db.sleep_schedule_suspended is None
