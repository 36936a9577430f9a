"""
Snapshots of the assistant's memory, one per sleep, and rolling a sleep back.

All of an assistant's memory (journal chunks with their consolidated and pruned flags and its
reflections, long-term memories, links, people's profiles, core memory, the review log) lives
in one store on the character. A snapshot does not copy that store: it records what changed.
`RecordingStore` wraps the memory store, and the first write (set or delete) of each key after
a snapshot opened keeps that key's value from before it (or that it did not exist); later
writes of the same key keep nothing. Memory that grows is chunked (`store.ChunkedList`, links
by chunk, a profile per person), so a sleep touches a few keys and a snapshot costs what the
sleep changed, not what the assistant remembers.

A snapshot opens when a sleep begins (`Lifecycle.go_to_sleep`), keyed by the sleep's id, and
stays open until the next sleep opens its own: it holds everything memory gained since that
sleep began, the sleep's work and what the assistant learned awake after it. Rolling back a
sleep therefore restores memory exactly as it was when that sleep began, and undoes every later
sleep (newest first) with it; the snapshot before it, if one is kept, then records again (memory
is where that snapshot left off). The last `snapshots_kept` snapshots are kept; an older one is
dropped when a new one opens.

A rollback never undoes what a builder corrected (`memory.review`). The review log (`audit:*`)
is recorded like any value but never restored, nor counted in what a rollback changes: it
survives whole. Its count before the oldest sleep undone (the recorded `audit:meta`) tells
which corrections came since; each is made again in the restored memory (a forgotten memory
stays forgotten, a trust setting stays set, a core note a builder pinned stays as pinned and
one a builder removed stays removed), and only then is anything written, so the restore and
the corrections are one set of writes. A memory learned since is gone anyway. The
snapshot that records again after a rollback is handed that count if it had none, so rolling
it back later still knows where its sleep's corrections began.

Stored in the script's store:

| key | value |
| --- | --- |
| `memory_snapshots` | the snapshots kept, oldest first: {"sleep_id", "started", "keys", "complete"} |
| `memory_snapshot_open` | the sleep id whose snapshot records writes now (absent: none) |
| `memory_snapshot:<id>:keys` | the memory keys recorded, in order |
| `memory_snapshot:<id>:<n>` | one record: {"key", "existed", "value"} (the value before) |

A snapshot records at most `MAX_SNAPSHOT_KEYS` keys. One that would need more stops recording
and is marked incomplete: it, and the snapshots before it, can no longer be rolled back.

"""

import copy
import json
from typing import Any

from ..text import counted, one_line
from ..errors import Refused
from .core import KEY as CORE_KEY
from .kinds.review_log import AUDIT_META
from .review import (
    CORE_PREFIX,
    CORE_REMOVE,
    CORE_SET,
    audit_length,
    corrections_since,
    is_audit_key,
    reapply_corrections,
)
from .provenance import talk_without
from .store import KeyValueStore

SNAPSHOTS = "memory_snapshots"
SNAPSHOT_OPEN = "memory_snapshot_open"
SNAPSHOT_PREFIX = "memory_snapshot"
# a sleep and the day after it touch tens of keys (chunks of 100 entries, one per person):
# this many is far more than a day brings, and bounds a snapshot at this many chunk copies
MAX_SNAPSHOT_KEYS = 2000
# the kept corrections `describe` lists one by one before it sums up the rest (a plan a
# builder reads before confirming: bounded however many corrections came since)
KEPT_LINES = 10
# how much of a kept memory's text is quoted, enough to recognise it
KEPT_QUOTE_CHARS = 40
# the ids one kept forget names, before it says how many more
KEPT_IDS = 3
# how much of a kept core note's name is shown (a model's private note's slot names its people)
KEPT_NAME_CHARS = 60


class _Absent:
    """Stands for "no value stored" (a copy of it is itself: stores hand back copies)."""

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        return "<absent>"


_ABSENT = _Absent()

