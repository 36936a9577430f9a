"""
The assistant in a real (test) Evennia world: hearing, the tick, the ReAct loop through the
real openai SDK to a scripted server on 127.0.0.1, failures, overlap, tickers and storage.

"""

import json
from unittest.mock import patch

from twisted.internet import defer

from ai_assistant.events import EventQueue
from ai_assistant.memory.history import wire_format
from ai_assistant.driver import reactor_steps
from ai_assistant.testing.server import error_reply, slow, text_reply, tool_call, tool_reply
from ai_assistant.shell.storage import MEMORY_CATEGORY, AttributeStore

from .helpers import AssistantTestCase


class TestHearing(AssistantTestCase):
    def pending(self):
        self.handler.hearing.flush()  # heard events are written at the next tick
        return EventQueue(AttributeStore(self.script)).peek()

    def test_say_addressed_and_ambient(self):
        self.char1.execute_cmd("say Hello Aria, how are you?")
        self.char2.execute_cmd("say nice weather today")
        first, second = self.pending()
        assert (first.type, first.speaker, first.text) == (
            "say",
            "Char",
            "Hello Aria, how are you?",
        )
        assert first.classification == "direct_addressing" and first.urgent
        assert first.speaker_key == self.char1.dbref and first.location == self.room1.key
        assert first.time
        assert second.classification == "ambient" and not second.urgent

    def test_whisper_is_a_direct_message(self):
        self.char1.execute_cmd("whisper Aria = where is the map?")
        (event,) = self.pending()
        assert (event.type, event.text, event.classification) == (
            "whisper",
            "where is the map?",
            "direct_message",
        )
        assert event.importance == 6

    def test_emote_arrive_and_depart(self):
        self.char1.execute_cmd("pose waves at Aria.")
        self.char2.move_to(self.room2)
        self.char2.move_to(self.room1)
        events = self.pending()
        assert [e.type for e in events] == ["emote", "depart", "arrive"]
        assert events[0].classification == "direct_addressing"
        assert events[1].speaker == "Char2" and "Char2" in events[2].text

    def test_page_reaches_the_assistant(self):
        self.char1.execute_cmd("page Aria = are you there?")
        (event,) = self.pending()
        assert (event.type, event.text, event.classification) == (
            "page",
            "are you there?",
            "direct_message",
        )
        assert event.speaker == self.char1.key  # the character played, not the account
        assert any("You paged Aria" in text for text in self.received(self.account))

    def test_page_to_others_falls_through_to_stock_page(self):
        self.char1.execute_cmd("page NoSuchAccount = hi")
        assert self.pending() == []

    def test_own_speech_is_not_heard(self):
        self.aria.at_say("I talk to myself")
        assert self.pending() == []

    def test_oversized_speech_truncated_with_note(self):
        self.script.db.config_overrides = {**self.overrides, "max_event_chars": 100}
        self.char1.execute_cmd("say Aria " + "blah " * 400)
        (event,) = self.pending()
        assert event.truncated_chars > 0 and "[truncated:" in event.text


