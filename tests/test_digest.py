"""
The daily digest and retention, in the pure core: a finished game day digested once, on the
first sleep after it; no call for a day without entries or on a quiet day; a day per audience;
bad model output changes nothing and is tried again; recall finds a digest; housekeeping removes
what is old and never what is not yet consolidated or digested; the configuration is checked.

"""

import dataclasses
import json
from datetime import timedelta

import pytest

from ai_assistant.conf import AssistantConfig, ConfigError, parse_override
from ai_assistant.llm.chat import BAD_REQUEST, ChatReply, LLMError, TokenUsage
from ai_assistant.memory.audience import served_by
from ai_assistant.sleep.digest import DAYS_THIS_SLEEP, daily_digests
from ai_assistant.sleep.dreaming import DREAMING_STEPS, digest_days, housekeeping
from ai_assistant.sleep.tick import MODEL_STEPS, sleep_tick
from ai_assistant.memory.sleep_history import SleepHistory
from ai_assistant.state import DREAMING_PROGRESS

from .core_fakes import T0, ScriptedModel, make_assistant
from .core_fakes import Budget, run, step

DAY = timedelta(days=1)


def _counts(report: dict) -> dict:
    """A digest step's report without the digests' summaries (checked on their own)."""
    return {key: value for key, value in report.items() if key != "summaries"}


def digest(summary="Bob asked about the lighthouse.", **fields) -> ChatReply:
    data = {
        "summary": summary,
        "people_met": ["Bob"],
        "open_threads": ["Find the lighthouse key for Bob."],
        "new_facts": ["Bob says the lighthouse lamp is broken."],
        **fields,
    }
    return ChatReply(
        content=json.dumps(data), tool_calls=[], finish_reason="stop", usage=TokenUsage(60, 30)
    )


def note(brain, text, now=T0, **kwargs):
    return brain.journal.add(text, author="Aria", now=now, **kwargs)


def digests_of(brain):
    return [(d["day"], d["audience"], d["summary"]) for d in brain.digests.all()]


# ---- the order of the steps --------------------------------------------------------------------


def test_the_digest_follows_reflection_and_housekeeping_follows_pruning():
    names = [s.name for s in DREAMING_STEPS]
    assert names.index("digest") == names.index("reflection") + 1
    assert names.index("housekeeping") == names.index("pruning") + 1
    assert "digest" in MODEL_STEPS and "housekeeping" not in MODEL_STEPS


# ---- once per game day -------------------------------------------------------------------------


def test_a_day_is_digested_once_on_the_first_sleep_after_it_ends():
    model = ScriptedModel(digest(), digest("The second day."))
    brain = make_assistant(model)
    note(brain, "Bob asked about the <b>lighthouse</b>.", heard_from="Bob", source_type="claim")
    note(brain, "Bob left for the harbour.", now=T0 + timedelta(hours=3))
    # the day has not ended: nothing to digest, no call
    assert step(digest_days, brain, now=T0 + timedelta(hours=6)).report["digests"] == 0
    assert model.requests == []
    result = step(digest_days, brain, now=T0 + DAY)
    assert result.done and _counts(result.report) == {
        "calls": 1,
        "digests": 1,
        "days": 1,
        "left": 0,
    }
    (made,) = brain.digests.all()
    assert made["day"] == "2026-11-21" and made["audience"] is None
    assert made["people_met"] == ["Bob"]
    assert made["open_threads"] == ["Find the lighthouse key for Bob."]
    assert made["new_facts"] == ["Bob says the lighthouse lamp is broken."]
    assert made["entry_ids"] == ["j000000", "j000001"] and made["id"] == "d000000"
    assert brain.digests.last_day == "2026-11-21" and brain.digests.next_seq == 2
    # the entries went to the model escaped, with their ids and who said them
    data = model.requests[0].messages[-1]["content"]
    assert '<entry id="j000000" source="claim" heard_from="Bob">' in data
    assert "<b>" not in data and "2026-11-21" in model.requests[0].messages[0]["content"]
    # a later sleep the same day: not again
    brain.state.delete(DREAMING_PROGRESS)
    assert step(digest_days, brain, now=T0 + DAY + timedelta(hours=5)).report["calls"] == 0
    # the next day's entries make the next day's digest, at the sleep after it
    note(brain, "Carol brought a map.", now=T0 + DAY + timedelta(hours=2))
    step(digest_days, brain, now=T0 + 2 * DAY)
    assert [d[0] for d in digests_of(brain)] == ["2026-11-21", "2026-11-22"]
    assert brain.digests.all()[1]["entry_ids"] == ["j000002"]


