"""Long-term memories as a kind of memory: what sleep drew from the journal
(`memory.semantic`)."""

import re
from collections.abc import Callable, Sequence
from datetime import datetime

from ...records import LongTermMemory
from .. import semantic
from .base import ChunkedKind, refs


class NewestMemories(Sequence):
    """The long-term memories not forgotten, newest first, as a sequence a pager slices.

    Only the `MemoryStore` protocol is used (`count`, `recent`), so a game's own store works
    too: a page reads the newest memories down to the page's end, never the whole store. Its
    length is the store's count, forgotten memories included (the protocol does not count them
    apart), so the last page may hold fewer than a page's worth.

    Args:
        store (MemoryStore): The assistant's long-term store.

    """

    def __init__(self, store):
        self.store = store
        self.total = store.count()

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, index):
        if not isinstance(index, slice):
            raise TypeError("NewestMemories is sliced by pages only.")
        start, stop, _ = index.indices(self.total)
        if start >= stop:
            return []
        # forgotten memories are skipped by `recent`: look further back until the page is full
        look = stop
        while True:
            found = self.store.recent(look)
            if len(found) >= stop or look >= self.total:
                return found[start:stop]
            look = min(self.total, look * 2)


class BuildersLongTerm:
    """The long-term memories as builders read them (`MemoryAdmin.kind("long_term")`).

    Args:
        brain (Brain): The assistant's brain (its long-term store).
        now (callable): `now()` -> the current real time.

    """

    def __init__(self, brain, now: Callable[[], datetime]):
        self.brain = brain
        self.now = now

    def newest(self) -> NewestMemories:
        """The long-term memories not forgotten, newest first, paged as they are read.

        Returns:
            NewestMemories: A sequence of memories, sliced by pages.

        """
        return NewestMemories(self.brain.long_term)

    def recent(self, limit: int = 50) -> list[dict]:
        """The newest long-term memories, newest first.

        Args:
            limit (int, optional): How many at most.

        Returns:
            list: The memories, as dicts.

        """
        return self.brain.long_term.recent(limit)


class LongTermKind(ChunkedKind):
    name = "long_term"
    label = "long-term memories"
    one = "long-term memory"
    prefix = semantic.MEMORIES
    chunk = semantic.CHUNK
    record_type = LongTermMemory
    required = ("text",)
    id_pattern = re.compile(r"^m\d{6,}$")
    positional = "m"

    def export(self, memory, state) -> dict:
        section = super().export(memory, state)
        # embeddings belong to one model: found by their words until made again
        section["items"] = [{**item, "vector": None} for item in section["items"]]
        return section

    def check(self, section, known, problems) -> None:
        super().check(section, known, problems)
        for number, item in enumerate(section.items):
            where = f"memory.long_term.items[{number}]"
            if item.get("vector") is not None:
                problems.append(f"{where}.vector: null (embeddings are made again, never imported)")
            refs(
                item.get("source_entry_ids"),
                known["journal"],
                f"{where}.source_entry_ids",
                problems,
            )

    def builder(self, brain, now: Callable[[], datetime]) -> BuildersLongTerm:
        return BuildersLongTerm(brain, now)

    def size(self, brain) -> int:
        # a game may keep its memories in a store of its own (`make_long_term_store`)
        return brain.long_term.count()


KIND = LongTermKind()
