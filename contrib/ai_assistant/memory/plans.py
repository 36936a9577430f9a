"""
Routines and today's plan: what an assistant means to do, where, at which game hour.

A builder gives an assistant a routine ("08:00 Library: opens the library; 12:00 Tavern: has
lunch; 22:00 sleep"). Each game day, today's plan is made from it; the plan's items also say
where each came from (the routine, its own plan, or agreed with someone). The shell carries the
plan out on the tick with no model call (`ai_assistant.shell.plans`): this module is the pure
part, with no Evennia: reading a routine, keeping today's plan on the assistant's state, which
item is due at a game time, and the way to a room through exits (`find_path`, over any graph).

The routine and the plan live on the script's state (`state.ROUTINE`, `state.PLAN`), bounded:
at most `MAX_ITEMS` items, each text at most its `MAX_*_CHARS`.

"""

import re
from collections import deque
from datetime import datetime, timedelta
from typing import Callable, Hashable, Iterable

from ..errors import Refused
from .audience import visible
from ..state import PLAN, ROUTINE
from ..text import for_prompt

MAX_ITEMS = 24
MAX_ROOM_CHARS = 80
MAX_ACTIVITY_CHARS = 120
MAX_ROUTINE_CHARS = 4000
# rooms a search for the way visits at most: a plan never costs the game loop a world-wide walk
MAX_PATH_ROOMS = 200
SLEEP = "sleep"
# items of today's plan a turn's message shows: the one in force and the next ones (a turn
# needs where it is headed, not its whole day)
SHOWN_ITEMS = 4
ROUTINE_SOURCE = "routine"

# what an item can be: its status once acted on (an item without one is still to come)
ARRIVED = "arrived"
BLOCKED = "blocked"
SLEPT = "slept"

_TIME_RE = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
ROUTINE_FORMAT = (
    "one item a line (or separated by ;): 'HH:MM <room>: <activity>' (activity optional), "
    "or 'HH:MM sleep'"
)


class PlanError(Refused):
    """A routine or plan item that was refused: the message says what is allowed."""


def parse_time(text: str) -> str:
    """A game time of day, checked and written as HH:MM.

    Args:
        text (str): "8:00", "08:00", "23:59".

    Returns:
        str: The time as "HH:MM".

    Raises:
        PlanError: It is not a time of day from 00:00 to 23:59.

    """
    match = _TIME_RE.match(text.strip())
    if not match:
        raise PlanError(f"'{text[:20]}' is not a time: write HH:MM, from 00:00 to 23:59.")
    return f"{int(match.group(1)):02d}:{match.group(2)}"


def parse_routine(text: str, resolve_room: Callable[[str], tuple[str, str]]) -> list[dict]:
    """Read a builder's routine.

    Args:
        text (str): The routine (see `ROUTINE_FORMAT`).
        resolve_room (callable): `resolve_room(name)` -> `(room id, room name)`; raises
            `PlanError` naming the room it cannot find.

    Returns:
        list[dict]: The items, by time: `{"at", "room", "room_name", "activity"}` (a sleep
            item has `room` None and the activity "sleep").

    Raises:
        PlanError: The text is too long, an item is malformed, two items share a time, a room
            is unknown, or there are more than `MAX_ITEMS` items. Nothing is kept then.

    """
    if len(text) > MAX_ROUTINE_CHARS:
        raise PlanError(f"A routine is at most {MAX_ROUTINE_CHARS} characters.")
    lines = [line.strip() for line in re.split(r"[;\n]", text) if line.strip()]
    if len(lines) > MAX_ITEMS:
        raise PlanError(f"A routine has at most {MAX_ITEMS} items; this one has {len(lines)}.")
    items = {}
    for line in lines:
        when, _, rest = line.partition(" ")
        at = parse_time(when)
        if at in items:
            raise PlanError(f"Two items at {at}: one item per time.")
        items[at] = routine_item(at, rest, resolve_room)
    return [items[at] for at in sorted(items)]


def routine_item(at: str, text: str, resolve_room: Callable[[str], tuple[str, str]]) -> dict:
    """One item: "<room>: <activity>", "<room>" or "sleep".

    Args:
        at (str): Its time, HH:MM.
        text (str): What follows the time.
        resolve_room (callable): As in `parse_routine`.

    Returns:
        dict: `{"at", "room", "room_name", "activity"}`.

    Raises:
        PlanError: No room, a text too long, or a room `resolve_room` refuses.

    """
    room_name, _, activity = text.partition(":")
    room_name, activity = room_name.strip(), " ".join(activity.split())
    if room_name.lower() == SLEEP and not activity:
        return {"at": at, "room": None, "room_name": "", "activity": SLEEP}
    if not room_name:
        raise PlanError(f"The item at {at} names no room: {ROUTINE_FORMAT}.")
    if len(room_name) > MAX_ROOM_CHARS:
        raise PlanError(f"A room's name is at most {MAX_ROOM_CHARS} characters (item at {at}).")
    if len(activity) > MAX_ACTIVITY_CHARS:
        raise PlanError(f"An activity is at most {MAX_ACTIVITY_CHARS} characters (item at {at}).")
    room, name = resolve_room(room_name)
    return {"at": at, "room": room, "room_name": name, "activity": activity}


