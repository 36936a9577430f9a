"""
The sleep economy: sleep debt and its levels, the turn's advisory, the builder's debt, sleeping
off the debt when idle, the sleep history, and a quiet day's sleep that costs no model call.

"""

import dataclasses
import json
from datetime import timedelta

import pytest
from evennia.utils.test_resources import EvenniaCommandTest

from ai_assistant import lifecycle as life
from ai_assistant.conf import AssistantConfig, ConfigError, parse_override, resolve_config
from ai_assistant.tools import default_registry
from ai_assistant.debt import ADVISORY, DIRECTIVE, SleepDebt, banded, level_of, turn_debt, turn_id
from ai_assistant.driver import drive, inline
from ai_assistant.errors import Refused
from ai_assistant.llm.chat import RATE_LIMIT, LLMError
from ai_assistant.memory.store import DictStore
from ai_assistant.sleep.tick import sleep_tick
from ai_assistant.memory.sleep_history import SleepHistory
from ai_assistant.status import status_of

from .core_fakes import T0, ScriptedModel, hear, make_assistant, reply, run_tick
from .core_fakes import json_reply
from .helpers import AssistantTestCase


def calls(writes=0, others=0, ok=True):
    writes_made = [{"name": "add_journal_entry", "ok": ok, "writes_memory": True}] * writes
    return writes_made + [{"name": "look", "ok": True}] * others


def active(assistant, activity=10):
    assistant.state.set(life.ACTIVITY, activity)
    return assistant


# ---- scoring a turn -------------------------------------------------------------------------


@pytest.mark.parametrize("count,score", [(0, 0), (1, 1), (3, 1), (4, 2), (8, 2), (9, 3), (50, 3)])
def test_memory_write_bands(count, score):
    # each write is a tool call too, but below 41 the tool-call score never beats it
    assert turn_debt(calls(writes=count), AssistantConfig()) == score
    assert banded(count, AssistantConfig().debt_memory_thresholds()) == score


@pytest.mark.parametrize(
    "count,score", [(0, 0), (1, 1), (15, 1), (16, 2), (40, 2), (41, 3), (100, 3)]
)
def test_tool_call_bands(count, score):
    assert turn_debt(calls(others=count), AssistantConfig()) == score


def test_the_larger_score_counts_and_refused_writes_do_not():
    config = AssistantConfig()
    assert turn_debt(calls(writes=9, others=0), config) == 3  # writes win
    assert turn_debt(calls(writes=1, others=20), config) == 2  # tool calls win
    assert turn_debt(calls(writes=9, ok=False), config) == 1  # 9 tool calls, no writes


def test_every_memory_tool_is_a_write():
    # each tool says whether it writes memory; a turn's records carry it to the debt
    registry = default_registry()
    writers = {name for name in registry.names() if registry.writes_memory(name)}
    assert writers == {"add_journal_entry", "update_entity_observation", "memory_edit", "bookmark"}
    config = AssistantConfig()
    names = ["add_journal_entry", "update_entity_observation", "memory_edit", "memory_edit"]
    records = [{"name": n, "ok": True, "writes_memory": registry.writes_memory(n)} for n in names]
    assert turn_debt(records, config) == 2


def test_thresholds_are_configurable_and_validated():
    config = AssistantConfig(debt_memory_writes_1=2, debt_memory_writes_2=3, debt_memory_writes_3=5)
    assert turn_debt(calls(writes=1), config) == 1  # one tool call still scores 1
    assert banded(1, config.debt_memory_thresholds()) == 0
    assert banded(5, config.debt_memory_thresholds()) == 3
    with pytest.raises(ConfigError) as err:
        parse_override("debt_tool_calls_2", "50")
    assert "debt_tool_calls_1 < debt_tool_calls_2 < debt_tool_calls_3" in str(err.value)
    with pytest.raises(ConfigError) as err:
        resolve_config({"debt_memory_writes_1": 4})
    assert "debt_memory_writes_1 < debt_memory_writes_2" in str(err.value)
    with pytest.raises(ConfigError):
        parse_override("debt_tool_calls_1", "0")
    for key in ("debt_memory_writes_1", "auto_sleep_at_must_sleep_idle_minutes"):
        assert AssistantConfig.model_fields[key].description


