"""Reminders as a kind of memory: what to bring up when a pattern is heard (`reminders`)."""

import re

from pydantic import Field

from ...records import Trigger, check_record
from ...state import TRIGGERS
from ..store import KeyValueStore
from .base import MAX_INNER_ITEMS, Kind, check_ids


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
            problems.extend(check_record(Trigger, trigger, where, required=("pattern", "reminder")))

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

    def write(self, section: list[dict], memory: KeyValueStore, state: KeyValueStore) -> None:
        state.set(TRIGGERS, section)


KIND = RemindersKind()
