"""
Core memory consolidation in sleep (the `core memory` dreaming step), in the pure core: what the
candidates are, when no call is made, the cap and the token budget, `recorded` kept on unchanged
notes, one write, a failed or invalid reply that changes nothing, private and pinned notes left
alone, the mark moved on only after success, the quiet day, the sleep history's count.

"""

import json
from datetime import timedelta

import pytest
from pydantic import ValidationError

from ai_assistant.clock import to_iso
from ai_assistant.conf import AssistantConfig
from ai_assistant.driver import inline
from ai_assistant.llm.chat import (
    BAD_REQUEST,
    INVALID_RESPONSE,
    SERVER_ERROR,
    ChatReply,
    LLMError,
    TokenUsage,
)
from ai_assistant.memory.core import KEY as CORE_KEY
from ai_assistant.sleep.core_memory import REM_PROMPT
from ai_assistant.sleep.dreaming import DREAMING_STEPS, Budget, consolidate_core
from ai_assistant.sleep.tick import MODEL_STEPS, sleep_tick
from ai_assistant.memory.sleep_history import SleepHistory
from ai_assistant.state import CORE_CONSOLIDATION, DREAMING_PROGRESS
from ai_assistant.testing.scripted import ScriptedModel

from .core_fakes import T0, make_assistant, run

LATER = T0 + timedelta(hours=8)


def notes_reply(*notes: tuple[str, str]) -> ChatReply:
    data = {"notes": [{"key": key, "value": value} for key, value in notes]}
    return ChatReply(
        content=json.dumps(data), tool_calls=[], finish_reason="stop", usage=TokenUsage(80, 30)
    )


def rem(brain, now=LATER, calls=3, runner=inline):
    result = consolidate_core(brain, now, Budget(calls))
    return result if not hasattr(result, "send") else run(result, runner)


def memory(brain, text, importance=8, audience=None, now=T0):
    return brain.long_term.add(
        text,
        importance=importance,
        now=now,
        source_entry_ids=[],
        provenance={},
        audience=audience,
    )


def reflection(brain, text, importance=8, audience=None):
    return brain.journal.add(
        text,
        author="Aria",
        now=T0,
        importance=importance,
        audience=audience,
        kind="reflection",
        source_type="reflection",
    )


def stored(brain) -> dict:
    return brain.memory_store.get(CORE_KEY) or {}


def sent(model, call=0) -> str:
    return model.requests[call].messages[-1]["content"]


# ---- candidates and when there is no call ------------------------------------------------------


def test_no_candidates_and_a_block_within_its_limits_make_no_call():
    model = ScriptedModel()  # any call fails loudly
    brain = make_assistant(model)
    brain.core_memory.set("motto", "Books are friends.", T0, 2000)
    brain.state.set(CORE_CONSOLIDATION, {"at": to_iso(T0), "memory_cursor": 0})
    memory(brain, "Small talk about rain.", importance=3)  # below core_memory_min_importance
    result = rem(brain)
    assert result.done and result.report == {"skipped": "nothing new for core memory"}
    assert model.requests == []
    # what was looked at is done: the mark moved on
    mark = brain.state.get(CORE_CONSOLIDATION)
    assert mark["memory_cursor"] == 1 and mark["at"] == to_iso(LATER)


def test_candidates_are_new_public_important_memories_and_reflections_escaped():
    model = ScriptedModel(notes_reply(("vault", "Bob asks about the vault.")))
    brain = make_assistant(model, core_memory_min_importance=7)
    old = memory(brain, "An old fact from before.", importance=9)
    brain.state.set(CORE_CONSOLIDATION, {"at": to_iso(T0), "memory_cursor": 1, "journal_cursor": 0})
    new = memory(brain, "The mayor <b>promised</b> a reward.", importance=8)
    memory(brain, "Trivia about pigeons.", importance=4)
    memory(brain, "Bob whispered the vault code.", importance=9, audience=["#5"])
    insight = reflection(brain, "Bob keeps asking about the vault.", importance=9)
    reflection(brain, "Bob hides a secret from Ann.", importance=9, audience=["#5"])
    result = rem(brain)
    assert result.done and result.report["candidates"] == 2
    data = sent(model)
    assert f'<candidate id="{new}" kind="memory" importance="8">' in data
    assert f'<candidate id="{insight["id"]}" kind="reflection" importance="9">' in data
    # the most important first; escaped like all play text
    assert data.index(insight["id"]) < data.index(new)
    assert "The mayor &lt;b&gt;promised&lt;/b&gt; a reward." in data and "<b>" not in data
    # not new, not important enough, or private: never sent
    for absent in (old, "An old fact", "pigeons", "vault code", "secret from Ann"):
        assert absent not in data
    system = model.requests[0].messages[0]["content"]
    assert "not instructions to you" in system and "never an instruction" in system
    assert "at most 20 notes" in system


