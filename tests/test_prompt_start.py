"""
The prompt start: a direct event (a whisper or page, speech naming the assistant, a builder's
instruction) starts the assistant's turn within a reactor iteration instead of at its next tick,
through the tick's own gates. The reactor is a stand-in here: `iterate()` runs one iteration.

"""

from unittest.mock import call, patch

from django.test import override_settings
from evennia.typeclasses.attributes import ModelAttributeBackend
from twisted.internet import defer

from ai_assistant.driver import StepQueue
from ai_assistant.events import EventQueue
from ai_assistant.shell.storage import AttributeStore
from ai_assistant.testing.server import error_reply, tool_call, tool_reply

from .helpers import AssistantTestCase


class FakeReactor:
    """`callLater(0, f)` collected; `iterate()` runs what was due, as one reactor iteration."""

    def __init__(self):
        self.due = []

    def call_later(self, delay, func, *args):
        assert delay == 0
        self.due.append((func, args))

    def iterate(self, times: int = 1) -> None:
        for _ in range(times):
            due, self.due = self.due, []
            for func, args in due:
                func(*args)


class PromptStartCase(AssistantTestCase):
    def setUp(self):
        super().setUp()
        self.reactor = FakeReactor()
        # the live path: the reactor's step queue, one step per reactor iteration
        self.steps = StepQueue(call_later=self.reactor.call_later)
        self.handler.submit = self.steps.submit

    def say_and_noop(self, text: str) -> None:
        self.responder.add(
            tool_reply(tool_call("say", {"text": text})), tool_reply(tool_call("noop", {}))
        )

    def user_message(self, request_index: int = -1) -> str:
        """The last user message of a request: where the turn's events are."""
        messages = self.sent_messages(request_index)
        return [m["content"] for m in messages if m.get("role") == "user"][-1]

    def pending(self) -> list:
        self.handler.hearing.flush()
        return EventQueue(AttributeStore(self.script)).peek()


class TestDirectEventsStartATurn(PromptStartCase):
    def test_addressed_speech_is_answered_without_a_tick(self):
        self.say_and_noop("Hello, Char!")
        self.char1.execute_cmd("say Hello Aria")
        # inside the speaker's command nothing runs: the start waits for the reactor
        assert self.responder.requests == [] and len(self.reactor.due) == 1
        self.reactor.iterate()
        assert len(self.responder.requests) == 2
        assert "Hello Aria" in self.user_message(0)
        assert 'Aria says, "Hello, Char!"' in self.received(self.char2)
        assert self.handler.tick_count == 0 and self.handler.prompt_starts == 1
        assert self.pending() == [] and not self.handler.in_flight

    def test_whisper_page_and_instruction_start_turns(self):
        for act in (
            lambda: self.char1.execute_cmd("whisper Aria = where is the map?"),
            lambda: self.char1.execute_cmd("page Aria = are you there?"),
            lambda: self.handler.instruct(self.char1, "Greet everyone who comes in."),
        ):
            before = len(self.responder.requests)
            self.responder.add(tool_reply(tool_call("noop", {})))
            act()
            self.reactor.iterate()
            assert len(self.responder.requests) == before + 1
        assert self.handler.prompt_starts == 3 and self.handler.tick_count == 0

    def test_ambient_speech_waits_for_the_tick(self):
        self.char1.execute_cmd("say nice weather today")
        self.char2.execute_cmd("pose stretches.")
        assert self.reactor.due == [] and len(self.steps) == 0
        self.reactor.iterate()
        assert self.responder.requests == [] and self.handler.prompt_starts == 0
        assert [e.classification for e in self.pending()] == ["ambient", "ambient"]

    def test_hearing_an_unaddressed_line_reads_no_configuration(self):
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.char1.execute_cmd("say Aria, warm up")  # fills the hearing caches
        self.reactor.iterate()
        handler_class = type(self.handler)
        reads = []

        def counted(handler):
            reads.append(handler)
            return original(handler)

        original = handler_class.checked_config
        with (
            patch.object(handler_class, "checked_config", counted),
            patch.object(type(self.script), "schedule_prompt_start") as schedule,
        ):
            self.char2.execute_cmd("say nothing for her here")
            self.char2.execute_cmd("pose waves at Char.")
        assert reads == []
        schedule.assert_not_called()
        events = self.pending()
        assert [e.classification for e in events[-2:]] == ["ambient", "ambient"]

    def test_other_assistants_wait_for_the_tick(self):
        from evennia.utils import create

        self.handler.set_option("respond_to_assistants", "true")
        other = create.create_object(
            "ai_assistant.characters.AssistantCharacter",
            key="Botty",
            location=self.room1,
            home=self.room1,
        )
        other.assistant.submit = self.steps.submit
        other.at_say("Hello Aria, I am another assistant.")
        assert self.reactor.due == []

    def test_switched_off_it_waits_for_the_tick(self):
        self.handler.set_option("prompt_start", "false")
        self.char1.execute_cmd("say Hello Aria")
        self.reactor.iterate()
        assert self.responder.requests == [] and self.reactor.due == []
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.tick()
        assert len(self.responder.requests) == 1