# what a rollback reports, in this order: the words for one, then for several
SUMMARY_LABELS = {
    "consolidated": (
        "journal entry whose consolidated flag changed",
        "journal entries whose consolidated flag changed",
    ),
    "entries_removed": ("journal entry removed", "journal entries removed"),
    # a builder's forget is never undone (see the module doc): only pruning gives text back
    "entries_restored": (
        "journal entry given back its text (pruned since)",
        "journal entries given back their text (pruned since)",
    ),
    "reflections_removed": ("reflection removed", "reflections removed"),
    "reflections_restored": (
        "reflection given back (removed or pruned since)",
        "reflections given back (removed or pruned since)",
    ),
    "memories_removed": ("long-term memory removed", "long-term memories removed"),
    "memories_restored": ("long-term memory restored", "long-term memories restored"),
    "links_removed": ("link removed", "links removed"),
    "links_restored": ("link restored", "links restored"),
    "profiles": ("person's profile restored", "people's profiles restored"),
    "core_memory": ("core memory note restored", "core memory notes restored"),
    "other": (
        "other stored value restored (indexes, counts)",
        "other stored values restored (indexes, counts)",
    ),
}


class SnapshotError(Refused):
    """A rollback that cannot be done; the message says why. Nothing was changed."""


def _keys_key(sleep_id: str) -> str:
    return f"{SNAPSHOT_PREFIX}:{sleep_id}:keys"


def _record_key(sleep_id: str, number: int) -> str:
    return f"{SNAPSHOT_PREFIX}:{sleep_id}:{number:05d}"