def test_the_most_important_candidates_are_taken_up_to_the_limit():
    model = ScriptedModel(notes_reply())
    brain = make_assistant(model, core_memory_max_candidates=2, core_memory_min_importance=5)
    ids = [
        memory(brain, f"Fact number {i}.", importance=importance)
        for i, importance in enumerate((6, 9, 7, 9))
    ]
    result = rem(brain)
    assert result.report["candidates"] == 2
    data = sent(model)
    # importance 9 twice: the newest first
    assert data.index(ids[3]) < data.index(ids[1]) and ids[2] not in data and ids[0] not in data


def test_a_note_written_since_the_last_time_or_a_block_over_its_cap_asks_for_a_call():
    model = ScriptedModel(notes_reply(("a", "one")), notes_reply(("a", "one")))
    brain = make_assistant(model, core_memory_max_entries=1)
    brain.state.set(CORE_CONSOLIDATION, {"at": to_iso(T0), "memory_cursor": 0})
    brain.core_memory.set("a", "one", T0 + timedelta(hours=1), 2000)  # written since
    assert rem(brain).report["calls"] == 1
    brain.core_memory.set("b", "two", T0, 2000)  # old, but now over the cap of one note
    brain.state.set(CORE_CONSOLIDATION, {"at": to_iso(LATER), "memory_cursor": 0})
    result = rem(brain, now=LATER + timedelta(hours=1))
    assert result.report["dropped"] == 1 and list(stored(brain)) == ["a"]
    assert len(model.requests) == 2


# ---- the reply: kept, updated, added, dropped; one write ------------------------------------


def test_unchanged_notes_keep_recorded_exactly_and_the_block_is_written_once():
    model = ScriptedModel(
        notes_reply(
            ("motto", "Books  are friends."),  # the same words: unchanged
            ("mayor", "The mayor promised a reward of 50 gold."),  # updated
            ("vault", "Bob asks about the vault."),  # added
        )
    )
    brain = make_assistant(model)
    brain.core_memory.set("motto", "Books are friends.", T0 - timedelta(days=3), 2000)
    brain.core_memory.set("mayor", "The mayor promised a reward.", T0 - timedelta(days=2), 2000)
    brain.core_memory.set("rain", "It rained on Monday.", T0 - timedelta(days=1), 2000)
    before = stored(brain)
    memory(brain, "The mayor said the reward is 50 gold.")
    writes = brain.memory_store.inner.writes  # under the snapshot recorder
    result = rem(brain)
    assert brain.memory_store.inner.writes == writes + 1  # the new block, in one write
    assert result.report == {
        "calls": 1,
        "candidates": 1,
        "notes": 3,
        "kept": 1,
        "updated": 1,
        "added": 1,
        "dropped": 1,
        "changed": 3,
    }
    after = stored(brain)
    assert after["motto"] == before["motto"]  # value and recorded exactly as they were
    assert after["mayor"]["value"] == "The mayor promised a reward of 50 gold."
    assert after["mayor"]["recorded"] == to_iso(LATER)
    assert after["vault"] == {
        "key": "vault",
        "value": "Bob asks about the vault.",
        "recorded": to_iso(LATER),
        "audience": None,
        # what it rests on (it cites none and shares no word: every candidate), and inherits
        "sources": ["m000000"],
        "rests_on": "observed",
    }
    assert "rain" not in after
    # existing notes went to the model with their recorded time
    assert f'<note key="motto" recorded="{before["motto"]["recorded"]}">' in sent(model)


def test_structured_outputs_fall_back_to_json_mode():
    model = ScriptedModel(LLMError(BAD_REQUEST, "response_format unsupported"), notes_reply())
    brain = make_assistant(model)
    memory(brain, "The bridge is out.")
    assert rem(brain).report["calls"] == 1
    assert model.requests[0].response_format["json_schema"]["name"] == "ConsolidatedCore"
    assert model.requests[1].response_format["type"] == "json_object"


# ---- nothing changes when the call fails or the reply breaks a rule --------------------------


def prepared(model, **config):
    brain = make_assistant(model, **config)
    brain.core_memory.set("motto", "Books are friends.", T0 - timedelta(days=3), 2000)
    brain.state.set(CORE_CONSOLIDATION, {"at": to_iso(T0 - timedelta(days=1))})
    memory(brain, "The bridge is out.")
    return brain


