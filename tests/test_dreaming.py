"""
The dreaming phase, step by step, in the pure core: links, people, orphaned links, reflection,
pruning, working memory; the budget of calls per tick, resuming, a failing step; a held wake
that gives up. (A sleeping assistant's decision to wake, its sleep turn: test_wake_tools.py.)

"""

import json
from datetime import timedelta

from ai_assistant import lifecycle as life
from ai_assistant.agent.brain import Brain
from ai_assistant.llm.chat import SERVER_ERROR, LLMError
from ai_assistant.memory.working import WorkingMemory
from ai_assistant.sleep.dreaming import (
    DREAMING_STEPS,
    consolidate_people,
    link_memories,
    prune_episodes,
    prune_orphan_links,
    reflect,
)
from ai_assistant.sleep.tick import DREAMING_STEPS, sleep_tick
from ai_assistant.state import DREAMING_PROGRESS
from ai_assistant.testing.scripted import ScriptedModel

from .core_fakes import T0, FakeWorld, hear, make_assistant, reply, run, step, structured


def memory(brain, text, importance=6, audience=None, now=T0, about=()):
    return brain.long_term.add(
        text,
        importance=importance,
        now=now,
        source_entry_ids=[],
        provenance={"about": list(about)},
        audience=audience,
    )


def observe(brain, name, count, audience=None, heard_from=None):
    for i in range(count):
        brain.entities.observe(
            f"name:{name.lower()}",
            name,
            f"{name} likes thing {i}",
            now=T0,
            author="Aria",
            audience=audience,
            heard_from=heard_from,
        )


# ---- 1. links --------------------------------------------------------------------------------


def test_links_join_related_important_memories_both_ways():
    brain = make_assistant(link_min_importance=5, link_max_per_memory=1)
    a = memory(brain, "The lighthouse keeper fell ill with a fever.")
    b = memory(brain, "The lighthouse keeper has a fever and cannot light the lamp.")
    c = memory(brain, "Fish are sold at dawn in the market.")
    memory(brain, "The lighthouse lamp is unimportant trivia.", importance=2)
    result = step(link_memories, brain)
    assert result.done and result.report["linked"] == 3
    assert brain.links.neighbours(a) == {b: brain.links.neighbours(b)[a]}
    assert c not in brain.links.neighbours(a)
    # the cursor moves on: the next sleep links only what is new
    assert step(link_memories, brain).report["linked"] == 0


def test_links_are_capped_per_memory_keeping_the_strongest():
    brain = make_assistant()
    brain.links.link([("m000000", "m000001", 0.3), ("m000000", "m000002", 0.9)], 1)
    assert brain.links.neighbours("m000000") == {"m000002": 0.9}
    assert brain.links.neighbours("m000001") == {"m000000": 0.3}  # its own cap is not full


# ---- 2. people -------------------------------------------------------------------------------


def test_people_need_enough_observations_and_share_calls_in_batches():
    answers = []
    model = ScriptedModel()
    brain = make_assistant(model, entity_min_observations=3, entity_batch_size=2)
    for name in ("Ann", "Ben", "Cid"):
        observe(brain, name, 3)
    observe(brain, "Dee", 2)  # too few: not consolidated
    for batch in ([("p0", ["o1", "o9"]), ("p1", [])], [("p0", ["o2"])]):
        answers.append(
            structured(
                {
                    "entities": [
                        {
                            "entity_id": pid,
                            "attributes": [
                                {
                                    "type": "preference",
                                    "value": f"likes things ({pid})",
                                    "cites": cites,
                                }
                            ],
                        }
                        for pid, cites in batch
                    ]
                }
            )
        )
    model.answers = answers
    result = step(consolidate_people, brain)
    assert result.done and result.report == {"calls": 2, "people": 3, "attributes": 2}
    ann = brain.entities.profile("name:ann")
    # an attribute keeps only the citations that exist; one with none is dropped
    assert ann["attributes"][0]["cites"] == ["o1"] and ann["attributes"][0]["type"] == "preference"
    assert all(o["consolidated"] for o in ann["observations"])
    assert brain.entities.profile("name:ben")["attributes"] == []
    assert not any(o["consolidated"] for o in brain.entities.profile("name:dee")["observations"])
    # the observations went to the model escaped, with their ids
    assert '<observation id="o1"' in model.requests[0].messages[-1]["content"]


