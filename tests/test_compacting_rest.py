"""
Compacting rests instead of failing every tick: an entry the model keeps failing on rests (kept
as it is, left out of consolidation, never pruned for it, tried again after a builder's clear),
and a sleep whose compacting calls keep failing moves on to dreaming, the entries left for the
next sleep, the debt kept; both said in the status and the sleep's record.

"""

from datetime import timedelta

from ai_assistant import lifecycle as life
from ai_assistant.debt import SleepDebt
from ai_assistant.llm.chat import CONNECTION, LLMError
from ai_assistant.sleep.consolidating import MAX_ENTRY_FAILURES, MAX_SLEEP_FAILURES
from ai_assistant.sleep.tick import sleep_tick
from ai_assistant.memory.sleep_history import SleepHistory
from ai_assistant.status import status_of

from .core_fakes import T0, ScriptedModel, active, drive_inline, facts, json_reply, make_assistant


def asleep(model, entries, **config):
    assistant = make_assistant(model, **config)
    for text in entries:
        assistant.journal.add(text, author="Aria", now=T0, importance=7)
    active(assistant)
    assistant.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="builder")
    return assistant


def tick(assistant, minutes=0):
    return drive_inline(sleep_tick(assistant, T0 + timedelta(minutes=minutes)))


def test_an_entry_the_model_keeps_failing_on_rests_and_the_others_are_consolidated():
    broken = [json_reply('{"entries": [') for _ in range(MAX_ENTRY_FAILURES)]
    model = ScriptedModel(*broken, facts(("j000001", ["The well is dry."])))
    # one entry a call: the first entry breaks the model's replies, the second does not
    assistant = asleep(
        model,
        ["a line the model cannot file", "Tobin says the well is dry"],
        scoring_batch_size=1,
        trust_turn_importance=True,
    )
    reports = [tick(assistant, minutes) for minutes in range(MAX_ENTRY_FAILURES)]
    assert all(report["error"].startswith("invalid_response") for report in reports)
    assert reports[-1]["entries_rested"] == 1
    first = assistant.journal.get("j000000")
    assert first["rested"]["failures"] == MAX_ENTRY_FAILURES
    assert first["rested"]["error"].startswith("invalid_response")
    # still in the journal as it was, unconsolidated, and no longer asked about
    assert first["content"] == "a line the model cannot file" and not first.get("consolidated")
    assert [entry["id"] for entry in assistant.journal.unconsolidated()] == ["j000001"]
    assert assistant.journal.rested_count() == 1
    assert status_of(assistant, T0).journal_rested == 1

    report = tick(assistant, 10)
    assert report["consolidated"] == 1 and report["error"] is None
    assert "a line the model cannot file" not in model.requests[-1].messages[-1]["content"]
    assert assistant.lifecycle.phase == life.DREAMING
    assert len(model.requests) == MAX_ENTRY_FAILURES + 1  # no call for it after it rested


def test_a_server_that_is_away_rests_no_entry_but_compacting_rests_for_the_sleep():
    failures = [LLMError(CONNECTION, "refused") for _ in range(MAX_SLEEP_FAILURES)]
    model = ScriptedModel(*failures)
    assistant = asleep(
        model, ["one thing", "another thing"], scoring_batch_size=2, trust_turn_importance=True
    )
    SleepDebt(assistant.state).add(3, "a long day")
    debt = SleepDebt(assistant.state).points
    for minutes in range(MAX_SLEEP_FAILURES - 1):
        assert "rested" not in tick(assistant, minutes)
        assert assistant.lifecycle.phase == life.COMPACTING
    report = tick(assistant, MAX_SLEEP_FAILURES)
    assert (
        report["rested"] == f"after {MAX_SLEEP_FAILURES} failed ticks in a row (last: connection)"
    )
    # the sleep goes on to dreaming; nothing consolidated, nothing lost, no entry blamed
    assert assistant.lifecycle.phase == life.DREAMING
    progress = assistant.state.get(life.PROGRESS)
    assert progress["rested"] == report["rested"] and not progress["completed"]
    assert len(assistant.journal.unconsolidated()) == 2 and assistant.journal.rested_count() == 0
    assert status_of(assistant, T0).consolidation_progress["rested"] == report["rested"]
    assert SleepHistory(assistant.state).current()["compacting_rested"] == report["rested"]

    assistant.lifecycle.wake_up(T0 + timedelta(hours=1), "morning")
    record = SleepHistory(assistant.state).recent(1)[0]
    assert "compacting rested after 5 failed ticks" in record["summary"].lower()
    assert "compacting" not in record["phases"]
    assert SleepDebt(assistant.state).points == debt  # a sleep cut short pays no debt


