"""
The sleep tick: the work of the sleep phase the assistant is in.

Compacting, per tick:

1. score one batch of unconsolidated entries still scored by heuristic (one structured call);
2. consolidate one batch of scored entries: entries below `min_importance_to_consolidate` are
   marked skipped (no work to store); the rest go through fact extraction (one structured call),
   with embeddings when an embeddings model is configured; each entry's facts are stored as
   long-term memories, linked both ways, and only then is the entry marked consolidated;
3. update `consolidation_progress`; when nothing is left, the phase becomes dreaming.

Dreaming runs `DREAMING_STEPS` in order. The list is where later phases plug in (memory links,
entity profiles, reflection, pruning, context compaction); each step is
`step(brain, now) -> Generator | None`, like this module's own.

Like the awake turn, a tick is a generator yielding blocking work; nothing is lost when a call
fails (scores and consolidation marks are written only from results that arrived).

"""

from collections.abc import Callable, Generator
from datetime import datetime
from typing import Any

from ..brain import Brain
from ..context.compaction import sleep_compaction_step
from ..llm.client import LLMError
from ..memory.consolidation import (
    FactExtraction,
    ImportanceScores,
    EXTRACTION_PROMPT,
    SCORING_PROMPT,
    clean_facts,
    entries_request,
)
from ..lifecycle import COMPACTING, DREAMING
from ..state import PROGRESS, SLEEP_ERRORS

DreamingStep = Callable[[Any, datetime], Generator | None]
DREAMING_STEPS: list[DreamingStep] = [sleep_compaction_step]


def sleep_tick(brain: Brain, now: datetime) -> Generator | None:
    """The work for this sleep tick, or None when there is none."""
    phase = brain.lifecycle.phase
    if phase == COMPACTING:
        return compacting_step(brain, now)
    if phase == DREAMING:
        steps = [step(brain, now) for step in DREAMING_STEPS]
        steps = [step for step in steps if step is not None]
        return _chain(steps) if steps else None
    return None


def _chain(steps: list[Generator]) -> Generator:
    results = []
    for step in steps:
        results.append((yield from step))
    return results


def _pending(brain) -> list[dict]:
    return brain.journal.unconsolidated()


def compacting_step(brain: Brain, now: datetime) -> Generator:
    config = brain.config
    journal = brain.journal
    usage = brain.usage()
    report = {"scored": 0, "consolidated": 0, "skipped": 0, "memories": 0, "error": None}
    try:
        pending = _pending(brain)
        to_score = [e for e in pending if e["scoring_method"] == "heuristic"]
        to_score = to_score[: config.scoring_batch_size]
        if to_score:
            result = yield from _ask(brain, usage, SCORING_PROMPT, to_score, ImportanceScores)
            report["scored"] = _apply_scores(journal, to_score, result)
            pending = _pending(brain)

        scored = [e for e in pending if e["scoring_method"] != "heuristic"]
        minimum = config.min_importance_to_consolidate
        low = [e for e in scored if e["importance"] < minimum]
        if low:
            journal.entries.update(
                {e["seq"]: {**e, "skipped": "below min_importance_to_consolidate"} for e in low}
            )
            report["skipped"] = len(low)
        batch = [e for e in scored if e["importance"] >= minimum][: config.scoring_batch_size]
        if batch:
            extraction = yield from _ask(brain, usage, EXTRACTION_PROMPT, batch, FactExtraction)
            facts = _facts_by_entry(brain, batch, extraction)
            vectors: dict[str, list[float]] = {}
            texts = [fact for entry_facts in facts.values() for fact in entry_facts]
            if texts and brain.embedding_model:
                embedded = yield brain.embed(texts)
                vectors = dict(zip(texts, embedded))
            stored = _store(brain, batch, facts, vectors, now)
            report["consolidated"] = len(stored)
            report["memories"] = sum(len(ids) for ids in stored.values())
    except LLMError as err:
        usage.record_error(err.kind)
        brain.state.set(SLEEP_ERRORS, (brain.state.get(SLEEP_ERRORS) or 0) + 1)
        report["error"] = f"{err.kind}: {err}"
    finally:
        brain.save_usage(usage)
        _update_progress(brain)
    return report


def _ask(brain: Brain, usage, prompt: str, entries: list[dict], output_model) -> Generator:
    """One structured call over journal entries; its usage is recorded."""
    request = entries_request(
        prompt, brain.model, brain.name, entries, brain.config.max_reply_tokens
    )
    result, replies = yield brain.structured(request, output_model)
    for reply in replies:
        usage.record_reply(reply)
    return result


def _apply_scores(journal, entries: list[dict], result: ImportanceScores) -> int:
    scores = {score.entry_id: score.importance for score in result.scores}
    changes = {}
    for entry in entries:
        if entry["id"] in scores:
            changes[entry["seq"]] = {
                **entry,
                "importance": scores[entry["id"]],
                "scoring_method": "llm",
            }
        else:
            # not scored by the model: keep the heuristic rather than ask again forever
            changes[entry["seq"]] = {**entry, "scoring_method": "heuristic_kept"}
    journal.entries.update(changes)
    return sum(1 for entry in entries if entry["id"] in scores)


def _facts_by_entry(brain, batch: list[dict], extraction: FactExtraction) -> dict[str, list[str]]:
    wanted = {entry["id"] for entry in batch}
    names = [brain.name, *brain.aliases]
    facts = {entry_id: [] for entry_id in wanted}
    for item in extraction.entries:
        if item.entry_id in wanted:
            facts[item.entry_id] += clean_facts(item.facts, names)
    return facts


def _store(brain: Brain, batch, facts, vectors, now) -> dict[str, list[str]]:
    """Store each entry's memories, then mark the entries whose memories are all stored."""
    stored: dict[str, list[str]] = {}
    marks = {}
    try:
        for entry in batch:
            ids = [
                brain.long_term.add(
                    fact,
                    importance=entry["importance"],
                    now=now,
                    source_entry_ids=[entry["id"]],
                    provenance={
                        "journal_entry": entry["id"],
                        "source_type": entry["source_type"],
                        "heard_from": entry.get("heard_from"),
                        "location": entry.get("location"),
                        "written_at": entry.get("created_at"),
                    },
                    vector=vectors.get(fact),
                )
                for fact in facts.get(entry["id"], [])
            ]
            stored[entry["id"]] = ids
            marks[entry["seq"]] = {**entry, "consolidated": True, "memory_ids": ids}
    finally:
        # only entries whose memories were all stored are marked, even if a later one failed
        if marks:
            brain.journal.entries.update(marks)
    return stored


def _update_progress(brain) -> None:
    lifecycle = brain.lifecycle
    if lifecycle.phase != COMPACTING:
        return
    progress = lifecycle.progress()
    remaining = len(_pending(brain))
    total = max(progress.get("total_entries", 0), remaining)
    progress.update(total_entries=total, processed_entries=total - remaining)
    brain.state.set(PROGRESS, progress)
    if remaining == 0:
        lifecycle.finish_compacting()
