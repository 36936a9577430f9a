"""
What an audit of memory found (issue 29): claims stay claims on every path that turns words into
memory, and corroboration counts people (accounts), not characters; a sleep with nothing new in
the journal still compacts a full context; forgetting reaches everything drawn from what was
forgotten, and its record keeps none of the words; the link step goes on where it stopped.

"""

import json

import pytest
from datetime import timedelta

from ai_assistant.memory_api import AssistantMemory
from ai_assistant.sleep.tick import sleep_tick
from ai_assistant.memory.sleep_history import SleepHistory
from ai_assistant.state import LAST_COMPACTION

from ai_assistant.sleep.dreaming import consolidate_core, digest_days, reflect

from .core_fakes import T0, ScriptedModel, json_reply, make_assistant, run, step, structured


def run_sleep(brain, start, minutes):
    for minute in range(1, minutes):
        work = sleep_tick(brain, start + timedelta(minutes=minute))
        if work is not None:
            run(work)


# ---- a day of talk is something new ----------------------------------------------------------


def test_a_sleep_with_no_new_journal_entries_still_compacts_a_full_context():
    model = ScriptedModel(json_reply(json.dumps({"summary": "Alice asked about the weather."})))
    brain = make_assistant(
        model,
        compact_sleep_threshold=0.01,
        compact_preserve_window=2,
        pre_compact_extraction_enabled=False,
        sleep_cooldown_minutes=0,
        min_activity_before_sleep=0,
    )
    brain.lifecycle.go_to_sleep(
        T0 - timedelta(hours=10), reason="night", initiated_by="builder", enforce_safeguards=False
    )
    brain.lifecycle.wake_up(T0 - timedelta(hours=6), "morning")
    # a day of talk: the history fills, yet nothing was written in the journal
    for i in range(8):
        brain.history.extend(
            [{"role": "user", "content": f'<event type="say" from="Alice">line {i}</event>'}]
        )
    brain.lifecycle.go_to_sleep(T0, reason="tired", initiated_by="tool")
    assert SleepHistory(brain.state).current()["quiet"] is True
    run_sleep(brain, T0, 10)
    assert len(model.requests) == 1  # the compaction, and no other call on a quiet day
    assert len(brain.history) < 8
    assert brain.state.get(LAST_COMPACTION)["result"] == "compacted"


# ---- the link step goes on where it stopped --------------------------------------------------


def test_the_link_step_searches_only_new_or_changed_memories_in_later_sleeps():
    brain = make_assistant(min_activity_before_sleep=0, sleep_cooldown_minutes=0)
    searched = []
    search = brain.index.search

    def spy(text, **kwargs):
        searched.append(text)
        return search(text, **kwargs)

    brain.index.search = spy

    def add(text):
        return brain.long_term.add(
            text, importance=6, now=T0, source_entry_ids=[], provenance={}, audience=None
        )

    def a_sleep(start):
        brain.lifecycle.go_to_sleep(
            start, reason="night", initiated_by="builder", enforce_safeguards=False
        )
        run_sleep(brain, start, 5)
        brain.lifecycle.wake_up(start + timedelta(hours=8), "morning")

    add("The lighthouse lamp is broken.")
    add("The lighthouse keeper has a fever.")
    a_sleep(T0)
    assert len(searched) == 2
    a_sleep(T0 + timedelta(days=1))
    assert len(searched) == 2  # nothing new: nothing searched again
    fresh = add("The ferry to the lighthouse runs at dawn.")
    a_sleep(T0 + timedelta(days=2))
    assert searched[2:] == ["The ferry to the lighthouse runs at dawn."]
    # a memory whose words changed (a claim corroborated) is linked again
    memory = brain.long_term.get(fresh)
    brain.long_term.update({**memory, "text": "The ferry runs at dawn.", "relink": True})
    a_sleep(T0 + timedelta(days=3))
    assert searched[3:] == ["The ferry runs at dawn."]


# ---- claims stay claims -----------------------------------------------------------------------


def claims(brain, *texts, speaker="Carol", now=T0):
    return [
        brain.journal.add(
            text,
            author="Aria",
            now=now,
            importance=7,
            source_type="claim",
            heard_from=speaker,
            about=["name:dave"],
        )["id"]
        for text in texts
    ]


