"""
The dreaming phase of sleep: memories linked, people profiled, insights drawn, the old let go.

The steps, in order (each a `DreamStep`: a name and a function returning the step's work):

1. `links`: recent important long-term memories and reflections are joined, both ways, to the
   memories most like them: by words (or embeddings), by time, by the people they share. Only
   what is new since the last sleep (or whose words changed) is searched: how far it has gone
   is kept with the links (`MemoryLinks.cursor`), not reset by a new sleep. No model call.
2. `people`: a person with at least `entity_min_observations` new observations gets them
   synthesised by the model into typed attributes (preference, trait, relationship, fact), each
   citing the observations it rests on; the observations are marked consolidated (or pruned,
   with `entity_prune_consolidated`). Several people share one call, never across audiences.
   `relationships`: familiarity, warmth and trust with each person met since the last sleep
   (`sleep.relationships`): familiarity counted in code, warmth and trust by one structured
   call per `relationship_batch_size` people (never across audiences), each change citing
   the day's evidence, bounded by `relationship_max_step`, never resting on a person's own
   words about the relationship.
3. `orphans`: links to memories that no longer exist are removed.
4. `reflection`: once the importance of new journal entries adds up to `reflection_threshold`,
   the model asks itself a few questions about the recent important entries and answers them,
   citing entry ids; each insight becomes a journal entry of importance 8-9 marked as a
   reflection (never consolidated again as raw experience), and the sum resets.
5. `digest`: each finished game day not yet digested gets its daily digest (a summary, the
   people met, open threads, new facts), one call per day and audience, kept where recall
   finds it (`sleep.digest`, `memory.digests`).
6. `core memory`: the public memories and reflections of importance at least
   `core_memory_min_importance` new since the last time are folded into the public core memory
   notes by one structured call that keeps, updates or drops them (at most
   `core_memory_max_entries`, within `memory_block_tokens`); the new block replaces the old in
   one write. Private and builder-pinned notes are left as they are. No call when nothing is
   new and the block is within its limits.
7. `pruning`: consolidated entries of importance at most `prune_max_importance`, older than
   `prune_age_days`, are emptied, with their links; never one not yet consolidated, never a
   reflection or a summary.
8. `housekeeping`: digests, consolidated raw entries, the compaction archive and sleep records
   older than their retention ages are removed; never an entry not yet consolidated or
   digested, never a reflection (`sleep.housekeeping`). No model call.
9. `working memory`: conversations quiet for `working_memory_stale_minutes` are let go.
10. `context`: journaling before compaction, then compaction, when the context is full enough.
11. `embeddings`: with an embeddings model, journal entries without a vector are embedded,
    `embedding_batch_size` a call (`sleep.embedding`); last, so a first night over a long
    journal delays nothing else.

Each sleep tick runs steps in order within a budget of model calls
(`dream_max_calls_per_tick`); a step that has more to do continues at the next tick. What is
done is kept in `dreaming_progress` (so a reload resumes where it stopped, and `/status` shows
it). A step that fails, by a model error or by an error of its own (`step_error`, its traceback
in the report for the log), is recorded, the others go on, and it is tried again at the next
tick, at most `MAX_STEP_FAILURES` times a sleep; the wake is never held by it.
In batch mode (`sleep.batch`) a step whose call waits for a batch is neither done nor failed:
the others go on, and it runs again once the answer is in.
Everything drawn from several memories keeps the narrowest audience of what it rests on, and
what it inherits from them (`memory.provenance.derived`): an attribute or an insight drawn from
what people told the assistant says so ("Carol says: ..."), whatever the model wrote, and is
trusted no more than the least trusted of what it rests on.

"""

import math
import traceback
from collections.abc import Generator
from types import GeneratorType
from datetime import datetime, timedelta

