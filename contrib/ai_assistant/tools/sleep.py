"""
The tools that change the assistant's own state: `go_to_sleep` (awake turns) and, asleep,
`wake_up` and `stay_asleep` (the sleep turn: `sleep.triage`). Their refusals, such as the three
safeguards of going to sleep, come back as tool results the model can act on.

Awake, the model may go to sleep; asleep, it is asked only when something heard may need it
(`sleep.triage`), in a turn whose tools are these two alone: `wake_up` wakes it through the same
transition as every other wake (`Lifecycle.wake_up`: cooldown, schedule restored, the room
told), `stay_asleep` leaves it asleep. Neither is ever offered in an awake turn, and no awake
tool is offered in the sleep turn (their scopes).

"""

from typing import Literal

from pydantic import Field, field_validator

from ..lifecycle import DEFAULT_HOURS, MAX_HOURS, MIN_HOURS, SleepRefused
from .base import SLEEP_TURN, TURN, Tool, ToolArgs, ToolContext, ToolError, ToolResult


class GoToSleepArgs(ToolArgs):
    """Arguments of `go_to_sleep`: how many hours, how deeply, and why."""

    duration_hours: int = Field(
        DEFAULT_HOURS, ge=MIN_HOURS, le=MAX_HOURS, description="How long to sleep, in hours."
    )
    depth: Literal["light", "deep"] = Field(
        "light",
        description="light: urgent messages wake you; deep: only the timer does by itself (a "
        "direct message is put to you, and you decide whether to wake).",
    )
    reason: str = Field(min_length=1, max_length=300, description="Why you are sleeping now.")


class GoToSleepTool(Tool):
    """Tool that puts the assistant to sleep, to consolidate its memories. Awake turns only.

    A sleep players can cause is bounded by their standing: in a turn without a builder's
    instruction it is light (an urgent word wakes it) and at most `player_sleep_max_hours`.

    """

    name = "go_to_sleep"
    description = (
        "Go to sleep to consolidate what you have learned into long-term memory. Ends this turn."
    )
    Args = GoToSleepArgs
    scopes = frozenset({TURN})

    def run(self, ctx: ToolContext, args: GoToSleepArgs) -> ToolResult:
        """Ask the lifecycle to go to sleep and end the turn.

        Args:
            ctx (ToolContext): The conversation's context.
            args (GoToSleepArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result that stops the turn and says how long the sleep is.

        Raises:
            ToolError: If the lifecycle refuses sleep now (with its reason).

        """
        hours, depth, bounded = args.duration_hours, args.depth, ""
        if not ctx.instructed:
            # a player's words may have asked for it: a sleep they can cause is short and
            # light (an urgent word wakes it); longer or deep is a builder's decision
            limit = ctx.config.player_sleep_max_hours
            if hours > limit or depth != "light":
                hours, depth = min(hours, limit), "light"
                bounded = (
                    f" (without a builder's instruction a sleep is light and at most {limit} "
                    "hours)"
                )
        try:
            phase = ctx.lifecycle.go_to_sleep(
                ctx.now, hours=hours, depth=depth, reason=args.reason, initiated_by="tool"
            )
        except SleepRefused as refusal:
            raise ToolError(f"you cannot sleep now. {refusal}") from None
        ctx.control.stop_reason = "go_to_sleep"
        work = "consolidating your journal first" if phase == "compacting" else "dreaming"
        return ToolResult(
            ok=True,
            content=f"You fall asleep ({depth}) for {hours} hours{bounded}, {work}.",
            stop=True,
        )


MAX_WAKE_REASON_CHARS = 300


def _clipped(value):
    """A reason cut to `MAX_WAKE_REASON_CHARS` before it is checked: a sleep turn is one call,
    with no second reply to correct a refused one, so a decision is not lost (and the
    assistant left asleep) for a reason written too long; it is kept bounded all the same."""
    if isinstance(value, str):
        return " ".join(value.split())[:MAX_WAKE_REASON_CHARS]
    return value


class WakeUpArgs(ToolArgs):
    """Arguments of `wake_up`: why it wakes."""

    # optional: the decision is the call; a sleep turn has no second reply to mend a refusal
    reason: str = Field(
        "",
        max_length=MAX_WAKE_REASON_CHARS,
        description="Why what you heard needs you awake now.",
    )

    _clip = field_validator("reason", mode="before")(_clipped)


class WakeUpTool(Tool):
    """Tool that wakes the assistant, through the lifecycle's one wake transition. Sleep turns
    only (`SLEEP_TURN`): asked while asleep whether something heard needs it awake."""

    name = "wake_up"
    description = "Wake up now: what you heard needs you awake. Ends this sleep turn."
    Args = WakeUpArgs
    scopes = frozenset({SLEEP_TURN})

    def run(self, ctx: ToolContext, args: WakeUpArgs) -> ToolResult:
        """Wake through `Lifecycle.wake_up` (cooldown, schedule restored, notifications).

        Args:
            ctx (ToolContext): The sleep turn's context.
            args (WakeUpArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result that ends the sleep turn.

        Raises:
            ToolError: When it is not asleep any more (a builder woke it meanwhile).

        """
        # one line, bounded: it is kept as the transition's reason and shown to builders
        reason = " ".join(args.reason.split())[:MAX_WAKE_REASON_CHARS]
        try:
            ctx.lifecycle.wake_up(ctx.now, reason or "something heard needed me")
        except SleepRefused as refusal:
            raise ToolError(f"you cannot wake now. {refusal}") from None
        ctx.control.stop_reason = "wake_up"
        return ToolResult(ok=True, content="You wake up.", stop=True)


class StayAsleepArgs(ToolArgs):
    """Arguments of `stay_asleep`: why it sleeps on (optional)."""

    reason: str = Field(
        "", max_length=MAX_WAKE_REASON_CHARS, description="Why it can wait (optional)."
    )

    _clip = field_validator("reason", mode="before")(_clipped)


class StayAsleepTool(Tool):
    """Tool that leaves the assistant asleep; what it heard waits for when it is awake. Sleep
    turns only (`SLEEP_TURN`)."""

    name = "stay_asleep"
    description = (
        "Stay asleep: nothing here needs you now. What you heard waits for when you wake. "
        "Ends this sleep turn."
    )
    Args = StayAsleepArgs
    scopes = frozenset({SLEEP_TURN})

    def run(self, ctx: ToolContext, args: StayAsleepArgs) -> ToolResult:
        """Stay asleep.

        Args:
            ctx (ToolContext): The sleep turn's context.
            args (StayAsleepArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result that ends the sleep turn.

        """
        ctx.control.stop_reason = "stay_asleep"
        return ToolResult(ok=True, content="You sleep on.", stop=True)


SLEEP_TOOLS = [GoToSleepTool(), WakeUpTool(), StayAsleepTool()]