def format_routine(items: list[dict]) -> str:
    """A routine written back as a builder types it (what `parse_routine` reads).

    Args:
        items (list[dict]): The routine's items.

    Returns:
        str: One item a line.

    """
    lines = []
    for item in items:
        if item["room"] is None:
            lines.append(f"{item['at']} {SLEEP}")
        else:
            activity = f": {item['activity']}" if item["activity"] else ""
            lines.append(f"{item['at']} {item['room_name']}{activity}")
    return "\n".join(lines)


def time_of(moment: datetime) -> str:
    """A game time's time of day, as plan items write it (HH:MM)."""
    return f"{moment.hour:02d}:{moment.minute:02d}"


class DayPlan:
    """An assistant's routine and today's plan, on its state.

    Today's plan is made from the routine the first time it is read on a game day; a builder
    may clear it (the routine comes back the next day). Each item keeps where it came from
    (`source`), who may know of it (`audience`: None for anyone) and, once acted on, its
    `status` and a `note`.

    Args:
        state (KeyValueStore): The script's store.

    """

    def __init__(self, state):
        self.state = state

    def routine(self) -> list[dict]:
        """The routine's items, by time.

        Returns:
            list[dict]: Copies of the items.

        """
        return [dict(item) for item in self.state.get(ROUTINE) or []]

    def set_routine(self, items: list[dict], game_now: datetime) -> None:
        """Replace the routine (items from `parse_routine`); today's plan takes the new
        routine's items in place of the old ones, keeping the others.

        Args:
            items (list[dict]): The new routine (empty: none).
            game_now (datetime): The game clock's time.

        """
        self.state.set(ROUTINE, [dict(item) for item in items])
        plan = self.today(game_now)
        kept = [item for item in plan["items"] if item["source"] != ROUTINE_SOURCE]
        plan["items"] = _by_time(kept + [_from_routine(item) for item in items])[:MAX_ITEMS]
        self.state.set(PLAN, plan)

    def today(self, game_now: datetime, save: bool = True) -> dict:
        """Today's plan, made from the routine on the first read of a game day (a write).

        Args:
            game_now (datetime): The game clock's time.
            save (bool, optional): Keep a plan made now (False: a reading that writes nothing).

        Returns:
            dict: `{"day": "YYYY-MM-DD", "items": [...]}`, the items by time.

        """
        day = game_now.date().isoformat()
        plan = self.state.get(PLAN)
        if not plan or plan.get("day") != day:
            plan = {"day": day, "items": [_from_routine(item) for item in self.routine()]}
            if save and (plan["items"] or self.state.get(PLAN) is not None):
                self.state.set(PLAN, plan)
        return {**plan, "items": [dict(item) for item in plan["items"]]}

    def add(
        self, items: list[dict], source: str, game_now: datetime, audience: list | None = None
    ) -> int:
        """Add items to today's plan; one at a time already planned, or past `MAX_ITEMS`, is
        left out.

        Args:
            items (list[dict]): `{"at", "room", "room_name", "activity"}` each, checked.
            source (str): Where they came from ("own plan", "agreed with Bob").
            game_now (datetime): The game clock's time.
            audience (list, optional): Who may know of them (None: anyone).

        Returns:
            int: How many were added.

        """
        plan = self.today(game_now)
        taken = {item["at"] for item in plan["items"]}
        added = 0
        for item in items:
            if item["at"] in taken or len(plan["items"]) >= MAX_ITEMS:
                continue
            taken.add(item["at"])
            plan["items"].append({**item, "source": source, "audience": audience})
            added += 1
        if added:
            plan["items"] = _by_time(plan["items"])
            self.state.set(PLAN, plan)
        return added

    def mark_planned(self, game_now: datetime) -> None:
        """Note that today's planning call was made (one a game day).

        Args:
            game_now (datetime): The game clock's time.

        """
        self.state.set(PLAN, {**self.today(game_now), "planned": True})

    def clear(self, game_now: datetime) -> int:
        """Empty today's plan (the routine is kept, and makes tomorrow's).

        Args:
            game_now (datetime): The game clock's time.

        Returns:
            int: How many items were dropped.

        """
        plan = self.today(game_now)
        self.state.set(PLAN, {**plan, "items": []})  # planned today stays planned
        return len(plan["items"])

    def due(self, game_now: datetime) -> tuple[int, dict] | None:
        """The item in force now: the latest whose time has come (it holds until the next).

        Args:
            game_now (datetime): The game clock's time.

        Returns:
            tuple or None: `(index, item)`, or None before the day's first item.

        """
        now = time_of(game_now)
        found = None
        for index, item in enumerate(self.today(game_now)["items"]):
            if item["at"] <= now:
                found = (index, item)
        return found

    def mark(self, game_now: datetime, index: int, status: str, note: str = "") -> None:
        """Record what became of today's item `index`.

        Args:
            game_now (datetime): The game clock's time.
            index (int): The item's place in today's plan.
            status (str): ARRIVED, BLOCKED or SLEPT.
            note (str, optional): Why (a blocked item's reason), shown with the plan.

        """
        plan = self.today(game_now)
        plan["items"][index].update(status=status, note=note[:MAX_ACTIVITY_CHARS])
        self.state.set(PLAN, plan)

    def sleep_until(self, game_now: datetime, index: int, hours: int) -> datetime:
        """When a sleep item's sleep ends (game time): at the next item's time, today or the
        routine's first tomorrow; `hours` later when there is no other item.

        Args:
            game_now (datetime): The game clock's time.
            index (int): The sleep item's place in today's plan.
            hours (int): The sleep's length when nothing follows it.

        Returns:
            datetime: The game time it wakes.

        """
        items = self.today(game_now)["items"]
        later = [item["at"] for item in items[index + 1 :] if item["room"] is not None]
        day = game_now
        if not later:
            later = [item["at"] for item in self.routine() if item["room"] is not None]
            day = game_now + timedelta(days=1)
        if not later:
            return game_now + timedelta(hours=hours)
        hour, minute = map(int, later[0].split(":"))
        return day.replace(hour=hour, minute=minute, second=0, microsecond=0)