def test_private_observations_are_consolidated_apart_with_their_audience():
    model = ScriptedModel(
        structured(
            {
                "entities": [
                    {
                        "entity_id": "p0",
                        "attributes": [{"type": "fact", "value": "public thing", "cites": ["o1"]}],
                    }
                ]
            }
        ),
        structured(
            {
                "entities": [
                    {
                        "entity_id": "p0",
                        "attributes": [{"type": "fact", "value": "secret thing", "cites": ["o3"]}],
                    }
                ]
            }
        ),
    )
    brain = make_assistant(model, entity_min_observations=2)
    observe(brain, "Bob", 2)
    observe(brain, "Bob", 2, audience=["name:bob"])
    step(consolidate_people, brain)
    attributes = brain.entities.profile("name:bob")["attributes"]
    assert [(a["value"], a["audience"]) for a in attributes] == [
        ("public thing", None),
        ("secret thing", ["name:bob"]),
    ]
    assert "secret" not in model.requests[0].messages[-1]["content"]
    assert "likes thing" in model.requests[1].messages[-1]["content"]


def test_one_profile_per_person_whether_present_or_not():
    brain = make_assistant()
    brain.entities.observe("name:bob", "Bob", "was away", now=T0, author="Aria")
    brain.entities.observe("#7", "Bob", "came back", now=T0, author="Aria")
    brain.entities.observe("name:bob", "Bob", "left again", now=T0, author="Aria")
    assert list(brain.entities.index()) == ["#7"]
    texts = [o["text"] for o in brain.entities.profile("#7")["observations"]]
    assert texts == ["was away", "came back", "left again"]


# ---- 3. orphans ------------------------------------------------------------------------------


def test_links_to_memories_that_are_gone_are_pruned():
    brain = make_assistant()
    a = memory(brain, "one")
    b = memory(brain, "two")
    brain.links.link([(a, b, 0.5), (a, "m000099", 0.5)], 5)
    brain.long_term.forget(b, T0, "a builder said so")
    assert step(prune_orphan_links, brain).report == {"removed": 2}
    assert brain.links.neighbours(a) == {}


# ---- 4. reflection ---------------------------------------------------------------------------


def test_reflection_waits_for_enough_importance_then_cites_and_resets():
    model = ScriptedModel(
        structured(
            {
                "insights": [
                    {
                        "question": "Who?",
                        "insight": "Bob keeps asking about the vault.",
                        "cites": ["j000001", "j000002", "j000077"],
                    },
                    {"question": "Why?", "insight": "Unfounded.", "cites": ["j000999"]},
                ]
            }
        )
    )
    brain = make_assistant(model, reflection_threshold=20)
    for i in range(3):
        brain.journal.add(f"Bob asked about the vault {i}", author="Aria", now=T0, importance=6)
    assert step(reflect, brain).report == {"skipped": "below reflection_threshold"}
    brain.journal.add("Bob asked again", author="Aria", now=T0, importance=6)
    result = step(reflect, brain)
    assert result.report == {"calls": 1, "insights": 1}
    insight = brain.journal.all()[-1]
    assert insight["kind"] == "reflection" and insight["cites"] == ["j000001", "j000002"]
    assert insight["importance"] in (8, 9) and insight["source_type"] == "reflection"
    assert brain.journal.importance_since_reflection == 0
    assert insight not in brain.journal.unconsolidated()  # never consolidated as experience


def test_a_reflection_drawn_from_private_entries_stays_private():
    model = ScriptedModel(
        structured(
            {
                "insights": [
                    {
                        "question": "?",
                        "insight": "Bob hides something.",
                        "cites": ["j000000", "j000001", "j000002"],
                    }
                ]
            }
        )
    )
    brain = make_assistant(model, reflection_threshold=10)
    for i in range(3):
        brain.journal.add(
            f"Bob whispered secret {i}", author="Aria", now=T0, importance=6, audience=["#5"]
        )
    step(reflect, brain)
    assert brain.journal.all()[-1]["audience"] == ["#5"]