from .. import telemetry
from ..agent.brain import Brain
from ..context.compaction import sleep_compaction_step
from ..llm.chat import LLMError
from ..memory.audience import narrowest
from . import core_memory
from .prompts import (
    ENTITY_PROMPT,
    MAX_ATTRIBUTE_CHARS,
    MAX_INSIGHT_CHARS,
    REFLECTION_PROMPT,
    EntitySynthesis,
    Reflection,
    attributed_to,
    render_entries,
    render_people,
    sleep_request,
)
from ..memory.journal import EXPERIENCE, REFLECTION_KIND
from ..memory.lexical import terms
from ..memory.provenance import REFLECTION, derived
from ..memory.working import WorkingMemory
from ..state import DREAMING_PROGRESS
from .batch import BatchDeferred, BatchRound
from .embedding import embed_entries
from .steps import Budget, DreamStep, StepResult, StepWork  # noqa: F401 (their old home)
from .digest import daily_digests
from .housekeeping import keep_house
from .relationships import update_relationships

# failures of one dreaming step in one sleep before it rests until the next sleep
MAX_STEP_FAILURES = 3
# what a step that raised something other than a model error is counted as
STEP_ERROR = "step_error"
# the end of such an error's traceback kept in its report (the shell logs it)
MAX_DETAIL_CHARS = 4000
# in `dreaming_progress`: the audiences reflected on in this sleep (`reflect`)
REFLECTED = "reflected"


# ---- 1. links -------------------------------------------------------------------------------


def link_memories(brain: Brain, now: datetime, budget: Budget) -> StepResult:
    """Join recent important memories to their closest others (see the module doc).

    Args:
        brain (Brain): The sleeping assistant's brain (config, memories, state).
        now (datetime): The current time.
        budget (Budget): The model calls this tick may still make.
            Unused: this step makes no model call.

    Returns:
        StepResult: Done, with how many memories were linked and how many links added.

    """
    config = brain.config
    # kept with the links, from sleep to sleep: a later sleep searches only the memories new
    # since, or whose words changed (`relink`: a claim corroborated)
    cursor = brain.links.cursor
    memories = brain.long_term.all() if hasattr(brain.long_term, "all") else []
    recent = [m for m in memories if int(m["id"][1:]) >= cursor or m.get("relink")]
    recent += [
        e
        for e in brain.journal.recent(200)
        if brain.journal.is_reflection(e) and not e.get("linked")
    ]
    chosen = [
        item for item in recent if (item.get("importance") or 0) >= config.link_min_importance
    ]
    chosen = chosen[-config.link_recent_memories :]
    pairs = []
    for item in chosen:
        pairs += _links_of(brain, item, now)
    added = brain.links.link(pairs, config.link_max_per_memory)
    brain.links.move_cursor(brain.long_term.count())
    for memory in recent:
        if memory.get("relink"):
            brain.long_term.update({key: value for key, value in memory.items() if key != "relink"})
    reflections = [e for e in recent if brain.journal.is_reflection(e)]
    brain.journal.update([{**e, "linked": True} for e in reflections])
    return StepResult(True, {"linked": len(chosen), "links": added})


def _links_of(brain: Brain, item: dict, now: datetime) -> list[tuple[str, str, float]]:
    index = brain.index
    doc = index.doc(item["id"])
    if doc is None:
        return []
    config = brain.config
    hits = index.search(
        doc.text,
        now=now,
        served=None,
        people=list(doc.people),
        limit=8,
        weights=brain.recall_weights(),
        time_factor=brain.time_factor,
        candidates=20,
        neighbours=0,
        kinds={"memory", "reflection"},
    )
    stemmer = brain.config.recall_stemmer
    own_terms = set(terms(doc.text, stemmer))
    pairs = []
    for hit in hits:
        if hit.id == doc.id or not own_terms:
            continue
        other_terms = set(terms(index.doc(hit.id).text, stemmer))
        other = index.doc(hit.id)
        words = len(own_terms & other_terms) / len(own_terms | other_terms)
        days = abs((doc.time - other.time).total_seconds()) / 86400
        people = doc.people | other.people
        shared = len(doc.people & other.people) / len(people) if people else 0.0
        strength = 0.6 * words + 0.2 * math.exp(-days / 7) + 0.2 * shared
        if strength >= config.link_min_strength:
            pairs.append((doc.id, hit.id, strength))
    return pairs