def test_days_follow_the_game_clock_not_the_real_one():
    model = ScriptedModel(digest())
    brain = make_assistant(model)
    # the game runs 12 hours ahead: real noon is game midnight of the next day
    brain = dataclasses.replace(brain, game_now=lambda now: now + timedelta(hours=12))
    entry = note(brain, "Bob asked about the lighthouse.", now=T0 - timedelta(hours=1))
    assert entry["game_at"].startswith("2026-11-21T23:00")
    step(digest_days, brain, now=T0 - timedelta(minutes=30))  # still game day 21: nothing
    assert model.requests == []
    step(digest_days, brain, now=T0)  # game day 22 began at real noon
    assert digests_of(brain)[0][0] == "2026-11-21"


def test_a_day_without_entries_costs_no_call():
    model = ScriptedModel(digest("Day one."), digest("Day three."))
    brain = make_assistant(model)
    note(brain, "Bob asked about the lighthouse.")
    # day two holds only a reflection and an emptied entry: nothing to digest
    note(brain, "Bob worries me.", now=T0 + DAY, kind="reflection")
    gone = note(brain, "small talk", now=T0 + DAY)
    brain.journal.update([{**gone, "content": "", "pruned": "yes"}])
    note(brain, "Carol brought a map.", now=T0 + 2 * DAY)
    result = step(digest_days, brain, now=T0 + 3 * DAY)
    assert _counts(result.report) == {"calls": 2, "digests": 2, "days": 2, "left": 0}
    assert [d[0] for d in digests_of(brain)] == ["2026-11-21", "2026-11-23"]
    assert brain.digests.next_seq == 4  # past day two as well


def test_in_batch_mode_every_day_is_asked_at_once_and_the_cursor_waits():
    from ai_assistant.sleep.batch import BatchDeferred

    model = ScriptedModel(digest("Day one."), digest("Day two."))
    brain = make_assistant(model)
    note(brain, "Bob asked about the lighthouse.")
    note(brain, "Carol brought a map.", now=T0 + DAY)
    answered = brain.structured
    asked = []

    def waiting_for_a_batch(request, output_model):
        asked.append(request)
        raise BatchDeferred(f"key{len(asked)}")

    brain.structured = waiting_for_a_batch
    with pytest.raises(BatchDeferred):
        step(digest_days, brain, now=T0 + 2 * DAY)
    # both days were asked in the same tick (one batch), nothing stored, the cursor unmoved
    assert len(asked) == 2 and brain.digests.all() == [] and brain.digests.last_day is None
    brain.structured = answered  # the batch's answers are in
    result = step(digest_days, brain, now=T0 + 2 * DAY)
    assert _counts(result.report) == {"calls": 2, "digests": 2, "days": 2, "left": 0}
    assert [d[0] for d in digests_of(brain)] == ["2026-11-21", "2026-11-22"]
    assert brain.digests.last_day == "2026-11-22"


def test_at_most_so_many_days_per_sleep_the_rest_next_sleep():
    model = ScriptedModel(digest("One."), digest("Two."), digest("Three."))
    brain = make_assistant(model, digest_max_days_per_sleep=2)
    for day in range(3):
        note(brain, f"Something happened on day {day}.", now=T0 + day * DAY)
    first = step(digest_days, brain, now=T0 + 5 * DAY)
    assert first.done and _counts(first.report) == {"calls": 2, "digests": 2, "days": 2, "left": 1}
    assert brain.state.get(DREAMING_PROGRESS)[DAYS_THIS_SLEEP] == 2
    # later in the same sleep: the limit holds
    assert step(digest_days, brain, now=T0 + 5 * DAY).report["calls"] == 0
    brain.state.delete(DREAMING_PROGRESS)  # a new sleep
    assert step(digest_days, brain, now=T0 + 6 * DAY).report["days"] == 1
    assert [d[2] for d in digests_of(brain)] == ["One.", "Two.", "Three."]


