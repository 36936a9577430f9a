"""
Benchmark 13: what a memory snapshot costs a sleep, at 10,000 memories against 100.

Two assistants on the real Evennia database, one remembering 100 journal entries and 100
long-term memories, the other 10,000 of each. Each round, each (alternately) hears 20 new things,
falls asleep (a snapshot opens) and does what a night does to memory: consolidates the 20
entries, stores 20 memories drawn from them and links each to the one before and to a recent
older memory, then wakes (in one transaction, as a tick runs). The time measured is the snapshot's own: the reads of each value
before its first write and the writes that keep them (`RecordingStore._keep_before`), on the
database, summed per round; the figure is the ratio of the medians.

"""

import statistics
import time

from ai_assistant.memory import snapshots as snapshot_module
from ai_assistant.memory.snapshots import Snapshots
from ai_assistant.shell.storage import step_transaction

from bench.cases import START, Result, World, _journal_entries

NEW = 20


def _grown(world: World, size: int):
    _, handler = world.assistant({"min_activity_before_sleep": 0, "snapshots_kept": 3})
    brain = handler.brain
    old = [{**entry, "consolidated": True} for entry in _journal_entries(size)]
    brain.journal.entries.extend(old)
    brain.long_term.memories.extend(
        [
            {
                "id": f"m{i:06d}",
                "text": f"Remembered fact number {i} about the library.",
                "importance": 5,
                "created_at": START.isoformat(),
                "source_entry_ids": [f"j{i:06d}"],
                "provenance": {},
                "audience": None,
                "vector": None,
            }
            for i in range(size)
        ]
    )
    return handler


def _night(handler, round_no: int) -> None:
    """A sleep's changes to memory, between falling asleep and waking."""
    brain = handler.brain
    now = handler.clock.now()
    for i in range(NEW):
        brain.journal.add(
            f"round {round_no}: visitor {i} asked about the atlas", author="B", now=now
        )
    brain.lifecycle.go_to_sleep(
        now, reason="bench", initiated_by="builder", enforce_safeguards=False
    )
    pending = brain.journal.unconsolidated()
    ids = []
    for entry in pending:
        ids.append(
            brain.long_term.add(
                f"Someone asked about the atlas ({entry['id']}).",
                importance=6,
                now=now,
                source_entry_ids=[entry["id"]],
                provenance={},
            )
        )
    brain.journal.update(
        [{**e, "consolidated": True, "memory_ids": [m]} for e, m in zip(pending, ids)]
    )
    first = int(ids[0][1:])
    pairs = [(one, other, 0.6) for one, other in zip(ids, ids[1:])]
    pairs += [(memory_id, f"m{first - 1 - i:06d}", 0.5) for i, memory_id in enumerate(ids)]
    brain.links.link(pairs, 10)
    handler.clock.advance(3600)
    brain.lifecycle.wake_up(handler.clock.now(), "bench")
    handler.clock.advance(3600)


def snapshot_cost(world: World, small=100, large=10000, rounds=8) -> Result:
    """13. Time a sleep spends keeping its snapshot, at `large` vs `small` memories."""
    handlers = {"small": _grown(world, small), "large": _grown(world, large)}
    spent = {"current": 0.0}
    original = snapshot_module.RecordingStore._keep_before

    def timed(self, key):
        started = time.perf_counter()
        try:
            return original(self, key)
        finally:
            spent["current"] += time.perf_counter() - started

    samples = {label: [] for label in handlers}
    recorded = {}
    snapshot_module.RecordingStore._keep_before = timed
    try:
        for round_no in range(rounds + 2):
            for label, handler in handlers.items():
                spent["current"] = 0.0
                with step_transaction():  # as a tick runs: one transaction
                    _night(handler, round_no)
                if round_no >= 2:  # warm-up
                    samples[label].append(spent["current"])
                state = handler.brain.state
                newest = Snapshots(state).kept()[-1]["sleep_id"]
                recorded[label] = len(Snapshots(state).recorded_keys(newest))
    finally:
        snapshot_module.RecordingStore._keep_before = original
    small_ms = statistics.median(samples["small"]) * 1000
    large_ms = statistics.median(samples["large"]) * 1000
    ratio = large_ms / small_ms
    stored = {
        label: handler.obj.db_attributes.filter(db_category="ai_assistant").count()
        for label, handler in handlers.items()
    }
    return Result(
        f"snapshot write at {large} vs {small} memories",
        f"{ratio:.2f}x ({small_ms:.1f} vs {large_ms:.1f} ms a sleep)",
        "<= 2x",
        ratio <= 2.0,
        [
            f"median snapshot time per sleep ({NEW} entries consolidated, {NEW} memories, "
            f"{2 * NEW - 1} links): {small_ms:.2f} ms at {small}, {large_ms:.2f} ms at {large} "
            f"({rounds} sleeps each, alternating)",
            f"values kept per snapshot: {recorded['small']} at {small}, {recorded['large']} at "
            f"{large}; a full copy would hold {stored['small']} and {stored['large']} values",
        ],
    )