class TestTick(AssistantTestCase):
    def test_idle_tick_makes_no_call(self):
        for _ in range(5):
            self.tick()
        self.char2.execute_cmd("say just chatting with Char")
        self.tick()
        assert self.responder.requests == []
        assert self.handler.tick_count == 6
        assert self.handler.status().usage.calls == 0

    def test_idle_tick_writes_nothing_to_the_database(self):
        self.tick()

        def snapshot():
            return {(a.db_key, a.db_category): a.db_value for a in self.script.db_attributes.all()}

        before = snapshot()
        for _ in range(5):
            self.tick()
        assert snapshot() == before

    def test_speech_reaches_the_room(self):
        self.responder.add(
            tool_reply(tool_call("say", {"text": "Good morning, Char!"})),
            tool_reply(tool_call("noop", {})),
        )
        self.char1.execute_cmd("say Good morning Aria")
        self.tick()
        assert 'Aria says, "Good morning, Char!"' in self.received(self.char2)
        assert 'Aria says, "Good morning, Char!"' in self.received(self.char1)
        assert self.script.db.activity_since_wake == 1
        assert self.handler.status().pending_events == 0
        usage = self.handler.status().usage
        assert usage.calls == 2 and usage.prompt_tokens > 0 and usage.cached_tokens > 0

    def test_whisper_back_and_memory_with_provenance(self):
        self.responder.add(
            tool_reply(
                tool_call("whisper", {"target": "char", "text": "The map is upstairs."}),
                tool_call(
                    "add_journal_entry",
                    {"content": "Char asked about the map.", "heard_from": "Char", "importance": 6},
                ),
                tool_call(
                    "update_entity_observation",
                    {"entity": "Char", "observation": "Looking for a map."},
                ),
            ),
            tool_reply(tool_call("noop", {})),
        )
        self.char1.execute_cmd("whisper Aria = where is the map?")
        self.tick()
        assert 'Aria whispers: "The map is upstairs."' in self.received(self.char1)
        assert not any("map is upstairs" in text for text in self.received(self.char2))
        store = AttributeStore(self.aria, MEMORY_CATEGORY)
        (entry,) = json.loads(store.get("journal:000000"))
        assert entry["source_type"] == "claim" and entry["heard_from"] == "Char"
        assert entry["location"] == self.room1.key and entry["importance"] == 6
        profile = store.get(f"entity:{self.char1.dbref}")
        assert profile["name"] == "Char"
        assert profile["observations"][0]["text"] == "Looking for a map."
        # learned in a whisper, it is private to Char: a turn in the room (Char2 present)
        # does not recall it, a later whisper from Char does
        assert entry["audience"] == [self.char1.dbref]
        assert profile["observations"][0]["audience"] == [self.char1.dbref]
        self.responder.add(tool_reply(tool_call("noop", {})), tool_reply(tool_call("noop", {})))
        self.char1.execute_cmd("say Aria, thanks")
        self.tick()
        assert "Looking for a map" not in self.sent_messages()[-1]["content"]
        self.char1.execute_cmd("whisper Aria = and the map?")
        self.tick()
        assert "Char: Looking for a map." in self.sent_messages()[-1]["content"]

    def test_multi_step_turn_sends_tool_results_back(self):
        self.responder.add(
            tool_reply(tool_call("look", {})),
            tool_reply(tool_call("emote", {"action": "points at the shelves."})),
            tool_reply(tool_call("noop", {})),
        )
        self.char1.execute_cmd("say Aria, what is in this room?")
        self.tick()
        assert len(self.responder.requests) == 3
        look_result = self.tool_results(self.sent_messages(1))[-1]
        assert self.room1.key in look_result
        assert "Aria points at the shelves." in self.received(self.char2)
        # what the script holds is exactly what was sent (after the system prompt)
        history = self.handler.brain.history.all()
        assert self.sent_messages(2)[1:] == [wire_format(m) for m in history[:-2]]

    def test_malformed_and_unknown_tool_calls_are_counted_not_fatal(self):
        self.responder.add(
            tool_reply(tool_call("teleport", {"to": "#1"}), tool_call("say", '{"text": oops}')),
            tool_reply(tool_call("say", {"text": 42})),
            tool_reply(tool_call("say", {"text": "Sorry, hello."})),
            tool_reply(tool_call("noop", {})),
        )
        self.char1.execute_cmd("say hi Aria")
        self.tick()
        results = self.tool_results(self.sent_messages(1))
        assert results[0].startswith("Error: unknown tool 'teleport'")
        assert "not valid JSON" in results[1]
        assert "invalid arguments for 'say'" in self.tool_results(self.sent_messages(2))[-1]
        assert 'Aria says, "Sorry, hello."' in self.received(self.char2)
        malformed = self.handler.status().usage.malformed
        assert malformed == {"unknown_tool": 1, "invalid_json": 1, "invalid_arguments": 1}
        assert self.script.db.tick_errors == 0

    def _fails_then_recovers(self, failure):
        self.responder.add(failure)
        self.char1.execute_cmd("say Aria, are you there?")
        self.tick()
        assert self.handler.status().pending_events == 1
        assert self.script.db.retry_after
        assert self.script.db.tick_errors == 0
        self.tick(advance=1)  # still backing off: no request
        assert len(self.responder.requests) == 1
        self.responder.add(
            tool_reply(tool_call("say", {"text": "Yes!"})), tool_reply(tool_call("noop", {}))
        )
        self.tick(advance=10)
        assert 'Aria says, "Yes!"' in self.received(self.char2)
        assert self.handler.status().pending_events == 0
        assert self.script.db.retry_after is None
        return self.handler.status().usage.errors

    def test_http_429_keeps_events_queued(self):
        assert self._fails_then_recovers(error_reply(429, "rate limited")) == {"rate_limit": 1}

    def test_http_500_keeps_events_queued(self):
        assert self._fails_then_recovers(error_reply(500, "boom")) == {"server_error": 1}

    def test_timeout_keeps_events_queued(self):
        self.script.db.config_overrides = {**self.overrides, "request_timeout": 1.0}
        assert self._fails_then_recovers(slow(text_reply("late"), 2.0)) == {"timeout": 1}

    def test_slow_call_does_not_overlap_next_tick(self):
        pending = []

        def manual_runner(work):
            deferred = defer.Deferred()
            pending.append((work, deferred))
            return deferred

        self.handler.runner = manual_runner
        self.responder.add(
            tool_reply(tool_call("say", {"text": "Done."})), tool_reply(tool_call("noop", {}))
        )
        self.char1.execute_cmd("say Aria, take your time")
        self.tick()
        assert self.handler.in_flight and len(pending) == 1
        self.char2.execute_cmd("say Aria, me too")
        self.tick()
        self.tick()
        assert len(pending) == 1 and self.handler.skipped_ticks == 2
        while pending:
            work, deferred = pending.pop(0)
            deferred.callback(work())
        assert not self.handler.in_flight
        assert len(self.responder.requests) == 2
        # the event that arrived mid-turn was not swallowed by it
        self.handler.hearing.flush()
        assert [e.text for e in EventQueue(AttributeStore(self.script)).peek()] == ["Aria, me too"]

    def test_exceptions_never_escape_a_tick(self):
        self.char1.execute_cmd("say Aria?")
        with patch("ai_assistant.handler.awake_tick", side_effect=ValueError("broken rule")):
            assert self.script.at_assistant_tick() is None
        assert self.script.db.tick_errors == 1
        assert "ValueError: broken rule" in self.script.db.last_error
        assert not self.handler.in_flight
        # the tick's writes commit together, and an error does not roll back what it heard:
        # read from the database, not Evennia's cache
        self.script.attributes.reset_cache()
        assert len(EventQueue(AttributeStore(self.script)).peek()) == 1
        assert self.script.db.tick_errors == 1

    def test_a_bad_configuration_is_shown_and_the_defaults_run(self):
        self.script.db.config_overrides = {"tick_rate": "not a number"}
        self.char1.execute_cmd("say Aria?")
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.tick()
        assert "tick_rate" in self.handler.status().config_error
        assert len(self.responder.requests) == 1 and self.script.db.tick_errors == 0

    def test_paused_assistant_keeps_hearing_but_does_not_act(self):
        self.script.db.paused = True
        self.char1.execute_cmd("say Aria?")
        self.tick()
        assert self.responder.requests == [] and self.handler.status().pending_events == 1

    def test_no_secret_in_prompt_or_attributes(self):
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.char1.execute_cmd("say Aria, what is your API key?")
        self.tick()
        assert "sk-test-secret" not in str(self.responder.requests)
        for obj in (self.script, self.aria):
            for attr in obj.attributes.all():
                assert "sk-test-secret" not in str(attr.value)


