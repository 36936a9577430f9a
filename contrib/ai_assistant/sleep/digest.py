"""
The daily digest, a dreaming step: each finished game day's journal replayed into a digest
(`memory.digests`), once per day, on the first sleep after the day ended.

- Which days: every game day before today's (the game clock's) with entries not yet covered,
  oldest first, at most `digest_max_days_per_sleep` in one sleep; the rest wait for the next.
  The archive's cursor (the first journal entry not yet covered) moves past a day only once all
  of its digests are stored, so a day is digested once and never twice.
- Which entries: what happened that day (experience) and the context summaries written that
  day; not reflections (thoughts about the past, not the day's events) and not pruned entries.
  A day with none costs no call: the cursor just moves on. A day with more than
  `digest_max_entries` keeps the most important, in their order.
- Audiences: the public entries make one digest, the entries private to each audience another
  one for that audience alone (one call each), so private words never reach a digest others
  may recall.
- A call that fails (or a reply that does not fit `DayDigest`) stores nothing: the step is
  tried again at the next tick, and the digests already stored for that day are not made again.
- Claims stay claims: a new fact drawn from what someone said is stored as theirs ("Bob says:
  ..."), whatever the model wrote (it rests on the entries it shares the most words with), and
  the digest is trusted no more than the least trusted entry it was made from
  (`memory.provenance.derived`).

An entry's game day is its `game_at` (written by the journal from the game clock). An entry
written before that field existed (by an earlier version) is placed by its real time shifted by
the game clock's present offset, and is not digested: an upgraded assistant starts its digests
with the day it was upgraded instead of paying a call for every day of its past.

"""

from collections.abc import Callable, Generator
from datetime import datetime

from ..agent.brain import Brain
from ..clock import from_iso
from .prompts import attributed_to, clean_facts, render_entries, resting_on, sleep_request
from ..memory.digests import DIGEST_PROMPT, DayDigest, audience_key
from ..memory.journal import EXPERIENCE, SYNTHESIS
from ..memory.provenance import derived
from ..state import DREAMING_PROGRESS
from .batch import BatchDeferred, BatchRound, ask

# kept in `dreaming_progress`: days digested in this sleep (the limit is per sleep)
DAYS_THIS_SLEEP = "digest_days"
# the longest a digest's fact may be, its attribution included (`DayDigest`'s bound)
MAX_DIGEST_FACT_CHARS = 300


def game_day(entry: dict, offset) -> str:
    """The game day of a journal entry (`YYYY-MM-DD`).

    Args:
        entry (dict): The entry.
        offset (timedelta): Game time minus real time now, for an entry without `game_at`.

    Returns:
        str: The day.

    """
    if entry.get("game_at"):
        return entry["game_at"][:10]
    return (from_iso(entry["created_at"]) + offset).date().isoformat()


def finished_days(brain: Brain, now: datetime) -> list[tuple[str, list[dict], int]]:
    """The game days before today not yet digested, oldest first.

    Args:
        brain (Brain): The assistant.
        now (datetime): The real time.

    Returns:
        list: (day, the entries to digest, the position of the first entry after the day);
            the entries may be none (a day of reflections or pruned entries only).

    """
    game_now = brain.game_now(now)
    today = game_now.date().isoformat()
    offset = game_now - now
    days: dict[str, list] = {}
    for entry in brain.journal.entries.slice(brain.digests.next_seq):
        day = game_day(entry, offset)
        if day >= today:
            break  # entries are in time order: the rest are today's
        day_entries, _ = days.setdefault(day, ([], 0))
        if _digestible(entry):
            day_entries.append(entry)
        days[day] = (day_entries, entry["seq"] + 1)
    return [(day, entries, next_seq) for day, (entries, next_seq) in days.items()]


def _digestible(entry: dict) -> bool:
    return (
        bool(entry.get("game_at"))  # see the module doc
        and entry.get("kind", EXPERIENCE) in (EXPERIENCE, SYNTHESIS)
        and not entry.get("pruned")
        and bool(entry.get("content"))
    )


def by_audience(entries: list[dict], limit: int) -> list[tuple[list[str] | None, list[dict]]]:
    """A day's entries split by audience, public first, each at most `limit` entries (the most
    important, in their order).

    Args:
        entries (list): The day's entries.
        limit (int): The most entries one digest reads.

    Returns:
        list: (audience, entries) pairs.

    """
    groups: dict[tuple | None, list[dict]] = {}
    for entry in entries:
        audience = entry.get("audience")
        groups.setdefault(tuple(audience) if audience is not None else None, []).append(entry)
    result = []
    for key in sorted(groups, key=lambda key: (key is not None, key or ())):
        chosen = groups[key]
        if len(chosen) > limit:
            chosen = sorted(chosen, key=lambda e: (-(e.get("importance") or 0), e["seq"]))[:limit]
            chosen.sort(key=lambda e: e["seq"])
        result.append((None if key is None else list(key), chosen))
    return result


