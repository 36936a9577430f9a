"""The small values sleep steps keep beside the memory, how far they have read it: the journal
position relationships were updated through (`memory.relationships.CURSOR_KEY`)."""

from typing import Any, Literal

from typing_extensions import TypedDict  # pydantic on Python 3.11 needs this one

from pydantic import Field

from ...records import Count, Time, check_record
from ..relationships import CURSOR_KEY
from ..store import KeyValueStore
from .base import Kind

CURSOR_KEYS = (CURSOR_KEY,)


class Cursor(TypedDict, total=False):
    """How far a sleep step has read the journal."""

    seq: Count
    at: Time | None


class CursorsKind(Kind):
    name = "cursors"
    label = "sleep progress marks"
    one = "sleep progress mark"
    section = dict[Literal[CURSOR_KEYS], dict[str, Any]]  # type: ignore[valid-type]
    counts_as_held = False
    in_status = False  # marks of sleep's progress, not records

    def default(self) -> dict:
        return {}

    def field(self):
        return self.section, Field(default_factory=dict)

    def export(self, memory: KeyValueStore, state: KeyValueStore) -> dict:
        return {key: value for key in CURSOR_KEYS if isinstance(value := memory.get(key), dict)}

    def check(self, section: dict, known, problems) -> None:
        for key, cursor in section.items():
            problems.extend(check_record(Cursor, cursor, f"memory.cursors.{key}"))

    def write(self, section: dict, memory: KeyValueStore, state: KeyValueStore) -> None:
        for key, value in section.items():
            memory.set(key, value)


KIND = CursorsKind()
