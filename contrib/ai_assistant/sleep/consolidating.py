"""
The compacting phase of sleep: the journal scored and distilled into long-term memory.

Per sleep tick:

1. score one batch of unconsolidated entries whose importance is still a heuristic guess (or
   the awake model's, unless `trust_turn_importance`): one structured call;
2. consolidate one batch of scored entries that share an audience: entries below
   `min_importance_to_consolidate` are marked skipped; the rest go through fact extraction
   (one structured call; with embeddings when an embeddings model is configured); each entry's
   facts are stored as long-term memories with the entry's provenance and audience, and only
   then is the entry marked consolidated;
3. update `consolidation_progress`; when nothing is left, the phase becomes dreaming.

In batch mode (`sleep.batch`) a tick asks for every slice at once: each scoring call, then (once
all is scored) each extraction call, goes into the tick's one batch. A call that waits for a
batch changes nothing; what has arrived is applied, and the rest waits for a later tick.

A batch never mixes audiences, so a fact drawn from one person's whisper cannot be blended into
a memory anyone else may recall. Nothing is lost when a call fails: scores and marks are written
only from results that arrived.

A call that keeps failing rests instead of being made every tick:

- per entry: a reply the model got wrong for a batch (it did not fit the schema, was cut off,
  or the request was refused as too long) counts against each entry of the batch;
  after `MAX_ENTRY_FAILURES` an entry rests: it stays in the journal as it is (recalled as
  written, never pruned for it) and compacting goes on without it, until a builder's
  `@assistant/clear` lets it be tried again;
- per sleep: after `MAX_SLEEP_FAILURES` ticks in a row that ended in a failed call, whatever
  the cause (a server that is away), compacting rests until the next sleep: the sleep moves on to dreaming, the
  entries left wait, unconsolidated, and the debt they carry stays.

Both are shown by `@assistant/status` and in the sleep's record.

"""

import re
from collections.abc import Generator
from datetime import datetime

from .. import telemetry
from ..agent.brain import Brain
from ..clock import from_iso, to_iso
from ..lifecycle import COMPACTING
from ..llm.chat import CONTEXT_LENGTH, INVALID_RESPONSE, LLMError
from .prompts import (
    EXTRACTION_PROMPT,
    SCORING_PROMPT,
    FactExtraction,
    ImportanceScores,
    attributed,
    claim_content,
    clean_facts,
    entries_request,
)
from ..memory.journal import BOOKMARK_IMPORTANCE
from ..memory.provenance import CLAIMS, voice_of
from ..state import BATCH_WAITING, COMPACTING_FAILURES, PROGRESS, SLEEP_ERRORS
from .batch import BatchDeferred, BatchRound, ask

# what the model or the request got wrong for the entries of one call (not a server away):
# counted against each of them
# (not a 400: a setting the server refuses would rest the whole journal, batch by batch)
ENTRY_FAULTS = frozenset({INVALID_RESPONSE, CONTEXT_LENGTH})
# failed calls an entry may be part of before it rests (see the module doc)
MAX_ENTRY_FAILURES = 3
# ticks in a row ending in a failed call, in one sleep, before compacting rests until the next
MAX_SLEEP_FAILURES = 5


def by_salience(entries: list[dict]) -> list[dict]:
    """Bookmarks first, the most salient first; otherwise oldest first.

    Args:
        entries (list): Journal entries, oldest first.

    Returns:
        list: The same entries in the order compacting takes them.

    """
    return sorted(entries, key=lambda entry: -(entry.get("salience") or 0))


def needs_scoring(entry: dict, trust_turn: bool) -> bool:
    """Whether sleep-time scoring should (re)score this entry.

    Entries scored by the heuristic are rescored; entries scored during the turn are rescored
    only when turn scores are not trusted.

    Args:
        entry (dict): A journal entry.
        trust_turn (bool): Whether importance given during a turn is kept
            (`trust_turn_importance`).

    Returns:
        bool: True if the model should score this entry.

    """
    method = entry.get("scoring_method")
    return method == "heuristic" or (method == "turn" and not trust_turn)