def test_a_reflection_split_over_ticks_never_writes_an_audience_twice():
    def insight(text, cites):
        return structured({"insights": [{"question": "?", "insight": text, "cites": cites}]})

    model = ScriptedModel(
        insight("The vault worries everyone.", ["j000000", "j000001", "j000002"]),
        insight("Bob hides something.", ["j000003", "j000004", "j000005"]),
    )
    brain = make_assistant(model, reflection_threshold=10)
    for i in range(3):
        brain.journal.add(f"Talk of the vault {i}", author="Aria", now=T0, importance=6)
    for i in range(3):
        brain.journal.add(
            f"Bob whispered secret {i}", author="Aria", now=T0, importance=6, audience=["#5"]
        )
    # one call a tick: the public audience, then the private one, each once
    first = step(reflect, brain, calls=1)
    assert not first.done and first.report == {"calls": 1, "insights": 1}
    second = step(reflect, brain, calls=1)
    assert second.done and second.report == {"calls": 1, "insights": 1}
    written = [e["content"] for e in brain.journal.all() if e.get("kind") == "reflection"]
    assert written == ["The vault worries everyone.", "Bob hides something."]
    assert brain.journal.importance_since_reflection == 0


# ---- 5. pruning ------------------------------------------------------------------------------


def test_pruning_empties_only_old_unimportant_consolidated_experience():
    brain = make_assistant(prune_max_importance=3, prune_age_days=30, digest_enabled=False)
    old = T0
    journal = brain.journal
    keep_fresh = journal.add(
        "fresh small talk", author="Aria", now=old + timedelta(days=40), importance=2
    )
    doomed = journal.add("old small talk", author="Aria", now=old, importance=2)
    pending = journal.add("old but not consolidated", author="Aria", now=old, importance=2)
    big = journal.add("old but important", author="Aria", now=old, importance=8)
    thought = journal.add("old reflection", author="Aria", now=old, importance=2, kind="reflection")
    journal.update([{**e, "consolidated": True} for e in (keep_fresh, doomed, big)])
    brain.links.link([(doomed["id"], big["id"], 0.8)], 5)
    result = step(prune_episodes, brain, now=old + timedelta(days=45))
    assert result.report == {"pruned": 1, "links_removed": 1}
    by_id = {e["id"]: e for e in journal.all()}
    assert by_id[doomed["id"]]["content"] == "" and by_id[doomed["id"]]["pruned"]
    for kept in (keep_fresh, pending, big, thought):
        assert by_id[kept["id"]]["content"] and not by_id[kept["id"]].get("pruned")
    assert brain.links.neighbours(big["id"]) == {}


def test_pruning_waits_for_the_daily_digest_of_an_entry():
    brain = make_assistant(prune_max_importance=3, prune_age_days=30)
    first = brain.journal.add("old small talk", author="Aria", now=T0, importance=2)
    second = brain.journal.add("more small talk", author="Aria", now=T0, importance=2)
    brain.journal.update([{**e, "consolidated": True} for e in (first, second)])
    later = T0 + timedelta(days=45)
    assert step(prune_episodes, brain, now=later).report["pruned"] == 0  # not digested yet
    brain.digests.finish_day("2026-11-21", first["seq"] + 1)  # the digest read the first
    assert step(prune_episodes, brain, now=later).report["pruned"] == 1
    assert brain.journal.get(first["id"])["pruned"] and brain.journal.get(second["id"])["content"]


# ---- 6. working memory -----------------------------------------------------------------------


def test_working_memory_shows_fresh_visible_partners_and_lets_stale_ones_go():
    brain = make_assistant()
    working = WorkingMemory(brain.state)
    working.note([("#1", "Ann", "where is the map", None)], T0)
    working.note([("#2", "Ben", "my secret", ["#2"])], T0 + timedelta(minutes=50))
    lines = working.lines(frozenset({"#1"}), T0 + timedelta(minutes=55), 60)
    assert len(lines) == 1 and "Ann" in lines[0] and "where is the map" in lines[0]
    assert working.clear_stale(T0 + timedelta(minutes=70), 60) == 1
    assert list(working.partners()) == ["#2"]


