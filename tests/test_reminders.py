"""Contextual triggers: reminders set by the assistant (set_reminder) or a builder
(@assistant/trigger) come back in the turn whose events mention their pattern, keep their
audience, count their firings once per handled turn and expire."""

import json

import pytest

from ai_assistant.llm.chat import ToolCall
from ai_assistant.memory.audience import served_by
from ai_assistant.memory.store import DictStore
from ai_assistant.memory.reminders import Reminders, TriggerError
from ai_assistant.tools.base import TURN

from .core_fakes import T0, ScriptedModel, hear, make_assistant, reply, run_tick


def test_add_validates_and_changes_nothing_on_bad_input():
    reminders = Reminders(DictStore())
    for pattern, reminder, fires, message in (
        ("", "x", 3, "pattern"),
        ("x" * 81, "x", 3, "pattern"),
        ("Mira", "", 3, "reminder"),
        ("Mira", "x" * 301, 3, "reminder"),
        ("Mira", "x", 0, "max_fires"),
        ("Mira", "x", 21, "max_fires"),
        ("Mira", "x", "3", "max_fires"),
    ):
        with pytest.raises(TriggerError, match=message):
            reminders.add(pattern, reminder, now=T0, by="Aria", limit=5, max_fires=fires)
    assert reminders.all() == []
    for number in range(2):
        reminders.add(f"word{number}", "x", now=T0, by="Aria", limit=2)
    with pytest.raises(TriggerError, match="the most is 2"):
        reminders.add("more", "x", now=T0, by="Aria", limit=2)
    assert [t["id"] for t in reminders.all()] == ["t1", "t2"]
    with pytest.raises(TriggerError, match="No reminder 't9'"):
        reminders.remove("t9")
    assert reminders.remove("t1")["pattern"] == "word0"
    assert reminders.add("again", "x", now=T0, by="Aria", limit=2)["id"] == "t3"


def test_matching_is_by_whole_words_and_respects_the_audience():
    reminders = Reminders(DictStore())
    reminders.add("Al", "ask about the map", now=T0, by="Aria", limit=5)
    reminders.add("vault", "the code is secret", now=T0, by="Aria", limit=5, audience=["#7"])
    room = served_by(["#7", "#8"])
    assert [m.id for m in reminders.matching(["Bob: always the vault"], room)] == []
    assert [m.id for m in reminders.matching(["al said: the Vault!"], served_by(["#7"]))] == [
        "t1",
        "t2",
    ]
    line = reminders.matching(["Al"], room)[0].line
    assert "when 'Al' comes up" in line and "ask about the map" in line
    # shown as data, with who set it and where (not as the assistant's own wish)
    assert line.startswith("- [reminder t1, set by Aria, in public,")


def test_firing_counts_and_expires():
    reminders = Reminders(DictStore())
    reminders.add("Mira", "give her the letter", now=T0, by="Aria", limit=5, max_fires=2)
    reminders.fired(["t1"])
    assert reminders.all()[0]["fired_count"] == 1
    reminders.fired(["t1"])
    assert reminders.all() == []


def test_set_reminder_tool_keeps_the_conversations_audience():
    assistant = make_assistant(ScriptedModel())
    ctx = assistant.tool_context(T0, {}, audience=["#7"])
    arguments = {"pattern": "Mira", "reminder": "give her the letter", "max_fires": 2}
    result = assistant.registry.dispatch(
        ctx, ToolCall("1", "set_reminder", json.dumps(arguments)), TURN
    )
    assert result.ok and "Reminder t1 set" in result.content
    trigger = Reminders(assistant.state).all()[0]
    assert trigger["audience"] == ["#7"] and trigger["max_fires"] == 2 and trigger["by"] == "Aria"
    bad = assistant.registry.dispatch(
        ctx, ToolCall("2", "set_reminder", json.dumps({**arguments, "max_fires": 99})), TURN
    )
    assert not bad.ok and "max_fires" in bad.content
    assert len(Reminders(assistant.state).all()) == 1


def test_set_reminder_over_the_limit_is_refused():
    assistant = make_assistant(ScriptedModel(), max_triggers=1)
    ctx = assistant.tool_context(T0, {})
    call = json.dumps({"pattern": "Mira", "reminder": "x"})
    assert assistant.registry.dispatch(ctx, ToolCall("1", "set_reminder", call), TURN).ok
    refused = assistant.registry.dispatch(ctx, ToolCall("2", "set_reminder", call), TURN)
    assert not refused.ok and "the most is 1" in refused.content


def test_a_matching_event_brings_the_reminder_into_the_turn_once_per_turn():
    model = ScriptedModel(*[reply(("noop", {})) for _ in range(3)])
    assistant = make_assistant(model)
    Reminders(assistant.state).add(
        "Mira", "give her the letter", now=T0, by="Builder", limit=5, max_fires=2
    )
    hear(assistant, "Aria, have you seen the weather?")
    run_tick(assistant)
    assert "give her the letter" not in model.requests[-1].messages[-1]["content"]
    hear(assistant, "Aria, Mira is looking for you")
    run_tick(assistant)
    assert "give her the letter" in model.requests[-1].messages[-1]["content"]
    assert Reminders(assistant.state).all()[0]["fired_count"] == 1
    hear(assistant, "Aria, did Mira find you?")
    run_tick(assistant)
    assert "give her the letter" in model.requests[-1].messages[-1]["content"]
    assert Reminders(assistant.state).all() == []  # fired twice: gone