def compacting_step(
    brain: Brain, now: datetime, batch_round: BatchRound | None = None
) -> Generator:
    """One tick of compacting (see the module doc).

    Scores a batch of entries that need it, marks entries below
    `min_importance_to_consolidate` as skipped, then extracts facts from a batch of important
    entries (one audience per batch) into long-term memory. A model error is recorded and
    counted, not raised.

    Args:
        brain (Brain): The sleeping assistant's brain.
        now (datetime): The current time.
        batch_round (BatchRound, optional): The tick's batch round in batch mode
            (`sleep.batch`): every slice is asked at once, through it.

    Returns:
        Generator: Work that yields model calls (and embedding work) and returns a report
            dict: counts of entries scored, consolidated and skipped, memories stored, and the
            error if any.

    """
    config = brain.config
    journal = brain.journal
    usage = brain.usage()
    state = brain.state
    report = {"scored": 0, "consolidated": 0, "skipped": 0, "memories": 0, "error": None}
    # in batch mode every slice of the journal is asked for at once (one request each, all in
    # the tick's one batch); directly, one slice a tick
    in_batch = batch_round is not None
    size = config.scoring_batch_size
    # the entries of the call under way: a reply wrong for them counts against them
    asked: list[dict] = []
    try:
        pending = by_salience(journal.unconsolidated())
        to_score = [e for e in pending if needs_scoring(e, config.trust_turn_importance)]
        slices = _slices(to_score, size) if in_batch else [to_score[:size]] if to_score else []
        waiting = 0
        for chunk in slices:
            asked = chunk
            try:
                result = yield from _ask(
                    brain, SCORING_PROMPT, chunk, ImportanceScores, now, batch_round
                )
            except BatchDeferred:
                waiting += 1
                continue
            asked = []
            report["scored"] += _apply_scores(journal, chunk, result)
        if slices:
            pending = by_salience(journal.unconsolidated())

        scored = [e for e in pending if not needs_scoring(e, config.trust_turn_importance)]
        minimum = config.min_importance_to_consolidate
        # a bookmark was marked to matter: never skipped as unimportant
        low = [e for e in scored if e["importance"] < minimum and not e.get("salience")]
        if low:
            journal.update([{**e, "skipped": "below min_importance_to_consolidate"} for e in low])
            report["skipped"] = len(low)
        important = [e for e in scored if e["importance"] >= minimum or e.get("salience")]
        still_to_score = any(needs_scoring(e, config.trust_turn_importance) for e in pending)
        if in_batch:
            # every audience's slices once all is scored (what is important is known then)
            batches = [] if still_to_score else _audience_slices(important, size)
        else:
            batch = _one_audience(important)[:size]
            if len(batch) < size and still_to_score:
                batch = []  # a full batch next tick: one call per batch, not a partial one now
            batches = [batch] if batch else []
        for batch in batches:
            asked = batch
            try:
                extraction = yield from _ask(
                    brain, EXTRACTION_PROMPT, batch, FactExtraction, now, batch_round
                )
            except BatchDeferred:
                waiting += 1
                continue
            asked = []
            facts = _facts_by_entry(brain, batch, extraction)
            vectors: dict[str, list[float]] = {}
            texts = [fact for entry_facts in facts.values() for fact in entry_facts]
            if texts and brain.embedding_model:
                embedded = yield brain.embed(texts)
                vectors = dict(zip(texts, embedded))
            stored = _store(brain, batch, facts, vectors, now)
            report["consolidated"] += len(stored)
            report["memories"] += sum(len(ids) for ids in stored.values())
        if waiting:
            raise BatchDeferred(f"{waiting} requests")
        state.delete(COMPACTING_FAILURES)
        state.delete(BATCH_WAITING)
    except BatchDeferred:
        # the call went into a batch (or waits for one): this tick changes nothing more, and a
        # due wake does not wait for the batch (nothing is lost: the next sleep goes on)
        state.set(BATCH_WAITING, True)
        report["waiting"] = "batch"
    except LLMError as err:
        brain.record_failure(err, now)
        state.set(SLEEP_ERRORS, (state.get(SLEEP_ERRORS) or 0) + 1)
        failures = (state.get(COMPACTING_FAILURES) or 0) + 1
        state.set(COMPACTING_FAILURES, failures)
        report["error"] = f"{err.kind}: {err}"
        if err.kind in ENTRY_FAULTS and asked:
            rested = journal.count_failure(asked, f"{err.kind}: {err}", MAX_ENTRY_FAILURES)
            if rested:
                report["entries_rested"] = rested
        if failures >= MAX_SLEEP_FAILURES:
            # a call every tick of the sleep for the same refusal: compacting rests until the
            # next sleep, the entries left unconsolidated (and the debt they carry with them)
            reason = f"after {failures} failed ticks in a row (last: {err.kind})"
            brain.lifecycle.rest_compacting(reason)
            report["rested"] = reason
    finally:
        brain.save_usage(usage)
        _update_progress(brain)
    return report


