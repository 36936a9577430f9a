"""
Carrying out today's plan in the game: walking through exits and acting, with no model call.

`AssistantPlans` is the handler's `plans` part (`character.assistant.plans`). On an awake tick
with nothing to answer, `step` looks at the item in force on the game clock
(`ai_assistant.memory.plans.DayPlan`) and takes one step toward it: one exit of the shortest way
to its room, passed as a character walking passes it (the exit's `traverse` lock is checked,
then `exit.at_traverse`, a normal move with the exit's own messages and hooks), never a
teleport. Only exits its rights pass are part of the way: with none, the item is marked
blocked. Arrived, it emotes the item's activity once. A sleep item puts it to sleep until the
next item, as a scheduled sleep does (`Lifecycle.sleep_until`).

A plan gives way to whoever addresses it: a line that calls for the model waiting in its queue,
a turn in flight, a turn in the last `PLAN_YIELD_SECONDS` or a wait of its own mean it stays.

"""

from datetime import timedelta
from typing import Generator

from evennia.objects.objects import DefaultRoom
from evennia.utils.search import search_object
from evennia.utils.utils import inherits_from

from ..memory.plans import (
    ARRIVED,
    BLOCKED,
    MAX_PATH_ROOMS,
    SLEPT,
    DayPlan,
    PlanError,
    find_path,
    parse_routine,
    statuses,
)
from ..awake.planning import MAX_ROOMS, plan_day, planning_due
from ..clock import from_iso
from ..events import triggers_model
from ..lifecycle import AWAKE, SleepRefused
from ..text import for_players
from ..memory.turn_log import last_turn
from ..state import PLAN, ROUTINE, WAIT_UNTIL
from .assembly import EvenniaGameClock
from .world import passable_exits, reachable_rooms

# after a turn, the plan waits this long (real seconds) for the conversation to go on
PLAN_YIELD_SECONDS = 60


def resolve_room(name: str) -> tuple[str, str]:
    """A room named in a routine: its dbref and its name.

    Args:
        name (str): A room's name, alias or #dbref.

    Returns:
        tuple: `("#12", "Library")`.

    Raises:
        PlanError: No room, or several, answer to the name.

    """
    rooms = [obj for obj in search_object(name.strip()) if inherits_from(obj, DefaultRoom)]
    if not rooms:
        raise PlanError(f"No room called '{name[:40]}': name a room by its name or #dbref.")
    if len(rooms) > 1:
        listed = ", ".join(f"{room.key}({room.dbref})" for room in rooms[:5])
        raise PlanError(f"Several rooms are called '{name[:40]}': {listed}. Use the dbref.")
    return rooms[0].dbref, rooms[0].key


