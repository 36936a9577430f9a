"""Links between memories as a kind of memory: which belong together (`memory.links`)."""

import re
from collections.abc import Callable
from datetime import datetime

from pydantic import Field

from ..links import PREFIX, MemoryLinks, chunk_key
from ..store import KeyValueStore
from .base import MAX_ID_CHARS, MAX_ITEMS, Kind, Strict


class Link(Strict):
    """One link between two memories, once."""

    a: str = Field(max_length=MAX_ID_CHARS)
    b: str = Field(max_length=MAX_ID_CHARS)
    strength: float = Field(ge=0.0, le=1.0)


class LinksSection(Strict):
    """The links, and how far the link step has gone through the long-term memories."""

    cursor: int = Field(default=0, ge=0)
    items: list[Link] = Field(default_factory=list, max_length=MAX_ITEMS)


class BuildersLinks:
    """The links between memories as builders read them (`MemoryAdmin.kind("links")`).

    Args:
        brain (Brain): The assistant's brain (its links and recall index).
        now (callable): `now()` -> the current real time.

    """

    def __init__(self, brain, now: Callable[[], datetime]):
        self.brain = brain
        self.now = now

    def strongest(self, limit: int = 50) -> list[tuple[str, str, float, str, str]]:
        """The strongest links between memories.

        Args:
            limit (int, optional): How many at most.

        Returns:
            list: (id, id, strength, text, text) tuples; a missing memory's text is "?".

        """
        brain = self.brain
        rows = []
        for one, other, strength in brain.links.all()[:limit]:
            first, second = brain.index.doc(one), brain.index.doc(other)
            rows.append(
                (one, other, strength, first.text if first else "?", second.text if second else "?")
            )
        return rows


class LinksKind(Kind):
    name = "links"
    label = "links"
    one = "link"
    section = LinksSection
    keys = re.compile(rf"^{PREFIX}")
    counts_as_held = False
    in_status = False  # counting reads every link

    def default(self) -> LinksSection:
        return LinksSection()

    def export(self, memory: KeyValueStore, state: KeyValueStore) -> dict:
        links = MemoryLinks(memory)
        return {
            "cursor": links.cursor,
            "items": [{"a": a, "b": b, "strength": s} for a, b, s in links.all()],
        }

    def check(self, section: LinksSection, known, problems) -> None:
        ends = known["journal"] | known["long_term"]
        for number, link in enumerate(section.items):
            for end in (link.a, link.b):
                if end not in ends:
                    problems.append(
                        f"memory.links.items[{number}]: {end[:40]} is not a journal entry or "
                        "long-term memory of the file"
                    )

    def write(self, section: dict, memory: KeyValueStore, state: KeyValueStore) -> None:
        chunks: dict[str, dict] = {}
        for link in section["items"]:
            a, b, strength = link["a"], link["b"], link["strength"]
            chunks.setdefault(chunk_key(a), {}).setdefault(a, {})[b] = strength
            chunks.setdefault(chunk_key(b), {}).setdefault(b, {})[a] = strength
        for key, value in chunks.items():
            memory.set(key, value)
        if chunks:
            memory.set(MemoryLinks.INDEX, sorted(chunks))
        if section["cursor"]:
            MemoryLinks(memory).move_cursor(section["cursor"])

    def builder(self, brain, now: Callable[[], datetime]) -> BuildersLinks:
        return BuildersLinks(brain, now)


KIND = LinksKind()