def statuses(items: list[dict], game_now: datetime) -> list[str]:
    """What each of today's items is at a game time, in words for the plan's table.

    Args:
        items (list[dict]): Today's items, by time.
        game_now (datetime): The game clock's time.

    Returns:
        list[str]: "done", "asleep", "blocked: <why>", "now", "missed" or "later", one each.

    """
    now = time_of(game_now)
    current = max((i for i, item in enumerate(items) if item["at"] <= now), default=-1)
    words = []
    for index, item in enumerate(items):
        status = item.get("status")
        if status == BLOCKED:
            words.append(f"blocked: {item.get('note') or 'no way there'}")
        elif status == ARRIVED:
            words.append("done" if index < current else "here")
        elif status == SLEPT:
            words.append("slept")
        elif index == current:
            words.append("now")
        else:
            words.append("missed" if index < current else "later")
    return words


def find_path(
    start: Hashable,
    goal: Hashable,
    exits_of: Callable[[Hashable], Iterable[tuple[object, Hashable]]],
    max_rooms: int = MAX_PATH_ROOMS,
) -> list | None:
    """The shortest way from one room to another, breadth first, through the exits given.

    Args:
        start (Hashable): Where it is.
        goal (Hashable): Where it means to be.
        exits_of (callable): `exits_of(room)` -> `(exit, destination)` pairs: the exits it
            may pass (a locked one is simply not given).
        max_rooms (int, optional): Rooms visited at most before giving up.

    Returns:
        list or None: The exits to take, in order (empty when already there); None when no
            way was found within `max_rooms` rooms.

    """
    if start == goal:
        return []
    came_by = {start: None}
    queue = deque([start])
    while queue:
        room = queue.popleft()
        for exit_, destination in exits_of(room):
            if destination in came_by:
                continue
            came_by[destination] = (room, exit_)
            if destination == goal:
                path = []
                while came_by[destination] is not None:
                    destination, exit_ = came_by[destination]
                    path.append(exit_)
                return path[::-1]
            if len(came_by) >= max_rooms:
                return None
            queue.append(destination)
    return None


def _from_routine(item: dict) -> dict:
    return {**item, "source": ROUTINE_SOURCE, "audience": None}


def _by_time(items: list[dict]) -> list[dict]:
    return sorted(items, key=lambda item: item["at"])


def plan_lines(
    state, game_now: datetime, served: frozenset | None
) -> list[tuple[str, list | None]]:
    """Today's plan as a turn's message shows it: the item in force and the next ones, only
    those the people served may know of (an item agreed in a whisper only to that player),
    each with its audience (the message narrows to it). Reading writes nothing.

    Args:
        state (KeyValueStore): The script's store.
        game_now (datetime): The game clock's time.
        served (frozenset or None): Whom the turn is for (`memory.audience.served_by`).

    Returns:
        list: (line, audience) pairs, already escaped; empty with no plan.

    """
    items = DayPlan(state).today(game_now, save=False)["items"]
    if not items:
        return []
    words = statuses(items, game_now)
    lines = []
    for item, status in zip(items, words):
        if status in ("done", "missed", "slept") or not visible(item.get("audience"), served):
            continue
        where = item.get("room_name") or ""
        what = item.get("activity") or ""
        text = f"{item['at']} {where}: {what}" if where else f"{item['at']} {what}"
        lines.append(
            (for_prompt(f"- {text} ({status}; {item.get('source')})"), item.get("audience"))
        )
        if len(lines) == SHOWN_ITEMS:
            break
    return lines
