"""
The sleep economy: sleep debt and its levels, the turn's advisory, the builder's debt, sleeping
off the debt when idle, the sleep history, and a quiet day's sleep that costs no model call.

"""

import dataclasses
from datetime import timedelta

import pytest

from ai_assistant import lifecycle as life
from ai_assistant.conf import AssistantConfig, ConfigError, parse_override, resolve_config
from ai_assistant.debt import (
    ADVISORY,
    DIRECTIVE,
    SleepDebt,
    banded,
    level_of,
    turn_debt,
    turn_id,
)
from ai_assistant.llm.client import RATE_LIMIT, LLMError
from ai_assistant.memory.store import DictStore

from .core_fakes import T0, ScriptedModel, hear, make_assistant, reply, run_tick


def calls(writes=0, others=0, ok=True):
    return [{"name": "add_journal_entry", "ok": ok}] * writes + [{"name": "look", "ok": True}] * (
        others
    )


def active(assistant, activity=10):
    assistant.state.set(life.ACTIVITY, activity)
    return assistant


# ---- scoring a turn -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "count,score", [(0, 0), (1, 1), (3, 1), (4, 2), (8, 2), (9, 3), (50, 3)]
)
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
    config = AssistantConfig()
    names = ["add_journal_entry", "update_entity_observation", "memory_edit", "memory_edit"]
    assert turn_debt([{"name": name, "ok": True} for name in names], config) == 2


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


def test_debt_survives_a_new_brain_on_the_same_store():
    assistant = make_assistant()
    SleepDebt(assistant.state).add(3, "long day")
    # a reload builds a new brain over the same stored state
    again = dataclasses.replace(assistant, state=assistant.state)
    assert again.status(T0).sleep_debt == 3 and again.status(T0).debt_level == "Alert"


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
    status = assistant.status(T0 + timedelta(hours=5))
    assert status.last_sleep == debt.last_sleep() and status.sleep_debt == 0


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