class Snapshots:
    """The memory snapshots of one assistant, kept in its script's store.

    Args:
        state (KeyValueStore): The script's store.

    """

    def __init__(self, state: KeyValueStore):
        self.state = state

    # ---- reading --------------------------------------------------------------------------

    def kept(self) -> list[dict]:
        """The snapshots kept, oldest first.

        Returns:
            list: Dicts with "sleep_id", "started" (ISO), "keys" (how many recorded) and
                "complete" (False once it outgrew `MAX_SNAPSHOT_KEYS`).

        """
        return list(self.state.get(SNAPSHOTS) or [])

    def open_id(self) -> str | None:
        """The sleep whose snapshot records writes now.

        Returns:
            str or None: Its id, or None when nothing is recorded.

        """
        return self.state.get(SNAPSHOT_OPEN)

    def recorded_keys(self, sleep_id: str) -> list[str]:
        """The memory keys a snapshot recorded, in order.

        Args:
            sleep_id (str): The sleep's id.

        Returns:
            list: The keys.

        """
        return list(self.state.get(_keys_key(sleep_id)) or [])

    # ---- recording ------------------------------------------------------------------------

    def open(self, sleep_id: str, started: str, kept: int) -> None:
        """Start the snapshot of a sleep that begins now; the previous one stops recording and
        the oldest go, so that at most `kept` remain.

        Args:
            sleep_id (str): The sleep's id (from the sleep history).
            started (str): When it began (ISO).
            kept (int): How many snapshots to keep; 0 keeps none and records nothing.

        """
        snapshots = self.kept()
        if kept > 0:
            snapshots.append(
                {"sleep_id": sleep_id, "started": started, "keys": 0, "complete": True}
            )
        dropped = max(0, len(snapshots) - kept)
        for old in snapshots[:dropped]:
            self._drop_records(old["sleep_id"])
        snapshots = snapshots[dropped:]
        self.state.set(SNAPSHOTS, snapshots)
        if kept > 0:
            self.state.set(SNAPSHOT_OPEN, sleep_id)
        elif self.open_id() is not None:
            self.state.delete(SNAPSHOT_OPEN)

    def record(self, sleep_id: str, key: str, existed: bool, value: Any, recorded: list) -> bool:
        """Keep a key's value from before its first write in the open snapshot.

        Args:
            sleep_id (str): The open snapshot's sleep.
            key (str): The memory key about to be written.
            existed (bool): Whether it held a value.
            value: The value it held (None when it did not exist).
            recorded (list): The keys the snapshot recorded so far (as stored).

        Returns:
            bool: True when recorded; False when the snapshot is full (it stops recording and
                is marked incomplete).

        """
        number = len(recorded)
        if number >= MAX_SNAPSHOT_KEYS:
            snapshots = self.kept()
            for snapshot in snapshots:
                if snapshot["sleep_id"] == sleep_id:
                    snapshot["complete"] = False
            self.state.set(SNAPSHOTS, snapshots)
            self.state.delete(SNAPSHOT_OPEN)
            return False
        # the value before is stored before the key list names it, and both before the write
        self.state.set(
            _record_key(sleep_id, number),
            {"key": key, "existed": existed, "value": value if existed else None},
        )
        self.state.set(_keys_key(sleep_id), [*recorded, key])
        return True

    def scrub(self, gone: list[str], words: list[str]) -> int:
        """Take what a builder made the assistant forget out of the values the snapshots keep:
        a forgotten entry, memory or digest is emptied, a forgotten core note or person's
        observation or attribute is left out, and the forgotten words are taken out of the talk
        kept beside a fact. A rollback still makes the forget hold again (`memory.review`);
        this is so the words are not kept, unread, in the snapshots either.

        Args:
            gone (list): The ids forgotten (as `MemoryReview.forget` returns them).
            words (list): The forgotten words.

        Returns:
            int: How many kept values were rewritten.

        """
        gone = set(gone)
        words = [text for text in words if text and text.strip()]
        changed = 0
        for snapshot in self.kept():
            sleep_id = snapshot["sleep_id"]
            for number, key in enumerate(self.recorded_keys(sleep_id)):
                record = self.state.get(_record_key(sleep_id, number))
                if not record or not record.get("existed"):
                    continue
                value = _scrubbed(key, record.get("value"), gone, words)
                if value is not None:
                    self.state.set(_record_key(sleep_id, number), {**record, "value": value})
                    changed += 1
        return changed

    def rewrite(self, change) -> int:
        """Rewrite the values the snapshots keep with `change` (forgetting a person,
        `memory.forget_person`: their profile kept as if it never existed).

        Args:
            change (callable): `change(key, value)` -> None to leave a kept value as it is,
                or (existed, value): what the snapshot keeps from now on.

        Returns:
            int: How many kept values were rewritten.

        """
        changed = 0
        for snapshot in self.kept():
            sleep_id = snapshot["sleep_id"]
            for number, key in enumerate(self.recorded_keys(sleep_id)):
                record = self.state.get(_record_key(sleep_id, number))
                if not record or not record.get("existed"):
                    continue
                new = change(key, record.get("value"))
                if new is not None:
                    existed, value = new
                    kept = {**record, "existed": existed, "value": value if existed else None}
                    self.state.set(_record_key(sleep_id, number), kept)
                    changed += 1
        return changed

    def _drop_records(self, sleep_id: str) -> None:
        for number in range(len(self.recorded_keys(sleep_id))):
            self.state.delete(_record_key(sleep_id, number))
        self.state.delete(_keys_key(sleep_id))

    # ---- rolling back ---------------------------------------------------------------------

    def _plan(self, sleep_id: str) -> tuple[list[str], dict[str, tuple[bool, Any]]]:
        """The sleeps a rollback of `sleep_id` undoes (newest first) and each key's value to
        restore: the value before the oldest of them that recorded it."""
        snapshots = self.kept()
        ids = [snapshot["sleep_id"] for snapshot in snapshots]
        if sleep_id not in ids:
            kept = ", ".join(ids) or "none"
            raise SnapshotError(
                f"There is no snapshot of sleep '{sleep_id}'. Snapshots kept: {kept}."
            )
        undone = snapshots[ids.index(sleep_id) :]
        incomplete = [s["sleep_id"] for s in undone if not s.get("complete", True)]
        if incomplete:
            raise SnapshotError(
                f"The snapshot of sleep {incomplete[-1]} outgrew {MAX_SNAPSHOT_KEYS} stored "
                f"values and is incomplete: it, and the sleeps before it, cannot be rolled back."
            )
        restore: dict[str, tuple[bool, Any]] = {}
        for snapshot in reversed(undone):  # newest first: an older value wins
            sid = snapshot["sleep_id"]
            for number, key in enumerate(self.recorded_keys(sid)):
                record = self.state.get(_record_key(sid, number))
                if record is None or record.get("key") != key:
                    raise SnapshotError(
                        f"The snapshot of sleep {sid} is damaged (record {number} of {key!r} "
                        "is missing): nothing was rolled back."
                    )
                restore[key] = (bool(record["existed"]), record.get("value"))
        return [s["sleep_id"] for s in reversed(undone)], restore

    def preview(self, sleep_id: str, memory: KeyValueStore, long_term=None) -> dict:
        """What rolling back `sleep_id` would change, without changing anything.

        Args:
            sleep_id (str): The sleep to roll back.
            memory (KeyValueStore): The memory store itself (not a `RecordingStore`).
            long_term (callable, optional): `long_term(store)` -> the long-term `MemoryStore`
                over a store (a game's own); an `EmbeddedMemoryStore` by default.

        Returns:
            dict: "sleeps" (the ids undone, newest first), "values" (stored values that
                would change), "changes" (counts by `SUMMARY_LABELS` key) and "kept" (the
                builder corrections made since, kept: see `MemoryReview.reapply`).

        Raises:
            SnapshotError: No such snapshot, or one that cannot be rolled back.

        """
        return self._outcome(sleep_id, memory, long_term)[0]

    def _outcome(
        self, sleep_id: str, memory: KeyValueStore, long_term=None
    ) -> tuple[dict, dict, tuple[bool, Any] | None]:
        """What rolling back `sleep_id` leaves: the summary, the values that differ from now
        (key -> (existed, value)) and the review log's count as recorded before the oldest
        sleep undone (None: not written since). Nothing is written."""
        sleeps, restore = self._plan(sleep_id)
        # the review log survives a rollback whole; its recorded count is where it stood
        audit_before = restore.get(AUDIT_META)
        restore = {key: value for key, value in restore.items() if not is_audit_key(key)}
        if audit_before is None:  # not written since: no correction came since
            since = audit_length(memory.get(AUDIT_META))
        else:
            existed, meta = audit_before
            since = audit_length(meta) if existed else 0
        restored = _Restored(memory, restore)
        kept = reapply_corrections(restored, corrections_since(memory, since), long_term)
        summary, differing = self._summary(sleeps, restored.outcome(), memory)
        summary["kept"] = kept
        return summary, differing, audit_before

    @staticmethod
    def _summary(sleeps: list[str], restore: dict, memory: KeyValueStore) -> tuple[dict, dict]:
        """What restoring changes, and the values that differ (key -> (existed, value))."""
        changes = {name: 0 for name in SUMMARY_LABELS}
        differing = {}
        for key, (existed, value) in restore.items():
            current = memory.get(key, _ABSENT)
            before = value if existed else _ABSENT
            if _same(current, before):
                continue
            differing[key] = (existed, value)
            _count_changes(changes, key, _plain(current), _plain(before))
        return {"sleeps": sleeps, "values": len(differing), "changes": changes}, differing

    def rollback(self, sleep_id: str, memory: KeyValueStore, long_term=None) -> dict:
        """Restore memory as it was when `sleep_id` began, undoing every later sleep too,
        except the builder corrections made since, which hold again (see the module doc); the
        snapshots undone are dropped.

        Every value to restore is read, and the corrections made again, before the first
        value is written. The shell runs this in one database transaction, so a failure
        changes nothing.

        Args:
            sleep_id (str): The sleep to roll back.
            memory (KeyValueStore): The memory store itself (not a `RecordingStore`).
            long_term (callable, optional): As for `preview`.

        Returns:
            dict: As `preview` gives it: what changed, and the corrections kept.

        Raises:
            SnapshotError: No such snapshot, or one that cannot be rolled back.

        """
        summary, differing, audit_before = self._outcome(sleep_id, memory, long_term)
        for key, (existed, value) in differing.items():
            if existed:
                memory.set(key, value)
            else:
                memory.delete(key)
        undone = set(summary["sleeps"])
        for sid in summary["sleeps"]:
            self._drop_records(sid)
        left = [s for s in self.kept() if s["sleep_id"] not in undone]
        self.state.set(SNAPSHOTS, left)
        if left and left[-1].get("complete", True):
            # memory is as it was when the next sleep began: where the newest snapshot left
            # off, so it records again until the next sleep (it is all that sleep's since)
            reopened = left[-1]["sleep_id"]
            self.state.set(SNAPSHOT_OPEN, reopened)
            recorded = self.recorded_keys(reopened)
            if audit_before is not None and AUDIT_META not in recorded:
                # the review log was written since, but not while this snapshot recorded: its
                # count then is the one the sleeps undone recorded. Without it, rolling this
                # snapshot back would see no correction since, and restore the memories
                # forgotten in the sleeps undone (their values before are in its records)
                self.record(reopened, AUDIT_META, *audit_before, recorded)
        elif self.open_id() is not None:
            self.state.delete(SNAPSHOT_OPEN)
        return summary


