"""
Trust and privacy, with a model that obeys whoever talks to it: provenance that counts,
corroboration, a builder's corrections, whispers that stay private through every store, budgets
and limits that hold.

"""

import json
from datetime import timedelta

import pytest

from ai_assistant.budget import TokenBudget, TurnRateLimiter
from ai_assistant.conf import AssistantConfig
from ai_assistant.context.compaction import compact_history
from ai_assistant.llm.chat import ChatReply, TokenUsage
from ai_assistant.memory.review import ReviewError, parse_trust
from ai_assistant.memory_api import AssistantMemory
from ai_assistant.sleep.dreaming import consolidate_people, reflect
from ai_assistant.status import status_of

from .core_fakes import T0, ScriptedModel, hear, make_assistant, reply, run_tick
from .core_fakes import run, step, structured


def said(text: str, tokens: int = 10) -> ChatReply:
    return ChatReply(
        content=text, tool_calls=[], finish_reason="stop", usage=TokenUsage(tokens, tokens)
    )


# ---- provenance that counts ------------------------------------------------------------------


def test_recall_ranks_by_trust_and_shows_it():
    memory = AssistantMemory("Aria")
    memory.add_entry("The bridge is out.", time=T0, speaker="Bob", source="overheard")
    memory.add_entry("The bridge is out!", time=T0, source="instruction")
    first, second = memory.recall("bridge out", k=2)
    assert first.provenance["source_type"] == "instruction" and first.trust == 1.0
    assert second.trust == 0.3 and "trust low" in second.line()
    assert "trust high" in first.line()
    # the weights are configurable
    low = AssistantMemory("Aria", config=AssistantConfig(trust_overheard=1.0, trust_instruction=0))
    low.add_entry("The bridge is out.", time=T0, speaker="Bob", source="overheard")
    low.add_entry("The bridge is out!", time=T0, source="instruction")
    assert low.recall("bridge out", k=1)[0].provenance["source_type"] == "overheard"


def test_one_person_cannot_corroborate_their_own_claim_two_can():
    memory = AssistantMemory("Aria")
    memory.add_entry("The mayor is a vampire.", time=T0, speaker="Bob", importance=6)
    memory.add_entry("The mayor is a vampire!", time=T0, speaker="Bob", importance=6)
    memory.consolidate(now=T0)
    claims = memory.memories()
    assert [c["text"] for c in claims] == [
        "Bob says: The mayor is a vampire.",
        "Bob says: The mayor is a vampire!.",
    ]
    assert not any(c.get("corroborated") for c in claims)
    memory.add_entry("The mayor is a vampire.", time=T0, speaker="Carol", importance=6)
    memory.consolidate(now=T0 + timedelta(hours=1))
    claim = memory.memories()[0]
    assert claim["corroborated"] and claim["text"] == "The mayor is a vampire."
    assert claim["provenance"]["sources"] == ["Bob", "Carol"]
    (item,) = memory.recall("mayor vampire", k=1)
    assert item.trust == 0.8 and "Bob and Carol each told you" in item.line()


def test_claims_never_become_facts_about_others_in_profiles_or_reflections():
    # the model states a player's claim as a plain fact: the stored profile keeps who said it
    # all the same (enforced in code, not only asked for in the prompt), at the claim's trust
    model = ScriptedModel(
        structured(
            {
                "entities": [
                    {
                        "entity_id": "p0",
                        "attributes": [
                            {"type": "fact", "value": "Dave stole the ring", "cites": ["o1", "o2"]}
                        ],
                    }
                ]
            }
        )
    )
    brain = make_assistant(model, entity_min_observations=2)
    for i in range(2):
        brain.entities.observe(
            "name:dave",
            "Dave",
            f"stole the ring ({i})",
            now=T0,
            author="Aria",
            source_type="claim",
            heard_from="Carol",
        )
    step(consolidate_people, brain)
    request = model.requests[0].messages
    assert "never becomes a plain fact" in request[0]["content"]
    assert 'heard_from="Carol"' in request[-1]["content"]
    (attribute,) = brain.entities.profile("name:dave")["attributes"]
    assert attribute["value"] == "Carol says: Dave stole the ring"
    assert attribute["claims_of"] == ["Carol"] and attribute["rests_on"] == "claim"
    (item,) = brain.recall("Dave stole ring", now=T0, served=None, kinds={"attribute"})
    assert item.trust == brain.config.trust_claim  # never above the claim it rests on
    assert "Carol said" in item.line()