class AssistantPlans:
    """An assistant's routine and today's plan, in the game.

    Args:
        handler (AssistantHandler): The assistant's handler.

    """

    def __init__(self, handler):
        self.handler = handler

    def clock(self):
        """The game clock (the handler's, else Evennia's)."""
        return self.handler.game_clock or EvenniaGameClock()

    def day_plan(self) -> DayPlan:
        """The routine and today's plan on the assistant's state."""
        return DayPlan(self.handler.brain.state)

    # ---- builders --------------------------------------------------------------------------

    def set_routine(self, text: str) -> list[dict]:
        """Set the routine a builder wrote (empty: none); today's plan follows it.

        Args:
            text (str): The routine (`memory.plans.ROUTINE_FORMAT`).

        Returns:
            list[dict]: The routine's items.

        Raises:
            PlanError: The routine was refused (nothing changed).

        """
        items = parse_routine(text, resolve_room)
        self.day_plan().set_routine(items, self.clock().now())
        return items

    def clear_today(self) -> int:
        """Empty today's plan (the routine makes tomorrow's).

        Returns:
            int: The items dropped.

        """
        return self.day_plan().clear(self.clock().now())

    def today(self) -> tuple[dict, list[str]]:
        """Today's plan and what each item is now; reading it writes nothing.

        Returns:
            tuple: The plan (`{"day", "items"}`) and one status word each (`memory.plans.statuses`).

        """
        game_now = self.clock().now()
        plan = self.day_plan().today(game_now, save=False)
        return plan, statuses(plan["items"], game_now)

    # ---- the tick --------------------------------------------------------------------------

    def step(self, now) -> Generator | None:
        """Today's plan, from an awake tick with no work in flight: the day's planning call
        when one is due (`planning_enabled`), else one step of the plan (no model call).

        Args:
            now (datetime): The real time.

        Returns:
            Generator or None: The planning call, as work for the handler to drive, or None.

        """
        handler = self.handler
        brain = handler.brain
        if brain.lifecycle.mode != AWAKE or handler.in_flight:
            return None
        planning = brain.config.planning_enabled
        if not planning and brain.state.get(ROUTINE) is None and brain.state.get(PLAN) is None:
            return None  # most assistants: nothing more read
        clock = self.clock()
        game_now = clock.now()
        if self._busy(brain, now):
            return None
        if planning and planning_due(brain, game_now):
            return plan_day(brain, now, game_now, self.known_rooms())
        self.walk(now, clock, game_now)
        return None

    def known_rooms(self) -> dict[str, tuple[str, str]]:
        """The rooms it may name in its own plan: its routine's, and those it can reach.

        Returns:
            dict: Lower-case name -> `(dbref, name)`, at most `planning.MAX_ROOMS` reached
                rooms beside the routine's.

        """
        rooms = {}
        for item in self.day_plan().routine():
            if item["room"]:
                rooms.setdefault(item["room_name"].lower(), (item["room"], item["room_name"]))
        for room in reachable_rooms(self.handler.obj, MAX_ROOMS):
            rooms.setdefault(room.key.lower(), (room.dbref, room.key))
        return rooms

    def walk(self, now, clock, game_now) -> str | None:
        """One step toward the item in force, or its activity, or its sleep. No model call.

        Args:
            now (datetime): The real time.
            clock: The game clock (its `time_factor`).
            game_now (datetime): Its time.

        Returns:
            str or None: What it did ("walked", "arrived", "blocked", "asleep"), or None.

        """
        handler = self.handler
        brain = handler.brain
        day = DayPlan(brain.state)
        due = day.due(game_now)
        if due is None or due[1].get("status"):
            return None
        index, item = due
        if item["room"] is None:
            end = day.sleep_until(game_now, index, brain.config.sleep_duration_hours)
            try:
                brain.lifecycle.sleep_until(now, game_now, end, clock.time_factor, "Routine sleep")
            except SleepRefused as err:
                day.mark(game_now, index, BLOCKED, str(err))
                return "blocked"
            day.mark(game_now, index, SLEPT)
            return "asleep"
        character = handler.obj
        goal = _room(item["room"])
        if goal is None:
            day.mark(game_now, index, BLOCKED, "the room is gone")
            return "blocked"
        if character.location != goal:
            start = character.location
            path = start and find_path(
                start, goal, lambda room: passable_exits(character, room), MAX_PATH_ROOMS
            )
            if not path:
                day.mark(game_now, index, BLOCKED, "no way there it may pass")
                return "blocked"
            exit_ = path[0]
            exit_.at_traverse(character, exit_.destination)
            if character.location == start:
                day.mark(game_now, index, BLOCKED, f"could not pass {exit_.key}"[:80])
                return "blocked"
            if character.location != goal:
                return "walked"
        # a builder's or the model's words, shown to players as typed, on one line; an item
        # agreed in private is carried out without saying what it is
        activity = for_players(item["activity"], brain.config.allow_color_markup)
        if activity and item.get("audience") is None:
            brain.world.emote(activity if activity[-1] in ".!?" else f"{activity}.")
        day.mark(game_now, index, ARRIVED)
        return "arrived"

    @staticmethod
    def _busy(brain, now) -> bool:
        """Someone addresses it, it just answered someone, or it was told to wait."""
        config = brain.config
        if any(
            triggers_model(event, config.respond_to_ambient, config.respond_to_assistants)
            for event in brain.events.peek()
        ):
            return True
        turn_at = from_iso((last_turn(brain.state) or {}).get("at"))
        if turn_at and now - turn_at < timedelta(seconds=PLAN_YIELD_SECONDS):
            return True
        wait_until = from_iso(brain.state.get(WAIT_UNTIL))
        return bool(wait_until and now < wait_until)


def _room(dbref: str):
    found = [obj for obj in search_object(dbref) if inherits_from(obj, DefaultRoom)]
    return found[0] if found else None


__all__ = ["AssistantPlans", "PlanError", "resolve_room"]
