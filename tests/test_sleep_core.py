"""The sleep lifecycle and the compacting phase, in the pure core (scripted model, no database)."""

from datetime import timedelta

import pytest

from ai_assistant.llm.chat import SERVER_ERROR, LLMError
from ai_assistant.driver import drive, inline
from ai_assistant.sleep.prompts import clean_facts, is_self_reference
from ai_assistant.memory.semantic import EmbeddedMemoryStore
from ai_assistant.memory.store import DictStore
from ai_assistant import lifecycle as life
from ai_assistant.sleep.dreaming import DreamStep, StepResult
from ai_assistant.sleep.tick import DREAMING_STEPS, sleep_tick

from .core_fakes import (
    T0,
    ScriptedModel,
    active,
    drive_inline,
    facts,
    hear,
    json_reply,
    make_assistant,
    reply,
    run_tick,
    scores,
)


def transitions(assistant):
    seen = []
    assistant.on_transition = lambda mode, reason: seen.append((mode, reason))
    return seen


# ---- going to sleep -------------------------------------------------------------------------


def test_safeguards_in_order():
    assistant = make_assistant()
    lifecycle = assistant.lifecycle
    assistant.state.set(life.ACTIVITY, 3)
    with pytest.raises(life.SleepRefused, match="3 interactions handled, 10 required"):
        lifecycle.go_to_sleep(T0, reason="tired", initiated_by="tool")
    assistant.state.set(life.COOLDOWN_UNTIL, (T0 + timedelta(minutes=42, seconds=10)).isoformat())
    with pytest.raises(life.SleepRefused, match="allowed again in 43 minutes"):
        lifecycle.go_to_sleep(T0, reason="tired", initiated_by="tool")
    assistant.state.set(life.MODE, life.SLEEP)
    with pytest.raises(life.SleepRefused, match="Already in sleep mode"):
        lifecycle.go_to_sleep(T0, reason="tired", initiated_by="tool")
    assert assistant.state.get(life.PHASE) is None  # nothing changed


@pytest.mark.parametrize(
    "hours, depth, message",
    [
        (0, "light", "from 1 to 24"),
        (25, "light", "from 1 to 24"),
        (2.5, "light", "whole number"),
        (4, "dreamy", "'light' or 'deep'"),
    ],
)
def test_bad_requests_are_refused(hours, depth, message):
    assistant = active(make_assistant())
    with pytest.raises(life.SleepRefused, match=message):
        assistant.lifecycle.go_to_sleep(
            T0, hours=hours, depth=depth, reason="x", initiated_by="tool"
        )
    assert assistant.lifecycle.mode == life.AWAKE


def test_sleep_sets_its_state_and_transitions():
    assistant = active(make_assistant())
    seen = transitions(assistant)
    assistant.journal.add("Mira likes tea", author="Aria", now=T0)
    assistant.journal.add("[SYNTHESIS] old summary", author="Aria", now=T0)
    phase = assistant.lifecycle.go_to_sleep(
        T0, hours=2, depth="deep", reason="tired", initiated_by="tool"
    )
    state = assistant.state
    assert phase == life.COMPACTING
    assert state.get(life.MODE) == life.SLEEP and state.get(life.DEPTH) == "deep"
    assert state.get(life.WAKE_TIME) == (T0 + timedelta(hours=2)).isoformat()
    assert state.get(life.INITIATED_BY) == "tool" and state.get(life.REASON) == "tired"
    assert state.get(life.PROGRESS) == {
        "started_at": T0.isoformat(),
        "total_entries": 1,
        "processed_entries": 0,
        "completed": False,
    }
    assert state.get(life.LAST_TRANSITION) == T0.isoformat()
    assert seen == [(life.SLEEP, "tired")]


def test_nothing_to_consolidate_goes_straight_to_dreaming():
    assistant = active(make_assistant())
    assert assistant.lifecycle.go_to_sleep(T0, reason="x", initiated_by="tool") == life.DREAMING
    assert assistant.state.get(life.PROGRESS)["completed"] is True


def test_builder_is_not_bound_by_safeguards_but_cannot_double_sleep():
    assistant = make_assistant()  # no activity at all
    assistant.lifecycle.go_to_sleep(
        T0, reason="x", initiated_by="builder", enforce_safeguards=False
    )
    assert assistant.lifecycle.mode == life.SLEEP
    with pytest.raises(life.SleepRefused, match="Already"):
        assistant.lifecycle.go_to_sleep(
            T0, reason="y", initiated_by="builder", enforce_safeguards=False
        )