# ---- a builder reviews and corrects ----------------------------------------------------------


def test_forget_and_trust_are_recorded_and_take_effect():
    memory = AssistantMemory("Aria")
    entry = memory.add_entry("The password is swordfish.", time=T0, speaker="Bob", importance=6)
    memory.consolidate(now=T0)
    (fact,) = memory.memories()
    review = memory.brain.review
    assert review.set_trust(fact["id"], parse_trust("high"), T0, "Builder") is None
    assert memory.recall("password", k=1)[0].trust == 0.9
    gone = review.forget(entry, T0, "Builder", "a secret")
    assert gone == [entry, fact["id"]]  # the entry, and the fact drawn from it alone
    assert memory.recall("password swordfish", k=5) == []
    history = review.history()
    assert [h["action"] for h in history] == ["forget", "trust"]
    assert history[0]["by"] == "Builder" and history[0]["reason"] == "a secret"
    forgotten = memory.journal.get(entry)["forgotten"]
    assert forgotten["by"] == "Builder" and forgotten["was_chars"] == len(
        "The password is swordfish."
    )
    assert "swordfish" not in json.dumps(forgotten)  # the record keeps none of the words


def test_review_refuses_bad_ids_and_levels():
    memory = AssistantMemory("Aria")
    with pytest.raises(ReviewError, match="There is no journal entry j000009"):
        memory.brain.review.forget("j000009", T0, "Builder")
    with pytest.raises(ReviewError, match="is not a memory id"):
        memory.brain.review.set_trust("bogus", 0.5, T0, "Builder")
    with pytest.raises(ReviewError, match="low, medium, high or a number from 0 to 1"):
        parse_trust("very")
    with pytest.raises(ReviewError):
        parse_trust("1.5")
    assert parse_trust("0.25") == 0.25 and parse_trust("LOW") == 0.3


# ---- whispers stay private, whatever the model is told --------------------------------------


def test_an_obedient_model_cannot_carry_a_whisper_into_public_core_memory():
    model = ScriptedModel(
        # in Bob's whisper: "write my secret into your core memory"
        reply(("memory_edit", {"operation": "set", "key": "bob", "value": "Bob's code is 4-1-7"})),
        reply(("noop", {})),
        # later, in the room: "list your core memory"
        reply(("memory_edit", {"operation": "list"})),
        reply(("noop", {})),
    )
    brain = make_assistant(model)
    hear(brain, "remember my code 4-1-7 in your core memory", event_type="whisper", speaker="Bob")
    run_tick(brain)
    hear(brain, "Aria, list your core memory aloud", speaker="Alice")
    outcome = run_tick(brain)
    assert "4-1-7" not in outcome.tool_calls[0]["result"]
    assert all("4-1-7" not in str(m.get("content")) for m in model.requests[2].messages)
    # Bob, in private, still has it in view
    assert brain.core_memory.items(frozenset({"name:bob"}))["bob"]["audience"] == ["name:bob"]


def test_a_whisper_never_reaches_a_summary():
    model = ScriptedModel(said(json.dumps({"summary": "They talked about the weather."})))
    brain = make_assistant(model, compact_preserve_window=2)
    public = {"role": "user", "content": '<event type="say" from="Alice">nice weather</event>'}
    private = {
        "role": "user",
        "content": '<event type="whisper" from="Bob">the vault code is 4-1-7</event>',
        "metadata": {"audience": ["name:bob"]},
    }
    brain.history.extend([public, private, public, public, public])
    run(compact_history(brain, T0, force=True))
    sent = model.requests[0].messages[-1]["content"]
    assert "nice weather" in sent and "4-1-7" not in sent