class _Restored:
    """Memory as a rollback leaves it, without writing it: reads see the values to restore
    over the store, writes (the corrections made again) are kept aside (see `outcome`).

    Args:
        memory (KeyValueStore): The memory store.
        restore (dict): Key -> (existed, value) to restore.

    """

    def __init__(self, memory: KeyValueStore, restore: dict[str, tuple[bool, Any]]):
        self.memory = memory
        self.restore = restore
        self.written: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        """Read a value as the rollback leaves it (see `KeyValueStore.get`)."""
        if key in self.written:
            value = self.written[key]
        elif key in self.restore:
            existed, value = self.restore[key]
            value = value if existed else _ABSENT
        else:
            return self.memory.get(key, default)
        # a copy, as stores hand back: the values to restore are compared afterwards
        return default if value is _ABSENT else copy.deepcopy(value)

    def set(self, key: str, value: Any) -> None:
        """Keep a value aside (see `KeyValueStore.set`)."""
        self.written[key] = copy.deepcopy(value)

    def delete(self, key: str) -> None:
        """Keep aside that a value goes (see `KeyValueStore.delete`)."""
        self.written[key] = _ABSENT

    def outcome(self) -> dict[str, tuple[bool, Any]]:
        """Every value the rollback sets or deletes: key -> (exists, value)."""
        values = dict(self.restore)
        for key, value in self.written.items():
            values[key] = (False, None) if value is _ABSENT else (True, value)
        return values