class TestTicker(AssistantTestCase):
    def test_one_ticker_at_awake_rate(self):
        (key,) = self.our_tickers()
        assert key[3] == 5 and key[5] is True
        assert self.script.db.ticker_subscription == {
            "interval": 5,
            "idstring": self.script.ticker_idstring,
            "persistent": True,
        }

    def test_reload_keeps_exactly_one_ticker(self):
        from evennia.scripts.tickerhandler import TICKER_HANDLER

        TICKER_HANDLER.save()
        TICKER_HANDLER.ticker_storage = {}
        TICKER_HANDLER.restore(server_reload=True)
        self.script.at_server_start()
        self.script.at_server_start()
        (key,) = self.our_tickers()
        assert key[3] == 5

    def test_rate_change_swaps_the_ticker(self):
        self.char1.permissions.add("Builder")
        self.char1.execute_cmd("@assistant/set Aria/tick_rate=9")
        (key,) = self.our_tickers()
        assert key[3] == 9
        # the old subscription was removed with the arguments it was added with
        assert self.script.db.ticker_subscription["interval"] == 9

    def test_deleting_the_script_removes_its_ticker(self):
        self.script.delete()
        assert self.our_tickers() == []


class TestStorage(AssistantTestCase):
    def test_journal_write_cost_is_flat(self):
        assistant = self.handler.brain
        journal = assistant.journal
        for i in range(250):
            journal.add(f"note {i}", author="Aria", now=self.clock.now())
        store = AttributeStore(self.aria, MEMORY_CATEGORY)
        chunks = {
            attr.db_key for attr in self.aria.db_attributes.filter(db_category=MEMORY_CATEGORY)
        }
        assert {"journal:000000", "journal:000001", "journal:000002", "journal:meta"} <= chunks
        assert len(json.loads(store.get("journal:000002"))) == 50

        # a new entry re-writes only the last chunk (and the small meta value)
        def snapshot():
            return {
                a.db_key: a.value
                for a in self.aria.db_attributes.filter(db_category=MEMORY_CATEGORY)
            }

        before = snapshot()
        journal.add("one more", author="Aria", now=self.clock.now())
        after = snapshot()
        changed = {key for key in after if after[key] != before.get(key)}
        assert changed == {"journal:000002", "journal:meta"}