# ---- the dreaming phase as a whole -----------------------------------------------------------


def dreaming(brain: Brain) -> Brain:
    brain.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="builder", enforce_safeguards=False)
    assert brain.lifecycle.phase == life.DREAMING
    return brain


def test_dreaming_spends_its_budget_and_resumes_after_a_reload():
    answers = [structured({"entities": [{"entity_id": "p0", "attributes": []}]}) for _ in range(2)]
    model = ScriptedModel(*answers)
    brain = dreaming(
        make_assistant(
            model,
            entity_min_observations=2,
            entity_batch_size=1,
            dream_max_calls_per_tick=1,
            relationships_enabled=False,  # counted in test_relationships.py
        )
    )
    observe(brain, "Ann", 2)
    observe(brain, "Ben", 2)
    first = run(sleep_tick(brain, T0))
    assert [r["step"] for r in first] == ["links", "people"] and len(model.requests) == 1
    # a reload: a new brain over the same stores goes on where it stopped
    again = Brain(
        **{
            f: getattr(brain, f)
            for f in (
                "name",
                "persona",
                "config",
                "model",
                "state",
                "memory_store",
                "world",
                "registry",
                "client_factory",
            )
        }
    )
    second = run(sleep_tick(again, T0 + timedelta(minutes=1)))
    assert second[0]["step"] == "people" and len(model.requests) == 2
    assert "people" in again.state.get(DREAMING_PROGRESS)["done"]
    assert sleep_tick(again, T0 + timedelta(minutes=2)) is None  # all done: no work, no calls


def test_a_failing_step_does_not_stop_the_others_and_is_tried_again():
    model = ScriptedModel(
        LLMError(SERVER_ERROR, "down"),
        structured({"entities": [{"entity_id": "p0", "attributes": []}]}),
    )
    brain = dreaming(make_assistant(model, entity_min_observations=2, relationships_enabled=False))
    observe(brain, "Ann", 2)
    first = run(sleep_tick(brain, T0))
    steps = {r["step"]: r for r in first}
    assert steps["people"]["error"].startswith("server_error")
    assert "reflection" in steps and "pruning" in steps  # the others went on
    progress = brain.state.get(DREAMING_PROGRESS)
    assert "people" not in progress["done"] and "people" in progress["errors"]
    second = run(sleep_tick(brain, T0 + timedelta(minutes=1)))
    assert [r["step"] for r in second] == ["people"] and "error" not in second[0]


def test_a_step_that_keeps_failing_rests_until_the_next_sleep():
    model = ScriptedModel(*[structured({"entities": "not a list"})] * 3)
    brain = dreaming(make_assistant(model, entity_min_observations=2, relationships_enabled=False))
    observe(brain, "Ann", 2)
    reports = [run(sleep_tick(brain, T0 + timedelta(minutes=m))) for m in range(3)]
    people = [next(r for r in report if r["step"] == "people") for report in reports]
    assert all(p["error"].startswith("invalid_response") for p in people)
    assert "gave_up" not in people[1] and "after 3 failures" in people[2]["gave_up"]
    assert "people" in brain.state.get(DREAMING_PROGRESS)["done"]
    assert sleep_tick(brain, T0 + timedelta(minutes=3)) is None  # no fourth call this sleep
    # nothing it would have changed was touched: the observations wait for the next sleep
    assert not any(
        o.get("consolidated") for o in brain.entities.profile("name:ann")["observations"]
    )