def test_the_configuration_doc_lists_the_new_keys_as_in_code():
    from pathlib import Path

    from ai_assistant.conf import markdown_table

    doc = (Path(__file__).resolve().parent.parent / "docs" / "configuration.md").read_text()
    assert markdown_table() in doc


@pytest.mark.parametrize(
    "points,level",
    [(0, "Alert"), (3, "Alert"), (4, "Drowsy"), (6, "Drowsy"), (7, "Sleepy"), (9, "Sleepy")]
    + [(10, "Must Sleep"), (40, "Must Sleep")],
)
def test_levels(points, level):
    assert level_of(points) == level


# ---- counting turns ---------------------------------------------------------------------------


def test_a_handled_turn_adds_debt():
    model = ScriptedModel(
        reply(("add_journal_entry", {"content": "Alice likes maps."}), ("say", {"text": "Hi"})),
        reply(("noop", {})),
    )
    assistant = make_assistant(model)
    hear(assistant, "Aria, I like maps")
    outcome = run_tick(assistant)
    # three tool calls (1-15) and one write (1-3): both score 1
    assert outcome.debt_added == 1
    debt = SleepDebt(assistant.state)
    assert debt.points == 1 and debt.turns_since_sleep == 1 and debt.level == "Alert"


def test_a_retried_turn_is_counted_once():
    debt = SleepDebt(DictStore())
    config = AssistantConfig()
    assert debt.add_turn(calls(writes=4), config, turn_id([3, 1])) == 2
    assert debt.add_turn(calls(writes=4), config, turn_id([1, 3])) == 0
    assert debt.points == 2 and debt.turns_since_sleep == 1


def test_a_failed_turn_adds_nothing_and_its_retry_counts_once():
    model = ScriptedModel(LLMError(RATE_LIMIT, "slow down", 429))
    assistant = make_assistant(model)
    hear(assistant, "Aria, hello")
    outcome = run_tick(assistant)
    assert outcome.error and outcome.debt_added == 0
    assert SleepDebt(assistant.state).points == 0
    assistant.client_factory = ScriptedModel(reply(("say", {"text": "Hello"})), reply(("noop", {})))
    outcome = run_tick(assistant, T0 + timedelta(minutes=10))
    assert outcome.debt_added == 1
    assert SleepDebt(assistant.state).turns_since_sleep == 1


def test_a_turn_answering_only_a_notice_is_keyed_by_its_time():
    debt = SleepDebt(DictStore())
    config = AssistantConfig()
    assert debt.add_turn(calls(others=1), config, "notice@2026-11-21T12:00:00+00:00") == 1
    assert debt.add_turn(calls(others=1), config, "notice@2026-11-21T13:00:00+00:00") == 1
    assert debt.turns_since_sleep == 2


def test_debt_survives_a_new_brain_on_the_same_store():
    assistant = make_assistant()
    SleepDebt(assistant.state).add(3, "long day")
    # a reload builds a new brain over the same stored state
    again = dataclasses.replace(assistant, state=assistant.state)
    assert status_of(again, T0).sleep_debt == 3 and status_of(again, T0).debt_level == "Alert"


def test_builder_debt_accepts_only_one_to_three():
    debt = SleepDebt(DictStore())
    for bad in (0, 4, -1, 2.5, True, "2"):
        with pytest.raises(ValueError):
            debt.add(bad, "why")
    with pytest.raises(ValueError):
        debt.add(2, "  ")
    assert debt.points == 0
    assert debt.add(3, "a long siege") == 3