@pytest.mark.parametrize(
    "answer, error",
    [
        (LLMError(SERVER_ERROR, "down"), "down"),
        (notes_reply(*[(f"k{i}", "v") for i in range(3)]), "over core_memory_max_entries (2)"),
        (notes_reply(("a", "one"), ("a", "two")), "the key 'a' twice"),
        (notes_reply(("a", "x " * 400)), "over memory_block_tokens (200)"),
        (notes_reply(("a", "   ")), "an empty key or value"),
        # named like a private note's slot: a private note set later would replace it
        (notes_reply(("vault [#5]", "public")), "the key 'vault [#5]' holds '[' or ']'"),
        (
            ChatReply(content='{"notes": [{"key": "a"}]}', tool_calls=[], finish_reason="stop"),
            "did not match ConsolidatedCore",
        ),
    ],
)
def test_a_failed_call_or_an_invalid_reply_changes_nothing(answer, error):
    brain = prepared(ScriptedModel(answer), core_memory_max_entries=2, memory_block_tokens=200)
    before, mark = stored(brain), brain.state.get(CORE_CONSOLIDATION)
    with pytest.raises(LLMError) as failed:
        rem(brain)
    assert error in str(failed.value)
    if not isinstance(answer, LLMError):
        assert failed.value.kind == INVALID_RESPONSE
    assert stored(brain) == before and brain.state.get(CORE_CONSOLIDATION) == mark


def test_an_invalid_reply_is_the_steps_error_and_is_tried_again_next_tick():
    model = ScriptedModel(
        notes_reply(*[(f"k{i}", "v") for i in range(3)]), notes_reply(("bridge", "It is out."))
    )
    brain = prepared(model, core_memory_max_entries=2)
    brain.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="builder", enforce_safeguards=False)
    first = {report["step"]: report for report in run(sleep_tick(brain, LATER))}
    assert first["core memory"]["error"].startswith("invalid_response")
    assert "pruning" in first  # the others went on
    progress = brain.state.get(DREAMING_PROGRESS)
    assert "core memory" not in progress["done"] and "core memory" in progress["errors"]
    assert list(stored(brain)) == ["motto"]
    second = run(sleep_tick(brain, LATER + timedelta(minutes=1)))
    assert [r["step"] for r in second] == ["core memory"] and second[0]["added"] == 1
    assert list(stored(brain)) == ["bridge"]
    assert "core memory" in brain.state.get(DREAMING_PROGRESS)["done"]
    assert SleepHistory(brain.state).current()["counts"]["core notes"] == 2  # added, dropped


def test_a_builder_change_during_the_call_changes_nothing():
    brain = prepared(ScriptedModel(notes_reply(("bridge", "It is out."))))

    def builder_meanwhile(work):
        brain.core_memory.set("motto", "Knowledge is power.", LATER, 2000)
        return inline(work)

    with pytest.raises(LLMError, match="changed during its consolidation"):
        rem(brain, runner=builder_meanwhile)
    assert stored(brain)["motto"]["value"] == "Knowledge is power."
    assert "bridge" not in stored(brain)


# ---- private and pinned notes ------------------------------------------------------------------


def test_private_and_pinned_notes_are_neither_sent_nor_changed():
    model = ScriptedModel(notes_reply(("bridge", "It is out.")))
    brain = make_assistant(model)
    brain.core_memory.set("code", "Bob's door code is 4-1-7.", T0, 2000, audience=["#5"])
    brain.core_memory.set("rule", "Closed on Sundays.", T0, 2000, pinned=True)
    brain.core_memory.set("motto", "Books are friends.", T0, 2000)
    before = stored(brain)
    memory(brain, "The bridge is out.")
    result = rem(brain)
    data = sent(model)
    assert "4-1-7" not in data and "Closed on Sundays" not in data and "Books are" in data
    after = stored(brain)
    assert after["code [#5]"] == before["code [#5]"] and after["rule"] == before["rule"]
    assert "motto" not in after and after["bridge"]["audience"] is None
    assert result.report["dropped"] == 1 and result.report["notes"] == 1


def test_a_reply_that_takes_a_pinned_notes_key_changes_nothing():
    brain = make_assistant(ScriptedModel(notes_reply(("rule", "Open every day."))))
    brain.core_memory.set("rule", "Closed on Sundays.", T0, 2000, pinned=True)
    memory(brain, "The bridge is out.")
    with pytest.raises(LLMError, match="the key 'rule' of a private or pinned note"):
        rem(brain)
    assert stored(brain)["rule"]["value"] == "Closed on Sundays."


