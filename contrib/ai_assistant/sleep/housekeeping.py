"""
Housekeeping, a dreaming step without a model call: what has been kept long enough goes.

Each age is in real days, like `prune_age_days`, and 0 keeps that kind of record forever:

- `journal_retention_days`: raw journal entries (experience) are emptied in place, as pruning
  does (the id stays, so nothing points to the wrong entry; their links go), but whatever their
  importance. Only an entry consolidation is done with (consolidated, or judged not worth it)
  and, while digests are on, one whose day has been digested: never one not yet consolidated.
  Reflections are never removed: they are the assistant's own conclusions, few, and what later
  reflections and links rest on.
- `compaction_archive_retention_days`: the context summaries compaction archived in the
  journal (`[CONTEXT SYNTHESIS]`), emptied in the same way, once their day is digested.
- `digest_retention_days`: daily digests, by the day they cover.
- `sleep_history_retention_days`: the records of past sleeps, by when they ended (game time,
  turned into real days by the time factor); the newest is always kept.

Once, at the first sleep that finds them: the marks of entries forgotten by an earlier version,
which kept the first 200 characters of what was forgotten (`forgotten["was"]`), keep only its
length and a digest of it, as a forget does now (`memory.review`).

"""

import hashlib
from datetime import datetime, timedelta

from ..agent.brain import Brain
from ..clock import to_iso
from ..memory.sleep_history import SleepHistory

RETENTION = "retention"
# set once the old forget marks were looked for (`_old_forget_marks`)
FORGET_MARKS_CHECKED = "forget_marks_checked"


def keep_house(brain: Brain, now: datetime) -> dict:
    """Remove what is older than its configured age (see the module doc).

    Args:
        brain (Brain): The sleeping assistant.
        now (datetime): The real time.

    Returns:
        dict: How many of each were removed ("entries", "compaction_archive", "digests",
            "sleep_records"), their sum ("removed") and the links removed with entries.

    """
    config = brain.config
    report = {"entries": 0, "compaction_archive": 0, "digests": 0, "sleep_records": 0}
    entries, archive = _old_journal_entries(brain, now)
    report["entries"], report["compaction_archive"] = len(entries), len(archive)
    doomed = entries + archive
    stamp = to_iso(now)
    brain.journal.update([_emptied(entry, stamp) for entry in doomed])
    report["links_removed"] = brain.links.remove([entry["id"] for entry in doomed])
    if config.digest_retention_days:
        cutoff = to_iso(now - timedelta(days=config.digest_retention_days))
        report["digests"] = brain.digests.remove_before(cutoff)
    if config.sleep_history_retention_days:
        game_age = timedelta(days=config.sleep_history_retention_days * brain.time_factor)
        cutoff = to_iso(brain.game_now(now) - game_age)
        report["sleep_records"] = SleepHistory(brain.state).remove_ended_before(cutoff)
    report["removed"] = sum(
        report[key] for key in ("entries", "compaction_archive", "digests", "sleep_records")
    )
    if not brain.state.get(FORGET_MARKS_CHECKED):
        scrubbed = _old_forget_marks(brain)
        if scrubbed:
            report["forget_marks_scrubbed"] = scrubbed
        brain.state.set(FORGET_MARKS_CHECKED, True)
    return report


def _old_forget_marks(brain: Brain) -> int:
    """Take the words an earlier version kept of a forgotten entry out of its mark (see the
    module doc); returns how many marks it rewrote."""
    changed = []
    for entry in brain.journal.all():
        mark = entry.get("forgotten")
        if not isinstance(mark, dict) or "was" not in mark:
            continue
        was = str(mark.get("was") or "")
        kept = {key: value for key, value in mark.items() if key != "was"}
        # the old mark kept a beginning only: its length and digest are of what was kept
        kept.setdefault("was_chars", len(was))
        kept.setdefault("was_sha256", hashlib.sha256(was.encode("utf-8")).hexdigest()[:16])
        changed.append({**entry, "forgotten": kept})
    if changed:
        brain.journal.update(changed)
    return len(changed)


def _old_journal_entries(brain: Brain, now: datetime) -> tuple[list[dict], list[dict]]:
    """(raw entries, context summaries) old enough to go, never one still needed."""
    config = brain.config
    journal = brain.journal
    entry_days, archive_days = (
        config.journal_retention_days,
        config.compaction_archive_retention_days,
    )
    if not entry_days and not archive_days:
        return [], []
    entry_cutoff = to_iso(now - timedelta(days=entry_days)) if entry_days else None
    archive_cutoff = to_iso(now - timedelta(days=archive_days)) if archive_days else None
    # while digests are made, an entry waits until its day is digested
    digested = brain.digests.next_seq if config.digest_enabled else len(journal)
    entries, archive = [], []
    for entry in journal.entries.slice(0, digested):
        if entry.get("pruned") or journal.is_reflection(entry):
            continue
        if journal.is_synthesis(entry):
            if archive_cutoff and entry["created_at"] < archive_cutoff:
                archive.append(entry)
        elif (
            entry_cutoff
            and entry["created_at"] < entry_cutoff
            and (entry.get("consolidated") or entry.get("skipped"))
        ):
            entries.append(entry)
    return entries, archive


def _emptied(entry: dict, stamp: str) -> dict:
    """An entry with its text and details gone, its id and bookkeeping kept."""
    return {
        **entry,
        "content": "",
        "tags": [],
        "about": [],
        "witnesses": [],
        "heard_from": None,
        "location": None,
        "pruned": stamp,
        "removed_by": RETENTION,
    }