def _slices(entries: list[dict], size: int) -> list[list[dict]]:
    """The entries in slices of `size`, in order."""
    return [entries[start : start + size] for start in range(0, len(entries), size)]


def _audience_slices(entries: list[dict], size: int) -> list[list[dict]]:
    """The entries in slices of at most `size` that each share one audience, in order."""
    groups: dict[tuple | None, list[dict]] = {}
    for entry in entries:
        audience = entry.get("audience")
        groups.setdefault(tuple(audience) if audience is not None else None, []).append(entry)
    return [chunk for group in groups.values() for chunk in _slices(group, size)]


def _one_audience(entries: list[dict]) -> list[dict]:
    """The entries that share the first one's audience (a batch never mixes audiences)."""
    if not entries:
        return []
    audience = entries[0].get("audience")
    return [entry for entry in entries if entry.get("audience") == audience]


def _ask(
    brain: Brain, prompt: str, entries: list[dict], output_model, now, batch_round
) -> Generator:
    """One structured call over journal entries (a step of compacting: "scoring" or
    "facts"); its usage is recorded."""
    step = "scoring" if output_model is ImportanceScores else "facts"
    return telemetry.traced(
        telemetry.SLEEP_STEP_SPAN,
        _asked(brain, prompt, entries, output_model, now, batch_round),
        {telemetry.SLEEP_STEP: step, f"{telemetry.REPORT}.entries": len(entries)},
    )


def _asked(
    brain: Brain, prompt: str, entries: list[dict], output_model, now, batch_round
) -> Generator:
    request = entries_request(
        prompt, brain.model, brain.name, entries, brain.config.max_reply_tokens
    )
    result, replies = yield ask(brain, request, output_model, batch_round)
    for reply in replies:
        brain.record_reply(reply, now)
    return result


def _apply_scores(journal, entries: list[dict], result: ImportanceScores) -> int:
    scores = {score.entry_id: score.importance for score in result.scores}
    changed = []
    for entry in entries:
        if entry["id"] in scores:
            # a bookmark keeps the floor its salience gives: the assistant marked it to matter
            floor = BOOKMARK_IMPORTANCE.get(entry.get("salience"), 1)
            importance = max(scores[entry["id"]], floor)
            changed.append({**entry, "importance": importance, "scoring_method": "llm"})
        else:
            # not scored by the model: keep the score it has rather than ask again forever
            changed.append({**entry, "scoring_method": "heuristic_kept"})
    journal.update(changed)
    return sum(1 for entry in entries if entry["id"] in scores)


def _facts_by_entry(brain: Brain, batch: list[dict], extraction: FactExtraction) -> dict:
    entries = {entry["id"]: entry for entry in batch}
    facts: dict[str, list[str]] = {entry_id: [] for entry_id in entries}
    for item in extraction.entries:
        entry = entries.get(item.entry_id)
        if entry is None:
            continue
        for fact in clean_facts(item.facts, brain.names):
            # what someone said stays their statement, whatever the model wrote
            fact = attributed(fact, entry.get("heard_from"), entry.get("source_type"))
            if fact not in facts[item.entry_id]:
                facts[item.entry_id].append(fact)
    return facts