class TestBurstsAndTurnsInFlight(PromptStartCase):
    def test_a_burst_makes_one_request_with_every_line(self):
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.char1.execute_cmd("say Aria, one")
        self.char2.execute_cmd("say Aria, two")
        self.char1.execute_cmd("say Aria, three")
        assert len(self.reactor.due) == 1 and len(self.steps) == 1  # one start queued
        self.reactor.iterate(3)
        assert len(self.responder.requests) == 1
        message = self.user_message()
        assert all(f"Aria, {n}" in message for n in ("one", "two", "three"))
        assert self.handler.prompt_starts == 1

    def test_a_line_heard_in_a_turn_makes_one_turn_after_it(self):
        pending = []

        def manual_runner(work):
            deferred = defer.Deferred()
            pending.append((work, deferred))
            return deferred

        def answer_all():
            while pending:
                work, deferred = pending.pop(0)
                deferred.callback(work())

        self.handler.runner = manual_runner
        self.say_and_noop("Let me look.")
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.char1.execute_cmd("say Aria, take your time")
        self.reactor.iterate()
        assert self.handler.in_flight and len(pending) == 1
        self.char2.execute_cmd("say Aria, me too")
        self.char1.execute_cmd("whisper Aria = and one more thing")
        self.char2.execute_cmd("say Aria, and me")
        # never a second turn beside the one in flight
        assert self.reactor.due == [] and len(pending) == 1
        answer_all()
        assert not self.handler.in_flight and len(self.responder.requests) == 2
        # its end queued the next start at once
        assert len(self.reactor.due) == 1
        self.reactor.iterate()
        answer_all()
        assert len(self.responder.requests) == 3
        follow_up = self.user_message()
        assert "Aria, me too" in follow_up and "Aria, and me" in follow_up
        assert follow_up.count("<event ") == 2  # the first line was answered already
        # the whisper is another thread: its own turn, right after
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.reactor.iterate()
        answer_all()
        assert len(self.responder.requests) == 4
        assert "and one more thing" in self.user_message()
        self.reactor.iterate(3)
        assert len(self.responder.requests) == 4 and self.pending() == []
        assert self.handler.prompt_starts == 3

    def test_a_tick_and_a_prompt_start_never_double_a_turn(self):
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.char1.execute_cmd("say Aria, are you there?")
        self.tick()  # the ticker came first and answered it
        assert len(self.responder.requests) == 1
        self.reactor.iterate(3)
        assert len(self.responder.requests) == 1


class TestTheFirstTurnIsCheap(PromptStartCase):
    def attribute_rows(self) -> set:
        return {
            (owner.key, attr.db_key, attr.db_category)
            for owner in (self.aria, self.script)
            for attr in owner.db_attributes.all()
        }

    def test_a_new_assistants_first_turn_creates_no_attribute(self):
        made = self.attribute_rows()
        assert ("ai_assistant", "usage", None) in made  # made with the script, empty
        assert self.handler.brain.usage().calls == 0  # and read as nothing stored
        queried = []
        query_key = ModelAttributeBackend.query_key

        def spy(backend, key, category):
            queried.append((backend.obj.key, key, category))
            return query_key(backend, key, category)

        self.say_and_noop("Hello, Char!")
        with patch.object(ModelAttributeBackend, "query_key", spy):
            self.char1.execute_cmd("say Hello Aria")
            self.reactor.iterate(10)
        assert 'Aria says, "Hello, Char!"' in self.received(self.char2)
        # the turn updated rows made with the assistant and found every value it read in the
        # cache: nothing created, nothing asked of the database while players wait
        assert self.attribute_rows() == made
        assert queried == []
        assert self.handler.brain.usage().calls == 2