def test_a_reflection_on_claims_stays_a_claim_at_the_claims_trust():
    brain = make_assistant(reflection_threshold=5)
    ids = claims(brain, "Dave took the ring.", "Dave hid it in the well.", "Dave lied about it.")
    # the model states what Carol told it as a plain fact
    brain.client_factory.answers.append(
        structured({"insights": [{"question": "?", "insight": "Dave is a thief.", "cites": ids}]})
    )
    step(reflect, brain)
    insight = brain.journal.entries.get(3)
    assert insight["content"] == "Carol says: Dave is a thief."
    assert insight["claims_of"] == ["Carol"] and insight["rests_on"] == "claim"
    (item,) = brain.recall("Dave thief", now=T0, served=None, kinds={"reflection"})
    assert item.trust == brain.config.trust_claim < brain.config.trust_reflection
    assert "your reflection of what Carol said" in item.line()


def test_a_digest_keeps_claims_as_claims_and_is_trusted_no_more_than_them():
    brain = make_assistant()
    claims(brain, "Dave stole the ring from the mayor.")
    brain.journal.add("The market opened at dawn.", author="Aria", now=T0)
    brain.client_factory.answers.append(
        structured(
            {
                "summary": "A day at the market.",
                "people_met": ["Carol"],
                "open_threads": [],
                "new_facts": ["Dave stole the mayor's ring.", "The market opens at dawn."],
            }
        )
    )
    step(digest_days, brain, now=T0 + timedelta(days=1))
    (digest,) = brain.digests.all()
    assert digest["new_facts"] == [
        "Carol says: Dave stole the mayor's ring.",
        "The market opens at dawn.",  # what it saw itself stays a plain fact
    ]
    assert digest["rests_on"] == "claim" and digest["claims_of"] == ["Carol"]
    (item,) = brain.recall(
        "Dave ring mayor", now=T0 + timedelta(days=1), served=None, kinds={"digest"}
    )
    assert item.kind == "digest" and item.trust == brain.config.trust_claim


def test_a_core_note_drawn_from_a_claim_stays_a_claim():
    from ai_assistant.memory.provenance import trust_of

    brain = make_assistant()
    (entry,) = claims(brain, "Dave stole the ring.")
    memory = brain.long_term.add(
        "Carol says: Dave stole the ring.",
        importance=9,
        now=T0,
        source_entry_ids=[entry],
        provenance={"source_type": "claim", "heard_from": "Carol", "voice": "account#7"},
    )
    brain.client_factory.answers.append(
        structured({"notes": [{"key": "dave", "value": "Dave is a thief.", "cites": [memory]}]})
    )
    step(consolidate_core, brain, now=T0 + timedelta(hours=1))
    note = brain.core_memory.items()["dave"]
    assert note["value"] == "Carol says: Dave is a thief."
    assert note["sources"] == [memory] and note["rests_on"] == "claim"
    assert trust_of(note, brain.config.trusts()) == brain.config.trust_claim


def test_two_characters_of_one_account_never_corroborate_a_claim_two_people_do():
    memory = AssistantMemory("Aria")
    memory.add_entry("The mayor is a vampire.", time=T0, speaker="Bob", account="account#1")
    memory.add_entry("The mayor is a vampire.", time=T0, speaker="Robert", account="account#1")
    memory.consolidate(now=T0)
    stored = memory.memories()
    assert [m["text"] for m in stored] == [
        "Bob says: The mayor is a vampire.",
        "Robert says: The mayor is a vampire.",
    ]
    assert not any(m.get("corroborated") for m in stored)
    memory.add_entry("The mayor is a vampire.", time=T0, speaker="Carol", account="account#2")
    memory.consolidate(now=T0 + timedelta(hours=1))
    claim = memory.memories()[0]
    assert claim["corroborated"] and claim["text"] == "The mayor is a vampire."
    assert claim["provenance"]["voices"] == ["account#1", "account#2"]


# ---- forgetting forgets ------------------------------------------------------------------------


