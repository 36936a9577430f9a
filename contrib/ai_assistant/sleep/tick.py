"""
The sleep tick: the work of the sleep phase the assistant is in.

- Compacting (`sleep.compacting`): the journal scored and distilled into long-term memory, a
  batch per tick, while a wake is held back.
- Dreaming (`sleep.dreaming`): links, people, orphaned links, reflection, pruning, working
  memory, context compaction, within a budget of model calls per tick, until all is done; after
  that a sleep tick costs nothing.
- In light sleep, while dreaming, something said nearby may get one cheap decision whether to
  wake (`sleep.triage`).

While a token budget is spent (`ai_assistant.budget`), a sleep tick makes no model call.

Like the awake turn, a tick is a generator yielding blocking work; nothing is lost when a call
fails.

"""

from collections.abc import Generator
from datetime import datetime

from ..brain import Brain
from ..lifecycle import COMPACTING, DREAMING
from .compacting import compacting_step
from .dreaming import DREAMING_STEPS, dreaming_tick
from .triage import triage

__all__ = ["DREAMING_STEPS", "sleep_tick"]


def sleep_tick(brain: Brain, now: datetime) -> Generator | None:
    """The work for this sleep tick, or None when there is none.

    Args:
        brain (Brain): The sleeping assistant.
        now (datetime): The time.

    Returns:
        Generator or None: Work yielding blocking model calls, returning a report.

    """
    if brain.budget_spent(now):
        return None  # no model calls until the next day or hour; nothing is lost
    phase = brain.lifecycle.phase
    if phase == COMPACTING:
        return compacting_step(brain, now)
    if phase == DREAMING:
        decision = triage(brain, now)
        if decision is not None:
            return decision
        return dreaming_tick(brain, now)
    return None
