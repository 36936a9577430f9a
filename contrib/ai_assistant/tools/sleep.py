"""
The tool that changes the assistant's own state: `go_to_sleep`. Its refusals, such as the three
safeguards of going to sleep, come back as tool results the model can act on. (Waking is the
timer's, a builder's, an urgent event's or a light sleeper's own decision: `sleep.triage`.)

"""

from typing import Literal

from pydantic import Field

from ..lifecycle import DEFAULT_HOURS, MAX_HOURS, MIN_HOURS, SleepRefused
from .base import TURN, Tool, ToolArgs, ToolContext, ToolError, ToolResult


class GoToSleepArgs(ToolArgs):
    """Arguments of `go_to_sleep`: how many hours, how deeply, and why."""

    duration_hours: int = Field(
        DEFAULT_HOURS, ge=MIN_HOURS, le=MAX_HOURS, description="How long to sleep, in hours."
    )
    depth: Literal["light", "deep"] = Field(
        "light", description="light: urgent messages wake you; deep: only the timer does."
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


SLEEP_TOOLS = [GoToSleepTool()]