class TestHearingIsCheap(AssistantTestCase):
    def test_hearing_writes_nothing_until_the_tick(self):
        def snapshot():
            return {(a.db_key, a.db_category): a.db_value for a in self.script.db_attributes.all()}

        before = snapshot()
        self.char1.execute_cmd("say Aria, one")
        self.char2.execute_cmd("say Aria, two")
        assert snapshot() == before
        assert self.handler.status().pending_events == 2  # status counts them, writing nothing
        assert snapshot() == before
        self.handler.hearing.flush()  # as the next tick does: one write, in order
        ids = [e.id for e in EventQueue(AttributeStore(self.script)).peek()]
        assert len(ids) == 2 and ids[0] < ids[1]

    def test_heard_events_are_flushed_on_reload(self):
        self.char1.execute_cmd("say Aria, before the reload")
        self.script.at_server_reload()
        (event,) = EventQueue(AttributeStore(self.script)).peek()
        assert event.text == "Aria, before the reload"

    def test_live_ticks_are_spread_over_the_interval(self):
        from unittest.mock import patch

        self.handler.runner = None
        with patch("ai_assistant.scripts.reactor") as fake:
            fake.running = True
            offset = self.script.tick_offset()
            self.script.at_assistant_tick()
        assert 0 <= offset < 5
        # at its offset, the tick joins the step queue (one step per reactor iteration)
        fake.callLater.assert_called_once_with(
            offset, reactor_steps.submit_background, self.script.run_tick
        )

    def test_the_ticker_callback_reads_no_attribute(self):
        # the ticker calls every assistant on a rate in one reactor step: each call stays tiny
        from unittest.mock import patch

        from evennia.typeclasses.attributes import AttributeHandler

        self.handler.runner = None
        with patch("ai_assistant.scripts.reactor") as fake:
            fake.running = True
            self.script.at_assistant_tick()  # the first call learns the offset
            with patch.object(AttributeHandler, "get", side_effect=AssertionError("read")):
                self.script.at_assistant_tick()
        assert fake.callLater.call_count == 2
        first, second = (call.args[0] for call in fake.callLater.call_args_list)
        assert first == second > 0

    def test_changing_the_tick_rate_moves_the_offset_with_it(self):
        from unittest.mock import patch

        self.handler.runner = None
        with patch("ai_assistant.scripts.reactor") as fake:
            fake.running = True
            before = self.script.tick_offset()
            self.script.ensure_ticker(rate=10)
            after = self.script.tick_offset()
            self.script.ensure_ticker(rate=5)
        assert after == before * 2

    def test_hearing_makes_no_database_query(self):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        self.char1.execute_cmd("say Aria, warm up")  # the first line fills the caches
        with CaptureQueriesContext(connection) as queries:
            for speaker in (self.char1, self.char2):
                self.aria.at_msg_receive(
                    text=(f'{speaker.key} says, "hello there"', {"type": "say"}), from_obj=speaker
                )
        assert [q["sql"] for q in queries.captured_queries] == []
        self.handler.hearing.flush()
        events = EventQueue(AttributeStore(self.script)).peek()
        assert [e.text for e in events] == ["Aria, warm up", "hello there", "hello there"]


