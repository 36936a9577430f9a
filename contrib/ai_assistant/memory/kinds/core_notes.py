"""Core notes as a kind of memory: what the assistant keeps in mind always (`memory.core`)."""

import re

from pydantic import Field

from ...records import CoreNote, check_record
from .. import core
from ..store import KeyValueStore
from .base import MAX_INNER_ITEMS, Kind


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

    def write(self, section: list[dict], memory: KeyValueStore, state: KeyValueStore) -> None:
        if section:
            memory.set(core.KEY, {core.note_slot(n["key"], n.get("audience")): n for n in section})


KIND = CoreNotesKind()
