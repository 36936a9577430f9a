"""
The sleep tick: the work of the sleep phase the assistant is in.

- Compacting (`sleep.consolidating`): the journal scored and distilled into long-term memory, a
  batch per tick, while a wake is held back.
- Dreaming (`sleep.dreaming`): links, people, relationships, orphaned links, reflection, the
  daily digest, core memory, pruning, housekeeping (retention), working memory, context
  compaction, within a budget of model calls per tick, until all is done; after that a sleep
  tick costs nothing.
- While dreaming, something heard that may need it awake (talk naming someone present in
  light sleep; a whisper, its name or an instruction in deep sleep; a reminder coming up) is
  put to it in a sleep turn, whose tools are `wake_up` and `stay_asleep` (`sleep.triage`);
  that comes before the dreaming work of the tick. `sleep_tick(..., prompt=True)` is the sleep
  turn alone, for a word heard between two ticks.

While a token budget is spent (`ai_assistant.budget`), a sleep tick makes no model call; the
wake conditions never depend on it (`Lifecycle.apply_wake_conditions`). With
`batch_enabled`, the structured calls of compacting and dreaming go through the provider's Batch
API (`sleep.batch`).

Like the awake turn, a tick is a generator yielding blocking work; nothing is lost when a call
fails.

"""

from collections.abc import Generator
from datetime import datetime

from .. import telemetry
from ..agent.brain import Brain
from ..context.compaction import needs_sleep_compaction
from ..debt import SleepDebt
from ..lifecycle import COMPACTING, DREAMING
from .batch import BatchRound, batch_mode, in_batches
from .consolidating import compacting_step
from .digest import finished_days
from .dreaming import DREAMING_STEPS, dreaming_tick
from .triage import sleep_turn
from ..memory.sleep_history import SleepHistory
from ..state import DREAMING_PROGRESS

__all__ = ["DREAMING_STEPS", "sleep_tick"]


def sleep_tick(brain: Brain, now: datetime, prompt: bool = False) -> Generator | None:
    """The work for this sleep tick, or None when there is none.

    Args:
        brain (Brain): The sleeping assistant.
        now (datetime): The time.
        prompt (bool, optional): Only the sleep turn, if one is due: a word was heard between
            two ticks (the phase's own work waits for the tick).

    Returns:
        Generator or None: Work yielding blocking model calls, returning a report.

    """
    if brain.budget_spent(now):
        return None  # no model calls until the next day or hour; nothing is lost
    history = SleepHistory(brain.state)
    phase = brain.lifecycle.phase
    if phase == COMPACTING and not prompt:
        batch_round = _batch_round(brain, now)
        work = _batched(batch_round, compacting_step(brain, now, batch_round))
        return _tallied(history, _phase_traced(brain, COMPACTING, work))
    if phase == DREAMING:
        # what was heard comes first, quiet sleep or not: it is about now, not the day
        turn = sleep_turn(brain, now)
        if turn is not None:
            turn = telemetry.traced(
                telemetry.SLEEP_STEP_SPAN,
                turn,
                {telemetry.SLEEP_STEP: "sleep turn"},
                lambda report: telemetry.counts(report, telemetry.REPORT),
            )
            return _tallied(history, _phase_traced(brain, DREAMING, turn))
        if prompt:
            return None
        record = history.current()
        if record and record.get("quiet"):
            _skip_model_steps(brain, now)
        batch_round = _batch_round(brain, now)
        work = dreaming_tick(brain, now, batch_round)
        if work is None:
            return None
        return _tallied(history, _phase_traced(brain, DREAMING, _batched(batch_round, work)))
    return None


def _batch_round(brain: Brain, now: datetime) -> BatchRound | None:
    """The tick's batch round with `batch_enabled` (the steps are given it), else None."""
    return BatchRound(brain, now) if batch_mode(brain.config, brain.state, now) else None


def _batched(batch_round: BatchRound | None, work: Generator) -> Generator:
    """The work, within its batch round (polled before, submitted after) when it has one."""
    return work if batch_round is None else in_batches(batch_round, work)


def _phase_traced(brain: Brain, phase: str, work: Generator) -> Generator:
    """The tick's work in an `ai_assistant.sleep.phase` span (when telemetry is on)."""

    def describe(report) -> dict:
        debt = SleepDebt(brain.state).points
        telemetry.note_debt(brain.name, debt)
        steps = report if isinstance(report, list) else [report]
        attributes = {
            "ai_assistant.sleep.steps": len(steps),
            "ai_assistant.sleep.errors": sum(
                1 for step in steps if isinstance(step, dict) and step.get("error")
            ),
            "ai_assistant.sleep.debt": debt,
        }
        if isinstance(report, dict):
            attributes.update(telemetry.counts(report, telemetry.REPORT))
        return attributes

    return telemetry.traced(
        telemetry.SLEEP_PHASE_SPAN,
        work,
        {telemetry.ASSISTANT: brain.name, "ai_assistant.sleep.phase": phase},
        describe,
    )


# the dreaming steps that may call the model; a quiet day's sleep skips them
MODEL_STEPS = ("people", "relationships", "reflection", "digest", "core memory", "context")
QUIET = "nothing new since the last sleep"


def _skip_model_steps(brain: Brain, now: datetime) -> None:
    """On a quiet day, mark the steps that call the model done: with nothing new to sleep on,
    a call could only spend tokens on what the last sleep already did. (A sleep turn about
    something heard is not skipped: the caller makes it first.)

    A game day that ended since, with entries not yet digested, is something new: the digest
    step still runs for it (and calls the model only for such a day). So is a day of talk: the
    context step still compacts a history that fills `compact_sleep_threshold` of the
    context, whatever the journal holds."""
    progress = dict(brain.state.get(DREAMING_PROGRESS) or {})
    done = progress.setdefault("done", [])
    if all(name in done for name in MODEL_STEPS):
        return
    day_waits = brain.config.digest_enabled and "digest" not in done and _a_day_waits(brain, now)
    # a day of talk is something new too: a history that fills the context is compacted
    talk_waits = "context" not in done and needs_sleep_compaction(brain)
    waiting = {"digest": day_waits, "context": talk_waits}
    for name in MODEL_STEPS:
        if name not in done and not waiting.get(name):
            done.append(name)
            progress.setdefault("reports", {})[name] = {"skipped": QUIET}
    brain.state.set(DREAMING_PROGRESS, progress)


def _a_day_waits(brain: Brain, now: datetime) -> bool:
    return any(entries for _, entries, _ in finished_days(brain, now))


def _tallied(history: SleepHistory, work: Generator) -> Generator:
    """The work, its report added to the sleep's record once it returns."""
    report = yield from work
    history.tally(report)
    return report