def test_go_to_sleep_tool_refusal_then_success_ends_turn():
    model = ScriptedModel(
        reply(("go_to_sleep", {"reason": "tired"})),
        reply(("say", {"text": "Not yet, then."})),
        reply(("noop", {})),
    )
    assistant = make_assistant(model)
    hear(assistant, "Aria, go rest")
    outcome = run_tick(assistant)
    refusal = outcome.tool_calls[0]["result"]
    assert refusal.startswith("Error: you cannot sleep now.") and "10 required" in refusal
    assert assistant.lifecycle.mode == life.AWAKE
    active(assistant, 12)
    assistant.client_factory = ScriptedModel(
        reply(("go_to_sleep", {"duration_hours": 1, "depth": "light", "reason": "tired"}))
    )
    hear(assistant, "Aria, go rest now", now=T0 + timedelta(seconds=5))
    outcome = run_tick(assistant, T0 + timedelta(seconds=10))
    assert outcome.stop_reason == "go_to_sleep" and outcome.model_calls == 1
    assert assistant.lifecycle.mode == life.SLEEP
    assert assistant.state.get(life.INITIATED_BY) == "tool"


def test_go_to_sleep_argument_errors_go_back_to_the_model():
    model = ScriptedModel(
        reply(("go_to_sleep", {"duration_hours": 48, "reason": "x"})),
        reply(("go_to_sleep", {"depth": "light"})),
        reply(("noop", {})),
    )
    assistant = active(make_assistant(model))
    hear(assistant, "Aria, sleep")
    outcome = run_tick(assistant)
    assert "duration_hours" in outcome.tool_calls[0]["result"]
    assert "reason" in outcome.tool_calls[1]["result"]
    assert assistant.lifecycle.mode == life.AWAKE


# ---- wake conditions --------------------------------------------------------------------------


def asleep(depth="light", entries=0, hours=4, **config):
    assistant = active(make_assistant(**config))
    for i in range(entries):
        assistant.journal.add(f"fact {i}", author="Aria", now=T0)
    assistant.lifecycle.go_to_sleep(
        T0, hours=hours, depth=depth, reason="rest", initiated_by="tool"
    )
    return assistant


def check(assistant, now=T0):
    return assistant.lifecycle.check_wake_conditions(assistant.events.peek(), now)


def test_scheduled_wake_time():
    assistant = asleep()
    assert not check(assistant, T0 + timedelta(hours=3)).should_wake
    result = check(assistant, T0 + timedelta(hours=4))
    assert result.should_wake and result.reason == "Scheduled wake time reached"
    assert not result.deferred


def test_urgent_event_wakes_light_sleep_only():
    light = asleep("light")
    hear(light, "psst", event_type="whisper")
    assert check(light).should_wake and "whisper" in check(light).reason
    deep = asleep("deep")
    hear(deep, "psst", event_type="whisper")
    assert not check(deep).should_wake
    ambient = asleep("light")
    hear(ambient, "nice day", speaker="Bob")
    assert not check(ambient).should_wake


def test_wake_deferred_while_compacting():
    assistant = asleep("light", entries=2)
    hear(assistant, "Aria!", event_type="page")
    result = check(assistant)
    assert result.should_wake and result.deferred
    assistant.lifecycle.finish_compacting()
    assert check(assistant).should_wake and not check(assistant).deferred


def test_wake_up_sets_cooldown_resets_activity_restores_schedule():
    assistant = asleep(sleep_schedule_enabled=True, sleep_cooldown_minutes=30)
    seen = transitions(assistant)
    assert assistant.state.get(life.SCHEDULE_SUSPENDED) is True
    assistant.lifecycle.wake_up(T0 + timedelta(hours=1), "time's up")
    state = assistant.state
    assert state.get(life.MODE) == life.AWAKE and state.get(life.ACTIVITY) == 0
    assert state.get(life.COOLDOWN_UNTIL) == (T0 + timedelta(hours=1, minutes=30)).isoformat()
    for key in (life.PHASE, life.DEPTH, life.WAKE_TIME, life.INITIATED_BY, life.REASON):
        assert state.get(key) is None
    assert state.get(life.SCHEDULE_SUSPENDED) is None
    assert state.get(life.PROGRESS) == life.empty_progress()
    assert seen == [(life.AWAKE, "time's up")]
    with pytest.raises(life.SleepRefused, match="Not asleep"):
        assistant.lifecycle.wake_up(T0, "again")