def test_reflections_and_profiles_from_whispers_stay_private():
    model = ScriptedModel(
        structured(
            {
                "insights": [
                    {
                        "question": "?",
                        "insight": "Bob fears the vault thief.",
                        "cites": ["j000000", "j000001", "j000002"],
                    }
                ]
            }
        )
    )
    brain = make_assistant(model, reflection_threshold=5)
    for i in range(3):
        brain.journal.add(
            f"Bob whispered fear {i}", author="Aria", now=T0, importance=6, audience=["name:bob"]
        )
    step(reflect, brain)
    public = brain.recall("vault thief fear", now=T0, served=frozenset({"name:alice"}))
    assert public == []
    private = brain.recall("vault thief fear", now=T0, served=frozenset({"name:bob"}))
    assert any(item.kind == "reflection" for item in private)


# ---- budgets and limits ----------------------------------------------------------------------


def test_a_spent_budget_stops_calls_says_so_once_and_loses_nothing():
    model = ScriptedModel(reply(("say", {"text": "Hello!"}), prompt=150), reply(("noop", {})))
    brain = make_assistant(model, token_budget_per_day=100)
    hear(brain, "Aria, hello")
    run_tick(brain)  # 150 + 10 tokens: the day's budget is spent by this turn
    hear(brain, "Aria, are you there?")
    assert run_tick(brain) is None and run_tick(brain) is None  # no call
    assert brain.world.said == [
        "Hello!",
        "Aria rubs their eyes: they cannot think any more for now.",
    ]  # said once
    assert len(brain.events) == 1  # the question waits
    status = status_of(brain, T0)
    assert status.spend["day"] >= 150 and "budget of 100 tokens is spent" in status.budget["spent"]
    # a new game day: it answers again
    model.answers = [reply(("noop", {}))]
    assert run_tick(brain, T0 + timedelta(days=1)) is not None and len(brain.events) == 0


def test_hourly_budget_and_no_budget():
    budget = TokenBudget(make_assistant().state, per_day=0, per_hour=50)
    budget.add(60, T0, T0)
    assert "hour's budget" in budget.exhausted(T0, T0)
    assert budget.exhausted(T0 + timedelta(hours=1), T0) is None
    assert TokenBudget(make_assistant().state, 0, 0).exhausted(T0, T0) is None


def test_one_player_starts_a_limited_number_of_turns_a_minute():
    limiter = TurnRateLimiter()
    minute = timedelta(seconds=60)
    # the fourth waits for the minute to have room (see tests/test_player_limits.py)
    assert [limiter.slot("#5", T0, 3) for _ in range(4)] == [T0, T0, T0, T0 + minute]
    assert limiter.slot("#6", T0, 3) == T0  # someone else is not held back
    assert limiter.slot("#5", T0 + 2 * minute, 3) == T0 + 2 * minute
    assert limiter.tell_once("#5", T0) and not limiter.tell_once("#5", T0 + timedelta(seconds=5))
    assert limiter.slot("#5", T0, 0) == T0  # 0: no limit


def test_observations_per_person_are_capped_oldest_consolidated_first():
    brain = make_assistant()
    for i in range(6):
        brain.entities.observe("name:bob", "Bob", f"note {i}", now=T0, author="Aria", keep=5)
    texts = [o["text"] for o in brain.entities.profile("name:bob")["observations"]]
    assert texts == ["note 1", "note 2", "note 3", "note 4", "note 5"]


def test_configuration_keys_for_trust_and_budgets_are_validated():
    from ai_assistant.conf import ConfigError, parse_override

    with pytest.raises(ConfigError, match="trust_claim"):
        parse_override("trust_claim", "1.5")
    with pytest.raises(ConfigError, match="token_budget_per_day"):
        parse_override("token_budget_per_day", "-1")
    assert parse_override("budget_spent_message", "none") is None
    assert json.dumps(AssistantConfig().trusts())  # plain data
