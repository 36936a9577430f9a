"""
Memory snapshots in the pure core: what a sleep changed is recorded once per key, at a cost that
does not grow with memory; the last N are kept; a rollback restores memory exactly, undoing
later sleeps first, except what builders corrected since (kept) and the review log (never
rolled back).

"""

import copy
import dataclasses
import hashlib
import json
from datetime import timedelta

import pytest

from ai_assistant.memory.snapshots import (
    MAX_SNAPSHOT_KEYS,
    SNAPSHOT_OPEN,
    RecordingStore,
    SnapshotError,
    Snapshots,
    describe,
)
from ai_assistant.memory.store import DictStore
from ai_assistant.sleep.dreaming import Budget, link_memories, prune_episodes
from ai_assistant.memory.sleep_history import SleepHistory

from .core_fakes import T0, make_assistant


def recording():
    state, memory = DictStore(), DictStore()
    return state, memory, RecordingStore(memory, Snapshots(state))


def test_nothing_is_recorded_until_a_snapshot_opens():
    state, memory, store = recording()
    store.set("a", 1)
    assert state.data == {}


def test_only_the_first_write_of_each_key_keeps_its_value_before():
    state, memory, store = recording()
    memory.set("a", 1)
    memory.set("gone", "x")
    snapshots = Snapshots(state)
    snapshots.open("s1", "2026-01-01T00:00:00", 3)
    store.set("a", 2)
    store.set("a", 3)
    store.set("new", 1)
    store.delete("gone")
    store.set("gone", "back")
    assert snapshots.recorded_keys("s1") == ["a", "new", "gone"]
    records = [state.data[f"memory_snapshot:s1:{n:05d}"] for n in range(3)]
    assert records == [
        {"key": "a", "existed": True, "value": 1},
        {"key": "new", "existed": False, "value": None},
        {"key": "gone", "existed": True, "value": "x"},
    ]


def test_a_second_store_over_the_same_data_does_not_record_a_key_again():
    state, memory, first = recording()
    memory.set("a", 1)
    Snapshots(state).open("s1", "t", 3)
    second = RecordingStore(memory, Snapshots(state))
    second.set("b", 0)  # loads what is recorded before "a" is
    first.set("a", 2)
    second.set("a", 3)
    assert Snapshots(state).recorded_keys("s1") == ["b", "a"]
    assert state.data["memory_snapshot:s1:00001"]["value"] == 1


def test_the_last_n_snapshots_are_kept_and_zero_keeps_none():
    state, memory, store = recording()
    snapshots = Snapshots(state)
    for number in range(1, 6):
        snapshots.open(f"s{number}", "t", 3)
        store.set(f"k{number}", number)
    assert [s["sleep_id"] for s in snapshots.kept()] == ["s3", "s4", "s5"]
    assert not any(
        key.startswith(("memory_snapshot:s1", "memory_snapshot:s2")) for key in state.data
    )
    snapshots.open("s6", "t", 0)
    assert snapshots.kept() == [] and state.get(SNAPSHOT_OPEN) is None
    assert not any(key.startswith("memory_snapshot:") for key in state.data)
    store.set("k7", 7)
    assert not any(key.startswith("memory_snapshot:") for key in state.data)


def test_a_snapshot_that_outgrows_its_bound_stops_and_cannot_be_rolled_back():
    state, memory, store = recording()
    snapshots = Snapshots(state)
    snapshots.open("s1", "t", 3)
    for number in range(MAX_SNAPSHOT_KEYS + 5):
        store.set(f"k{number}", number)
    assert len(snapshots.recorded_keys("s1")) == MAX_SNAPSHOT_KEYS
    assert snapshots.kept()[0]["complete"] is False and snapshots.open_id() is None
    before = copy.deepcopy(memory.data)
    with pytest.raises(SnapshotError, match="incomplete"):
        snapshots.rollback("s1", memory)
    assert memory.data == before


