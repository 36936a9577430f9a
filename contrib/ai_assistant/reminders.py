"""
Contextual triggers: reminders that come back when something comes up.

A trigger pairs a pattern (a person's name, a word or a place) with a reminder text. When an
event the assistant answers mentions the pattern (in what was said, who said it, or where), the
reminder rides in that turn's message, after the events. Each trigger fires at most `max_fires`
times (3 unless set), counted once per handled turn, and is removed after its last firing.

The model sets them with the `set_reminder` tool; builders with `@assistant/trigger`. A trigger
keeps the audience of the conversation that set it: one set while answering a whisper fires only
in turns that serve that person. They sit in the script's store (`triggers`), at most
`max_triggers` per assistant.

"""

import re
from dataclasses import dataclass
from datetime import datetime

from .clock import to_iso
from .memory.audience import Audience, visible
from .memory.store import KeyValueStore
from .state import TRIGGERS
from .text import for_prompt

MAX_PATTERN_CHARS = 80
MAX_REMINDER_CHARS = 300
MAX_FIRES_ALLOWED = 20
DEFAULT_MAX_FIRES = 3


class TriggerError(ValueError):
    """A trigger that cannot be set or removed: the message says what is allowed."""


@dataclass
class Match:
    """A trigger that matched the events of a turn.

    Attributes:
        id (str): The trigger's id.
        line (str): The reminder as the turn's message shows it.

    """

    id: str
    line: str


def _pattern_regex(pattern: str) -> re.Pattern:
    # whole words only: a reminder about "Al" must not fire on "always"
    return re.compile(rf"(?<!\w){re.escape(pattern.casefold())}(?!\w)")


class Reminders:
    """An assistant's triggers, in its script's store.

    Args:
        state (KeyValueStore): The script's store.

    """

    def __init__(self, state: KeyValueStore):
        self.state = state

    def all(self) -> list[dict]:
        """Every trigger, oldest first.

        Returns:
            list: Dicts with id, pattern, reminder, max_fires, fired_count, audience, by and
                created_at.

        """
        return list(self.state.get(TRIGGERS) or [])

    def add(
        self,
        pattern: str,
        reminder: str,
        *,
        now: datetime,
        by: str,
        limit: int,
        max_fires: int = DEFAULT_MAX_FIRES,
        audience: Audience = None,
    ) -> dict:
        """Set a trigger.

        Args:
            pattern (str): A person, word or place (1-80 characters).
            reminder (str): What to remind the assistant of (1-300 characters).
            now (datetime): When it was set.
            by (str): Who set it (the assistant's name, or a builder's).
            limit (int): The most triggers the assistant may hold (`max_triggers`).
            max_fires (int, optional): How many times it may fire (1-20).
            audience (list or None, optional): Who may see it fire (None: anyone).

        Returns:
            dict: The trigger.

        Raises:
            TriggerError: A value out of bounds, or the assistant already holds `limit`
                triggers; nothing is changed.

        """
        pattern = " ".join(str(pattern).split())
        reminder = " ".join(str(reminder).split())
        if not 1 <= len(pattern) <= MAX_PATTERN_CHARS:
            raise TriggerError(
                f"The pattern must be a name, word or place of 1-{MAX_PATTERN_CHARS} characters."
            )
        if not 1 <= len(reminder) <= MAX_REMINDER_CHARS:
            raise TriggerError(f"The reminder must be 1-{MAX_REMINDER_CHARS} characters.")
        if isinstance(max_fires, bool) or not isinstance(max_fires, int):
            raise TriggerError(f"max_fires must be a whole number from 1 to {MAX_FIRES_ALLOWED}.")
        if not 1 <= max_fires <= MAX_FIRES_ALLOWED:
            raise TriggerError(f"max_fires must be from 1 to {MAX_FIRES_ALLOWED}, not {max_fires}.")
        triggers = self.all()
        if len(triggers) >= limit:
            raise TriggerError(
                f"There are already {len(triggers)} reminders (the most is {limit}): remove one "
                "first."
            )
        number = max((int(t["id"][1:]) for t in triggers), default=0) + 1
        trigger = {
            "id": f"t{number}",
            "pattern": pattern,
            "reminder": reminder,
            "max_fires": max_fires,
            "fired_count": 0,
            "audience": None if audience is None else sorted(set(audience)),
            "by": by,
            "created_at": to_iso(now),
        }
        self.state.set(TRIGGERS, [*triggers, trigger])
        return trigger

    def remove(self, trigger_id: str) -> dict:
        """Remove a trigger.

        Args:
            trigger_id (str): Its id, such as "t3".

        Returns:
            dict: The trigger removed.

        Raises:
            TriggerError: No trigger has that id; nothing is changed.

        """
        triggers = self.all()
        kept = [t for t in triggers if t["id"] != str(trigger_id).strip()]
        if len(kept) == len(triggers):
            known = ", ".join(t["id"] for t in triggers) or "none"
            raise TriggerError(f"No reminder '{str(trigger_id)[:20]}' (there are: {known}).")
        self.state.set(TRIGGERS, kept)
        return next(t for t in triggers if t not in kept)

    def matching(self, texts: list[str], served: frozenset[str] | None) -> list[Match]:
        """The triggers these texts mention, that the conversation may see. Writes nothing.

        Args:
            texts (list): What the turn's events said, who said them, and where.
            served (frozenset or None): Who the turn serves (`memory.audience.served_by`).

        Returns:
            list[Match]: One per trigger that fires, oldest first.

        """
        triggers = self.state.get(TRIGGERS)
        if not triggers:
            return []  # the common case: one store read, nothing more
        haystack = "\n".join(texts).casefold()
        return [
            Match(
                trigger["id"],
                f"Reminder (you asked to be reminded when {for_prompt(trigger['pattern'])} "
                f"comes up): {for_prompt(trigger['reminder'])}",
            )
            for trigger in triggers
            if visible(trigger.get("audience"), served)
            and _pattern_regex(trigger["pattern"]).search(haystack)
        ]

    def fired(self, ids: list[str]) -> None:
        """Count one firing of each of these triggers; remove those at their `max_fires`.

        Args:
            ids (list): The ids of the triggers that fired in one handled turn.

        """
        if not ids:
            return
        wanted = set(ids)
        kept = []
        for trigger in self.all():
            if trigger["id"] in wanted:
                trigger = {**trigger, "fired_count": trigger["fired_count"] + 1}
                if trigger["fired_count"] >= trigger["max_fires"]:
                    continue
            kept.append(trigger)
        self.state.set(TRIGGERS, kept)