def test_forgetting_an_entry_reaches_everything_drawn_from_it_and_keeps_none_of_its_words():
    brain = make_assistant(reflection_threshold=5)
    secret, *others = claims(
        brain, "The vault code is swordfish.", "Dave guards the vault.", "Dave sleeps at noon."
    )
    fact = brain.long_term.add(
        "Carol says: the vault code is swordfish.",
        importance=8,
        now=T0,
        source_entry_ids=[secret],
        provenance={"source_type": "claim", "heard_from": "Carol"},
    )
    brain.journal.update(
        [{**brain.journal.get(secret), "consolidated": True, "memory_ids": [fact]}]
    )
    talk = brain.journal.talk_around(brain.journal.get(others[0]))
    assert "swordfish" in talk  # the words of the entry next to it, kept beside its fact
    kept = brain.long_term.add(
        "Carol says: Dave guards the vault.",
        importance=8,
        now=T0,
        source_entry_ids=[others[0]],
        provenance={"source_type": "claim", "heard_from": "Carol", "talk": talk},
    )
    model = brain.client_factory
    model.answers += [
        structured(
            {
                "insights": [
                    {"question": "?", "insight": "Swordfish opens the vault.", "cites": [secret]},
                    {"question": "?", "insight": "Dave keeps odd hours.", "cites": others},
                ]
            }
        ),
        structured(
            {
                "summary": "Carol told of the vault code swordfish.",
                "people_met": ["Carol"],
                "open_threads": [],
                "new_facts": ["The vault code is swordfish."],
            }
        ),
        structured(
            {
                "notes": [
                    {"key": "vault", "value": "The code is swordfish.", "cites": [fact]},
                    {"key": "dave", "value": "Dave guards the vault.", "cites": [kept]},
                ]
            }
        ),
    ]
    step(reflect, brain)
    step(digest_days, brain, now=T0 + timedelta(days=1))
    step(consolidate_core, brain, now=T0 + timedelta(days=1))
    brain.links.link([(secret, kept, 0.9), (fact, kept, 0.8)], 5)
    reflection = "j000003"
    (digest,) = brain.digests.all()
    assert set(brain.core_memory.items()) == {"vault", "dave"}
    later = T0 + timedelta(days=2)

    def recalled():
        items = brain.recall("swordfish vault code", now=later, served=None, limit=30)
        return {item.kind for item in items if "swordfish" in item.text.lower()}

    assert {"entry", "reflection", "digest"} <= recalled()

    gone = brain.review.forget(secret, T0 + timedelta(days=1), "Builder", "a secret")
    assert gone == [secret, fact, reflection, digest["id"], "core:vault"]
    # nothing drawn from it recalls it, whatever the kind, nor what was said next to it
    assert recalled() == set()
    assert brain.recall("swordfish", now=later, served=None, limit=30) == []
    assert gone.rewritten == [kept]
    assert "swordfish" not in brain.long_term.get(kept)["provenance"]["talk"]
    assert all("swordfish" not in note["value"] for note in brain.core_memory.items().values())
    assert brain.digests.all() == []
    assert brain.links.neighbours(kept) == {}
    # what was not drawn from it stays
    assert brain.long_term.get(kept) and brain.journal.get("j000004")["content"]
    assert "dave" in brain.core_memory.items()
    # the record names what it touched, and keeps none of the words
    (record,) = brain.review.history()
    assert record["forgotten"] == gone
    stored = json.dumps([brain.review.history(), brain.journal.get(secret)])
    assert "swordfish" not in stored


def test_forgetting_an_observation_removes_the_attributes_drawn_from_it():
    brain = make_assistant(entity_min_observations=2)
    for text in ("hums at night", "hums old songs"):
        brain.entities.observe("name:dave", "Dave", text, now=T0, author="Aria")
    brain.client_factory.answers.append(
        structured(
            {
                "entities": [
                    {
                        "entity_id": "p0",
                        "attributes": [
                            {"type": "trait", "value": "hums", "cites": ["o1"]},
                            {"type": "trait", "value": "sings", "cites": ["o2"]},
                        ],
                    }
                ]
            }
        )
    )
    from ai_assistant.sleep.dreaming import consolidate_people

    step(consolidate_people, brain)
    assert brain.review.forget("name:dave/o1", T0, "Builder") == ["name:dave/o1", "name:dave/a3"]
    profile = brain.entities.profile("name:dave")
    assert [a["value"] for a in profile["attributes"]] == ["sings"]


def test_a_summary_of_talk_is_trusted_no_more_than_the_words_it_rests_on():
    from ai_assistant.context.compaction import compact_history

    model = ScriptedModel(json_reply(json.dumps({"summary": "Dave stole the ring."})))
    brain = make_assistant(model, compact_preserve_window=2)
    said = {
        "role": "user",
        "content": '<event type="say" from="Carol">Dave stole the ring</event>',
        "metadata": {"speakers": {"carol": {"name": "Carol", "key": "#7", "addressed": True}}},
    }
    brain.history.extend([said, said, said, said])
    report = run(compact_history(brain, T0, force=True))
    entry = brain.journal.get(report["journal_entry"])
    assert entry["claims_of"] == ["Carol"] and entry["rests_on"] == "claim"
    (item,) = brain.recall("Dave stole ring", now=T0, served=None, kinds={"summary"})
    assert item.trust == brain.config.trust_claim < brain.config.trust_summary
    assert "a summary of what Carol said" in item.line()


