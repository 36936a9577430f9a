"""
Conversation into the plan: `agree_to_meet`, offered with `planning_enabled`.

When the assistant agrees to be somewhere at a time ("meet me at the well at noon"), it calls
`agree_to_meet`, and the item joins today's plan (`ai_assistant.memory.plans.DayPlan`) as
"agreed with <the people it answers>"; the shell walks it there at that game time with no model
call, like any other item. The item keeps the conversation's audience: agreed in a whisper, it
is private to that player: builders see it marked so, and the assistant goes there without
emoting what it is, so nothing shown to others reveals it. Only rooms the assistant can walk
to through exits its own rights pass can be named (the world's `find_room`), so no player can
send it through a locked door. Bounded: at most `MAX_AGREED_PER_PERSON` a player a game day,
and the plan's own `MAX_ITEMS`.

"""

from pydantic import Field

from ..memory.plans import (
    MAX_ACTIVITY_CHARS,
    MAX_ITEMS,
    MAX_ROOM_CHARS,
    DayPlan,
    PlanError,
    parse_time,
    time_of,
)
from .base import TURN, Tool, ToolArgs, ToolContext, ToolError, ToolResult

MAX_AGREED_PER_PERSON = 3


class MeetArgs(ToolArgs):
    """Arguments of `agree_to_meet`."""

    at: str = Field(min_length=3, max_length=5, description="Game time today, HH:MM (24 h).")
    place: str = Field(min_length=1, max_length=MAX_ROOM_CHARS, description="The room's name.")
    activity: str = Field(
        "", max_length=MAX_ACTIVITY_CHARS, description='What you will do there ("meets Bob").'
    )


class AgreeToMeetTool(Tool):
    """Tool that adds what the assistant agreed to do (be somewhere at a time) to today's plan."""

    name = "agree_to_meet"
    description = (
        "You agreed to be somewhere later today: add it to your plan and you will go there at "
        "that time. Only when you truly agreed."
    )
    Args = MeetArgs
    scopes = frozenset({TURN})
    setting = "planning_enabled"

    def run(self, ctx: ToolContext, args: MeetArgs) -> ToolResult:
        """Check the time, the place and the bounds, then add the item.

        Args:
            ctx (ToolContext): The conversation's context.
            args (MeetArgs): The validated arguments from the model.

        Returns:
            ToolResult: What was added.

        Raises:
            ToolError: No one to agree with, a time that does not read or has passed, a place
                it cannot walk to, a time already planned, or a bound reached.

        """
        find_room = getattr(ctx.world, "find_room", None)
        if find_room is None or ctx.lifecycle is None:
            raise ToolError("You keep no plan here.")
        if not ctx.owners:
            raise ToolError("You can agree to meet the people you are talking with only.")
        game_now = ctx.lifecycle.game_now(ctx.now)
        try:
            at = parse_time(args.at)
        except PlanError as err:
            raise ToolError(str(err)) from None
        if at <= time_of(game_now):
            raise ToolError(f"It is already {time_of(game_now)}: name a later time today.")
        room, room_name = find_room(args.place)
        day = DayPlan(ctx.lifecycle.state)
        items = day.today(game_now)["items"]
        for key, name in ctx.owners.items():
            agreed = [item for item in items if key in (item.get("with") or ())]
            if len(agreed) >= MAX_AGREED_PER_PERSON:
                raise ToolError(
                    f"You already agreed to {len(agreed)} things with {name} today (at most "
                    f"{MAX_AGREED_PER_PERSON}); nothing was added."
                )
        item = {
            "at": at,
            "room": room,
            "room_name": room_name,
            "activity": " ".join(args.activity.split()),
            "with": sorted(ctx.owners),
        }
        source = "agreed with " + ", ".join(sorted(ctx.owners.values()))
        if not day.add([item], source[:MAX_ROOM_CHARS], game_now, ctx.audience):
            raise ToolError(
                f"Your plan already has something at {at}, or is full ({MAX_ITEMS} items); "
                "nothing was added."
            )
        return ToolResult(ok=True, content=f"Added to your plan: {room_name} at {at}.")


PLAN_TOOLS = [AgreeToMeetTool()]
