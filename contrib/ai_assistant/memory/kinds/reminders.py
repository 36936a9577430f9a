"""Reminders as a kind of memory: what to bring up when a pattern is heard (`reminders`)."""

import re
from collections.abc import Callable
from datetime import datetime

from pydantic import Field

from ...records import Reminder, check_record
from ..reminders import Reminders
from ...state import TRIGGERS
from ..store import KeyValueStore
from .base import MAX_INNER_ITEMS, Kind, check_ids


class BuildersReminders:
    """The reminders a builder lists, sets and removes (`MemoryAdmin.kind("reminders")`).

    Args:
        brain (Brain): The assistant's brain (its script's store and configuration).
        now (callable): `now()` -> the current real time.

    """

    def __init__(self, brain, now: Callable[[], datetime]):
        self.brain = brain
        self.now = now

    def all(self) -> list[Reminder]:
        """The assistant's reminders (contextual triggers), oldest first.

        Returns:
            list: `records.Reminder` dicts.

        """
        return Reminders(self.brain.state).all()

    def add(self, pattern: str, reminder: str, max_fires: int, by: str) -> Reminder:
        """Set a builder's reminder: when `pattern` comes up in what it hears, `reminder` rides
        in that turn's message, at most `max_fires` times. It is public, and has a room of its
        own (`reminders.MAX_BUILDER_TRIGGERS`): players cannot crowd it out.

        Args:
            pattern (str): A person, word or place (1-80 characters).
            reminder (str): The reminder (1-300 characters).
            max_fires (int): How many times it may fire (1-20).
            by (str): The builder's name.

        Returns:
            dict: The reminder.

        Raises:
            Refused: A value out of bounds, or the builders' room already full; nothing is
                changed.

        """
        return Reminders(self.brain.state).add(
            pattern,
            reminder,
            now=self.now(),
            by=by,
            limit=self.brain.config.max_triggers,
            max_fires=max_fires,
            builder=True,
        )

    def remove(self, reminder_id: str) -> Reminder:
        """Remove a reminder.

        Args:
            reminder_id (str): Its id, such as "t3".

        Returns:
            dict: The reminder removed.

        Raises:
            Refused: No reminder has that id; nothing is changed.

        """
        return Reminders(self.brain.state).remove(reminder_id)


class RemindersKind(Kind):
    name = "reminders"
    label = "reminders"
    one = "reminder"
    on_state = True
    id_pattern = re.compile(r"^t\d{1,9}$")
    forgotten_label = "reminders"

    def field(self):
        return list[dict], Field(default_factory=list, max_length=MAX_INNER_ITEMS)

    def export(self, memory: KeyValueStore, state: KeyValueStore) -> list[dict]:
        return list(state.get(TRIGGERS) or [])

    def ids(self, section: list[dict], problems) -> set[str]:
        return check_ids("memory.reminders", section, self, problems)

    def check(self, section: list[dict], known, problems) -> None:
        for number, trigger in enumerate(section):
            where = f"memory.reminders[{number}]"
            problems.extend(
                check_record(Reminder, trigger, where, required=("pattern", "reminder"))
            )

    def builder(self, brain, now: Callable[[], datetime]) -> BuildersReminders:
        return BuildersReminders(brain, now)

    def forget_person(self, review, person, state: KeyValueStore | None = None) -> int:
        # the reminders they had set (they own them all), and those private to them
        if state is None:
            return 0

        def theirs(trigger: dict) -> bool:
            owners = set((trigger.get("owners") or {}).keys())
            if bool(owners) and owners <= person.keys or person.private(trigger.get("audience")):
                return True
            # one that names them (set by another about them)
            return any(person.mentions(trigger.get(part)) for part in ("pattern", "reminder"))

        triggers = list(state.get(TRIGGERS) or [])
        kept = [trigger for trigger in triggers if not theirs(trigger)]
        if len(kept) != len(triggers):
            state.set(TRIGGERS, kept)
        return len(triggers) - len(kept)

    def forget_traces(self, memory: KeyValueStore, state: KeyValueStore, traces) -> int:
        triggers = list(state.get(TRIGGERS) or [])
        kept = [trigger for trigger in triggers if not traces.found(trigger)]
        if len(kept) != len(triggers):
            state.set(TRIGGERS, kept)
        return len(triggers) - len(kept)

    def write(self, section: list[dict], memory: KeyValueStore, state: KeyValueStore) -> None:
        state.set(TRIGGERS, section)


KIND = RemindersKind()