class RecordingStore:
    """A `KeyValueStore` that keeps, in the open snapshot, each key's value from before its
    first write (see the module doc). Reads go straight to the store it wraps.

    Args:
        inner (KeyValueStore): The memory store.
        snapshots (Snapshots): Where the values before go.

    """

    def __init__(self, inner: KeyValueStore, snapshots: Snapshots):
        self.inner = inner
        self.snapshots = snapshots
        # the keys the open snapshot holds, as this store last knew them
        self._seen_for: str | None = None
        self._seen: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        """Read a stored value (see `KeyValueStore.get`)."""
        return self.inner.get(key, default)

    def set(self, key: str, value: Any) -> None:
        """Store a value, after keeping the one it replaces when it is the key's first write
        since the snapshot opened (see `KeyValueStore.set`)."""
        self._keep_before(key)
        self.inner.set(key, value)

    def delete(self, key: str) -> None:
        """Remove a value, after keeping it when it is the key's first write since the snapshot
        opened (see `KeyValueStore.delete`)."""
        self._keep_before(key)
        self.inner.delete(key)

    def _keep_before(self, key: str) -> None:
        sleep_id = self.snapshots.open_id()
        if sleep_id is None:
            return
        if sleep_id != self._seen_for:
            self._seen_for, self._seen = sleep_id, set()
        if key in self._seen:
            return
        # read as stored: another brain over the same stores (rebuilt after a settings change)
        # may have recorded it, and its value then is the one to keep
        recorded = self.snapshots.recorded_keys(sleep_id)
        self._seen.update(recorded)
        if key in self._seen:
            return
        before = self.inner.get(key, _ABSENT)
        existed = before is not _ABSENT
        if self.snapshots.record(sleep_id, key, existed, before if existed else None, recorded):
            self._seen.add(key)


# ---- forgetting reaches the snapshots too ---------------------------------------------------

