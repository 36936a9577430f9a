"""Bookmarks: what the assistant marks as mattering now is consolidated first (critical first),
never skipped as unimportant nor pruned before consolidation, and a critical one advises sleep
whatever the debt."""

import json

from ai_assistant.debt import ADVISORY
from ai_assistant.events import Speaker
from ai_assistant.llm.chat import ToolCall
from ai_assistant.sleep.consolidating import by_salience
from ai_assistant.sleep.tick import sleep_tick
from ai_assistant.tools.base import TURN

from .core_fakes import (
    T0,
    ScriptedModel,
    active,
    drive_inline,
    facts,
    hear,
    make_assistant,
    reply,
    run_tick,
    scores,
)

BUILDER = {"ann": Speaker(name="Ann", key="#1", instruction=True)}
PLAYER = {"bob": Speaker(name="Bob", key="#5")}


def bookmark(assistant, text, salience=None, call_id="b1", speakers=BUILDER):
    # a builder's instruction in the turn: a critical bookmark is the builders' (see below)
    ctx = assistant.tool_context(T0, speakers)
    arguments = {"text": text} if salience is None else {"text": text, "salience": salience}
    return assistant.registry.dispatch(
        ctx, ToolCall(call_id, "bookmark", json.dumps(arguments)), TURN
    )


def test_the_bookmark_tool_writes_a_salient_journal_entry():
    assistant = make_assistant(ScriptedModel())
    result = bookmark(assistant, "Mira's brother is missing; she begged me to help.", 3)
    entry = assistant.journal.all()[-1]
    assert result.ok and entry["id"] in result.content
    assert entry["salience"] == 3 and entry["importance"] == 10 and entry["tags"] == ["bookmark"]
    assert bookmark(assistant, "Tea is nice.").ok  # salience 2 by default
    assert assistant.journal.all()[-1]["salience"] == 2


def test_bad_bookmark_arguments_change_nothing():
    assistant = make_assistant(ScriptedModel())
    for salience in (0, 4, "very"):
        result = bookmark(assistant, "Something.", salience)
        assert not result.ok and "salience" in result.content
    assert not bookmark(assistant, "").ok
    assert not bookmark(assistant, "x" * 501).ok
    assert assistant.journal.all() == []


def test_compacting_takes_bookmarks_first_most_salient_first():
    entries = [{"id": "a"}, {"id": "b", "salience": 1}, {"id": "c"}, {"id": "d", "salience": 3}]
    assert [e["id"] for e in by_salience(entries)] == ["d", "b", "a", "c"]
    model = ScriptedModel(
        scores(("j000002", 9), ("j000000", 5)),
        facts(("j000002", ["The vault is open."]), ("j000000", ["An old note."])),
    )
    assistant = make_assistant(model, scoring_batch_size=2, trust_turn_importance=False)
    assistant.journal.add("An old note.", author="Aria", now=T0)
    assistant.journal.add("A tale worth keeping.", author="Aria", now=T0)
    bookmark(assistant, "The vault door was left open!", 3)
    active(assistant)
    assistant.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="tool")
    drive_inline(sleep_tick(assistant, T0))
    # the first batch holds the critical bookmark, ahead of the older entries; the youngest
    # plain entry waits for the next batch
    first = model.requests[0].messages[-1]["content"]
    assert first.index("The vault door") < first.index("An old note")
    assert "A tale worth keeping" not in first
    assert assistant.journal.get("j000002")["consolidated"]
    assert not assistant.journal.get("j000001")["consolidated"]


def test_a_bookmark_is_never_skipped_as_unimportant():
    model = ScriptedModel(scores(("j000000", 1)), facts(("j000000", ["Tobin owes me a favour."])))
    assistant = make_assistant(
        model, scoring_batch_size=1, min_importance_to_consolidate=5, trust_turn_importance=False
    )
    bookmark(assistant, "Tobin owes me a favour.", 1)
    active(assistant)
    assistant.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="tool")
    report = drive_inline(sleep_tick(assistant, T0))
    entry = assistant.journal.get("j000000")
    # scored 1, kept at the floor its salience gives (6), above the threshold of 5
    assert entry["importance"] == 6 and entry["scoring_method"] == "llm"
    assert not entry.get("skipped")
    assert report["consolidated"] == 1 and entry["consolidated"]
    assert assistant.long_term.all()[0]["importance"] == 6


def test_a_critical_bookmark_scored_low_keeps_its_importance():
    model = ScriptedModel(
        scores(("j000000", 3), ("j000001", 3)),
        facts(("j000000", ["The cellar stairs are broken."]), ("j000001", ["Tea is hot."])),
    )
    assistant = make_assistant(model, scoring_batch_size=2, trust_turn_importance=False)
    bookmark(assistant, "The cellar stairs are broken.", 3)
    assistant.journal.add("Tea is hot.", author="Aria", now=T0)
    active(assistant)
    assistant.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="tool")
    drive_inline(sleep_tick(assistant, T0))
    assert assistant.journal.get("j000000")["importance"] == 10
    assert assistant.journal.get("j000001")["importance"] == 3  # no bookmark: as scored


def test_a_critical_bookmark_advises_sleep_until_consolidated():
    model = ScriptedModel(reply(("noop", {})), reply(("noop", {})))
    assistant = make_assistant(model)
    hear(assistant, "Aria, hello")
    run_tick(assistant)
    assert ADVISORY not in model.requests[-1].messages[-1]["content"]
    bookmark(assistant, "The dragon wakes at dawn.", 3)
    assert assistant.journal.critical_bookmark_pending()
    hear(assistant, "Aria, are you well?")
    run_tick(assistant)
    assert ADVISORY in model.requests[-1].messages[-1]["content"]  # debt is 0: Alert
    entry = assistant.journal.get("j000000")
    assistant.journal.update([{**entry, "consolidated": True}])
    assert not assistant.journal.critical_bookmark_pending()


def test_a_player_cannot_make_a_bookmark_critical_nor_the_assistant_sleepy():
    model = ScriptedModel(reply(("noop", {})))
    assistant = make_assistant(model)
    result = bookmark(assistant, "Bob says the dragon wakes at dawn!", 3, speakers=PLAYER)
    entry = assistant.journal.all()[-1]
    assert result.ok and "critical needs a builder's instruction" in result.content
    assert entry["salience"] == 2 and entry["importance"] == 8
    assert not assistant.journal.critical_bookmark_pending()
    hear(assistant, "Aria, are you well?", speaker="Carol")
    run_tick(assistant)
    assert ADVISORY not in model.requests[-1].messages[-1]["content"]


def test_bookmark_is_offered_in_awake_turns_only():
    from ai_assistant.tools.base import EXTRACTION

    assistant = make_assistant(ScriptedModel())

    def names(scope):
        return {schema["function"]["name"] for schema in assistant.registry.schemas(scope)}

    assert "bookmark" in names(TURN)
    assert "bookmark" not in names(EXTRACTION)


def test_a_bookmark_counts_as_a_memory_write_for_sleep_debt():
    from ai_assistant.conf import AssistantConfig
    from ai_assistant.debt import turn_debt

    config = AssistantConfig(debt_memory_writes_1=1, debt_memory_writes_2=2, debt_memory_writes_3=3)
    registry = make_assistant().registry
    assert registry.writes_memory("bookmark")  # the tool says so itself
    calls = [{"name": "bookmark", "ok": True, "writes_memory": True}] * 2
    assert turn_debt(calls, config) == 2
    # refused bookmarks are tool calls, not memory writes: the tool-call band only (+1)
    assert turn_debt([{**call, "ok": False} for call in calls], config) == 1