def test_schedule_not_suspended_when_disabled():
    assistant = asleep(sleep_schedule_enabled=False)
    assert assistant.state.get(life.SCHEDULE_SUSPENDED) is None


# ---- scheduled sleep --------------------------------------------------------------------------


def test_scheduled_sleep_on_the_game_clock():
    assistant = make_assistant(
        sleep_schedule_enabled=True, sleep_start_hour=2, sleep_duration_hours=4, min_awake_ticks=3
    )
    lifecycle = assistant.lifecycle
    game_night = T0.replace(hour=3)  # inside 02:00-06:00 game time
    assert not lifecycle.maybe_start_scheduled_sleep(T0, game_night)  # awake ticks 1 < 3
    assert not lifecycle.maybe_start_scheduled_sleep(T0, T0.replace(hour=12))  # daytime
    assert lifecycle.maybe_start_scheduled_sleep(T0, game_night, time_factor=2.0)
    state = assistant.state
    assert state.get(life.INITIATED_BY) == "schedule"
    # three game hours left at time factor 2: 1.5 real hours
    assert state.get(life.WAKE_TIME) == (T0 + timedelta(hours=1.5)).isoformat()


def test_schedule_window_across_midnight():
    assistant = make_assistant(
        sleep_schedule_enabled=True, sleep_start_hour=22, sleep_duration_hours=6, min_awake_ticks=0
    )
    assert assistant.lifecycle.schedule_due(T0.replace(hour=1))[0]
    assert not assistant.lifecycle.schedule_due(T0.replace(hour=5))[0]


# ---- compacting: scoring and consolidation ------------------------------------------------------


def test_scoring_then_consolidation_one_batch_per_call():
    model = ScriptedModel(
        scores(("j000000", 8), ("j000001", 2), ("j000002", 6)),
        facts(
            ("j000000", ["Mira likes tea.", "Aria poured Mira some tea."]),
            ("j000002", ["The east door sticks when it rains."]),
        ),
    )
    assistant = make_assistant(model, scoring_batch_size=10, min_importance_to_consolidate=4)
    assistant.journal.add(
        "Mira said she loves tea; I poured her some",
        author="Aria",
        now=T0,
        source_type="heard",
        heard_from="Mira",
    )
    assistant.journal.add("Bob said hi", author="Aria", now=T0)
    assistant.journal.add("Tobin: the east door sticks in rain", author="Aria", now=T0)
    active(assistant)
    assistant.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="tool")
    report = drive_inline(sleep_tick(assistant, T0))
    assert report["scored"] == 3 and report["skipped"] == 1 and report["consolidated"] == 2
    assert len(model.requests) == 2
    assert model.requests[0].response_format["json_schema"]["name"] == "ImportanceScores"
    assert model.requests[1].response_format["json_schema"]["name"] == "FactExtraction"
    # only important entries went to extraction
    assert "Bob said hi" not in model.requests[1].messages[-1]["content"]
    entries = assistant.journal.all()
    assert [e["scoring_method"] for e in entries] == ["llm"] * 3
    assert entries[0]["consolidated"] and entries[2]["consolidated"]
    assert entries[1]["skipped"] and not entries[1]["consolidated"]
    # persona protection dropped the self-reference
    store = assistant.long_term
    assert [m["text"] for m in store.recent(10)] == [
        "The east door sticks when it rains.",
        "Mira likes tea.",
    ]
    memory = store.get(entries[0]["memory_ids"][0])
    assert memory["source_entry_ids"] == ["j000000"]
    assert memory["provenance"]["heard_from"] == "Mira"
    assert assistant.lifecycle.phase == life.DREAMING
    assert assistant.state.get(life.PROGRESS)["processed_entries"] == 3
    assert assistant.usage().calls == 2