# the fields of a kept item that hold its words, by the list it is kept in (`scrub`)
_WORDS = {
    "journal": {"content": "", "tags": []},
    "ltm": {"text": "", "vector": None},
    "digests": {"summary": "", "people_met": [], "open_threads": [], "new_facts": []},
}


def _scrubbed(key: str, value: Any, gone: set[str], words: list[str]) -> Any:
    """A kept value with what was forgotten taken out, or None when nothing in it was."""
    name = key.split(":", 1)[0]
    if name in _WORDS and key != f"{name}:meta" and isinstance(value, (str, list)):
        items = json.loads(value) if isinstance(value, str) else copy.deepcopy(value)
        touched = False
        for position, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            if item.get("id") in gone:
                items[position] = {**item, **_WORDS[name]}
                touched = True
            talk = talk_without((item.get("provenance") or {}).get("talk") or "", words)
            if talk is not None:
                item["provenance"] = {**item["provenance"], "talk": talk}
                touched = True
        if not touched:
            return None
        return json.dumps(items, separators=(",", ":")) if isinstance(value, str) else items
    if key == CORE_KEY and isinstance(value, dict):
        kept = {slot: note for slot, note in value.items() if f"{CORE_PREFIX}{slot}" not in gone}
        return kept if len(kept) != len(value) else None
    if name == "entity" and isinstance(value, dict) and "key" in value:
        profile = copy.deepcopy(value)
        before = len(profile.get("observations", [])) + len(profile.get("attributes", []))
        for field in ("observations", "attributes"):
            profile[field] = [
                item
                for item in profile.get(field, [])
                if f"{profile['key']}/{item.get('id')}" not in gone
            ]
        after = len(profile["observations"]) + len(profile["attributes"])
        return profile if after != before else None
    return None


# ---- what changed ----------------------------------------------------------------------------


def _same(current: Any, before: Any) -> bool:
    if current is _ABSENT or before is _ABSENT:
        return current is before
    return current == before


def _plain(value: Any) -> Any:
    """A stored value as data: absent as None, a chunk's JSON string parsed."""
    if value is _ABSENT:
        return None
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _items_by_id(value: Any) -> dict[str, dict]:
    if not isinstance(value, list):
        return {}
    return {item["id"]: item for item in value if isinstance(item, dict) and "id" in item}


def _link_pairs(value: Any) -> set[tuple[str, str]]:
    if not isinstance(value, dict):
        return set()
    # each link is kept at both ends: counted once, at the end whose id sorts first
    return {
        (one, other)
        for one, links in value.items()
        if isinstance(links, dict)
        for other in links
        if one < other
    }


def _count_changes(changes: dict, key: str, current: Any, before: Any) -> None:
    """Add what restoring `key` from `current` to `before` changes to `changes`."""
    prefix, _, rest = key.partition(":")
    if prefix == "journal" and rest.isdigit():
        now_items, old_items = _items_by_id(current), _items_by_id(before)
        for entry_id, entry in now_items.items():
            reflection = entry.get("kind") == "reflection"
            old = old_items.get(entry_id)
            if old is None:
                changes["reflections_removed" if reflection else "entries_removed"] += 1
                continue
            if bool(old.get("consolidated")) != bool(entry.get("consolidated")):
                changes["consolidated"] += 1
            if (old.get("content"), old.get("pruned")) != (
                entry.get("content"),
                entry.get("pruned"),
            ):
                # pruned or forgotten since: the text comes back
                changes["reflections_restored" if reflection else "entries_restored"] += 1
        for entry_id, old in old_items.items():
            if entry_id not in now_items:
                reflection = old.get("kind") == "reflection"
                changes["reflections_restored" if reflection else "entries_restored"] += 1
    elif prefix == "ltm" and rest.isdigit():
        now_items, old_items = _items_by_id(current), _items_by_id(before)
        changes["memories_removed"] += len(now_items.keys() - old_items.keys())
        changes["memories_restored"] += sum(
            1 for memory_id, old in old_items.items() if now_items.get(memory_id) != old
        )
    elif prefix == "links" and rest != "index":
        now_pairs, old_pairs = _link_pairs(current), _link_pairs(before)
        changes["links_removed"] += len(now_pairs - old_pairs)
        changes["links_restored"] += len(old_pairs - now_pairs)
    elif prefix == "entity" and rest != "index":
        changes["profiles"] += 1
    elif key == "core_memory":
        now_notes = current if isinstance(current, dict) else {}
        old_notes = before if isinstance(before, dict) else {}
        changes["core_memory"] += sum(
            1
            for slot in now_notes.keys() | old_notes.keys()
            if now_notes.get(slot) != old_notes.get(slot)
        )
    else:
        changes["other"] += 1