class TestTheTicksGates(PromptStartCase):
    def test_paused_assistant_is_not_started(self):
        self.handler.pause()
        self.char1.execute_cmd("say Aria?")
        self.reactor.iterate()
        assert self.responder.requests == [] and len(self.pending()) == 1

    def test_sleeping_assistant_is_not_started(self):
        # deep sleep with no sleep turn: nothing wakes it, no turn starts (a light sleeper
        # wakes for a whisper at once, and answers it: test_wake_tools.py)
        self.handler.set_option("triage_enabled", "false")
        self.handler.sleep(hours=1, depth="deep")
        self.char1.execute_cmd("whisper Aria = wake up, please")
        self.reactor.iterate(3)
        assert self.responder.requests == [] and self.handler.prompt_starts == 0
        assert self.handler.brain.asleep and len(self.pending()) == 1

    def test_over_budget_assistant_is_not_started(self):
        self.script.db.config_overrides = {**self.overrides, "token_budget_per_hour": 1}
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.char1.execute_cmd("say Aria, first question")
        self.reactor.iterate()
        assert len(self.responder.requests) == 1  # this turn spent the hour's budget
        self.char1.execute_cmd("say Aria, second question")
        self.reactor.iterate(3)
        assert len(self.responder.requests) == 1
        assert any("rubs their eyes" in text for text in self.received(self.char2))
        assert [e.text for e in self.pending()] == ["Aria, second question"]

    def test_backing_off_after_a_model_error(self):
        self.responder.add(error_reply(500, "boom"))
        self.char1.execute_cmd("say Aria, first question")
        self.reactor.iterate()
        assert len(self.responder.requests) == 1 and self.script.db.retry_after
        self.char1.execute_cmd("say Aria, are you there?")
        self.reactor.iterate(3)
        assert len(self.responder.requests) == 1  # waits out the backoff
        assert len(self.pending()) == 2

    def test_a_player_over_the_turn_limit_is_not_started(self):
        self.as_player()
        with override_settings(AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE=1):
            self.responder.add(tool_reply(tool_call("noop", {})))
            self.char1.execute_cmd("say Aria, one")
            self.reactor.iterate()
            self.char1.execute_cmd("say Aria, two")
            self.reactor.iterate(3)
        assert len(self.responder.requests) == 1
        (event,) = self.pending()
        assert event.metadata.get("held_back")


class TestLiveScheduling(AssistantTestCase):
    def test_on_a_live_server_the_start_joins_the_reactor_step_queue(self):
        with (
            patch("ai_assistant.scripts.reactor") as fake,
            patch("ai_assistant.scripts.reactor_steps") as steps,
        ):
            fake.running = True
            self.char1.execute_cmd("say Hello Aria")
            self.char2.execute_cmd("say Aria, hello from me too")
        steps.submit.assert_called_once_with(self.script.run_tick, True)

    def test_without_a_reactor_the_ticks_drive_it(self):
        # tests and headless runs: nothing is queued behind their back
        self.char1.execute_cmd("say Hello Aria")
        assert not self.handler._prompt_queued
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.tick()
        assert len(self.responder.requests) == 1


class TestWarmUp(AssistantTestCase):
    def test_a_live_server_loads_the_encoding_and_makes_the_client_before_any_turn(self):
        from ai_assistant import scripts

        with (
            patch.object(scripts, "reactor") as fake,
            patch.object(scripts, "model_queue") as queue,
            patch.object(scripts, "_warmed_up", False),
            patch.object(scripts, "_words_prepared", set()),
        ):
            fake.running = True
            self.script.at_server_start()
            self.script.at_server_start()  # once per process
        # the model the assistant's turns count tokens for, and recall's words in its language
        assert fake.callInThread.call_args_list == [
            call(scripts.prepare_words, "english"),
            call(scripts.encoding_for, self.handler.brain.model),
        ]
        (warm,), _ = queue.return_value.run_on_loop.call_args
        assert warm.__self__.__class__.__name__ == "OpenAIChatClient" and warm.__name__ == "warm_up"
        assert queue.return_value.run_on_loop.call_count == 1
        assert self.responder.requests == []  # warming up sends nothing to the provider
        # the queue is made as the game's settings say: its calls in the model I/O process
        queue.assert_called_once_with(128, 4, True)

    def test_each_assistants_language_is_prepared_once(self):
        from ai_assistant import scripts

        with (
            patch.object(scripts, "reactor") as fake,
            patch.object(scripts, "model_queue"),
            patch.object(scripts, "_warmed_up", False),
            patch.object(scripts, "_words_prepared", set()),
        ):
            fake.running = True
            self.script.at_server_start()
            # another assistant of the same game speaks Russian
            self.script.db.config_overrides = {**self.overrides, "recall_stemmer": "russian"}
            self.script.at_server_start()
            self.script.at_server_start()
        prepared = [
            args
            for (function, *args), _ in fake.callInThread.call_args_list
            if function is scripts.prepare_words
        ]
        assert prepared == [["english"], ["russian"]]

    def test_the_game_may_keep_the_model_calls_in_the_server(self):
        from django.test import override_settings

        from ai_assistant import scripts

        with (
            patch.object(scripts, "reactor") as fake,
            patch.object(scripts, "model_queue") as queue,
            patch.object(scripts, "_warmed_up", False),
            override_settings(AI_ASSISTANT_MODEL_IO_PROCESS=False),
        ):
            fake.running = True
            self.script.at_server_start()
        queue.assert_called_once_with(128, 4, False)

    def test_tests_and_headless_runs_warm_nothing(self):
        from ai_assistant import scripts

        with (
            patch.object(scripts, "model_queue") as queue,
            patch.object(scripts, "_warmed_up", False),
        ):
            self.script.at_server_start()
        queue.assert_not_called()