def _store(brain: Brain, batch, facts, vectors, now) -> dict[str, list[str]]:
    """Store each entry's memories, then mark the entries whose memories are all stored."""
    stored: dict[str, list[str]] = {}
    marks = []
    find_same = getattr(brain.long_term, "find_same", None)
    find_corroborated = getattr(brain.long_term, "find_corroborated", None)
    try:
        for entry in batch:
            ids = []
            for fact in facts.get(entry["id"], []):
                same = find_same(fact, entry.get("audience")) if find_same else None
                if same is not None:
                    # a fact already known: the entry rests on the memory that holds it
                    sources = [*same["source_entry_ids"], entry["id"]]
                    brain.long_term.update({**same, "source_entry_ids": sources})
                    ids.append(same["id"])
                    continue
                speaker = entry.get("heard_from")
                # corroboration counts people (their accounts), not characters
                voice = voice_of(entry)
                other = (
                    find_corroborated(
                        fact, speaker, entry.get("audience"), claim_content, voice=voice
                    )
                    if find_corroborated and entry.get("source_type") in CLAIMS
                    else None
                )
                if other is not None:
                    ids.append(_corroborate(brain, other, entry, speaker))
                    continue
                ids.append(
                    brain.long_term.add(
                        fact,
                        importance=entry["importance"],
                        # when it was learned, not when it was slept on: recency counts from it
                        now=from_iso(entry["created_at"]) or now,
                        source_entry_ids=[entry["id"]],
                        provenance={
                            "journal_entry": entry["id"],
                            "source_type": entry["source_type"],
                            "heard_from": entry.get("heard_from"),
                            "voice": voice,
                            "about": entry.get("about") or [],
                            "location": entry.get("location"),
                            "written_at": entry.get("created_at"),
                            "consolidated_at": to_iso(now),
                            # what was being said around it: it is found by those words too,
                            # once the entry itself is pruned
                            "talk": brain.journal.talk_around(entry),
                            # told by another assistant: its chain and decayed trust stay
                            **({"gossip": entry["gossip"]} if entry.get("gossip") else {}),
                        },
                        vector=vectors.get(fact),
                        audience=entry.get("audience"),
                    )
                )
            stored[entry["id"]] = ids
            marks.append({**entry, "consolidated": True, "memory_ids": ids})
    finally:
        # only entries whose memories were all stored are marked, even if a later one failed
        brain.journal.update(marks)
    return stored


def _corroborate(brain: Brain, memory: dict, entry: dict, speaker: str) -> str:
    """Two people (two voices: accounts, not characters), independently, said the same: the
    claim is corroborated. The memory now says it without attribution, names everyone who said
    it, and is trusted as corroborated."""
    provenance = dict(memory.get("provenance") or {})
    sources = sorted(set(provenance.get("sources") or [provenance.get("heard_from")]) | {speaker})
    provenance["sources"] = [source for source in sources if source]
    voices = set(provenance.get("voices") or [voice_of(provenance)]) | {voice_of(entry)}
    provenance["voices"] = sorted(voice for voice in voices if voice)
    # two voices said it: no longer one assistant's telling, with its chain
    provenance.pop("gossip", None)
    content = re.sub(r"^\W*[\w' -]{1,40}? says: ", "", memory["text"], count=1)
    brain.long_term.update(
        {
            **memory,
            "text": content[:1].upper() + content[1:],
            "corroborated": True,
            "relink": True,  # its words changed: the next link step searches it again
            "provenance": provenance,
            "source_entry_ids": [*memory["source_entry_ids"], entry["id"]],
        }
    )
    return memory["id"]


def _update_progress(brain: Brain) -> None:
    lifecycle = brain.lifecycle
    if lifecycle.phase != COMPACTING:
        return
    progress = lifecycle.progress()
    remaining = len(brain.journal.unconsolidated())
    total = max(progress.get("total_entries", 0), remaining)
    progress.update(total_entries=total, processed_entries=total - remaining)
    brain.state.set(PROGRESS, progress)
    if remaining == 0:
        lifecycle.finish_compacting()