# ---- 2. people ------------------------------------------------------------------------------


def consolidate_people(brain: Brain, now: datetime, budget: Budget) -> Generator:
    """Synthesise new observations into attributes, a batch of people per call.

    Args:
        brain (Brain): The sleeping assistant's brain (config, memories, state).
        now (datetime): The current time.
        budget (Budget): The model calls this tick may still make.

    Returns:
        Generator: Work that yields model calls (`brain.structured` requests) and returns a
            `StepResult` with the calls made, people done and attributes kept; not done when
            the budget ran out first.

    """
    config = brain.config
    trusts = config.trusts()
    groups = _people_to_consolidate(brain)
    calls = people = attributes = 0
    while groups:
        audience = groups[0][2]
        batch = [group for group in groups if group[2] == audience][: config.entity_batch_size]
        if not budget.take():
            return StepResult(False, {"calls": calls, "people": people, "attributes": attributes})
        labelled = [(f"p{i}", profile["name"], obs) for i, (profile, obs, _) in enumerate(batch)]
        request = sleep_request(
            ENTITY_PROMPT.format(name=brain.name),
            render_people(labelled),
            brain.model,
            config.max_reply_tokens,
        )
        result, replies = yield budget.structured(brain, request, EntitySynthesis)
        _record(brain, replies, now)
        calls += 1
        by_id = {item.entity_id: item for item in result.entities}
        for (batch_id, _, observations), (profile, _, group_audience) in zip(labelled, batch):
            known = {o["id"]: o for o in observations}
            kept = []
            for attribute in by_id.get(batch_id).attributes if batch_id in by_id else []:
                cites = [cite for cite in attribute.cites if cite in known]
                if not cites:
                    continue  # nothing it rests on: not kept
                # what someone told it stays theirs, whatever the model wrote, and is
                # trusted no more than their claim
                inherited = derived([known[c] for c in cites], trusts)
                kept.append(
                    {
                        "type": attribute.type,
                        "value": attributed_to(
                            attribute.value, inherited["claims_of"], MAX_ATTRIBUTE_CHARS
                        ),
                        "cites": cites,
                        "audience": narrowest(known[c].get("audience") for c in cites),
                        **{key: value for key, value in inherited.items() if value},
                    }
                )
            brain.entities.add_attributes(
                profile["key"],
                kept,
                list(known),
                now,
                prune=config.entity_prune_consolidated,
            )
            people += 1
            attributes += len(kept)
        groups = [group for group in groups if group not in batch]
    return StepResult(True, {"calls": calls, "people": people, "attributes": attributes})


def _people_to_consolidate(brain: Brain) -> list[tuple[dict, list[dict], list | None]]:
    """(profile, new observations, their audience) for everyone with enough new ones, one
    entry per audience (what was learned in private is consolidated apart)."""
    minimum = brain.config.entity_min_observations
    groups = []
    for profile in brain.entities.profiles():
        fresh = [o for o in profile.get("observations", []) if not o.get("consolidated")]
        if len(fresh) < minimum:
            continue
        by_audience: dict[tuple, list[dict]] = {}
        for observation in fresh:
            audience = observation.get("audience")
            by_audience.setdefault(tuple(audience) if audience is not None else None, []).append(
                observation
            )
        for audience, observations in by_audience.items():
            if len(observations) >= minimum:
                groups.append((profile, observations, list(audience) if audience else audience))
    # public knowledge first, then each private audience
    return sorted(groups, key=lambda group: group[2] is not None)


# ---- 3. orphans -----------------------------------------------------------------------------