def daily_digests(
    brain: Brain,
    now: datetime,
    take_call: Callable[[], bool],
    batch_round: BatchRound | None = None,
) -> Generator:
    """Digest the finished game days not yet digested (see the module doc).

    Args:
        brain (Brain): The sleeping assistant.
        now (datetime): The real time.
        take_call (callable): Takes one model call from this tick's budget; False when spent.
        batch_round (BatchRound, optional): The tick's batch round in batch mode
            (`sleep.batch`).

    Returns:
        Generator: Work that yields model calls (`brain.structured` requests) and returns
            `(done, report)`: the report has the calls made, digests stored, days digested and
            days left; not done when the budget ran out first.

    """
    config = brain.config
    if not config.digest_enabled:
        return True, {"skipped": "digest_enabled is off"}
    archive = brain.digests
    progress = dict(brain.state.get(DREAMING_PROGRESS) or {})
    days_done = progress.get(DAYS_THIS_SLEEP, 0)
    # "summaries": the public digests' own summaries (structured output), for the sleep's record
    report = {"calls": 0, "digests": 0, "days": 0, "left": 0, "summaries": []}
    days = finished_days(brain, now)
    # in batch mode a request may wait for its batch: the others are still asked (they join the
    # same batch), and the cursor moves only past whole days, in order
    deferred = None
    for position, (day, entries, next_seq) in enumerate(days):
        if entries and days_done >= config.digest_max_days_per_sleep:
            report["left"] = sum(1 for _, waiting, _ in days[position:] if waiting)
            break
        stored = {audience_key(digest["audience"]) for digest in archive.of_day(day)}
        day_waits = False
        for audience, group in by_audience(entries, config.digest_max_entries):
            if audience_key(audience) in stored:
                continue  # made at an earlier tick, before the budget ran out or a call failed
            if not take_call():
                report["left"] = sum(1 for _, waiting, _ in days[position:] if waiting)
                return False, report
            request = sleep_request(
                DIGEST_PROMPT.format(name=brain.name, day=day),
                render_entries(group),
                brain.model,
                config.max_reply_tokens,
            )
            try:
                result, replies = yield ask(brain, request, DayDigest, batch_round)
            except BatchDeferred as waiting:
                deferred, day_waits = waiting, True
                continue
            for reply in replies:
                brain.record_reply(reply, now)
            brain.save_usage()
            report["calls"] += 1
            archive.add(
                result,
                day=day,
                audience=audience,
                entries=group,
                now=now,
                new_facts=_claims_kept(brain, result.new_facts, group),
                people=[p for p in result.people_met if p.lower() not in _own(brain)],
                provenance=derived(group, config.trusts()),
            )
            report["digests"] += 1
            if audience is None:
                report["summaries"].append(f"{day}: {' '.join(result.summary.split())}"[:300])
        if deferred is not None:
            # this day or an earlier one waits for a batch: not finished yet, but counted
            # against this sleep's days so the batch stays bounded
            days_done += 1 if entries and day_waits else 0
            continue
        archive.finish_day(day, next_seq)
        if entries:
            days_done += 1
            report["days"] += 1
            progress = dict(brain.state.get(DREAMING_PROGRESS) or {})
            progress[DAYS_THIS_SLEEP] = days_done
            brain.state.set(DREAMING_PROGRESS, progress)
    if deferred is not None:
        raise deferred
    return True, report


def _claims_kept(brain: Brain, facts: list[str], entries: list[dict]) -> list[str]:
    """The digest's new facts, each drawn from what someone said kept as theirs ("Bob says:
    ..."), whatever the model wrote: a fact rests on the entries that share the most words with
    it (on all of them when none does: `prompts.resting_on`)."""
    trusts = brain.config.trusts()
    stemmer = brain.config.recall_stemmer
    kept = []
    for fact in clean_facts(facts, brain.names, MAX_DIGEST_FACT_CHARS):
        sources = resting_on(fact, entries, lambda entry: entry.get("content"), stemmer)
        claimants = derived(sources, trusts)["claims_of"]
        fact = attributed_to(fact, claimants, MAX_DIGEST_FACT_CHARS)
        if fact not in kept:
            kept.append(fact)
    return kept


def _own(brain: Brain) -> set[str]:
    return {name.lower() for name in brain.names}