def test_what_a_player_tells_is_kept_with_their_account_as_its_voice():
    from .core_fakes import FakeWorld, hear, reply, run_tick

    class Accounts(FakeWorld):
        def account_of(self, key):
            return {"#11": "account#1", "#12": "account#1"}.get(key)

    note = ("add_journal_entry", {"content": "The mayor is a vampire.", "heard_from": "Bob"})
    model = ScriptedModel(reply(note), reply(("noop", {})))
    brain = make_assistant(model, world=Accounts(present=("Bob",)))
    hear(brain, "Aria, the mayor is a vampire", speaker="Bob", speaker_key="#11")
    run_tick(brain)
    (entry,) = brain.journal.all()
    assert entry["heard_from"] == "Bob" and entry["voice"] == "account#1"


def test_the_voice_is_the_account_that_spoke_not_the_one_playing_at_tool_time():
    from .core_fakes import FakeWorld, hear, reply, run_tick

    class Switched(FakeWorld):
        def account_of(self, key):
            return "account#9"  # someone else plays #11 by the time the tool runs

    note = ("add_journal_entry", {"content": "The mayor is a vampire.", "heard_from": "Bob"})
    model = ScriptedModel(reply(note), reply(("noop", {})))
    brain = make_assistant(model, world=Switched(present=("Bob",)))
    hear(
        brain,
        "Aria, the mayor is a vampire",
        speaker="Bob",
        speaker_key="#11",
        metadata={"account": "account#1"},  # taken as the line was heard
    )
    run_tick(brain)
    (entry,) = brain.journal.all()
    assert entry["voice"] == "account#1"


def test_a_forget_takes_the_words_out_of_the_snapshots_and_a_rollback_keeps_them_out():
    from ai_assistant.memory.snapshots import Snapshots
    from ai_assistant.memory_admin import MemoryAdmin

    from .test_snapshots import reloaded, remembered_before_a_night

    brain, secret, fact, plain = remembered_before_a_night()
    assert "4-1-7" in json.dumps(brain.state.data)  # the night's snapshot keeps the entry
    gone = MemoryAdmin(brain, now=lambda: T0 + timedelta(hours=14)).forget(
        secret, by="Ann", reason="Bob asked"
    )
    assert list(gone) == [secret, fact]
    assert "4-1-7" not in json.dumps(brain.state.data)
    assert "4-1-7" not in json.dumps(brain.memory_store.inner.data)
    result = Snapshots(brain.state).rollback("s1", brain.memory_store.inner)
    assert [k["applied"] for k in result["kept"]] == [[secret, fact]]
    assert "4-1-7" not in json.dumps(brain.memory_store.inner.data)
    brain = reloaded(brain)  # read afresh, as the shell does after a rollback
    assert brain.journal.get(secret)["forgotten"]["by"] == "Ann"
    assert brain.long_term.get(plain)["text"] == "Mira lost her atlas."


def test_forgetting_an_entry_takes_a_cut_copy_of_its_words_out_of_the_talk_kept_beside_a_fact():
    brain = make_assistant()
    before = "Alice went on about the harbour, the boats and the weather all morning. " * 7
    brain.journal.add(before, author="Aria", now=T0, importance=7)
    (guards,) = claims(brain, "Dave guards the vault.")
    (secret,) = claims(
        brain,
        "The vault code is swordfish, and the spare key lies under the third stone by the old "
        "well behind the chapel.",
    )
    talk = brain.journal.talk_around(brain.journal.get(guards))
    assert "swordfish" in talk and not talk.endswith("chapel.")  # kept, but cut
    kept = brain.long_term.add(
        "Carol says: Dave guards the vault.",
        importance=8,
        now=T0,
        source_entry_ids=[guards],
        provenance={"source_type": "claim", "heard_from": "Carol", "talk": talk},
    )
    brain.review.forget(secret, T0 + timedelta(days=1), "Builder", "a secret")
    assert "swordfish" not in brain.long_term.get(kept)["provenance"]["talk"]
    assert "swordfish" not in json.dumps(brain.memory_store.inner.data)