# ---- what the model is told ------------------------------------------------------------------


def last_user_message(model):
    return model.requests[0].messages[-1]["content"]


@pytest.mark.parametrize("points,line", [(6, None), (7, ADVISORY), (10, DIRECTIVE)])
def test_the_turn_message_carries_the_advisory(points, line):
    model = ScriptedModel(reply(("noop", {})))
    assistant = make_assistant(model)
    state = assistant.state
    state.set("sleep_debt", {"points": points})
    hear(assistant, "Aria, hello")
    run_tick(assistant)
    text = last_user_message(model)
    system = model.requests[0].messages[0]["content"]
    assert ADVISORY not in system and DIRECTIVE not in system  # the cached prefix is untouched
    if line is None:
        assert ADVISORY not in text and DIRECTIVE not in text
    else:
        assert text.endswith(line)
    if points >= 10:
        assert "go_to_sleep" in text


# ---- paying it off ----------------------------------------------------------------------------


def test_a_completed_sleep_resets_the_debt():
    assistant = active(make_assistant())
    debt = SleepDebt(assistant.state)
    debt.add(3, "x")
    assistant.lifecycle.go_to_sleep(T0, reason="tired", initiated_by="tool")
    assistant.lifecycle.wake_up(T0 + timedelta(hours=4), "morning")
    assert debt.points == 0 and debt.turns_since_sleep == 0
    assert debt.last_sleep().startswith("2026-11-21T16:00")
    status = status_of(assistant, T0 + timedelta(hours=5))
    assert status.last_sleep == debt.last_sleep() and status.sleep_debt == 0


def test_the_turn_that_begins_a_sleep_counts_its_debt_into_that_sleep():
    # the turn ends with falling asleep: no second call
    model = ScriptedModel(reply(("go_to_sleep", {"duration_hours": 2, "reason": "tired"})))
    assistant = active(make_assistant(model))
    SleepDebt(assistant.state).add(3, "earlier")
    hear(assistant, "Aria, you look tired")
    outcome = run_tick(assistant)
    assert assistant.lifecycle.mode == life.SLEEP and outcome.debt_added == 1
    assert SleepHistory(assistant.state).current()["debt_before"] == 4


def test_a_sleep_cut_short_keeps_the_debt():
    assistant = active(make_assistant())
    assistant.journal.add("Bob lost his key.", author="Aria", now=T0)
    SleepDebt(assistant.state).add(3, "x")
    assistant.lifecycle.go_to_sleep(T0, reason="tired", initiated_by="tool")
    assert assistant.lifecycle.phase == life.COMPACTING
    assistant.lifecycle.wake_up(T0 + timedelta(hours=1), "gave up")
    assert SleepDebt(assistant.state).points == 3


# ---- sleeping it off when idle -------------------------------------------------------------------


def must_sleep(assistant, minutes=30):
    assistant.state.set("sleep_debt", {"points": 10})
    assistant.state.set("last_turn", {"at": "2026-11-21T12:00:00+00:00"})
    return assistant


def test_auto_sleep_is_off_by_default():
    assistant = must_sleep(active(make_assistant()))
    assert run_tick(assistant, T0 + timedelta(hours=5)) is None
    assert assistant.lifecycle.mode == life.AWAKE


def test_auto_sleep_after_quiet_minutes_at_must_sleep():
    assistant = must_sleep(active(make_assistant(auto_sleep_at_must_sleep_idle_minutes=30)))
    assert run_tick(assistant, T0 + timedelta(minutes=29)) is None
    assert assistant.lifecycle.mode == life.AWAKE
    assert run_tick(assistant, T0 + timedelta(minutes=30)) is None
    assert assistant.lifecycle.mode == life.SLEEP
    assert assistant.state.get(life.INITIATED_BY) == "debt"


