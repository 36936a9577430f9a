"""
The parts every sleep step is made of: the tick's budget of model calls (and the batch round
its structured calls go through in batch mode), what a step did, and a step's name and work
(`sleep.dreaming` runs them in order).

"""

from collections.abc import Callable, Generator
from dataclasses import dataclass
from datetime import datetime

from ..agent.brain import Brain
from ..driver import BlockingWork
from ..llm.chat import ChatRequest
from .batch import BatchRound, ask


@dataclass
class Budget:
    """Model calls this tick may still make, and how its structured calls are asked.

    Attributes:
        calls (int): Model calls left.
        batch_round (BatchRound or None): The tick's batch round in batch mode (`sleep.batch`);
            None: every call is sent now.

    """

    calls: int
    batch_round: BatchRound | None = None

    def take(self) -> bool:
        """Use up one model call, if any are left.

        Returns:
            bool: True if a call was taken; False when the budget is spent.

        """
        if self.calls <= 0:
            return False
        self.calls -= 1
        return True

    def structured(self, brain: Brain, request: ChatRequest, output_model) -> BlockingWork:
        """A step's structured call, through the tick's batch round when there is one.

        Args:
            brain (Brain): The sleeping assistant.
            request (ChatRequest): What to ask.
            output_model (type): The pydantic model the answer must fit.

        Returns:
            BlockingWork: Work returning `(object, replies)`.

        Raises:
            BatchDeferred: In batch mode, when the answer is not in yet.

        """
        return ask(brain, request, output_model, self.batch_round)


@dataclass
class StepResult:
    """What one step did in one tick: `done` when it has nothing left this sleep."""

    done: bool
    report: dict


# a step returns its StepResult, or is a generator (yielding model calls) that returns it
StepWork = Callable[[Brain, datetime, Budget], "StepResult | Generator"]


@dataclass(frozen=True)
class DreamStep:
    """One named step of dreaming.

    Attributes:
        name (str): The step's name, as kept in `dreaming_progress` and shown by `/status`.
        run (StepWork): `run(brain, now, budget)`: returns a `StepResult`, or a generator that
            yields model calls and returns one.
        after (tuple): Names of earlier steps whose results this one reads: while one of them
            waits for a batch this tick, this one waits too (its request, made now, would miss
            what they bring, and be asked again once they have it).

    """

    name: str
    run: StepWork
    after: tuple[str, ...] = ()