def test_a_success_between_failures_keeps_compacting_going():
    model = ScriptedModel(
        *[LLMError(CONNECTION, "refused") for _ in range(MAX_SLEEP_FAILURES - 1)],
        facts(("j000000", ["A thing."])),
        *[LLMError(CONNECTION, "refused") for _ in range(MAX_SLEEP_FAILURES - 1)],
    )
    assistant = asleep(
        model, ["a thing", "another"], scoring_batch_size=1, trust_turn_importance=True
    )
    reports = [tick(assistant, minutes) for minutes in range(2 * MAX_SLEEP_FAILURES - 1)]
    assert reports[MAX_SLEEP_FAILURES - 1]["consolidated"] == 1
    assert not any(report.get("rested") for report in reports)
    assert assistant.lifecycle.phase == life.COMPACTING


def test_lifting_the_rests_lets_the_entries_be_consolidated_again():
    model = ScriptedModel(
        *[json_reply("not json") for _ in range(MAX_ENTRY_FAILURES)],
        facts(("j000000", ["The bell is cracked."])),
    )
    assistant = asleep(
        model, ["the bell is cracked"], scoring_batch_size=1, trust_turn_importance=True
    )
    for minutes in range(MAX_ENTRY_FAILURES):
        tick(assistant, minutes)
    assert assistant.journal.rested_count() == 1 and not assistant.journal.unconsolidated()
    assert assistant.journal.lift_rests() == 1
    entry = assistant.journal.get("j000000")
    assert "rested" not in entry and "compacting_failures" not in entry
    assert assistant.journal.rested_count() == 0 and assistant.journal.lift_rests() == 0
    # (the sleep moved on when nothing was left: the next one takes it)
    assistant.lifecycle.wake_up(T0 + timedelta(hours=1), "morning")
    assistant.state.delete(life.COOLDOWN_UNTIL)
    active(assistant)
    assistant.lifecycle.go_to_sleep(T0 + timedelta(hours=2), reason="rest", initiated_by="builder")
    report = tick(assistant, 180)
    assert report["consolidated"] == 1
    assert assistant.journal.get("j000000")["consolidated"]


def test_a_resting_entry_is_never_pruned_and_a_resting_critical_bookmark_no_longer_pends():
    model = ScriptedModel(*[json_reply("{}") for _ in range(MAX_ENTRY_FAILURES)])
    assistant = make_assistant(model, scoring_batch_size=1, trust_turn_importance=True)
    assistant.journal.add("the vault code is 4-4-1", author="Aria", now=T0, salience=3)
    assert assistant.journal.critical_bookmark_pending()
    active(assistant)
    assistant.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="builder")
    for minutes in range(MAX_ENTRY_FAILURES):
        tick(assistant, minutes)
    assert assistant.journal.get("j000000")["rested"]
    assert not assistant.journal.critical_bookmark_pending()
    from ai_assistant.sleep.housekeeping import keep_house

    keep_house(assistant, T0 + timedelta(days=400))
    assert assistant.journal.get("j000000")["content"] == "the vault code is 4-4-1"