def prune_orphan_links(brain: Brain, now: datetime, budget: Budget) -> StepResult:
    """Remove links to memories that no longer exist.

    Args:
        brain (Brain): The sleeping assistant's brain (config, memories, state).
        now (datetime): The current time.
        budget (Budget): The model calls this tick may still make.
            Unused: this step makes no model call.

    Returns:
        StepResult: Done, with how many links were removed.

    """

    def exists(memory_id: str) -> bool:
        if memory_id.startswith("m"):
            return brain.long_term.get(memory_id) is not None
        entry = brain.journal.get(memory_id)
        return entry is not None and not entry.get("pruned")

    return StepResult(True, {"removed": brain.links.prune(exists)})


# ---- 4. reflection --------------------------------------------------------------------------


def reflect(brain: Brain, now: datetime, budget: Budget) -> Generator:
    """Draw insights from recent important entries once enough importance has gathered.

    Args:
        brain (Brain): The sleeping assistant's brain (config, memories, state).
        now (datetime): The current time.
        budget (Budget): The model calls this tick may still make.

    Returns:
        Generator: Work that yields model calls (`brain.structured` requests) and returns a
            `StepResult` with the calls made and insights written; not done when the budget
            ran out first. Done at once when below `reflection_threshold`.

    """
    config = brain.config
    journal = brain.journal
    if journal.importance_since_reflection < config.reflection_threshold:
        return StepResult(True, {"skipped": "below reflection_threshold"})
    recent = [
        entry
        for entry in journal.recent(max(200, config.reflection_entries * 5))
        if entry.get("kind", EXPERIENCE) == EXPERIENCE and not entry.get("pruned")
    ]
    groups: dict[tuple | None, list[dict]] = {}
    for entry in recent:
        audience = entry.get("audience")
        groups.setdefault(tuple(audience) if audience is not None else None, []).append(entry)
    insights = 0
    calls = 0
    # the audiences already reflected on in this sleep: a later tick (the budget ran out, a
    # call failed, a batch is awaited) goes on with the others and never writes one twice
    done = set(_progress(brain).get(REFLECTED, []))
    deferred = None
    # public entries first; a private audience reflects apart, on its own entries
    for audience in sorted(groups, key=lambda key: key is not None):
        key = "public" if audience is None else ",".join(audience)
        entries = sorted(groups[audience], key=lambda e: -e["importance"])
        entries = entries[: config.reflection_entries]
        if len(entries) < 3 or key in done:
            continue
        if not budget.take():
            return StepResult(False, {"calls": calls, "insights": insights})
        request = sleep_request(
            REFLECTION_PROMPT.format(name=brain.name, questions=config.reflection_questions),
            render_entries(sorted(entries, key=lambda e: e["seq"])),
            brain.model,
            config.max_reply_tokens,
        )
        try:
            result, replies = yield budget.structured(brain, request, Reflection)
        except BatchDeferred as waiting:
            deferred = waiting  # ask for the other audiences too: they join the same batch
            continue
        _record(brain, replies, now)
        calls += 1
        by_id = {entry["id"]: entry for entry in entries}
        for item in result.insights[: config.reflection_questions]:
            cites = [cite for cite in item.cites if cite in by_id]
            if not cites:
                continue
            importance = min(9, max(8, max(by_id[c]["importance"] for c in cites)))
            # drawn from what people told it: it says so, and is trusted no more than that
            inherited = derived([by_id[c] for c in cites], config.trusts())
            journal.add(
                attributed_to(item.insight, inherited["claims_of"], MAX_INSIGHT_CHARS),
                author=brain.name,
                now=now,
                location=brain.location,
                source_type=REFLECTION,
                importance=importance,
                scoring_method="llm",
                audience=narrowest(by_id[c].get("audience") for c in cites),
                about=sorted({key for c in cites for key in by_id[c].get("about") or []}),
                kind=REFLECTION_KIND,
                cites=cites,
                tags=["reflection"],
                derived=inherited,
            )
            insights += 1
        done.add(key)
        progress = _progress(brain)
        progress[REFLECTED] = sorted(done)
        _save_progress(brain, progress)
    if deferred is not None:
        raise deferred
    journal.reset_reflection_counter()
    return StepResult(True, {"calls": calls, "insights": insights})