def describe(summary: dict, limit: int = KEPT_LINES) -> list[str]:
    """A rollback's summary as lines of text: one per kind of change (only the kinds that
    changed), then one per builder correction kept, at most `limit`, then how many more.

    Args:
        summary (dict): As `Snapshots.preview` or `Snapshots.rollback` gives it.
        limit (int, optional): The most corrections listed one by one.

    Returns:
        list: Lines such as "3 links removed", "kept forgotten: j000012 (forgotten by Ann at
            2026-11-21 14:02: 'Bob's vault code...')" or "kept removed: core note vault
            (removed by Ann at 2026-11-21 14:07: 'code 4-1-7')"; one line saying nothing
            changes when no value differs.

    """
    lines = [
        counted(summary["changes"][name], one, many)
        for name, (one, many) in SUMMARY_LABELS.items()
        if summary["changes"].get(name)
    ]
    lines = lines or ["no stored value differs from what it was then"]
    kept = summary.get("kept") or []
    lines.extend(_kept_line(correction) for correction in kept[:limit])
    if len(kept) > limit:
        lines.append(f"and {len(kept) - limit} more corrections kept")
    return lines


def _kept_line(correction: dict) -> str:
    """One kept correction, on one line, its text clipped."""
    when = (correction.get("at") or "")[:16].replace("T", " ") or "?"
    who = one_line(correction.get("by") or "?")[:30]
    if correction["action"] in (CORE_SET, CORE_REMOVE):
        return _kept_core_line(correction, who, when)
    if correction["action"] == "forget":
        # an entry takes every fact drawn from it alone with it: a few ids, then how many more
        ids = correction["ids"]
        named = ", ".join(ids[:KEPT_IDS]) + (
            f" and {len(ids) - KEPT_IDS} more" if len(ids) > KEPT_IDS else ""
        )
        line = f"kept forgotten: {named} (forgotten by {who} at {when}"
    elif correction["action"] == "forget_person":
        # a person: their key, never their words (`memory.forget_person`)
        line = f"kept forgotten: the person {one_line(correction['id'])[:40]} (by {who} at {when}"
    else:
        trust = correction.get("trust")
        level = f"{trust:.2f}" if isinstance(trust, (int, float)) else "?"
        line = f"kept trust: {correction['id']} at {level} (set by {who} at {when}"
    if not correction.get("applied"):
        # learned after the sleep began: the rollback removes it, nothing to keep it from
        return f"{line}; learned since, so removed)"
    text = correction.get("text") or ""
    if len(text) > KEPT_QUOTE_CHARS:
        text = text[: KEPT_QUOTE_CHARS - 3].rstrip() + "..."
    return f"{line}: '{text}')" if text else f"{line})"


def _kept_core_line(correction: dict, who: str, when: str) -> str:
    """One kept core-note edit of a builder's, on one line, its name and text clipped."""
    name = one_line(correction.get("id") or "?")[:KEPT_NAME_CHARS]
    text = _quoted(correction.get("text") or "")
    if correction["action"] == CORE_SET:
        return f"kept core note: {name} (pinned by {who} at {when}{text})"
    line = f"kept removed: core note {name} (removed by {who} at {when}"
    if not correction.get("applied"):
        # written after the sleep began: the rollback removes it, nothing to keep it from
        return f"{line}; written since, so removed)"
    return f"{line}{text})"


def _quoted(text: str) -> str:
    """': 'text'' with the text clipped to `KEPT_QUOTE_CHARS`, or nothing for no text."""
    if not text:
        return ""
    if len(text) > KEPT_QUOTE_CHARS:
        text = text[: KEPT_QUOTE_CHARS - 3].rstrip() + "..."
    return f": '{text}'"