def test_a_spent_budget_stops_the_step_and_the_next_tick_goes_on():
    model = ScriptedModel(digest("One."), digest("Two."))
    brain = make_assistant(model)
    note(brain, "Day one.")
    note(brain, "Day two.", now=T0 + DAY)
    first = step(digest_days, brain, now=T0 + 2 * DAY, calls=1)
    assert not first.done and _counts(first.report) == {
        "calls": 1,
        "digests": 1,
        "days": 1,
        "left": 1,
    }
    second = step(digest_days, brain, now=T0 + 2 * DAY, calls=1)
    assert second.done and len(brain.digests) == 2


def test_a_long_day_sends_its_most_important_entries_in_order():
    model = ScriptedModel(digest())
    brain = make_assistant(model, digest_max_entries=5)
    for i in range(8):
        note(brain, f"event number {i}", importance=9 if i in (1, 6) else 3)
    step(digest_days, brain, now=T0 + DAY)
    data = model.requests[0].messages[-1]["content"]
    ids = [line.split('"')[1] for line in data.splitlines()]
    assert len(ids) == 5 and ids == sorted(ids) and {"j000001", "j000006"} <= set(ids)


def test_facts_about_itself_and_its_own_name_are_left_out():
    model = ScriptedModel(
        digest(people_met=["Bob", "Aria"], new_facts=["Aria is a librarian.", "The well is dry."])
    )
    brain = make_assistant(model)
    note(brain, "The well is dry.")
    step(digest_days, brain, now=T0 + DAY)
    (made,) = brain.digests.all()
    assert made["people_met"] == ["Bob"] and made["new_facts"] == ["The well is dry."]


def test_digests_can_be_turned_off():
    brain = make_assistant(ScriptedModel(), digest_enabled=False)
    note(brain, "Bob asked about the lighthouse.")
    assert _counts(step(digest_days, brain, now=T0 + DAY).report) == {
        "skipped": "digest_enabled is off"
    }
    assert len(brain.digests) == 0


# ---- audiences ---------------------------------------------------------------------------------


def test_private_entries_make_their_own_digest_and_never_reach_the_public_one():
    model = ScriptedModel(
        digest("Bob asked about the lighthouse."), digest("Bob whispered the vault code.")
    )
    brain = make_assistant(model)
    note(brain, "Bob asked about the lighthouse.")
    note(brain, "Bob whispered that the vault code is 4-1-7.", audience=["#5"])
    note(brain, "Bob asked for a lamp.")
    result = step(digest_days, brain, now=T0 + DAY)
    assert result.report["calls"] == 2 and result.report["days"] == 1
    # the sleep's record gets the public digest's summary only
    assert result.report["summaries"] == ["2026-11-21: Bob asked about the lighthouse."]
    public, private = model.requests
    assert "vault" not in public.messages[-1]["content"]
    assert "vault" in private.messages[-1]["content"]
    assert "lighthouse" not in private.messages[-1]["content"]
    assert [(d[1], d[2]) for d in digests_of(brain)] == [
        (None, "Bob asked about the lighthouse."),
        (["#5"], "Bob whispered the vault code."),
    ]
    later = T0 + 2 * DAY
    for_alice = brain.recall("vault code", now=later, served=served_by(["#6"]))
    assert all("vault" not in item.text for item in for_alice)
    for_bob = brain.recall("vault code", now=later, served=served_by(["#5"]), kinds={"digest"})
    assert [(item.id, item.audience) for item in for_bob] == [("d000001", ["#5"])]