def test_an_over_long_fact_is_stored_cut_to_its_bound_with_who_said_it():
    from ai_assistant.sleep.prompts import MAX_FACT_CHARS

    model = ScriptedModel(
        scores(("j000000", 8)),
        facts(("j000000", ["the harbour floods " * 600, "the tide is high"])),
    )
    assistant = make_assistant(model, scoring_batch_size=10)
    assistant.journal.add(
        "Mira says the harbour floods",
        author="Aria",
        now=T0,
        source_type="claim",
        heard_from="Mira",
    )
    active(assistant)
    assistant.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="tool")
    drive_inline(sleep_tick(assistant, T0))
    texts = [m["text"] for m in assistant.long_term.recent(10)]
    assert "Mira says: the tide is high" in texts
    (long,) = [text for text in texts if "harbour" in text]
    assert len(long) == MAX_FACT_CHARS
    assert long.startswith("Mira says: the harbour floods") and long.endswith("...")


def test_progress_over_several_ticks():
    model = ScriptedModel(
        scores(("j000000", 5), ("j000001", 5)),
        facts(("j000000", ["A."]), ("j000001", ["B."])),
        scores(("j000002", 5), ("j000003", 5)),
        facts(("j000002", ["C."]), ("j000003", ["D."])),
    )
    assistant = make_assistant(model, scoring_batch_size=2)
    for i in range(4):
        assistant.journal.add(f"entry {i}", author="Aria", now=T0)
    active(assistant)
    assistant.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="tool")
    drive_inline(sleep_tick(assistant, T0))
    progress = assistant.state.get(life.PROGRESS)
    assert (progress["processed_entries"], progress["total_entries"]) == (2, 4)
    assert assistant.lifecycle.phase == life.COMPACTING
    drive_inline(sleep_tick(assistant, T0))
    assert assistant.state.get(life.PROGRESS)["processed_entries"] == 4
    assert assistant.lifecycle.phase == life.DREAMING


def test_model_failure_halfway_marks_nothing_unstored():
    model = ScriptedModel(scores(("j000000", 7), ("j000001", 7)), LLMError(SERVER_ERROR, "boom"))
    assistant = make_assistant(model)
    assistant.journal.add("one", author="Aria", now=T0)
    assistant.journal.add("two", author="Aria", now=T0)
    active(assistant)
    assistant.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="tool")
    report = drive_inline(sleep_tick(assistant, T0))
    assert report["error"].startswith("server_error")
    entries = assistant.journal.all()
    assert all(e["scoring_method"] == "llm" for e in entries)  # the scores that arrived stay
    assert not any(e["consolidated"] for e in entries)
    assert assistant.long_term.count() == 0
    assert assistant.lifecycle.phase == life.COMPACTING
    assert assistant.usage().errors == {"server_error": 1}


def test_store_failure_halfway_marks_only_stored_entries():
    class FailingStore(EmbeddedMemoryStore):
        def add(self, text, **kwargs):
            if text.startswith("B"):
                raise OSError("disk full")
            return super().add(text, **kwargs)

    model = ScriptedModel(
        scores(("j000000", 7), ("j000001", 7)),
        facts(("j000000", ["A fact."]), ("j000001", ["B fact."])),
    )
    assistant = make_assistant(model)
    assistant.long_term = FailingStore(DictStore())
    assistant.journal.add("one", author="Aria", now=T0)
    assistant.journal.add("two", author="Aria", now=T0)
    active(assistant)
    assistant.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="tool")
    with pytest.raises(OSError):
        drive_inline(sleep_tick(assistant, T0)).raiseException()
    first, second = assistant.journal.all()
    assert first["consolidated"] and first["memory_ids"] == ["m000000"]
    assert not second["consolidated"] and second["memory_ids"] == []


def test_unscored_entries_keep_heuristic_and_are_not_rescored_forever():
    model = ScriptedModel(scores(("j000000", 9)), facts(("j000000", ["X."])))
    assistant = make_assistant(model, min_importance_to_consolidate=4)
    assistant.journal.add("scored", author="Aria", now=T0)
    assistant.journal.add("forgotten by the model", author="Aria", now=T0, importance=None)
    active(assistant)
    assistant.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="tool")
    drive_inline(sleep_tick(assistant, T0))
    second = assistant.journal.all()[1]
    assert second["scoring_method"] == "heuristic_kept"