def test_auto_sleep_waits_for_events_level_and_safeguards():
    assistant = must_sleep(active(make_assistant(auto_sleep_at_must_sleep_idle_minutes=30)))
    assistant.state.set("sleep_debt", {"points": 9})
    run_tick(assistant, T0 + timedelta(hours=1))
    assert assistant.lifecycle.mode == life.AWAKE  # Sleepy is not enough
    # the activity safeguard still applies
    assistant = must_sleep(make_assistant(auto_sleep_at_must_sleep_idle_minutes=30))
    run_tick(assistant, T0 + timedelta(hours=1))
    assert assistant.lifecycle.mode == life.AWAKE
    # pending events mean it is not idle
    assistant = must_sleep(active(make_assistant(auto_sleep_at_must_sleep_idle_minutes=30)))
    hear(assistant, "the wind howls", speaker="Bob")  # ambient: no turn, but not idle
    run_tick(assistant, T0 + timedelta(hours=1))
    assert assistant.lifecycle.mode == life.AWAKE


# ---- the sleep history ---------------------------------------------------------------------------


def run_sleep_tick(assistant, now):
    work = sleep_tick(assistant, now)
    if work is None:
        return None
    results = []
    drive(work, inline).addBoth(results.append)
    return results[0]


def scores(*ids, importance=6):
    items = [{"entry_id": i, "importance": importance} for i in ids]
    return reply(content=json.dumps({"scores": items}), finish_reason="stop")


def facts(entry_id, *texts):
    return reply(
        content=json.dumps({"entries": [{"entry_id": entry_id, "facts": list(texts)}]}),
        finish_reason="stop",
    )


def test_a_sleep_is_recorded_with_counts_calls_and_debt():
    model = ScriptedModel(scores("j000000"), facts("j000000", "Bob lost his key."))
    assistant = active(make_assistant(model))
    assistant.journal.add("Bob lost his key by the well.", author="Aria", now=T0)
    SleepDebt(assistant.state).add(3, "a long day")
    assistant.lifecycle.go_to_sleep(T0, reason="tired", initiated_by="tool", depth="deep")
    assert SleepHistory(assistant.state).current()["quiet"] is False
    for minute in range(1, 40):
        run_sleep_tick(assistant, T0 + timedelta(minutes=minute))
    assistant.lifecycle.wake_up(T0 + timedelta(hours=4), "morning")
    (record,) = SleepHistory(assistant.state).recent(10)
    assert record["id"] == "s1" and record["began"] == "tool" and record["depth"] == "deep"
    assert record["start"].startswith("2026-11-21T12:00") and record["end"].startswith(
        "2026-11-21T16:00"
    )
    assert record["debt_before"] == 3 and record["debt_after"] == 0
    assert record["counts"]["scored"] == 1 and record["counts"]["consolidated"] == 1
    assert record["counts"]["memories"] == 1
    assert record["calls"] == 2 and record["tokens"] == 2 * 110
    assert record["errors"] == 0 and "compacting" in record["phases"]
    assert "links" in record["phases"] and "pruning" in record["phases"]
    assert SleepHistory(assistant.state).current() is None
    status = status_of(assistant, T0 + timedelta(hours=5))
    assert [r["id"] for r in status.recent_sleeps] == ["s1"]


def test_history_keeps_every_sleep_newest_first_and_errors():
    model = ScriptedModel(LLMError(RATE_LIMIT, "slow down", 429))
    assistant = make_assistant(model, min_activity_before_sleep=0, sleep_cooldown_minutes=0)
    assistant.journal.add("Bob lost his key by the well.", author="Aria", now=T0)
    life_ = assistant.lifecycle
    life_.go_to_sleep(T0, reason="a", initiated_by="builder", enforce_safeguards=False)
    run_sleep_tick(assistant, T0 + timedelta(minutes=1))
    life_.wake_up(T0 + timedelta(hours=1), "up")
    for hour, began in ((2, "schedule"), (4, "tool"), (6, "debt")):
        life_.go_to_sleep(T0 + timedelta(hours=hour), reason="b", initiated_by=began)
        life_.wake_up(T0 + timedelta(hours=hour + 1), "up")
    records = SleepHistory(assistant.state).recent(10)
    assert [r["id"] for r in records] == ["s4", "s3", "s2", "s1"]
    assert [r["began"] for r in records] == ["debt", "tool", "schedule", "builder"]
    assert records[-1]["errors"] == 1 and records[-1]["calls"] == 0
    assert "compacting" not in records[-1]["phases"]
    assert len(status_of(assistant, T0).recent_sleeps) == 3
    assert len(SleepHistory(assistant.state).recent(2)) == 2