# ---- 5. digest ------------------------------------------------------------------------------


def digest_days(brain: Brain, now: datetime, budget: Budget) -> Generator:
    """Digest each finished game day not yet digested (see `sleep.digest`).

    Args:
        brain (Brain): The sleeping assistant's brain.
        now (datetime): The current time.
        budget (Budget): The model calls this tick may still make; one per day and audience.

    Returns:
        Generator: Work that yields model calls and returns a `StepResult` with the calls
            made, digests stored, days digested and days left; not done when the budget ran
            out first.

    """
    done, report = yield from daily_digests(brain, now, budget.take, budget.batch_round)
    return StepResult(done, report)


# ---- 6. core memory -------------------------------------------------------------------------


def consolidate_core(brain: Brain, now: datetime, budget: Budget) -> StepResult | Generator:
    """Fold the day's candidates into the core memory by one structured call
    (`sleep.core_memory`); no call when nothing is new and the block is within its
    limits.

    Args:
        brain (Brain): The sleeping assistant's brain.
        now (datetime): The current time.
        budget (Budget): The model calls this tick may still make; this step takes one.

    Returns:
        StepResult or Generator: A done `StepResult` when there is nothing to do; a not-done one
            when the budget is spent; else work that yields the call and returns a `StepResult`
            with the candidates and the notes kept, updated, added and dropped.

    Raises:
        LLMError: From the returned work, when the call fails or its reply breaks a rule
            (nothing is changed then).

    """
    plan = core_memory.plan_consolidation(brain, now)
    if plan.request is None:
        core_memory.skip(brain, plan)
        return StepResult(True, {"skipped": plan.skipped})
    if not budget.take():
        return StepResult(False, {})
    return _core_consolidated(brain, plan, now, budget)


def _core_consolidated(
    brain: Brain, plan: core_memory.CorePlan, now: datetime, budget: Budget
) -> Generator:
    result, replies = yield budget.structured(brain, plan.request, core_memory.ConsolidatedCore)
    _record(brain, replies, now)
    counts = core_memory.apply_consolidation(brain, plan, result, now)
    return StepResult(True, {"calls": 1, "candidates": len(plan.candidates), **counts})


# ---- 7. pruning -----------------------------------------------------------------------------


def prune_episodes(brain: Brain, now: datetime, budget: Budget) -> StepResult:
    """Empty old unimportant entries that consolidation (and the daily digest) is done with.

    Args:
        brain (Brain): The sleeping assistant's brain (config, memories, state).
        now (datetime): The current time.
        budget (Budget): The model calls this tick may still make.
            Unused: this step makes no model call.

    Returns:
        StepResult: Done, with how many entries were emptied and links removed.

    """
    config = brain.config
    journal = brain.journal
    cutoff = (now - timedelta(days=config.prune_age_days)).isoformat()
    # while digests are made, an entry waits until its day is digested (the digest reads it)
    digested = brain.digests.next_seq if config.digest_enabled else len(journal)
    doomed = [
        entry
        for entry in journal.entries.slice(0, digested)
        if not entry.get("pruned")
        and entry["importance"] <= config.prune_max_importance
        and entry["created_at"] < cutoff
        and (entry.get("consolidated") or entry.get("skipped"))
        and not journal.is_reflection(entry)
        and not journal.is_synthesis(entry)
    ]
    journal.update(
        [{**entry, "content": "", "pruned": now.isoformat(), "tags": []} for entry in doomed]
    )
    removed = brain.links.remove([entry["id"] for entry in doomed])
    return StepResult(True, {"pruned": len(doomed), "links_removed": removed})