def test_embeddings_used_when_configured():
    model = ScriptedModel(
        scores(("j000000", 7)), facts(("j000000", ["The east door sticks when it rains."]))
    )
    assistant = make_assistant(model, embedding_model="embed-small")
    assistant.journal.add("door", author="Aria", now=T0)
    active(assistant)
    assistant.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="tool")
    drive_inline(sleep_tick(assistant, T0))
    assert model.embedded == [["The east door sticks when it rains."]]
    assert assistant.long_term.recent(1)[0]["vector"]


def test_dreaming_runs_registered_steps_once_per_sleep():
    calls = []

    def step(brain, now, budget):
        calls.append(now)
        return StepResult(True, {"custom": 1})

    DREAMING_STEPS.append(DreamStep("custom", step))
    try:
        assistant = asleep()
        results = []
        drive(sleep_tick(assistant, T0), inline).addBoth(results.append)
        reports = results[0]
        assert calls == [T0] and reports[-1] == {"step": "custom", "custom": 1}
        # every step done: the next sleep tick has no work and costs nothing
        assert sleep_tick(assistant, T0) is None
    finally:
        DREAMING_STEPS.pop()


# ---- persona protection and the store ----------------------------------------------------------


@pytest.mark.parametrize(
    "fact, self_reference",
    [
        ("I helped Mira find the map.", True),
        ("The assistant said hello.", True),
        ("Aria is a librarian.", True),
        ("Aria's favourite book is red.", True),
        ("My shelves are dusty.", True),
        ("Mira likes tea.", False),
        ("Ariadne visited on Tuesday.", False),
        ("The east door sticks.", False),
    ],
)
def test_persona_protection(fact, self_reference):
    assert is_self_reference(fact, ["Aria"]) is self_reference


def test_clean_facts_dedupes_and_trims():
    assert clean_facts(["  Mira  likes tea. ", "Mira likes tea.", "", "I am tired"], ["Aria"]) == [
        "Mira likes tea."
    ]


def _store_with(*texts, vectors=False):
    from ai_assistant.testing.server import bag_of_words_embedding

    store = EmbeddedMemoryStore(DictStore())
    for text in texts:
        store.add(
            text,
            importance=5,
            now=T0,
            source_entry_ids=["j1"],
            provenance={},
            vector=bag_of_words_embedding(text) if vectors else None,
        )
    return store


def test_lexical_search_without_embeddings():
    store = _store_with(
        "Mira likes tea.", "The east door sticks when it rains.", "Tobin keeps notes."
    )
    assert [m["text"] for m in store.search("door rain")] == ["The east door sticks when it rains."]
    assert store.search("") == []
    assert store.search("+*~:^") == []  # lunr syntax from players is not a query language


def test_embedding_search_ranks_by_similarity():
    from ai_assistant.testing.server import bag_of_words_embedding

    store = _store_with(
        "Mira likes green tea.", "The east door sticks when it rains.", vectors=True
    )
    hits = store.search(
        "which door sticks", query_vector=bag_of_words_embedding("which door sticks")
    )
    assert hits[0]["text"].startswith("The east door")
    assert hits[0]["score"] > hits[1]["score"]


def test_wake_up_is_a_sleep_turn_tool_and_going_to_sleep_is_awake_only():
    from ai_assistant.llm.chat import ToolCall
    from ai_assistant.tools import EXTRACTION, TURN, default_registry
    from ai_assistant.tools.base import SLEEP_TURN

    assistant = asleep()
    registry = default_registry()
    ctx = assistant.tool_context(T0, {})
    call = ToolCall("1", "wake_up", '{"reason": "a noise"}')
    # never offered awake: an awake turn cannot call it
    assert "wake_up" not in registry.names(TURN)
    assert registry.dispatch(ctx, call, TURN).malformed == "tool_not_allowed"
    assert assistant.lifecycle.mode == life.SLEEP
    # the sleep turn's: it wakes through the lifecycle's one wake transition
    assert registry.names(SLEEP_TURN) == ["wake_up", "stay_asleep"]
    assert registry.dispatch(ctx, call, SLEEP_TURN).ok
    assert assistant.lifecycle.mode == life.AWAKE
    assert assistant.state.get(life.TRANSITION_REASON) == "a noise"
    assert "go_to_sleep" not in registry.names(SLEEP_TURN)
    assert "go_to_sleep" in registry.names(TURN)
    assert "go_to_sleep" not in registry.names(EXTRACTION)
