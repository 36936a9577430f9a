"""
The sleep turn and its tools, `wake_up` and `stay_asleep`: what is put to a sleeping assistant,
what it is shown (and never shown), how its answer wakes it or leaves it asleep; a wake that
never waits on the token budget. The shell's side (a word heard between two ticks, and the
builders' `/wait`) is in the classes at the end.

"""

import json
from datetime import timedelta

from ai_assistant import lifecycle as life
from ai_assistant.llm.chat import SERVER_ERROR, ChatReply, LLMError, TokenUsage
from ai_assistant.memory.reminders import Reminders
from ai_assistant.sleep.dreaming import DREAMING_STEPS
from ai_assistant.sleep.tick import sleep_tick
from ai_assistant.sleep.triage import sleep_turn
from ai_assistant.state import DREAMING_PROGRESS
from ai_assistant.testing.scripted import ScriptedModel
from ai_assistant.tools import EXTRACTION, TURN, default_registry
from ai_assistant.tools.base import SLEEP_TURN

from .core_fakes import T0, FakeWorld, hear, make_assistant, reply, run

SLEEP_TOOLS = {"wake_up", "stay_asleep"}


def sleeper(model, depth=life.LIGHT, **config):
    """An assistant asleep and dreaming, its dreaming steps all done (a tick's only work is
    what it heard), with Alice and Carol present."""
    brain = make_assistant(model, world=FakeWorld(("Alice", "Carol")), **config)
    brain.lifecycle.go_to_sleep(
        T0, hours=2, depth=depth, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    brain.state.set(DREAMING_PROGRESS, {"done": [step.name for step in DREAMING_STEPS]})
    assert brain.lifecycle.phase == life.DREAMING
    return brain


def offered(request) -> set[str]:
    return {tool["function"]["name"] for tool in request.tools or []}


def text(request) -> str:
    return "\n".join(str(message.get("content")) for message in request.messages)


def watch_transitions(brain) -> list:
    seen = []
    brain.on_transition = lambda mode, reason: seen.append((mode, reason))
    return seen


# ---- the tools and their scope ------------------------------------------------------------


def test_the_sleep_tools_are_offered_only_in_the_sleep_turn():
    registry = default_registry()
    assert set(registry.names(SLEEP_TURN)) == SLEEP_TOOLS
    assert not SLEEP_TOOLS & set(registry.names(TURN))
    assert not SLEEP_TOOLS & set(registry.names(EXTRACTION))
    assert "go_to_sleep" in registry.names(TURN)
    brain = sleeper(ScriptedModel())
    ctx = brain.tool_context(T0, {})
    from ai_assistant.llm.chat import ToolCall

    # an awake tool in the sleep turn, or a sleep tool in an awake turn: refused, not run
    say = registry.dispatch(ctx, ToolCall("1", "say", '{"text": "hi"}'), SLEEP_TURN)
    assert say.malformed == "tool_not_allowed" and brain.world.said == []
    wake = registry.dispatch(ctx, ToolCall("2", "wake_up", '{"reason": "x"}'), TURN)
    assert wake.malformed == "tool_not_allowed" and brain.asleep


def test_a_sleep_turn_offers_exactly_wake_up_and_stay_asleep_in_one_small_call():
    model = ScriptedModel(reply(("stay_asleep", {"reason": "not mine"})))
    brain = sleeper(model)
    brain.history.extend([{"role": "user", "content": "old talk from yesterday"}])
    hear(brain, "Carol, the library is on fire!", speaker="Alice")
    report = run(sleep_tick(brain, T0 + timedelta(minutes=1)))
    assert report["sleep_turn"] == 1 and report["tool"] == "stay_asleep"
    (request,) = model.requests
    assert offered(request) == SLEEP_TOOLS
    assert request.tool_choice == "required"
    assert request.response_format is None
    # no history: the system prompt, the words and the question
    assert "old talk" not in text(request)
    assert "the library is on fire" in request.messages[-1]["content"]
    assert "wake_up" in request.messages[-1]["content"]


def test_an_endpoint_told_to_get_no_tool_choice_gets_none():
    model = ScriptedModel(reply(("stay_asleep", {})))
    brain = sleeper(model, tool_choice="omit")
    hear(brain, "Carol, look at this", speaker="Alice")
    run(sleep_tick(brain, T0))
    assert model.requests[0].tool_choice is None


def test_a_server_that_refuses_required_gets_auto_and_it_is_remembered_for_the_endpoint(
    scripted_server,
):
    from ai_assistant.llm.chat import EndpointSettings
    from ai_assistant.llm.client import OpenAIChatClient
    from ai_assistant.testing.server import tool_call, tool_reply

    # llama-cpp-python's function-calling format: "required" is a 500, and without any
    # tool_choice the tools never reach the model
    scripted_server.refuses_required_choice = True
    scripted_server.tools_need_choice = True
    scripted_server.responder.add(
        tool_reply(tool_call("wake_up", {"reason": "the library is on fire"})),
        tool_reply(tool_call("stay_asleep", {"reason": "not mine"})),
    )
    client = OpenAIChatClient(EndpointSettings(scripted_server.base_url, "sk-test", max_retries=0))
    first = sleeper(lambda: client)
    hear(first, "Carol, the library is on fire!", speaker="Alice")
    report = run(sleep_tick(first, T0 + timedelta(minutes=1)))
    assert report["woke"] and report["error"] is None and not first.asleep
    assert len(scripted_server.refused_choices) == 1
    (answered,) = scripted_server.responder.requests
    assert answered["tool_choice"] == "auto"
    assert {tool["function"]["name"] for tool in answered["tools"]} == SLEEP_TOOLS
    # another assistant on the same endpoint sends "auto" from the start
    second = sleeper(lambda: client)
    hear(second, "Carol, look at this", speaker="Alice")
    assert run(sleep_tick(second, T0 + timedelta(minutes=1)))["tool"] == "stay_asleep"
    assert len(scripted_server.refused_choices) == 1
    assert scripted_server.responder.requests[-1]["tool_choice"] == "auto"


def test_a_required_refused_twice_is_not_remembered():
    # both "required" and "auto" failed: the server is down, not refusing the value
    down = LLMError(SERVER_ERROR, "InternalServerError: out of memory", 500)
    model = ScriptedModel(down, LLMError(SERVER_ERROR, "still down", 500))
    brain = sleeper(model)
    hear(brain, "Carol, look at this", speaker="Alice")
    report = run(sleep_tick(brain, T0))
    assert report["error"] == "server_error: InternalServerError: out of memory"
    assert [r.tool_choice for r in model.requests] == ["required", "auto"]
    model.answers.append(reply(("stay_asleep", {})))
    hear(brain, "Carol, look again", speaker="Alice")
    run(sleep_tick(brain, T0 + timedelta(hours=1)))
    assert model.requests[-1].tool_choice == "required"


# ---- what it does with the answer ---------------------------------------------------------


def test_wake_up_wakes_through_the_one_wake_transition():
    model = ScriptedModel(reply(("wake_up", {"reason": "  the library\nis on fire "})))
    brain = sleeper(model, sleep_schedule_enabled=True, sleep_cooldown_minutes=45)
    seen = watch_transitions(brain)
    assert brain.state.get(life.SCHEDULE_SUSPENDED)
    hear(brain, "Carol, the library is on fire!", speaker="Alice")
    now = T0 + timedelta(minutes=3)
    report = run(sleep_tick(brain, now))
    assert report["woke"] and report["tool"] == "wake_up"
    assert brain.lifecycle.mode == life.AWAKE
    # the same transition as every wake: cooldown, schedule restored, sleep state cleared,
    # the shell told (it tells the character and the room), the sleep's record closed
    assert brain.lifecycle.cooldown_remaining(now) == timedelta(minutes=45)
    assert not brain.state.get(life.SCHEDULE_SUSPENDED)
    assert brain.state.get(life.DEPTH) is None and brain.state.get(life.PHASE) is None
    assert seen == [(life.AWAKE, "the library is on fire")]
    assert brain.state.get(life.TRANSITION_REASON) == "the library is on fire"
    assert brain.lifecycle.log().tail(1)[0]["mode"] == life.AWAKE
    # what it heard waits for its first awake turn
    assert [e.text for e in brain.events.peek()] == ["Carol, the library is on fire!"]


def test_stay_asleep_keeps_it_asleep_and_what_it_heard_queued():
    model = ScriptedModel(reply(("stay_asleep", {"reason": "they can manage"})))
    brain = sleeper(model, triage_interval_minutes=1)
    seen = watch_transitions(brain)
    hear(brain, "Carol, look at this", speaker="Alice")
    report = run(sleep_tick(brain, T0))
    assert report == {
        "sleep_turn": 1,
        "woke": False,
        "tool": "stay_asleep",
        "malformed": None,
        "error": None,
    }
    assert brain.asleep and seen == []
    assert [e.text for e in brain.events.peek()] == ["Carol, look at this"]
    # considered once: after the interval the same words are not put to the model again
    assert sleep_turn(brain, T0 + timedelta(minutes=5)) is None


def test_a_reply_in_text_or_a_bad_call_keeps_it_asleep_and_is_recorded():
    text_only = ChatReply(
        content="I think I should wake up.",
        tool_calls=[],
        finish_reason="stop",
        usage=TokenUsage(prompt=50, completion=10),
    )
    model = ScriptedModel(
        text_only,
        reply(("say", {"text": "I am up!"})),  # an awake tool: not offered, not run
        reply(("wake_up", {"reason": "fire", "urgency": 10})),  # an argument it does not have
        reply(("wake_up", '{"reason": "fire"')),  # not JSON
    )
    brain = sleeper(model, triage_interval_minutes=1)
    kinds = []
    for minute in range(4):
        hear(brain, f"Carol, look at this {minute}", speaker="Alice")
        report = run(sleep_tick(brain, T0 + timedelta(minutes=2 * minute)))
        assert not report["woke"] and report["tool"] is None and report["error"] is None
        kinds.append(report["malformed"])
    assert kinds == ["no_tool_call", "tool_not_allowed", "invalid_arguments", "invalid_json"]
    assert brain.asleep and brain.world.said == []
    assert len(brain.events) == 4  # nothing lost
    assert brain.usage().malformed["no_tool_call"] == 1
    assert brain.usage().malformed["tool_not_allowed"] == 1


def test_a_wake_up_with_a_reason_written_too_long_still_wakes_it():
    # one call, no second reply to correct a refused one: the decision is not lost for it
    long_reason = "Alice is shouting that the library is on fire and Carol is inside. " * 8
    model = ScriptedModel(reply(("wake_up", {"reason": long_reason})))
    brain = sleeper(model)
    seen = watch_transitions(brain)
    hear(brain, "Carol, the library is on fire!", speaker="Alice")
    report = run(sleep_tick(brain, T0))
    assert report["woke"] and report["malformed"] is None
    (transition,) = seen
    assert transition[0] == life.AWAKE and len(transition[1]) <= 300
    assert transition[1].startswith("Alice is shouting")


def test_a_failed_call_keeps_it_asleep_and_asks_again_after_the_interval():
    # (a timeout: a 500 is first asked again with tool_choice "auto", see below)
    model = ScriptedModel(LLMError("timeout", "down"), reply(("wake_up", {"reason": "fire"})))
    brain = sleeper(model, triage_interval_minutes=5)
    hear(brain, "Carol, the library is on fire!", speaker="Alice")
    report = run(sleep_tick(brain, T0))
    assert report["error"].startswith("timeout") and brain.asleep
    assert sleep_turn(brain, T0 + timedelta(minutes=2)) is None  # the interval holds
    report = run(sleep_tick(brain, T0 + timedelta(minutes=6)))
    assert report["woke"] and not brain.asleep
    assert "the library is on fire" in model.requests[1].messages[-1]["content"]


# ---- what is put to it, and what it is shown --------------------------------------------------


def test_in_deep_sleep_a_whisper_is_put_to_it_with_the_whisperers_audience_only():
    model = ScriptedModel(reply(("stay_asleep", {})), reply(("stay_asleep", {})))
    brain = sleeper(model, depth=life.DEEP, triage_interval_minutes=1)
    core = brain.core_memory
    core.set("house", "The library opens at nine.", T0, 400)
    core.set("bob", "Bob is planning a surprise for Carol.", T0, 400, audience=["#2"])
    core.set("carol", "Carol's locker code is 4471.", T0, 400, audience=["#3"])
    hear(
        brain,
        "Are you awake? About the party...",
        event_type="whisper",
        speaker="Bob",
        speaker_key="#2",
    )
    hear(
        brain,
        "My locker code changed to 9912.",
        event_type="whisper",
        speaker="Carol",
        speaker_key="#3",
        now=T0 + timedelta(seconds=5),
    )
    run(sleep_tick(brain, T0 + timedelta(seconds=10)))
    first = text(model.requests[0])
    assert "About the party" in first and "surprise for Carol" in first
    assert "library opens at nine" in first
    # the second whisperer's words and notes are not in a request that serves the first
    assert "9912" not in first and "4471" not in first
    assert brain.asleep  # deep sleep: a whisper does not wake it by itself
    run(sleep_tick(brain, T0 + timedelta(minutes=2)))
    second = text(model.requests[1])
    assert "9912" in second and "4471" in second
    assert "About the party" not in second and "surprise" not in second
    assert len(brain.events) == 2


def test_one_whisperer_flooding_a_deep_sleeper_does_not_keep_another_from_its_sleep_turn():
    from ai_assistant.sleep.triage import MAX_EVENTS_SHOWN

    model = ScriptedModel(reply(("stay_asleep", {})), reply(("wake_up", {"reason": "Carol"})))
    brain = sleeper(model, depth=life.DEEP, triage_interval_minutes=1, max_pending_events=200)
    flood = MAX_EVENTS_SHOWN + 5
    for i in range(flood):
        hear(brain, f"psst {i}", event_type="whisper", speaker="Mal", speaker_key="#9")
    hear(brain, "The cellar is flooding!", event_type="whisper", speaker="Carol", speaker_key="#3")
    run(sleep_tick(brain, T0 + timedelta(seconds=10)))
    assert f"psst {flood - 1}" in text(model.requests[0])
    assert "cellar" not in text(model.requests[0])
    # the next sleep turn is Carol's: the rest of Mal's thread was considered with the first
    report = run(sleep_tick(brain, T0 + timedelta(minutes=2)))
    second = text(model.requests[1])
    assert "cellar" in second and "psst" not in second
    assert report["woke"]


def test_in_deep_sleep_a_direct_word_is_put_to_it_and_wake_up_wakes_it():
    model = ScriptedModel(reply(("wake_up", {"reason": "a builder needs me"})))
    brain = sleeper(model, depth=life.DEEP)
    hear(brain, "Open the gates for the festival.", event_type="instruction", speaker="Ann")
    assert brain.lifecycle.check_wake_conditions(brain.events.peek(), T0).should_wake is False
    report = run(sleep_tick(brain, T0))
    assert report["woke"] and brain.lifecycle.mode == life.AWAKE


def test_a_reminder_coming_up_in_sleep_is_put_to_it():
    model = ScriptedModel(reply(("wake_up", {"reason": "the letter for Mira"})))
    brain = sleeper(model)
    Reminders(brain.state).add(
        "Mira", "give her the letter from her brother", now=T0, by="Ann", limit=10, builder=True
    )
    # ambient, naming no one present: only the reminder makes it worth asking
    hear(brain, "Mira just walked past the window.", speaker="Alice")
    report = run(sleep_tick(brain, T0))
    assert report["woke"]
    message = model.requests[0].messages[-1]["content"]
    assert "give her the letter from her brother" in message
    # the reminder is not counted as fired: the awake turn that answers it counts it
    assert Reminders(brain.state).all()[0]["fired_count"] == 0


def test_nothing_that_needs_it_costs_nothing():
    brain = sleeper(ScriptedModel())
    hear(brain, "Nice weather today.", speaker="Alice")  # names no one
    hear(brain, "Aria, wake up!", speaker="Alice")  # urgent: wakes a light sleeper by itself
    assert sleep_turn(brain, T0) is None
    deep = sleeper(ScriptedModel(), depth=life.DEEP)
    hear(deep, "Carol, nice weather.", speaker="Alice")  # talk among others: not in deep sleep
    assert sleep_turn(deep, T0) is None
    off = sleeper(ScriptedModel(), triage_enabled=False)
    hear(off, "Carol, the library is on fire!", speaker="Alice")
    assert sleep_turn(off, T0) is None


def test_one_sleep_turn_an_interval():
    model = ScriptedModel(reply(("stay_asleep", {})))
    brain = sleeper(model, triage_interval_minutes=10)
    hear(brain, "Carol, look at this", speaker="Alice")
    run(sleep_tick(brain, T0))
    hear(brain, "Carol, look again", speaker="Alice")
    assert sleep_turn(brain, T0 + timedelta(minutes=5)) is None
    assert len(model.requests) == 1


def test_no_sleep_turn_while_compacting():
    brain = make_assistant(ScriptedModel(), world=FakeWorld(("Alice", "Carol")))
    brain.journal.add("a fact worth keeping", author="Aria", now=T0)
    brain.lifecycle.go_to_sleep(
        T0, depth=life.DEEP, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    assert brain.lifecycle.phase == life.COMPACTING
    hear(brain, "Aria, are you there?", event_type="whisper", speaker="Bob")
    assert sleep_turn(brain, T0) is None
    assert sleep_tick(brain, T0, prompt=True) is None  # a word heard between ticks: nothing
    # once dreaming begins, what was heard is considered
    brain.lifecycle.finish_compacting()
    assert sleep_turn(brain, T0) is not None


# ---- a wake never waits on the token budget --------------------------------------------------


def spend(brain, tokens, now=T0):
    brain.record_reply(
        ChatReply(
            content="",
            tool_calls=[],
            finish_reason="stop",
            usage=TokenUsage(prompt=tokens, completion=0),
        ),
        now,
    )


def compacting_sleeper(**config):
    brain = make_assistant(ScriptedModel(), token_budget_per_day=1000, **config)
    brain.journal.add("a fact worth keeping", author="Aria", now=T0)
    brain.lifecycle.go_to_sleep(
        T0, hours=1, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    assert brain.lifecycle.phase == life.COMPACTING
    spend(brain, 5000)
    assert brain.budget_spent(T0)
    return brain


def test_a_spent_budget_does_not_hold_a_scheduled_wake():
    brain = compacting_sleeper()
    wake_at = T0 + timedelta(hours=1, minutes=1)
    assert sleep_tick(brain, wake_at) is None  # no model call: the budget is spent
    check = brain.lifecycle.apply_wake_conditions([], wake_at)
    assert brain.lifecycle.mode == life.AWAKE and not check.deferred
    assert "token budget" in brain.state.get(life.TRANSITION_REASON)
    assert len(brain.journal.unconsolidated()) == 1  # left for the next sleep, nothing lost


def test_a_spent_budget_does_not_hold_an_urgent_wake_in_light_sleep():
    brain = compacting_sleeper()
    event = hear(brain, "Aria, help!", event_type="whisper", speaker="Bob")
    brain.lifecycle.apply_wake_conditions([event], T0 + timedelta(minutes=1))
    assert brain.lifecycle.mode == life.AWAKE
    assert "Urgent event" in brain.state.get(life.TRANSITION_REASON)
    # without a spent budget the same wake is held while compacting
    held = make_assistant(ScriptedModel())
    held.journal.add("a fact worth keeping", author="Aria", now=T0)
    held.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="builder", enforce_safeguards=False)
    check = held.lifecycle.apply_wake_conditions([event], T0 + timedelta(minutes=1))
    assert check.deferred and held.asleep


def test_a_sleep_turn_is_a_model_call_and_the_budget_counts_it():
    model = ScriptedModel(reply(("stay_asleep", {}), prompt=300))
    brain = sleeper(model, token_budget_per_hour=1000)
    hear(brain, "Carol, look at this", speaker="Alice")
    run(sleep_tick(brain, T0))
    assert brain.budget().spent(T0, T0)["hour"] == 310
    spend(brain, 1000)
    hear(brain, "Carol, look again", speaker="Alice")
    assert sleep_tick(brain, T0 + timedelta(hours=0, minutes=30)) is None  # spent: no call


def test_the_rehearsal_model_answers_a_sleep_turn():
    from ai_assistant.offline.rehearsal import RehearsalResponder

    registry = default_registry()

    def decide(line, kind="say"):
        request = {
            "model": "rehearsal",
            "messages": [
                {"role": "system", "content": "You are Aria, a character in a text game."},
                {
                    "role": "user",
                    "content": f'asleep\n<event type="{kind}" from="Bob">{line}</event>',
                },
            ],
            "tools": registry.schemas(SLEEP_TURN),
            "tool_choice": "required",
        }
        body = RehearsalResponder().respond(request).body
        (call,) = body["choices"][0]["message"]["tool_calls"]
        json.loads(call["function"]["arguments"])
        return call["function"]["name"]

    assert decide("Carol, the library is on fire!") == "wake_up"
    assert decide("are you awake?", kind="whisper") == "wake_up"
    assert decide("Carol, nice weather today.") == "stay_asleep"


# ---- the shell: a word heard between two sleep ticks -----------------------------------------

from evennia.utils.test_resources import EvenniaCommandTest  # noqa: E402

from ai_assistant.testing.server import tool_call, tool_reply  # noqa: E402

from .helpers import AssistantTestCase  # noqa: E402
from .test_prompt_start import PromptStartCase  # noqa: E402


class TestAWordHeardAsleepIsConsideredAtOnce(PromptStartCase):
    def whisper_back_and_noop(self):
        self.responder.add(
            tool_reply(tool_call("whisper", {"target": "Char", "text": "I am up. (test)"})),
            tool_reply(tool_call("noop", {})),
        )

    def test_a_light_sleeper_wakes_for_a_whisper_without_waiting_for_its_tick(self):
        self.handler.sleep(hours=1, depth="light")
        self.whisper_back_and_noop()
        self.char1.execute_cmd("whisper Aria = wake up, please")
        self.reactor.iterate(6)
        # no sleep tick ran: the whisper itself asked for the check, and the answer
        assert self.handler.tick_count == 0
        assert not self.handler.brain.asleep
        assert "Urgent event: whisper from Char" in self.script.db.mode_transition_reason
        assert len(self.responder.requests) == 2
        assert "wake up, please" in self.user_message(0)
        assert self.pending() == [] and not self.handler.in_flight

    def test_a_deep_sleeper_is_asked_at_once_and_its_wake_up_wakes_it(self):
        self.handler.sleep(hours=1, depth="deep")
        self.responder.add(tool_reply(tool_call("wake_up", {"reason": "Char needs me"})))
        self.whisper_back_and_noop()
        self.char1.execute_cmd("whisper Aria = the vault is open, come quick")
        self.reactor.iterate(10)
        assert self.handler.tick_count == 0
        first = self.responder.requests[0]
        assert {t["function"]["name"] for t in first["tools"]} == SLEEP_TOOLS
        assert first["tool_choice"] == "required"
        assert not self.handler.brain.asleep
        assert self.script.db.mode_transition_reason == "Char needs me"
        assert self.script.db.sleep_cooldown_until
        # woken, it answers the whisper in the same breath
        assert len(self.responder.requests) == 3
        assert "the vault is open" in self.user_message(1)
        assert self.pending() == []

    def test_a_light_sleeper_considers_talk_naming_someone_present_at_once(self):
        self.handler.sleep(hours=1, depth="light")
        self.tick(60)  # one sleep tick: the handler knows it sleeps, as after any tick
        ticks = self.handler.tick_count
        self.responder.add(tool_reply(tool_call("wake_up", {"reason": "a fire!"})))
        self.char1.execute_cmd("say Char2, the library is on fire!")
        self.reactor.iterate(6)
        assert self.handler.tick_count == ticks  # not the ticker: the line asked for it
        (request,) = self.responder.requests
        assert {t["function"]["name"] for t in request["tools"]} == SLEEP_TOOLS
        assert "the library is on fire" in request["messages"][-1]["content"]
        assert not self.handler.brain.asleep

    def test_talk_naming_no_one_asks_for_nothing_asleep_or_awake(self):
        self.handler.sleep(hours=1, depth="light")
        self.tick(60)
        self.char1.execute_cmd("say nice weather today")  # names no one present
        assert self.reactor.due == []
        self.handler.wake()
        self.handler.sleep(hours=1, depth="deep")  # deep: talk among others waits for the tick
        self.char1.execute_cmd("say Char2, nice weather")
        assert self.reactor.due == []
        self.handler.wake()  # awake: it waits for the tick, as always
        self.char1.execute_cmd("say Char2, nice weather again")
        assert self.reactor.due == [] and self.responder.requests == []

    def test_a_deep_sleeper_that_stays_asleep_keeps_the_whisper_queued(self):
        self.handler.sleep(hours=1, depth="deep")
        self.responder.add(tool_reply(tool_call("stay_asleep", {})))
        self.char1.execute_cmd("whisper Aria = psst")
        self.reactor.iterate(6)
        assert self.handler.brain.asleep and len(self.responder.requests) == 1
        assert [e.text for e in self.pending()] == ["psst"]


# ---- the shell: @assistant/wait ----------------------------------------------------------


class TestWaitCommand(AssistantTestCase, EvenniaCommandTest):
    def cmd(self, args, expected=None, **kwargs):
        from ai_assistant import commands

        return self.call(commands.CmdAssistant(), args, expected, **kwargs)

    def test_bad_minutes_are_refused_and_change_nothing(self):
        self.handler.set_option("max_wait_minutes", "30")
        for argument, said in (
            ("", "Give the minutes"),
            ("soon", "'soon' is not a number of minutes"),
            ("0", "0 minutes is not allowed"),
            ("-5 now", "-5 minutes is not allowed"),
            ("30.5", "at most 30 (max_wait_minutes)"),
            ("nan", "nan minutes is not allowed"),
        ):
            text = self.cmd(f"/wait Aria={argument}")
            assert text.startswith("Not changed.") and said in text, (argument, text)
            assert self.script.db.wait_until is None and self.script.db.wait_reason is None
        assert "waits until" in self.cmd("/wait Aria=30")  # the most allowed
        assert self.script.db.wait_reason == "told to wait by Char"

    def test_asleep_it_is_refused(self):
        self.handler.sleep(hours=1)
        text = self.cmd("/wait Aria=5")
        assert "Not changed" in text and "asleep" in text
        assert self.script.db.wait_until is None

    def test_a_wait_holds_turns_until_a_direct_word_and_status_shows_it(self):
        self.handler.set_option("respond_to_ambient", "true")
        text = self.cmd("/wait Aria=15 the play is on")
        assert "Aria waits until" in text
        assert self.script.db.wait_reason == "the play is on (set by Char)"
        status = self.cmd("/status Aria")
        assert "waiting until" in status and "the play is on (set by Char)" in status
        self.char2.execute_cmd("say what a fine play")  # ambient: held by the wait
        self.tick()
        assert self.responder.requests == []
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.char1.execute_cmd("whisper Aria = are you there?")  # a direct word ends it
        self.tick()
        assert len(self.responder.requests) == 1
        assert self.script.db.wait_until is None

    def test_when_the_wait_is_over_it_is_told_why_it_waited(self):
        self.cmd("/wait Aria=2 quiet, please")
        self.tick(60)
        assert self.responder.requests == []
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.tick(90)
        (request,) = self.responder.requests
        message = request["messages"][-1]["content"]
        assert "Your wait of 2 minutes is over" in message
        assert "quiet, please (set by Char)" in message


def test_a_wake_up_without_a_reason_still_wakes_it():
    # the decision is the call: a sleep turn has no second reply to mend a refused one
    model = ScriptedModel(reply(("wake_up", {})))
    brain = sleeper(model)
    hear(brain, "Carol, the library is on fire!", speaker="Alice")
    seen = watch_transitions(brain)
    report = run(sleep_tick(brain, T0))
    assert report["woke"] and report["malformed"] is None and not brain.asleep
    (transition,) = seen
    assert transition == (life.AWAKE, "something heard needed me")