# ---- 8. housekeeping ------------------------------------------------------------------------


def housekeeping(brain: Brain, now: datetime, budget: Budget) -> StepResult:
    """Remove what is older than its retention age (see `sleep.housekeeping`).

    Args:
        brain (Brain): The sleeping assistant's brain.
        now (datetime): The current time.
        budget (Budget): The model calls this tick may still make. Unused: this step makes no
            model call.

    Returns:
        StepResult: Done, with how many of each were removed and their sum ("removed").

    """
    return StepResult(True, keep_house(brain, now))


# ---- 9. working memory ----------------------------------------------------------------------


def clear_stale_conversations(brain: Brain, now: datetime, budget: Budget) -> StepResult:
    """Let go of conversations quiet for `working_memory_stale_minutes`.

    Args:
        brain (Brain): The sleeping assistant's brain.
        now (datetime): The current time.
        budget (Budget): The model calls this tick may still make. Unused: this step makes no
            model call.

    Returns:
        StepResult: Done, with how many conversations were cleared.

    """
    cleared = WorkingMemory(brain.state).clear_stale(now, brain.config.working_memory_stale_minutes)
    return StepResult(True, {"cleared": cleared})


# ---- 10. context ---------------------------------------------------------------------------


def compact_context(brain: Brain, now: datetime, budget: Budget) -> StepResult | Generator:
    """Journaling before compaction, then compaction, when the context is full enough. It
    runs as one unit (its calls are bounded by its own limits) once the budget allows one.

    Args:
        brain (Brain): The sleeping assistant's brain.
        now (datetime): The current time.
        budget (Budget): The model calls this tick may still make; this step takes one.

    Returns:
        StepResult or Generator: A done `StepResult` when the context is below
            `compact_sleep_threshold`; a not-done one when the budget is spent; else work that
            yields model calls and returns a `StepResult` with how many messages were
            compacted.

    Raises:
        LLMError: From the returned work, when compaction reports an error.

    """
    work = sleep_compaction_step(brain, now)
    if work is None:
        return StepResult(True, {"skipped": "context below compact_sleep_threshold"})
    if not budget.take():
        return StepResult(False, {})
    return _compacted(work)


def _compacted(work: Generator) -> Generator:
    report = yield from work
    error = report["compaction"].get("error")
    if error:
        raise LLMError("other", error)
    return StepResult(True, {"compacted": report["compaction"].get("compacted", 0)})


DREAMING_STEPS: list[DreamStep] = [
    DreamStep("links", link_memories),
    DreamStep("people", consolidate_people),
    DreamStep("relationships", update_relationships),
    DreamStep("orphans", prune_orphan_links),
    DreamStep("reflection", reflect),
    DreamStep("digest", digest_days),
    DreamStep("core memory", consolidate_core, after=("reflection",)),
    DreamStep("pruning", prune_episodes),
    DreamStep("housekeeping", housekeeping),
    DreamStep("working memory", clear_stale_conversations),
    DreamStep("context", compact_context),
    DreamStep("embeddings", embed_entries),
]


def dreaming_tick(
    brain: Brain, now: datetime, batch_round: BatchRound | None = None
) -> Generator | None:
    """This tick's dreaming work, or None when every step is done for this sleep.

    The work runs the steps not yet done, in order, within `dream_max_calls_per_tick` model
    calls, and saves each step's report (or error) in `dreaming_progress`. A step that fails
    (an `LLMError`, or any error but a database error) is recorded and tried again next tick;
    the others go on.

    Args:
        brain (Brain): The sleeping assistant's brain.
        now (datetime): The current time.
        batch_round (BatchRound, optional): The tick's batch round in batch mode
            (`sleep.batch`): the steps' structured calls go through it (it rides on their
            budget).

    Returns:
        Generator or None: Work that yields model calls and returns a list of step reports
            (dicts with the step name), or None when there is nothing left to do.

    """
    progress = _progress(brain)
    if all(step.name in progress.get("done", []) for step in DREAMING_STEPS):
        return None
    return _dream(brain, now, batch_round)