# ---- bad model output -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        ChatReply(content="not json at all", tool_calls=[], finish_reason="stop"),
        ChatReply(content=json.dumps({"story": "x"}), tool_calls=[], finish_reason="stop"),
        digest(summary=""),
        digest(people_met="Bob"),
        digest(new_facts=["x" * 400]),
    ],
    ids=["invalid json", "wrong fields", "empty summary", "not a list", "too long"],
)
def test_bad_output_changes_nothing_and_is_tried_again_next_tick(bad):
    model = ScriptedModel(bad, digest())
    brain = make_assistant(model)
    entry = note(brain, "Bob asked about the lighthouse.")
    brain.journal.update([{**entry, "consolidated": True}])  # straight to dreaming
    brain.lifecycle.go_to_sleep(
        T0 + DAY, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    first = run(sleep_tick(brain, T0 + DAY))
    (report,) = [r for r in first if r["step"] == "digest"]
    assert report["error"].startswith("invalid_response")
    assert len(brain.digests) == 0 and brain.digests.next_seq == 0
    progress = brain.state.get(DREAMING_PROGRESS)
    assert "digest" not in progress["done"] and "digest" in progress["errors"]
    second = run(sleep_tick(brain, T0 + DAY + timedelta(minutes=1)))
    assert [r["step"] for r in second] == ["digest"] and second[0]["digests"] == 1
    assert len(brain.digests) == 1 and brain.digests.next_seq == 1


def test_a_server_without_structured_outputs_is_asked_in_json_mode():
    model = ScriptedModel(LLMError(BAD_REQUEST, "response_format not supported", 400), digest())
    brain = make_assistant(model)
    note(brain, "Bob asked about the lighthouse.")
    step(digest_days, brain, now=T0 + DAY)
    assert model.requests[0].response_format["type"] == "json_schema"
    assert model.requests[1].response_format["type"] == "json_object"
    assert len(brain.digests) == 1


def test_a_failure_after_one_audience_keeps_it_and_makes_only_the_other_next_time():
    model = ScriptedModel(
        digest("Public day."), LLMError("server_error", "down"), digest("Private day.")
    )
    brain = make_assistant(model)
    note(brain, "Bob asked about the lighthouse.")
    note(brain, "Bob whispered a secret.", audience=["#5"])
    with pytest.raises(LLMError):
        step(digest_days, brain, now=T0 + DAY)
    assert digests_of(brain) == [("2026-11-21", None, "Public day.")]
    assert brain.digests.next_seq == 0  # the day is not done
    step(digest_days, brain, now=T0 + DAY)
    assert [d[2] for d in digests_of(brain)] == ["Public day.", "Private day."]
    assert len(model.requests) == 3


# ---- the quiet day ------------------------------------------------------------------------------


def test_a_quiet_sleep_makes_no_digest_call():
    model = ScriptedModel()  # any call fails loudly
    brain = make_assistant(model, sleep_cooldown_minutes=0, min_activity_before_sleep=0)
    entry = note(brain, "Bob asked about the lighthouse.")
    brain.journal.update([{**entry, "consolidated": True}])
    brain.lifecycle.go_to_sleep(T0, reason="night", initiated_by="builder")
    brain.lifecycle.wake_up(T0 + timedelta(hours=1), "morning")
    # a nap the same game day: nothing new, and no day has ended to digest (a day that ended
    # undigested would be digested even by a quiet sleep: tests/test_sleep_economy.py)
    nap = T0 + timedelta(hours=2)
    brain.lifecycle.go_to_sleep(nap, reason="tired", initiated_by="tool")
    assert SleepHistory(brain.state).current()["quiet"] is True
    for minute in range(5):
        work = sleep_tick(brain, nap + timedelta(minutes=minute))
        if work is not None:
            run(work)
    assert model.requests == [] and len(brain.digests) == 0
    progress = brain.state.get(DREAMING_PROGRESS)
    assert progress["reports"]["digest"] == {"skipped": "nothing new since the last sleep"}


# ---- recall -------------------------------------------------------------------------------------


def test_recall_finds_a_digest_by_its_words_also_after_a_reload():
    model = ScriptedModel(digest("Bob and Carol argued over the lighthouse keeper's debts."))
    brain = make_assistant(model)
    note(brain, "Bob shouted at Carol.")
    step(digest_days, brain, now=T0 + DAY)
    found = brain.recall("keeper debts", now=T0 + DAY, served=served_by(["#6"]))
    assert found[0].kind == "digest" and found[0].id == "d000000"
    assert "argued over the lighthouse" in found[0].text and "2026-11-21" in found[0].text
    assert found[0].line().startswith("- [a summary of past talk;")
    assert "digest]" in found[0].line()
    again = dataclasses.replace(brain)  # a new brain over the same stores builds its index
    assert again.recall("keeper debts", now=T0 + DAY, served=None)[0].id == "d000000"
    # only digests, when asked for that kind
    assert {i.kind for i in again.recall("Bob", now=T0 + DAY, served=None, kinds={"digest"})} == {
        "digest"
    }


# ---- retention ----------------------------------------------------------------------------------


def aged(brain, text, days_old, now, **fields):
    entry = note(brain, text, now=now - timedelta(days=days_old))
    if fields:
        entry = {**entry, **fields}
        brain.journal.update([entry])
    return entry


def test_housekeeping_removes_old_consolidated_digested_entries_and_keeps_the_rest():
    now = T0 + 400 * DAY
    brain = make_assistant(
        journal_retention_days=100,
        compaction_archive_retention_days=50,
        digest_retention_days=0,
        sleep_history_retention_days=0,
    )
    old = aged(brain, "Bob likes pears.", 200, now, consolidated=True)
    skipped = aged(brain, "hello", 200, now, skipped=True)
    pending = aged(brain, "Bob owes Carol money.", 200, now)  # never consolidated
    thought = aged(brain, "Bob seems lonely.", 200, now, kind="reflection")
    summary = aged(brain, "[CONTEXT SYNTHESIS]\nTalk about pears.", 60, now, kind="synthesis")
    fresh = aged(brain, "Carol likes plums.", 10, now, consolidated=True)
    undigested = aged(brain, "Dan likes figs.", 150, now, consolidated=True)
    brain.digests.finish_day("2026-05-01", undigested["seq"])  # days up to Dan's are digested
    brain.links.link([(old["id"], fresh["id"], 0.9)], 5)
    result = housekeeping(brain, now, Budget(0))
    assert result.done and _counts(result.report) == {
        "entries": 2,
        "compaction_archive": 1,
        "digests": 0,
        "sleep_records": 0,
        "links_removed": 1,
        "removed": 3,
    }
    by_id = {e["id"]: e for e in brain.journal.all()}
    for gone in (old, skipped, summary):
        entry = by_id[gone["id"]]
        assert entry["content"] == "" and entry["pruned"] and entry["removed_by"] == "retention"
        assert entry["heard_from"] is None and entry["about"] == []
    for kept in (pending, thought, fresh, undigested):
        assert by_id[kept["id"]]["content"] == kept["content"]
    assert brain.recall("pears", now=now, served=None) == []
    # with digests off, an entry need not wait for its day's digest
    off = dataclasses.replace(
        brain, config=brain.config.model_copy(update={"digest_enabled": False})
    )
    assert housekeeping(off, now, Budget(0)).report["entries"] == 1  # Dan's


def test_ages_of_zero_keep_everything_forever():
    now = T0 + 5000 * DAY
    brain = make_assistant(
        journal_retention_days=0,
        compaction_archive_retention_days=0,
        digest_retention_days=0,
        sleep_history_retention_days=0,
        digest_enabled=False,
    )
    aged(brain, "Bob likes pears.", 4000, now, consolidated=True)
    aged(brain, "[CONTEXT SYNTHESIS]\nold", 4000, now, kind="synthesis")
    assert housekeeping(brain, now, Budget(0)).report["removed"] == 0


def test_old_digests_go_and_recall_no_longer_finds_them():
    model = ScriptedModel(digest("The pear harvest failed."), digest("Plums were sold."))
    brain = make_assistant(model, digest_retention_days=30)
    note(brain, "The pear harvest failed.")
    note(brain, "Plums were sold.", now=T0 + 40 * DAY)
    step(digest_days, brain, now=T0 + 41 * DAY)
    kinds = {i.kind for i in brain.recall("pear harvest", now=T0 + 45 * DAY, served=None)}
    assert "digest" in kinds
    report = housekeeping(brain, T0 + 45 * DAY, Budget(0)).report
    assert report["digests"] == 1 and report["removed"] == 1
    assert [d[2] for d in digests_of(brain)] == ["Plums were sold."]
    assert all(i.kind != "digest" for i in brain.recall("pear", now=T0 + 45 * DAY, served=None))
    # ids are never given again
    note(brain, "A new day.", now=T0 + 45 * DAY)
    model.answers.append(digest("A new day."))
    step(digest_days, brain, now=T0 + 46 * DAY)
    assert [d["id"] for d in brain.digests.all()] == ["d000001", "d000002"]


def test_old_sleep_records_go_but_the_newest_stays_and_ids_are_not_reused():
    brain = make_assistant(sleep_history_retention_days=30, sleep_cooldown_minutes=0)
    for day in (0, 10, 100):
        brain.lifecycle.go_to_sleep(
            T0 + day * DAY, reason="night", initiated_by="builder", enforce_safeguards=False
        )
        brain.lifecycle.wake_up(T0 + day * DAY + timedelta(hours=8), "morning")
    history = SleepHistory(brain.state)
    assert housekeeping(brain, T0 + 105 * DAY, Budget(0)).report["sleep_records"] == 2
    assert [r["id"] for r in history.recent()] == ["s3"]
    # years later the last record is still kept (a quiet day is measured against it)
    assert housekeeping(brain, T0 + 900 * DAY, Budget(0)).report["sleep_records"] == 0
    brain.lifecycle.go_to_sleep(
        T0 + 901 * DAY, reason="night", initiated_by="builder", enforce_safeguards=False
    )
    assert SleepHistory(brain.state).current()["id"] == "s4"


def test_the_sleep_record_counts_digests_and_what_was_removed():
    model = ScriptedModel(digest())
    brain = make_assistant(model, journal_retention_days=1, digest_retention_days=0)
    entry = note(brain, "Bob asked about the lighthouse.")
    brain.journal.update([{**entry, "consolidated": True}])
    brain.lifecycle.go_to_sleep(
        T0 + 3 * DAY, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    while (work := sleep_tick(brain, T0 + 3 * DAY)) is not None:
        run(work)
    brain.lifecycle.wake_up(T0 + 3 * DAY + timedelta(hours=1), "morning")
    (record,) = SleepHistory(brain.state).recent(1)
    # digested first (dreaming runs the digest before housekeeping), then removed
    assert record["counts"]["digests"] == 1 and record["counts"]["removed"] == 1
    assert {"digest", "housekeeping"} <= set(record["phases"])


# ---- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key,value",
    [
        ("digest_max_days_per_sleep", "0"),
        ("digest_max_entries", "2"),
        ("digest_retention_days", "-1"),
        ("journal_retention_days", "forever"),
        ("compaction_archive_retention_days", "99999"),
        ("sleep_history_retention_days", "1.5"),
        ("digest_enabled", "perhaps"),
    ],
)
def test_bad_values_are_refused_naming_the_key_and_what_is_allowed(key, value):
    with pytest.raises(ConfigError) as err:
        parse_override(key, value)
    assert key in str(err.value) and "Allowed" in str(err.value)
    assert AssistantConfig.model_fields[key].description


def test_the_daily_digests_direct_use_keeps_the_budget():
    # the generator with a budget of no calls asks nothing and says it is not done
    brain = make_assistant(ScriptedModel())
    note(brain, "Bob asked about the lighthouse.")
    work = daily_digests(brain, T0 + DAY, lambda: False)
    with pytest.raises(StopIteration) as stop:
        next(work)
    done, report = stop.value.value
    assert not done and report["left"] == 1 and len(brain.digests) == 0


# ---- the offline rehearsal model ------------------------------------------------------------


def test_the_pure_core_entry_point_digests_with_the_offline_model():
    from ai_assistant.memory_api import AssistantMemory

    memory = AssistantMemory("Aria")
    memory.add_entry("Bob says the lighthouse lamp is broken.", speaker="Bob", time=T0)
    memory.add_entry("Is the ferry running tomorrow?", speaker="Carol", time=T0)
    memory.consolidate(now=T0 + DAY)
    (made,) = memory.digests()
    assert made["day"] == "2026-11-21" and made["people_met"] == ["Bob", "Carol"]
    assert "(rehearsal)" in made["summary"]
    assert made["open_threads"] == ["Is the ferry running tomorrow?"]
    assert any(item.kind == "digest" for item in memory.recall("ferry", k=10, at=T0 + DAY))


def test_entries_from_before_game_time_was_noted_are_passed_over_without_a_call():
    model = ScriptedModel(digest("Today's news."))
    brain = make_assistant(model)
    for day in range(3):  # written by an earlier version: no game time
        entry = note(brain, f"Old news {day}.", now=T0 + day * DAY)
        brain.journal.update([{k: v for k, v in entry.items() if k != "game_at"}])
    note(brain, "Fresh news.", now=T0 + 3 * DAY)
    result = step(digest_days, brain, now=T0 + 4 * DAY)
    assert _counts(result.report) == {"calls": 1, "digests": 1, "days": 1, "left": 0}
    assert "Old news" not in model.requests[0].messages[-1]["content"]
    assert digests_of(brain)[0][0] == "2026-11-24" and brain.digests.next_seq == 4