def test_history_survives_a_new_brain_and_game_time_is_used():
    assistant = active(make_assistant())
    assistant = dataclasses.replace(assistant, game_now=lambda now: now + timedelta(days=100))
    assistant.lifecycle.go_to_sleep(T0, reason="x", initiated_by="tool")
    again = dataclasses.replace(assistant)
    again.lifecycle.wake_up(T0 + timedelta(hours=1), "up")
    (record,) = SleepHistory(again.state).recent(1)
    assert record["start"].startswith("2027-03-01T12:00")
    assert record["end"].startswith("2027-03-01T13:00")


# ---- the quiet day ------------------------------------------------------------------------------------


def slept_once(assistant):
    """A first sleep and its wake: a quiet day is measured against the last sleep."""
    assistant.lifecycle.go_to_sleep(
        T0 - timedelta(hours=10),
        reason="last night",
        initiated_by="builder",
        enforce_safeguards=False,
    )
    assistant.lifecycle.wake_up(T0 - timedelta(hours=6), "morning")
    return assistant


def test_a_quiet_sleep_makes_no_model_call():
    model = ScriptedModel()  # any call fails loudly
    assistant = make_assistant(
        model,
        reflection_threshold=1,
        entity_min_observations=1,
        compact_sleep_threshold=0.01,
        sleep_cooldown_minutes=0,
        min_activity_before_sleep=0,
    )
    slept_once(assistant)
    hear(assistant, "Aria, hello there", now=T0)  # overheard talk would ask for a wake decision
    assistant.lifecycle.go_to_sleep(T0, reason="tired", initiated_by="tool")
    assert SleepHistory(assistant.state).current()["quiet"] is True
    for minute in range(1, 20):
        run_sleep_tick(assistant, T0 + timedelta(minutes=minute))
    assert model.requests == []
    progress = assistant.state.get("dreaming_progress")
    assert {"people", "reflection", "context"} <= set(progress["done"])
    assert progress["reports"]["people"] == {"skipped": "nothing new since the last sleep"}
    assert {"links", "orphans", "pruning", "working memory"} <= set(progress["done"])
    assistant.lifecycle.wake_up(T0 + timedelta(hours=4), "morning")
    record = SleepHistory(assistant.state).recent(1)[0]
    assert record["id"] == "s2" and record["quiet"] is True and record["calls"] == 0


def test_a_quiet_sleep_still_digests_a_day_that_ended_undigested():
    digest = {"summary": "Bob lost his key.", "people_met": [], "open_threads": [], "new_facts": []}
    model = ScriptedModel(json_reply(json.dumps(digest)))
    assistant = make_assistant(model, sleep_cooldown_minutes=0, min_activity_before_sleep=0)
    entry = assistant.journal.add("Bob lost his key.", author="Aria", now=T0)
    assistant.journal.update([{**entry, "consolidated": True}])  # filed the same day
    slept_once(assistant)
    next_day = T0 + timedelta(days=1)
    assistant.lifecycle.go_to_sleep(next_day, reason="tired", initiated_by="tool")
    assert SleepHistory(assistant.state).current()["quiet"] is True
    for minute in range(1, 10):
        run_sleep_tick(assistant, next_day + timedelta(minutes=minute))
    # the one call: the day that ended, digested; every other model step skipped
    assert len(model.requests) == 1 and len(assistant.digests) == 1
    reports = assistant.state.get("dreaming_progress")["reports"]
    assert reports["digest"]["digests"] == 1
    assert reports["reflection"] == {"skipped": "nothing new since the last sleep"}