def _dream(brain: Brain, now: datetime, batch_round: BatchRound | None) -> Generator:
    budget = Budget(brain.config.dream_max_calls_per_tick, batch_round)
    reports = []
    waiting: set[str] = set()
    for step in DREAMING_STEPS:
        progress = _progress(brain)
        if step.name in progress.get("done", []):
            continue
        if waiting.intersection(step.after):
            waiting.add(step.name)
            reports.append({"step": step.name, "waiting": "batch"})
            continue
        try:
            result = yield from telemetry.traced(
                telemetry.SLEEP_STEP_SPAN,
                _run_step(step, brain, now, budget),
                {telemetry.SLEEP_STEP: step.name},
                _step_attributes,
            )
        except BatchDeferred:
            # its call waits for a batch: not done, not an error; the others go on (their
            # calls join the same batch), but not those that read what it will bring
            waiting.add(step.name)
            reports.append({"step": step.name, "waiting": "batch"})
            continue
        except LLMError as err:
            brain.record_failure(err, now)
            brain.save_usage()
            reports.append(_failed(brain, step, f"{err.kind}: {err}"))
            continue  # the others go on; this one is tried again next tick
        except brain.registry.propagate:
            raise  # a database error: the tick's writes cannot stand (the shell rolls back)
        except Exception as err:  # noqa: BLE001 - a step's bug must not keep it asleep
            # not the model's doing: a step's own fault (a bad record, a bug) is recorded
            # like a failed call, with where it happened, and the others and the wake go on
            report = _failed(brain, step, f"{STEP_ERROR}: {type(err).__name__}: {err}")
            report["detail"] = "".join(traceback.format_exception(err))[-MAX_DETAIL_CHARS:]
            reports.append(report)
            continue
        progress = _progress(brain)
        progress.setdefault("reports", {})[step.name] = result.report
        progress.setdefault("errors", {}).pop(step.name, None)
        if result.done:
            progress.setdefault("done", []).append(step.name)
        _save_progress(brain, progress)
        reports.append({"step": step.name, **result.report})
        if not result.done:
            break  # out of budget: the next tick goes on from here
    return reports


def _failed(brain: Brain, step: DreamStep, error: str) -> dict:
    """Record that a step failed this tick; the report of it. After `MAX_STEP_FAILURES` in a
    sleep it rests until the next sleep."""
    progress = _progress(brain)
    progress.setdefault("errors", {})[step.name] = error[:300]
    failures = progress.setdefault("failures", {})
    failures[step.name] = failures.get(step.name, 0) + 1
    report = {"step": step.name, "error": error[:300]}
    if failures[step.name] >= MAX_STEP_FAILURES:
        # a reply that keeps breaking a rule (or a step that keeps raising) would cost every
        # tick of the sleep: the step rests until the next sleep, what it would have changed
        # untouched
        progress.setdefault("done", []).append(step.name)
        report["gave_up"] = f"after {failures[step.name]} failures; tried next sleep"
    _save_progress(brain, progress)
    return report


def _run_step(step: DreamStep, brain: Brain, now: datetime, budget: Budget) -> Generator:
    result = step.run(brain, now, budget)
    if isinstance(result, GeneratorType):
        result = yield from result
    return result


def _step_attributes(result: StepResult) -> dict:
    return {
        "ai_assistant.sleep.step_done": result.done,
        **telemetry.counts(result.report, telemetry.REPORT),
    }


def _progress(brain: Brain) -> dict:
    return dict(brain.state.get(DREAMING_PROGRESS) or {})


def _save_progress(brain: Brain, progress: dict) -> None:
    brain.state.set(DREAMING_PROGRESS, progress)


def _record(brain: Brain, replies, now: datetime) -> None:
    for reply in replies:
        brain.record_reply(reply, now)
    brain.save_usage()