def test_rollback_restores_exactly_and_undoes_later_sleeps_first():
    state, memory, store = recording()
    snapshots = Snapshots(state)
    store.set("a", 1)
    store.set("b", {"x": 1})
    start = copy.deepcopy(memory.data)
    snapshots.open("s1", "t", 3)
    store.set("a", 2)
    store.set("c", 1)
    after_first = copy.deepcopy(memory.data)
    snapshots.open("s2", "t", 3)
    store.set("a", 3)
    store.delete("b")
    store.set("c", 2)
    store.set("d", 4)
    # rolling back the latest undoes only it
    preview_state = copy.deepcopy(state.data)
    summary = snapshots.preview("s2", memory)
    assert summary["sleeps"] == ["s2"] and summary["values"] == 4
    assert state.data == preview_state  # a preview changes nothing
    snapshots.rollback("s2", memory)
    assert memory.data == after_first
    assert [s["sleep_id"] for s in snapshots.kept()] == ["s1"] and snapshots.open_id() == "s1"
    # and the earlier one, after more writes, goes back to the very start
    store.set("e", 5)
    snapshots.open("s3", "t", 3)
    store.set("a", 9)
    result = snapshots.rollback("s1", memory)
    assert result["sleeps"] == ["s3", "s1"]
    assert memory.data == start
    assert snapshots.kept() == [] and snapshots.open_id() is None
    assert not any(key.startswith("memory_snapshot:") for key in state.data)


def test_rollback_of_an_unknown_sleep_changes_nothing():
    state, memory, store = recording()
    Snapshots(state).open("s1", "t", 3)
    store.set("a", 1)
    before = (copy.deepcopy(memory.data), copy.deepcopy(state.data))
    with pytest.raises(SnapshotError, match="no snapshot of sleep 's9'.*s1"):
        Snapshots(state).rollback("s9", memory)
    assert (memory.data, state.data) == before


def sleep_like_change(brain, entries=20):
    """What a sleep does to memory: consolidate entries, add memories drawn from them, link."""
    journal, long_term = brain.journal, brain.long_term
    pending = journal.unconsolidated()[:entries]
    ids = [
        long_term.add(
            f"learned {entry['content']}",
            importance=6,
            now=T0,
            source_entry_ids=[entry["id"]],
            provenance={},
        )
        for entry in pending
    ]
    journal.update([{**entry, "consolidated": True} for entry in pending])
    brain.links.link([(one, other, 0.7) for one, other in zip(ids, ids[1:])], 5)


def grown(size):
    brain = make_assistant()
    for i in range(size):
        brain.journal.add(f"old entry {i}", author="Aria", now=T0, importance=5)
    brain.journal.update([{**e, "consolidated": True} for e in brain.journal.all()])
    for i in range(size):
        brain.long_term.add(
            f"old memory {i}", importance=5, now=T0, source_entry_ids=[], provenance={}
        )
    for i in range(20):
        brain.journal.add(f"today {i}", author="Aria", now=T0, importance=6)
    return brain


def test_a_snapshot_records_what_changed_not_what_is_remembered():
    sizes = {}
    for size in (100, 10_000):
        brain = grown(size)
        Snapshots(brain.state).open("s1", "t", 3)
        writes = brain.state.writes
        sleep_like_change(brain)
        keys = Snapshots(brain.state).recorded_keys("s1")
        sizes[size] = (len(keys), brain.state.writes - writes)
    assert sizes[100][0] <= sizes[10_000][0] <= sizes[100][0] + 2
    assert sizes[10_000][1] <= sizes[100][1] + 4