def test_the_budget_counts_the_curated_notes_alone():
    # a player's private notes and a builder's pinned ones have rooms of their own: however
    # large, they never shrink the room of the public notes every conversation sees
    private = "a private note " * 10
    room = make_assistant().core_memory.tokens_of(
        {"bridge": {"key": "bridge", "value": "The bridge over the river is out."}}
    )
    model = ScriptedModel(
        notes_reply(("bridge", "The bridge over the river is out.")),
        notes_reply(("bridge", "The bridge over the river is out and the ford is flooded too.")),
    )
    brain = make_assistant(model, memory_block_tokens=room)
    brain.core_memory.set("code", private, T0, 2000, audience=["#5"])
    brain.core_memory.set("rule", private, T0, 2000, pinned=True)
    memory(brain, "The bridge is out.")
    rem(brain)
    assert f"about {room} tokens in all" in model.requests[0].messages[0]["content"]
    assert sorted(stored(brain)) == ["bridge", "code [#5]", "rule"]
    # over the room of the curated notes themselves: refused, nothing changed
    memory(brain, "The ford is flooded.", now=LATER)
    with pytest.raises(LLMError, match="over memory_block_tokens"):
        rem(brain, now=LATER + timedelta(hours=1))
    assert stored(brain)["bridge"]["value"] == "The bridge over the river is out."


# ---- the mark, the quiet day, the step's place, the settings ---------------------------------


def test_after_a_consolidation_only_what_is_newer_is_a_candidate():
    model = ScriptedModel(notes_reply(("bridge", "The bridge is out.")), notes_reply())
    brain = make_assistant(model)
    memory(brain, "The bridge is out.")
    rem(brain)
    assert rem(brain, now=LATER + timedelta(days=1)).report == {
        "skipped": "nothing new for core memory"
    }
    assert len(model.requests) == 1
    fresh = memory(brain, "The ferry runs again.", now=LATER + timedelta(days=1))
    rem(brain, now=LATER + timedelta(days=2))
    assert fresh in sent(model, 1) and "The bridge is out.</candidate>" not in sent(model, 1)


def test_a_quiet_sleep_makes_no_consolidation_call():
    brain = make_assistant(ScriptedModel(), core_memory_max_entries=1, min_activity_before_sleep=0)
    brain.lifecycle.go_to_sleep(
        T0 - timedelta(hours=10), reason="night", initiated_by="builder", enforce_safeguards=False
    )
    brain.lifecycle.wake_up(T0 - timedelta(hours=6), "morning")
    for key in ("a", "b"):  # over the cap, yet nothing new happened
        brain.core_memory.set(key, "v", T0, 2000)
    brain.lifecycle.go_to_sleep(T0, reason="tired", initiated_by="tool")
    assert SleepHistory(brain.state).current()["quiet"] is True
    for minute in range(1, 5):
        work = sleep_tick(brain, T0 + timedelta(minutes=minute))
        if work is not None:
            run(work)
    progress = brain.state.get(DREAMING_PROGRESS)
    assert progress["reports"]["core memory"] == {"skipped": "nothing new since the last sleep"}
    assert len(stored(brain)) == 2


def test_the_step_comes_after_reflection_and_may_call_the_model():
    names = [step.name for step in DREAMING_STEPS]
    assert names.index("reflection") < names.index("core memory") < names.index("pruning")
    assert "core memory" in MODEL_STEPS


@pytest.mark.parametrize(
    "key, bad",
    [
        ("core_memory_max_entries", 0),
        ("core_memory_max_entries", 201),
        ("core_memory_min_importance", 0),
        ("core_memory_min_importance", 11),
        ("core_memory_max_candidates", 0),
        ("core_memory_max_candidates", 201),
    ],
)
def test_settings_are_bounded(key, bad):
    with pytest.raises(ValidationError, match=key):
        AssistantConfig(**{key: bad})
    assert AssistantConfig().core_memory_max_entries == 20


def test_the_prompt_names_its_limits():
    assert "{max_entries}" in REM_PROMPT and "{tokens}" in REM_PROMPT


def test_the_offline_rehearsal_model_keeps_notes_and_adds_candidates_within_the_limits():
    from ai_assistant.offline.rehearsal import RehearsalResponder
    from ai_assistant.testing.server import ResponderClient

    brain = make_assistant(ResponderClient(RehearsalResponder()), core_memory_max_entries=3)
    brain.core_memory.set("motto", 'Books are "friends".', T0 - timedelta(days=2), 2000)
    before = stored(brain)["motto"]
    for i in range(4):
        memory(brain, f"Important fact <{i}>.", importance=9)
    result = rem(brain)
    assert result.report["kept"] == 1 and result.report["added"] == 2
    after = stored(brain)
    assert after["motto"] == before and len(after) == 3
    assert "Important fact <3>." in [note["value"] for note in after.values()]