def test_the_first_sleep_or_something_new_is_not_a_quiet_day():
    assistant = active(make_assistant())
    assistant.lifecycle.go_to_sleep(T0, reason="tired", initiated_by="tool")
    assert SleepHistory(assistant.state).current()["quiet"] is False
    assistant = slept_once(make_assistant(min_activity_before_sleep=0))
    assistant.entities.observe("name:bob", "Bob", "Bob is tall.", now=T0, author="Aria")
    assistant.lifecycle.go_to_sleep(T0, reason="tired", initiated_by="tool")
    assert SleepHistory(assistant.state).current()["quiet"] is False
    assistant = slept_once(make_assistant(min_activity_before_sleep=0))
    assistant.journal.add("Bob is tall.", author="Aria", now=T0)
    assistant.lifecycle.go_to_sleep(T0, reason="tired", initiated_by="tool")
    assert SleepHistory(assistant.state).current()["quiet"] is False


# ---- the builder's switches ----------------------------------------------------------------------


class TestDebtAndSleepsCommands(AssistantTestCase, EvenniaCommandTest):
    def cmd(self, args, expected=None, **kwargs):
        from ai_assistant import commands

        return self.call(commands.CmdAssistant(), args, expected, **kwargs)

    def test_help_documents_the_switches(self):
        from ai_assistant import commands

        doc = commands.CmdAssistant.__doc__
        for text in (
            "@assistant/debt <name>[=<1-3> <reason>]",
            "@assistant/sleeps <name>",
            "debt     -",
            "sleeps   -",
            "@assistant/debt Aria=2",
        ):
            assert text in doc, text

    def test_debt_and_sleeps_survive_a_reload(self):
        from ai_assistant.handler import AssistantHandler

        self.handler.memory.admin.add_debt(2, "a long day")
        self.handler.sleep(1, "light", "test")
        self.handler.wake("up")
        fresh = AssistantHandler(self.aria)  # what a reload builds, over the same Attributes
        assert fresh.memory.admin.debt()["points"] == 0 and fresh.memory.admin.debt()["last_sleep"]
        (record,) = fresh.memory.admin.kind("sleep_history").recent(5)
        assert record["debt_before"] == 2 and record["began"] == "builder"
        fresh.memory.admin.add_debt(3, "another")
        assert AssistantHandler(self.aria).memory.admin.debt()["points"] == 3

    def test_debt_shows_and_adds(self):
        text = self.cmd("/debt Aria")
        assert "sleep debt" in text and "0 (Alert)" in text
        assert "never" in text
        text = self.cmd("/debt Aria=3 ran the harvest festival")
        assert "now 3 (Alert)" in text
        self.cmd("/debt Aria=2 and the dance")
        assert "5 (Drowsy)" in self.cmd("/debt Aria")
        assert "and the dance" in self.cmd("/debt Aria")
        assert "sleep debt" in self.cmd("/status Aria") and "5 (Drowsy)" in self.cmd("/status Aria")

    def test_debt_bad_input_changes_nothing(self):
        for bad in ("=0 nothing", "=4 too much", "=-1 less", "=two words", "=", "=2", "=2   "):
            text = self.cmd(f"/debt Aria{bad}")
            assert "Not changed" in text, bad
        assert self.handler.memory.admin.debt()["points"] == 0
        assert "No assistant called 'Nobody'" in self.cmd("/debt Nobody=2 why")
        assert "Name an assistant" in self.cmd("/debt")

    def test_add_debt_refuses_outside_one_to_three(self):
        for bad in (0, 4, 2.0, "2"):
            with pytest.raises(Refused):
                self.handler.memory.admin.add_debt(bad, "why")
        assert self.handler.memory.admin.debt()["points"] == 0
        assert self.handler.memory.admin.add_debt(1, "why")["points"] == 1

    def test_sleeps_lists_and_status_shows_the_last_three(self):
        assert "has not slept yet" in self.cmd("/sleeps Aria")
        lifecycle = self.handler.brain.lifecycle
        for hour in range(4):
            lifecycle.go_to_sleep(
                self.clock.now(),
                reason="test",
                initiated_by="builder",
                enforce_safeguards=False,
            )
            self.clock.advance(3600)
            lifecycle.wake_up(self.clock.now(), "up")
            self.clock.advance(3600)
        text = self.cmd("/sleeps Aria")
        assert "sleeps, newest first (4)" in text
        assert all(f"s{n}" in text for n in (1, 2, 3, 4)) and "builder" in text
        # the newest three say what they did, under the table
        assert "s4: Nothing new to sleep on." in text and "s2: Nothing new" in text
        assert "s1: Nothing new" not in text
        assert all(len(line) <= 80 for line in text.splitlines())
        status = self.cmd("/status Aria")
        assert "sleep s4" in status and "sleep s2" in status and "sleep s1" not in status
        assert "Usage: @assistant/sleeps" in self.cmd("/sleeps Aria=5")
        assert "No assistant called 'Nobody'" in self.cmd("/sleeps Nobody")
        with pytest.raises(Refused):
            self.handler.memory.admin.kind("sleep_history").recent(0)

    def test_status_shows_the_batches_under_way(self):
        from ai_assistant.state import BATCHES

        assert "batch batch-" not in self.cmd("/status Aria")
        self.script.attributes.add(
            BATCHES, [{"id": "batch-7", "keys": ["a", "b"], "submitted_at": "2026-11-21T16:00:00"}]
        )
        status = self.cmd("/status Aria")
        assert "batch batch-7" in status and "2 sleep-time requests" in status