def test_a_sleep_that_pruned_and_linked_rolls_back_to_what_it_found():
    brain = make_assistant(
        prune_max_importance=3, prune_age_days=30, link_min_importance=5, digest_enabled=False
    )
    journal = brain.journal
    old = journal.add("old small talk", author="Aria", now=T0, importance=2)
    keep = journal.add("the harbour master owes us", author="Aria", now=T0, importance=8)
    journal.update([{**e, "consolidated": True} for e in (old, keep)])
    first = brain.long_term.add(
        "The lighthouse keeper fell ill with a fever.",
        importance=7,
        now=T0,
        source_entry_ids=[],
        provenance={},
    )
    brain.links.link([(old["id"], keep["id"], 0.8)], 5)
    brain.core_memory.set("motto", "books first", T0, 500)
    before = copy.deepcopy(brain.memory_store.inner.data)
    later = T0 + timedelta(days=45)
    brain.lifecycle.go_to_sleep(
        later, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    # what a sleep does: consolidates, stores, links, prunes, and edits core memory
    fresh = journal.add("the lighthouse keeper has a fever", author="Aria", now=later)
    journal.update([{**fresh, "consolidated": True}])
    second = brain.long_term.add(
        "The lighthouse keeper is ill.", importance=7, now=later, source_entry_ids=[], provenance={}
    )
    brain.links.link([(first, second, 0.9)], 5)
    assert prune_episodes(brain, later, Budget(3)).report["pruned"] == 1
    link_memories(brain, later, Budget(3))
    brain.core_memory.set("motto", "lighthouse first", later, 500)
    brain.lifecycle.wake_up(later, "done")
    sleep_id = SleepHistory(brain.state).recent(1)[0]["id"]
    result = Snapshots(brain.state).rollback(sleep_id, brain.memory_store.inner)
    assert brain.memory_store.inner.data == before
    changes = result["changes"]
    assert changes["entries_removed"] == 1 and changes["memories_removed"] == 1
    assert changes["entries_restored"] == 1  # the pruned entry has its text again
    assert changes["links_removed"] >= 1 and changes["links_restored"] == 1
    assert changes["core_memory"] == 1
    lines = describe(result)
    assert "1 long-term memory removed" in lines and "1 core memory note restored" in lines


def test_a_quiet_nap_takes_no_snapshot_of_its_own_while_one_records():
    brain = make_assistant(snapshots_kept=1)
    brain.journal.add("Bob lost his key.", author="Aria", now=T0)
    night = T0 + timedelta(hours=1)
    brain.lifecycle.go_to_sleep(
        night, reason="night", initiated_by="builder", enforce_safeguards=False
    )
    brain.journal.update([{**e, "consolidated": True} for e in brain.journal.all()])
    brain.lifecycle.wake_up(night + timedelta(hours=4), "morning")
    nap = night + timedelta(hours=6)
    brain.lifecycle.go_to_sleep(nap, reason="nap", initiated_by="builder", enforce_safeguards=False)
    assert SleepHistory(brain.state).current()["quiet"]
    # the night's snapshot is still the one kept, and still records
    snapshots = Snapshots(brain.state)
    assert [s["sleep_id"] for s in snapshots.kept()] == ["s1"] and snapshots.open_id() == "s1"


# ---- what a builder corrected since a sleep began outlives its rollback ----------------------

VAULT = "Bob whispered that the vault code is 4-1-7, behind the tapestry."


def reloaded(brain):
    """The same assistant read afresh from its stores (as the shell rebuilds its brain after
    a rollback): no cache of memory from before."""
    return dataclasses.replace(brain, memory_store=brain.memory_store.inner, long_term=None)


def remembered_before_a_night():
    """An assistant that knows Bob's vault code (an entry, the fact drawn from it alone, an
    observation) and something else, then sleeps (its snapshot opens) and wakes."""
    brain = make_assistant(digest_enabled=False)
    secret = brain.journal.add(VAULT, author="Aria", now=T0, importance=8, audience=["name:bob"])
    other = brain.journal.add("Mira lost her atlas", author="Aria", now=T0, importance=6)
    fact = brain.long_term.add(
        VAULT,
        importance=8,
        now=T0,
        source_entry_ids=[secret["id"]],
        provenance={},
        audience=["name:bob"],
    )
    plain = brain.long_term.add(
        "Mira lost her atlas.", importance=6, now=T0, source_entry_ids=[other["id"]], provenance={}
    )
    brain.journal.update(
        [
            {**brain.journal.get(secret["id"]), "memory_ids": [fact]},
            {**brain.journal.get(other["id"]), "memory_ids": [plain]},
        ]
    )
    brain.links.link([(fact, plain, 0.7)], 5)
    brain.entities.observe("name:bob", "Bob", "Bob keeps the vault code", now=T0, author="Aria")
    night = T0 + timedelta(hours=8)
    brain.lifecycle.go_to_sleep(
        night, reason="night", initiated_by="builder", enforce_safeguards=False
    )
    # the sleep's own work: the entries consolidated
    brain.journal.update([{**e, "consolidated": True} for e in brain.journal.all()])
    brain.lifecycle.wake_up(night + timedelta(hours=4), "morning")
    return brain, secret["id"], fact, plain


def test_a_rollback_keeps_forgotten_what_a_builder_forgot_since_the_sleep_began():
    brain, secret, fact, plain = remembered_before_a_night()
    forgot_at = T0 + timedelta(hours=14, minutes=2)
    assert brain.review.forget(secret, forgot_at, "Ann", "Bob asked") == [secret, fact]
    assert brain.review.forget("name:bob/o1", forgot_at, "Ann") == ["name:bob/o1"]
    trail = {k: v for k, v in brain.memory_store.inner.data.items() if k.startswith("audit:")}
    snapshots = Snapshots(brain.state)

    plan = snapshots.preview("s1", brain.memory_store.inner)
    assert [(k["action"], k["ids"], k["applied"]) for k in plan["kept"]] == [
        ("forget", [secret, fact], [secret, fact]),
        ("forget", ["name:bob/o1"], ["name:bob/o1"]),
    ]
    lines = describe(plan)
    assert (
        f"kept forgotten: {secret}, {fact} (forgotten by Ann at 2026-11-22 02:02: "
        "'Bob whispered that the vault code is...')" in lines
    )
    assert "kept forgotten: name:bob/o1 (forgotten by Ann at 2026-11-22 02:02: " in lines[-1]
    # what the rollback gives back is counted without what stays forgotten
    assert plan["changes"]["entries_restored"] == 0
    assert plan["changes"]["memories_restored"] == 0 and plan["changes"]["profiles"] == 0

    result = snapshots.rollback("s1", brain.memory_store.inner)
    assert result["kept"] == plan["kept"]
    # the code is nowhere in memory, nor in the entry's forgotten mark (its length and a
    # digest of it, never the words)
    stored = json.dumps(brain.memory_store.inner.data)
    assert stored.count("4-1-7") == 0
    brain = reloaded(brain)
    entry = brain.journal.get(secret)
    assert entry["forgotten"]["was_chars"] == len(VAULT)
    assert entry["forgotten"]["was_sha256"] == hashlib.sha256(VAULT.encode()).hexdigest()[:16]
    assert entry["content"] == "" and entry["forgotten"]["by"] == "Ann"
    assert entry["forgotten"]["at"] == forgot_at.isoformat()
    assert not entry.get("consolidated")  # the sleep's own work is undone all the same
    assert brain.long_term.get(fact) is None and brain.long_term.get(plain) is not None
    assert brain.links.neighbours(plain) == {}
    assert brain.entities.item("name:bob", "o1") is None
    hits = brain.recall("vault code tapestry", now=forgot_at, served=None, limit=10)
    assert not any("vault" in hit.text for hit in hits)
    # the review log is whole, and the rollback wrote nothing in it
    assert {
        k: v for k, v in brain.memory_store.inner.data.items() if k.startswith("audit:")
    } == trail
    assert [r["action"] for r in brain.review.history()] == ["forget", "forget"]


def test_a_trust_set_since_the_sleep_began_stays_set_after_a_rollback():
    brain, secret, fact, plain = remembered_before_a_night()
    at = T0 + timedelta(hours=14, minutes=5)
    brain.review.set_trust(plain, 0.3, at, "Ann")
    brain.review.set_trust("j000001", 0.9, at, "Ann")
    snapshots = Snapshots(brain.state)
    lines = describe(snapshots.preview("s1", brain.memory_store.inner))
    assert f"kept trust: {plain} at 0.30 (set by Ann at 2026-11-22 02:05)" in lines
    snapshots.rollback("s1", brain.memory_store.inner)
    brain = reloaded(brain)
    assert brain.long_term.get(plain)["trust_set"] == {
        "trust": 0.3,
        "at": at.isoformat(),
        "by": "Ann",
    }
    assert brain.journal.get("j000001")["trust_set"]["trust"] == 0.9
    assert not brain.journal.get("j000001").get("consolidated")


def test_a_memory_learned_and_forgotten_since_is_simply_gone():
    brain, *_ = remembered_before_a_night()
    later = T0 + timedelta(hours=15)
    new = brain.journal.add("Carol's password is swordfish", author="Aria", now=later)
    brain.review.forget(new["id"], later, "Ann")
    snapshots = Snapshots(brain.state)
    plan = snapshots.preview("s1", brain.memory_store.inner)
    assert plan["kept"][0]["applied"] == [] and plan["changes"]["entries_removed"] == 1
    assert describe(plan)[-1] == (
        f"kept forgotten: {new['id']} (forgotten by Ann at 2026-11-22 03:00; learned since, "
        "so removed)"
    )
    snapshots.rollback("s1", brain.memory_store.inner)
    brain = reloaded(brain)
    assert brain.journal.get(new["id"]) is None and len(brain.journal) == 2
    assert len(brain.review.history()) == 1


def test_a_forget_holds_through_the_rollback_of_an_earlier_sleep_too():
    brain, secret, fact, plain = remembered_before_a_night()
    # a second night, which touches the journal's chunk no more (the first night recorded it)
    second = T0 + timedelta(days=1)
    brain.journal.add("Tobin mended the east door", author="Aria", now=second)
    brain.lifecycle.go_to_sleep(
        second, reason="night", initiated_by="builder", enforce_safeguards=False
    )
    brain.lifecycle.wake_up(second + timedelta(hours=4), "morning")
    brain.review.forget(secret, second + timedelta(hours=5), "Ann")
    snapshots = Snapshots(brain.state)
    assert [s["sleep_id"] for s in snapshots.kept()] == ["s1", "s2"]
    snapshots.rollback("s2", brain.memory_store.inner)
    assert reloaded(brain).journal.get(secret)["content"] == ""
    # the first night's snapshot records again; rolling it back too keeps the forget
    plan = snapshots.preview("s1", brain.memory_store.inner)
    # the fact drawn from it stayed forgotten (the first night never wrote the facts), the
    # entry is made to hold again
    assert [(k["ids"], k["applied"]) for k in plan["kept"]] == [([secret, fact], [secret])]
    snapshots.rollback("s1", brain.memory_store.inner)
    brain = reloaded(brain)
    assert brain.journal.get(secret)["content"] == "" and brain.long_term.get(fact) is None
    assert brain.journal.get("j000001")["content"] == "Mira lost her atlas"


def test_the_kept_corrections_shown_are_bounded():
    brain = make_assistant(digest_enabled=False)
    for number in range(15):
        brain.journal.add(f"secret number {number} " + "x" * 300, author="Aria", now=T0)
    brain.lifecycle.go_to_sleep(
        T0, reason="night", initiated_by="builder", enforce_safeguards=False
    )
    brain.lifecycle.wake_up(T0 + timedelta(hours=4), "morning")
    for number in range(15):
        brain.review.forget(f"j{number:06d}", T0 + timedelta(hours=5), "Ann")
    plan = Snapshots(brain.state).preview("s1", brain.memory_store.inner)
    kept = [line for line in describe(plan) if line.startswith("kept forgotten")]
    assert len(kept) == 10 and describe(plan)[-1] == "and 5 more corrections kept"
    assert all(len(line) < 120 for line in kept)
    assert kept[0].endswith("'secret number 0 xxxxxxxxxxxxxxxxxxxxx...')")


def test_a_kept_forget_names_a_few_ids_then_how_many_more():
    kept = {
        "action": "forget",
        "ids": ["j000004", "m000001", "m000002", "m000003", "m000004"],
        "id": "j000004",
        "at": "2026-11-21T14:02:31+00:00",
        "by": "Ann",
        "applied": ["j000004"],
        "text": "Bob said so",
    }
    assert describe({"changes": {}, "kept": [kept]})[-1] == (
        "kept forgotten: j000004, m000001, m000002 and 2 more (forgotten by Ann at "
        "2026-11-21 14:02: 'Bob said so')"
    )


# ---- a builder's core-note edits are corrections too -----------------------------------------


def test_a_builders_core_note_edits_since_the_sleep_began_outlive_a_rollback():
    from ai_assistant.memory_api import AssistantMemory

    brain, *_ = remembered_before_a_night()
    core = brain.core_memory
    # before the night: a builder's note, and the model's notes (one repeats Bob's code)
    core.set("motto", "Books first.", T0, 2000, pinned=True, by="Ann")
    core.set("gossip", "Bob's code is 4-1-7.", T0, 2000)
    core.set("vault", "Bob's code 4-1-7", T0, 2000, audience=["name:bob"])
    brain.lifecycle.go_to_sleep(
        T0 + timedelta(days=1), reason="night", initiated_by="builder", enforce_safeguards=False
    )
    brain.lifecycle.wake_up(T0 + timedelta(days=1, hours=4), "morning")
    later = T0 + timedelta(days=1, hours=5, minutes=7)
    core.set("fresh", "Mira is back.", later, 2000)  # written since the sleep began
    memory = AssistantMemory.over(brain, now=lambda: later)
    memory.admin.kind("core_notes").remove("gossip", by="Ann")
    memory.admin.kind("core_notes").remove("vault [name:bob]", by="Ann")
    memory.admin.kind("core_notes").set("motto", "Books first, always.", by="Ann")
    memory.admin.kind("core_notes").set("hours", "Open at dawn.", by="Ann")
    memory.admin.kind("core_notes").remove("fresh", by="Ann")
    assert [r["action"] for r in brain.review.history()] == [
        "core_remove",
        "core_set",
        "core_set",
        "core_remove",
        "core_remove",
    ]
    # the log keeps where a removed note was, never its words
    assert "4-1-7" not in json.dumps(brain.review.history())
    trail = {k: v for k, v in brain.memory_store.inner.data.items() if k.startswith("audit:")}
    snapshots = Snapshots(brain.state)
    plan = snapshots.preview("s2", brain.memory_store.inner)
    assert [(k["action"], k["id"], k["applied"]) for k in plan["kept"]] == [
        ("core_remove", "gossip", ["gossip"]),
        ("core_remove", "vault [name:bob]", ["vault [name:bob]"]),
        ("core_set", "motto", ["motto"]),
        ("core_set", "hours", ["hours"]),
        ("core_remove", "fresh", []),
    ]
    lines = describe(plan)
    assert (
        "kept removed: core note gossip (removed by Ann at 2026-11-22 17:07: "
        "'Bob's code is 4-1-7.')" in lines
    )
    assert "kept core note: motto (pinned by Ann at 2026-11-22 17:07: 'Books first, always.')" in (
        lines
    )
    assert lines[-1] == (
        "kept removed: core note fresh (removed by Ann at 2026-11-22 17:07; written since, so "
        "removed)"
    )
    # nothing of the core memory changes: the builder's edits hold, nothing written since was
    assert plan["changes"]["core_memory"] == 0
    result = snapshots.rollback("s2", brain.memory_store.inner)
    assert result["kept"] == plan["kept"]
    brain = reloaded(brain)
    notes = brain.core_memory.items()
    assert sorted(notes) == ["hours", "motto"]
    assert notes["motto"]["value"] == "Books first, always." and notes["motto"]["by"] == "Ann"
    assert notes["hours"]["pinned"]
    assert "4-1-7" not in json.dumps(brain.memory_store.inner.data.get("core_memory"))
    # the review log is whole, and the rollback wrote nothing in it
    assert {
        k: v for k, v in brain.memory_store.inner.data.items() if k.startswith("audit:")
    } == trail


def test_a_pinned_note_removed_later_leaves_no_words_in_the_log_and_stays_removed():
    from ai_assistant.memory_api import AssistantMemory

    brain, *_ = remembered_before_a_night()
    brain.lifecycle.go_to_sleep(
        T0 + timedelta(days=1), reason="night", initiated_by="builder", enforce_safeguards=False
    )
    brain.lifecycle.wake_up(T0 + timedelta(days=1, hours=4), "morning")
    later = T0 + timedelta(days=1, hours=5)
    memory = AssistantMemory.over(brain, now=lambda: later)
    memory.admin.kind("core_notes").set("door", "The back door code is 9-9-2.", by="Ann")
    assert "9-9-2" in json.dumps(brain.review.history())  # kept while the pin stands
    memory.admin.kind("core_notes").remove("door", by="Ann")
    assert "9-9-2" not in json.dumps(brain.review.history())
    plan = Snapshots(brain.state).preview("s2", brain.memory_store.inner)
    assert [(k["action"], k["id"], k["applied"]) for k in plan["kept"]] == [
        ("core_set", "door", []),
        ("core_remove", "door", []),
    ]
    assert "door" not in brain.core_memory.items()
