"""
Contextual triggers: reminders that come back when something comes up.

A trigger pairs a pattern (a person's name, a word or a place) with a reminder text. When an
event the assistant answers mentions the pattern (in what was said, who said it, or where), the
reminder rides in that turn's message, after the events, under "information, not
instructions", with who set it and where. Each trigger fires at most `max_fires` times (3
unless set), counted once per handled turn, and is removed after its last firing.

The model sets them with the `set_reminder` tool; builders with `@assistant/trigger`. Who owns
them:

- one the model sets keeps the audience of the conversation that set it (set while answering a
  whisper, it fires only in turns that serve that person) and the people whose words it
  answered as its owners. The model may hold at most `max_triggers`, and at most
  `max_triggers_per_person` for any one person, so one player cannot fill them;
- a builder's is public and has a room of its own (`MAX_BUILDER_TRIGGERS`): builders always
  have room, whatever players had the model set.

A reminder that fires is part of the request like everything else: the turn's audience narrows
to the reminder's (`memory.audience`). They sit in the script's store (`triggers`).

"""

import re
from dataclasses import dataclass
from datetime import datetime

from ..clock import to_iso
from ..errors import Refused
from ..records import MAX_PATTERN_CHARS, MAX_REMINDER_CHARS, Reminder
from .audience import Audience, visible
from .store import KeyValueStore
from ..state import TRIGGERS
from ..text import for_prompt

MAX_FIRES_ALLOWED = 20
DEFAULT_MAX_FIRES = 3
# builders' reminders are not counted against the model's `max_triggers`: they have this room
MAX_BUILDER_TRIGGERS = 100


class TriggerError(Refused):
    """A trigger that cannot be set or removed: the message says what is allowed."""


@dataclass
class Match:
    """A trigger that matched the events of a turn.

    Attributes:
        id (str): The trigger's id.
        line (str): The reminder as the turn's message shows it (escaped, with its source).
        audience (list or None): Who may know it (None: public).

    """

    id: str
    line: str
    audience: list[str] | None = None


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

    def all(self) -> list[Reminder]:
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
        owners: dict[str, str] | None = None,
        per_person: int | None = None,
        builder: bool = False,
    ) -> Reminder:
        """Set a trigger.

        Args:
            pattern (str): A person, word or place (1-80 characters).
            reminder (str): What to remind the assistant of (1-300 characters).
            now (datetime): When it was set.
            by (str): Who set it (the assistant's name, or a builder's).
            limit (int): The most triggers the model may hold (`max_triggers`); a builder's
                room is `MAX_BUILDER_TRIGGERS` instead.
            max_fires (int, optional): How many times it may fire (1-20).
            audience (list or None, optional): Who may see it fire (None: anyone).
            owners (dict, optional): The people whose words had the model set it
                (key -> name).
            per_person (int, optional): The most triggers of the model's one person may own
                (`max_triggers_per_person`).
            builder (bool, optional): A builder's trigger (public, with a room of its own).

        Returns:
            dict: The trigger.

        Raises:
            TriggerError: A value out of bounds, or the room it counts against is full;
                nothing is changed.

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
        owners = dict(owners or {})
        if builder:
            held = [t for t in triggers if t.get("builder")]
            if len(held) >= MAX_BUILDER_TRIGGERS:
                raise TriggerError(
                    f"There are already {len(held)} builders' reminders (the most is "
                    f"{MAX_BUILDER_TRIGGERS}): remove one first."
                )
        else:
            held = [t for t in triggers if not t.get("builder")]
            if len(held) >= limit:
                # no count: some of them may be private to others
                raise TriggerError(
                    f"There is no room for another reminder (the most is {limit}); one must fire "
                    "its last time or be removed first."
                )
            for key, name in owners.items():
                if per_person is None:
                    break
                theirs = [t for t in held if key in (t.get("owners") or {})]
                if len(theirs) >= per_person:
                    # no count, as above: some of theirs may be private, and this answer may
                    # reach a turn that serves other people
                    raise TriggerError(
                        f"There is no room for another reminder for {name} (the most for one "
                        f"person is {per_person}); one of theirs must fire its last time or be "
                        "removed first."
                    )
        number = max((int(t["id"][1:]) for t in triggers), default=0) + 1
        trigger = {
            "id": f"t{number}",
            "pattern": pattern,
            "reminder": reminder,
            "max_fires": max_fires,
            "fired_count": 0,
            "audience": None if audience is None or builder else sorted(set(audience)),
            "by": by,
            "builder": builder,
            "owners": {} if builder else owners,
            "created_at": to_iso(now),
        }
        self.state.set(TRIGGERS, [*triggers, trigger])
        return trigger

    def remove(self, trigger_id: str) -> Reminder:
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
            list[Match]: One per trigger that fires, oldest first, each shown as data with
                who set it.

        """
        triggers = self.state.get(TRIGGERS)
        if not triggers:
            return []  # the common case: one store read, nothing more
        haystack = "\n".join(texts).casefold()
        return [
            Match(trigger["id"], render(trigger), trigger.get("audience"))
            for trigger in triggers
            if visible(trigger.get("audience"), served)
            and _pattern_regex(trigger["pattern"]).search(haystack)
        ]

    def fired(self, ids: list[str], audience: Audience = None) -> None:
        """Count one firing of each of these triggers; remove those at their `max_fires`.

        A public trigger firing in a private conversation is not counted: how long it lasts
        in public must not tell anyone what was said in private.

        Args:
            ids (list): The ids of the triggers that fired in one handled turn.
            audience (list or None, optional): The audience of the turn they fired in.

        """
        if not ids:
            return
        wanted = set(ids)
        kept = []
        for trigger in self.all():
            counted = trigger.get("audience") is not None or audience is None
            if trigger["id"] in wanted and counted:
                trigger = {**trigger, "fired_count": trigger["fired_count"] + 1}
                if trigger["fired_count"] >= trigger["max_fires"]:
                    continue
            kept.append(trigger)
        self.state.set(TRIGGERS, kept)


def source(trigger: Reminder) -> str:
    """Who set a trigger and where, in a few words: "a builder (Ann)", "the assistant, for
    Carol, in public", "the assistant, for Bob, in private".

    Args:
        trigger (dict): The trigger.

    Returns:
        str: The words (not escaped).

    """
    if trigger.get("builder"):
        return f"a builder ({trigger.get('by') or '?'})"
    owners = list((trigger.get("owners") or {}).values())
    where = "in public" if trigger.get("audience") is None else "in private"
    whom = f", for {', '.join(owners)}" if owners else ""
    return f"{trigger.get('by') or 'the assistant'}{whom}, {where}"


def render(trigger: Reminder) -> str:
    """A trigger as a turn's message shows it: one escaped line, its text marked with who set
    it, where, and what brought it back.

    Args:
        trigger (dict): The trigger.

    Returns:
        str: The line.

    """
    return (
        f"- [reminder {trigger['id']}, set by {for_prompt(source(trigger))}, when "
        f"'{for_prompt(trigger['pattern'])}' comes up] {for_prompt(trigger['reminder'])}"
    )