def test_a_step_that_raises_is_recorded_and_skipped_and_the_wake_is_on_time(monkeypatch):
    from ai_assistant.sleep import dreaming as dreaming_module
    from ai_assistant.sleep.steps import DreamStep

    def broken(brain, now, budget):
        raise KeyError("a record without its 'audience'")

    steps = [DreamStep("broken", broken), *dreaming_module.DREAMING_STEPS]
    monkeypatch.setattr(dreaming_module, "DREAMING_STEPS", steps)
    brain = make_assistant(ScriptedModel())
    brain.lifecycle.go_to_sleep(
        T0, hours=1, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    reports = [run(sleep_tick(brain, T0 + timedelta(minutes=m))) for m in range(3)]
    first = {r["step"]: r for r in reports[0]}
    assert first["broken"]["error"].startswith("step_error: KeyError")
    assert "Traceback" in first["broken"]["detail"] and "broken" in first["broken"]["detail"]
    assert "pruning" in first and "error" not in first["pruning"]  # the others went on
    progress = brain.state.get(DREAMING_PROGRESS)
    assert progress["errors"]["broken"].startswith("step_error")
    assert "after 3 failures" in reports[2][0]["gave_up"]
    assert sleep_tick(brain, T0 + timedelta(minutes=3)) is None  # it rests until the next sleep
    wake_at = T0 + timedelta(hours=1)
    brain.lifecycle.apply_wake_conditions([], wake_at)
    assert brain.lifecycle.mode == life.AWAKE


# ---- a held wake that gives up ---------------------------------------------------------------


def test_compacting_gives_up_when_the_model_keeps_failing():
    model = ScriptedModel(*[LLMError(SERVER_ERROR, "down")] * 3)
    brain = make_assistant(model, compacting_give_up_minutes=30)
    brain.journal.add("a fact worth keeping", author="Aria", now=T0)
    brain.lifecycle.go_to_sleep(
        T0, hours=1, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    wake_at = T0 + timedelta(hours=1)
    for minutes in (0, 10, 31):
        now = wake_at + timedelta(minutes=minutes)
        report = run(sleep_tick(brain, now))
        assert report["error"]
        brain.lifecycle.apply_wake_conditions([], now)
        if minutes < 30:
            assert brain.lifecycle.mode == life.SLEEP  # held back while compacting
    assert brain.lifecycle.mode == life.AWAKE
    assert "gave up consolidating" in brain.state.get(life.TRANSITION_REASON)
    assert len(brain.journal.unconsolidated()) == 1  # nothing lost


# ---- a sleeping assistant's decision to wake: its sleep turn (tests/test_wake_tools.py) -------


# ---- what the model writes is bounded before it is stored ------------------------------------


def test_an_over_long_attribute_or_insight_is_cut_not_the_whole_reply_refused():
    from ai_assistant.sleep.prompts import MAX_ATTRIBUTE_CHARS, MAX_INSIGHT_CHARS

    model = ScriptedModel(
        structured(
            {
                "entities": [
                    {
                        "entity_id": "p0",
                        "attributes": [
                            {"type": "fact", "value": "Ann sings " * 500, "cites": ["o1"]},
                            {"type": "trait", "value": "kind", "cites": ["o2"]},
                        ],
                    }
                ]
            }
        ),
        structured(
            {
                "insights": [
                    {
                        "question": "Why? " * 200,
                        "insight": "Bob keeps asking about the vault. " * 100,
                        "cites": ["j000000", "j000001", "j000002"],
                    }
                ]
            }
        ),
    )
    brain = make_assistant(model, entity_min_observations=2, reflection_threshold=10)
    observe(brain, "Ann", 2)
    assert step(consolidate_people, brain).report["attributes"] == 2
    long, short = brain.entities.profile("name:ann")["attributes"]
    assert len(long["value"]) == MAX_ATTRIBUTE_CHARS and long["value"].endswith("...")
    assert short["value"] == "kind"
    for i in range(3):
        brain.journal.add(f"Bob asked about the vault {i}", author="Aria", now=T0, importance=6)
    assert step(reflect, brain).report == {"calls": 1, "insights": 1}
    insight = brain.journal.all()[-1]["content"]
    assert len(insight) == MAX_INSIGHT_CHARS and insight.startswith("Bob keeps asking")
    # the model is told each bound (as a keyword or in words, as the schema is sent)
    schema = model.requests[1].response_format["json_schema"]["schema"]
    assert str(MAX_INSIGHT_CHARS) in json.dumps(schema["$defs"]["Insight"]["properties"]["insight"])