def test_forgetting_a_memory_leaves_its_words_nowhere_recall_can_find_them():
    brain = make_assistant()
    (entry,) = claims(brain, "The vault code is swordfish.")
    fact = brain.long_term.add(
        "Carol says: the vault code is swordfish.",
        importance=8,
        now=T0,
        source_entry_ids=[entry],
        provenance={"source_type": "claim", "heard_from": "Carol"},
    )
    brain.journal.update([{**brain.journal.get(entry), "consolidated": True, "memory_ids": [fact]}])
    brain.review.forget(fact, T0, "Builder", "a secret")
    later = T0 + timedelta(days=1)
    assert brain.recall("vault code swordfish", now=later, served=None, limit=10) == []


def test_a_forget_mark_of_an_earlier_version_loses_the_words_it_kept_at_the_next_sleep():
    from ai_assistant.sleep.housekeeping import FORGET_MARKS_CHECKED, keep_house

    brain = make_assistant()
    entry = brain.journal.add("The vault code is swordfish.", author="Aria", now=T0)
    # as an earlier version forgot it: the words emptied, but their beginning kept in the mark
    old_mark = {"at": "2026-01-01T00:00:00", "by": "Ann", "reason": "", "was": entry["content"]}
    brain.journal.update([{**entry, "content": "", "forgotten": old_mark}])
    report = keep_house(brain, T0 + timedelta(days=1))
    mark = brain.journal.get(entry["id"])["forgotten"]
    assert "was" not in mark and "swordfish" not in json.dumps(brain.memory_store.inner.data)
    assert mark["by"] == "Ann" and mark["was_chars"] == len("The vault code is swordfish.")
    assert report["forget_marks_scrubbed"] == 1 and brain.state.get(FORGET_MARKS_CHECKED)
    assert "forget_marks_scrubbed" not in keep_house(brain, T0 + timedelta(days=2))


def test_forgetting_one_persons_line_files_the_others_corroborating_line_again():
    brain = make_assistant()
    (bobs,) = claims(brain, "The mayor is a vampire.", speaker="Bob")
    (carols,) = claims(brain, "The mayor is a vampire!", speaker="Carol")
    fact = brain.long_term.add(
        "Bob and Carol say: the mayor is a vampire.",
        importance=8,
        now=T0,
        source_entry_ids=[bobs, carols],
        provenance={"source_type": "claim", "heard_from": "Bob"},
    )
    marks = [
        {**brain.journal.get(j), "consolidated": True, "memory_ids": [fact]} for j in (bobs, carols)
    ]
    brain.journal.update(marks)
    gone = brain.review.forget(bobs, T0, "Builder", "Bob asked")
    assert list(gone) == [bobs, fact]  # Carol's line is not forgotten with Bob's
    assert gone.reopened == [carols]
    carol = brain.journal.get(carols)
    assert carol["content"] == "The mayor is a vampire!" and not carol["consolidated"]
    assert carol["memory_ids"] == []  # filed again at the next sleep, as her claim alone
    # forgetting the fact itself (not a line) takes the lines it was drawn from with it
    brain2 = make_assistant()
    (only,) = claims(brain2, "The code is swordfish.")
    fact2 = brain2.long_term.add(
        "Carol says: the code is swordfish.",
        importance=8,
        now=T0,
        source_entry_ids=[only],
        provenance={"source_type": "claim", "heard_from": "Carol"},
    )
    brain2.journal.update(
        [{**brain2.journal.get(only), "consolidated": True, "memory_ids": [fact2]}]
    )
    assert list(brain2.review.forget(fact2, T0, "Builder")) == [fact2, only]


def test_a_note_that_repeats_what_a_player_said_without_naming_them_is_their_claim():
    from .core_fakes import FakeWorld, hear, reply, run_tick

    echoed = ("add_journal_entry", {"content": "The mayor is a vampire who drinks blood at night."})
    own = ("add_journal_entry", {"content": "Bob looked pale and nervous.", "basis": "observed"})
    about = (
        "update_entity_observation",
        {"entity": "Mayor", "observation": "vampire, drinks blood"},
    )
    model = ScriptedModel(reply(echoed, own, about), reply(("noop", {})))
    brain = make_assistant(model, world=FakeWorld(present=("Bob",)))
    hear(brain, "Aria, the mayor is a vampire. He drinks blood at night!", speaker="Bob")
    run_tick(brain)
    claim, seen = brain.journal.all()
    assert claim["heard_from"] == "Bob" and claim["source_type"] == "claim"
    # a conversation of players' text alone showed the assistant nothing the game produced:
    # its own note is its inference, not a seen fact
    assert seen["heard_from"] is None and seen["source_type"] == "inferred"
    (profile,) = [p for p in brain.entities.profiles() if p["name"] == "Mayor"]
    (observation,) = profile["observations"]
    assert observation["heard_from"] == "Bob"