def test_a_sleep_record_says_what_it_did_and_what_the_day_was():
    from ai_assistant.memory.sleep_history import summarise

    history = SleepHistory(DictStore())
    history.start("2026-11-21T22:00:00", began="tool", depth="light", debt_before=5, quiet=False)
    history.tally({"scored": 3, "consolidated": 3, "memories": 2})
    history.tally(
        [
            {"step": "links", "links": 4},
            {"step": "digest", "digests": 2, "summaries": ["2026-11-21: Mira lost her atlas."]},
            {"step": "core memory", "changed": 1},
        ]
    )
    record = history.finish("2026-11-22T04:00:00", phases=["compacting"], debt_after=0)
    assert record["summary"] == (
        "Filed 3 journal entries into 2 memories; 4 links made; 1 core note changed. "
        "The day: 2026-11-21: Mira lost her atlas."
    )
    assert "digests_made" not in record
    assert summarise({"counts": {}, "quiet": True}, []) == "Nothing new to sleep on."
    assert summarise({"counts": {}}, []) == "Rested."


def test_a_past_sleep_is_found_by_its_id_after_old_records_are_removed():
    history = SleepHistory(DictStore())
    for day in range(1, 5):
        history.start(
            f"2026-11-0{day}T22:00:00", began="tool", depth="light", debt_before=0, quiet=False
        )
        history.finish(f"2026-11-0{day + 1}T04:00:00", phases=[], debt_after=0)
    assert history.remove_ended_before("2026-11-04T00:00:00") == 2
    assert [r["id"] for r in history.recent()] == ["s4", "s3"]
    assert history.mark("s4", rolled_back={"by": "Char"})
    assert history.recent()[0]["rolled_back"] == {"by": "Char"}
    assert not history.mark("s1", rolled_back={"by": "Char"})  # removed: nothing to mark
