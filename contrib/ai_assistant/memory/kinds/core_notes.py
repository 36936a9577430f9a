"""Core notes as a kind of memory: what the assistant keeps in mind always (`memory.core`)."""

import re
from collections.abc import Callable
from datetime import datetime

from pydantic import Field

from ...errors import Refused
from ...records import MAX_CORE_KEY_CHARS, MAX_CORE_VALUE_CHARS, CoreNote, check_record
from .. import core
from ..store import KeyValueStore
from .base import BUILDER, MAX_INNER_ITEMS, Kind


class BuildersCoreNotes:
    """The core notes a builder reads, pins and removes (`MemoryAdmin.kind("core_notes")`);
    each change is recorded in the review log, so a rollback keeps it.

    Args:
        brain (Brain): The assistant's brain (its core memory, review and configuration).
        now (callable): `now()` -> the current real time.

    """

    def __init__(self, brain, now: Callable[[], datetime]):
        self.brain = brain
        self.now = now

    def notes(self) -> tuple[dict[str, CoreNote], int, int]:
        """The core memory and its size.

        Returns:
            tuple: (items, tokens, token budget); items is a dict of notes by slot, tokens
                those of the largest block of the model's notes one conversation sees (each
                conversation's room is the budget; builders' pinned notes have their own).

        """
        memory = self.brain.core_memory
        model_notes = {k: n for k, n in memory.largest_view().items() if not n.get("pinned")}
        return (
            memory.items(),
            memory.tokens_of(model_notes),
            self.brain.config.memory_block_tokens,
        )

    def pinned_tokens(self) -> int:
        """Tokens of the builders' pinned core notes (their own room of `memory_block_tokens`).

        Returns:
            int: The token count.

        """
        return self.brain.core_memory.pinned_tokens()

    def set(self, key: str, value: str, by: str | None = None) -> int:
        """Set one core memory note: a builder's, pinned (the model may read it, not change
        it), in a room of its own. Recorded in the review log, so a rollback keeps it.

        Args:
            key (str): The note's name.
            value (str): The note's text.
            by (str, optional): The builder's name, kept with the note.

        Returns:
            int: The tokens the builders' pinned notes now use.

        Raises:
            Refused: A bad key or value, or the pinned notes would exceed their budget.

        """
        key = (key or "").strip()
        value = (value or "").strip()
        if not key or len(key) > MAX_CORE_KEY_CHARS:
            raise Refused(
                f"A key is 1 to at most {MAX_CORE_KEY_CHARS} characters; this one has {len(key)}."
            )
        if not value or len(value) > MAX_CORE_VALUE_CHARS:
            raise Refused(
                f"A value is 1 to at most {MAX_CORE_VALUE_CHARS} characters; "
                f"this one has {len(value)}."
            )
        brain = self.brain
        now = self.now()
        # a builder's note is pinned: sleep's consolidation leaves it as it is
        tokens = brain.core_memory.set(
            key, value, now, brain.config.memory_block_tokens, pinned=True, by=by
        )
        # a correction like a forget: a rollback sets it again (see `memory.review`)
        brain.review.record_core_set(brain.core_memory.items()[key], now, by or BUILDER)
        return tokens

    def remove(self, key: str, by: str | None = None) -> None:
        """Remove one core memory note, whoever's it is. Recorded in the review log (its
        slot, not its words), so a rollback does not bring it back.

        Args:
            key (str): The note's name, as `notes()` lists it.
            by (str, optional): The builder's name, kept in the review log.

        Raises:
            Refused: There is no such note.

        """
        slot = (key or "").strip()
        if not self.brain.core_memory.remove(slot):
            raise Refused(f"No core memory '{str(key)[:60]}' to remove.")
        self.brain.review.record_core_remove(slot, self.now(), by or BUILDER)


class CoreNotesKind(Kind):
    name = "core_notes"
    label = "core notes"
    one = "core note"
    keys = re.compile(rf"^{re.escape(core.KEY)}$")
    first_read = (core.KEY,)

    def field(self):
        return list[dict], Field(default_factory=list, max_length=MAX_INNER_ITEMS)

    def export(self, memory: KeyValueStore, state: KeyValueStore) -> list[dict]:
        return list((memory.get(core.KEY) or {}).values())

    def check(self, section: list[dict], known, problems) -> None:
        slots: set[str] = set()
        for number, note in enumerate(section):
            where = f"memory.core_notes[{number}]"
            problems.extend(check_record(CoreNote, note, where, required=("key", "value")))
            if isinstance(note.get("key"), str):
                slot = core.note_slot(note["key"], note.get("audience"))
                if slot in slots:
                    problems.append(f"{where}: a second note {note['key'][:40]!r} of that audience")
                slots.add(slot)

    def builder(self, brain, now: Callable[[], datetime]) -> BuildersCoreNotes:
        return BuildersCoreNotes(brain, now)

    def write(self, section: list[dict], memory: KeyValueStore, state: KeyValueStore) -> None:
        if section:
            memory.set(core.KEY, {core.note_slot(n["key"], n.get("audience")): n for n in section})


KIND = CoreNotesKind()