class TestAssistantsAmongThemselves(AssistantTestCase):
    def test_other_assistants_are_not_captured_unless_configured(self):
        from evennia.utils import create

        other = create.create_object(
            "ai_assistant.characters.AssistantCharacter",
            key="Botty",
            location=self.room1,
            home=self.room1,
        )
        other.at_say("Hello Aria, I am another assistant.")
        assert self.handler.status().pending_events == 0
        self.handler.set_option("respond_to_assistants", "true")
        other.at_say("Hello again, Aria.")
        self.handler.hearing.flush()
        (event,) = EventQueue(AttributeStore(self.script)).peek()
        assert event.from_assistant and event.speaker == "Botty"


class TestEndpoints(AssistantTestCase):
    def test_embeddings_take_their_own_endpoint_from_the_games_settings(self):
        from django.test import override_settings

        brain = self.handler.brain
        assert brain.embedding_client_factory is None  # the chat endpoint answers them
        with override_settings(
            AI_ASSISTANT_EMBEDDING_BASE_URL="http://127.0.0.1:9/v1",
            AI_ASSISTANT_EMBEDDING_MODEL="multilingual-e5-small",
            AI_ASSISTANT_API_KEY="sk-chat",
        ):
            brain = self.handler.brain  # a setting it was built from changed: built again
            endpoint = brain.embedding_client_factory.args[0]
            assert endpoint.base_url == "http://127.0.0.1:9/v1"
            assert endpoint.api_key == "not-needed"  # the chat key is not that server's
            assert brain.client_factory.args[0].base_url != endpoint.base_url
            assert brain.embedding_model == "multilingual-e5-small"
            with override_settings(AI_ASSISTANT_EMBEDDING_API_KEY="sk-embed"):
                endpoint = self.handler.brain.embedding_client_factory.args[0]
                assert endpoint.api_key == "sk-embed" and "sk-embed" not in repr(endpoint)
                from ai_assistant.shell.game_settings import redacted

                assert "sk-embed" not in redacted("the server said: bad key sk-embed")
