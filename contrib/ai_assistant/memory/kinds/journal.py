"""The journal as a kind of memory: what happened and was said, in order (`memory.journal`)."""

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing_extensions import TypedDict  # pydantic on Python 3.11 needs this one

from ...records import Count, JournalEntry, Number, Texts, check_record
from .. import journal
from .base import ChunkedKind, refs


class JournalState(TypedDict, total=False):
    """The small values kept with the journal."""

    importance_since_reflection: Number  # journal.REFLECTION_COUNTER
    rested: Count  # journal.RESTED_COUNT
    critical_bookmarks: Texts  # journal.CRITICAL_BOOKMARKS


class NewestEntries(Sequence):
    """The journal, newest first, as a sequence a pager slices without loading it all.

    Args:
        journal (Journal): The assistant's journal.
        seqs (list, optional): Positions of the entries to show (a filter's matches), oldest
            first; None for every entry.

    """

    def __init__(self, journal, seqs: list[int] | None = None):
        self.entries = journal.entries
        self.seqs = seqs

    def __len__(self) -> int:
        return len(self.entries) if self.seqs is None else len(self.seqs)

    def __getitem__(self, index):
        if not isinstance(index, slice):
            raise TypeError("NewestEntries is sliced by pages only.")
        total = len(self)
        start, stop, _ = index.indices(total)
        if start >= stop:
            return []
        if self.seqs is None:
            # newest first: page positions counted from the end of the chunked list
            return list(reversed(self.entries.slice(total - stop, total - start)))
        wanted = list(reversed(self.seqs))[start:stop]
        return [self.entries.get(seq) for seq in wanted]


class BuildersJournal:
    """The journal as builders read it (`MemoryAdmin.kind("journal")`): paged newest first,
    filtered a chunk at a time, and its reflections.

    Args:
        brain (Brain): The assistant's brain (its journal).
        now (callable): `now()` -> the current real time.

    """

    def __init__(self, brain, now: Callable[[], datetime]):
        self.brain = brain
        self.now = now

    def count(self) -> int:
        """How many journal entries there are (pruned and forgotten ones included)."""
        return len(self.brain.journal)

    def newest(self, seqs: list[int] | None = None) -> NewestEntries:
        """The journal (or the entries at `seqs`), newest first, paged as it is read.

        Args:
            seqs (list, optional): The positions to show, oldest first (`matches`).

        Returns:
            NewestEntries: A sequence of entries, sliced by pages.

        """
        return NewestEntries(self.brain.journal, seqs)

    def matches(
        self, start: int, stop: int, speaker: str = "", query: str = "", audience: str = ""
    ) -> list[int]:
        """Positions from `start` to `stop` of the entries that pass the filters (a caller
        that must not hold the game up reads a chunk at a time).

        Args:
            start (int): The first position read.
            stop (int): The position after the last one read.
            speaker (str, optional): Part of the speaker's (or author's) name.
            query (str, optional): Words the text must hold.
            audience (str, optional): "private", "public" or empty for both.

        Returns:
            list: The matching positions, oldest first.

        """
        speaker, query = speaker.strip().lower(), query.strip().lower()
        seqs = []
        for offset, entry in enumerate(self.brain.journal.entries.slice(start, stop)):
            who = f"{entry.get('heard_from') or ''} {entry.get('author') or ''}".lower()
            if speaker and speaker not in who:
                continue
            if query and query not in (entry.get("content") or "").lower():
                continue
            private = entry.get("audience") is not None
            if (audience == "private" and not private) or (audience == "public" and private):
                continue
            seqs.append(start + offset)
        return seqs

    def chunk(self) -> int:
        """How many entries one stored chunk of the journal holds (a reader's natural step)."""
        return max(1, self.brain.journal.entries.chunk_size)

    def reflections(self) -> list[JournalEntry]:
        """The reflections in the journal, newest first.

        Returns:
            list: The reflection entries, as dicts.

        """
        journal = self.brain.journal
        return [e for e in reversed(journal.all()) if journal.is_reflection(e)]


class JournalKind(ChunkedKind):
    name = "journal"
    label = "journal entries"
    one = "journal entry"
    prefix = journal.ENTRIES
    chunk = journal.CHUNK
    record_type = JournalEntry
    required = ("content",)
    id_pattern = re.compile(r"^j\d{6,}$")
    positional = "j"
    # embeddings belong to one model: the next sleep's embeddings step makes them again
    left_out = (journal.EMBEDDED,)

    def builder(self, brain, now: Callable[[], datetime]) -> BuildersJournal:
        return BuildersJournal(brain, now)

    def owns(self, key: str) -> bool:
        return super().owns(key) or key.startswith(f"{journal.VECTORS}:")

    def check(self, section, known, problems) -> None:
        super().check(section, known, problems)
        for number, entry in enumerate(section.items):
            where = f"memory.journal.items[{number}]"
            if entry.get("seq") not in (None, number):
                problems.append(f"{where}.seq: {entry.get('seq')} is not its position {number}")
            refs(entry.get("cites"), known["journal"], f"{where}.cites", problems)
            refs(entry.get("memory_ids"), known["long_term"], f"{where}.memory_ids", problems)
        state = section.state
        if journal.EMBEDDED in state:
            problems.append(
                f"memory.journal.state.{journal.EMBEDDED}: not in a memory file (embeddings are "
                "made again)"
            )
        problems.extend(check_record(JournalState, state, "memory.journal.state"))
        refs(
            state.get(journal.CRITICAL_BOOKMARKS),
            known["journal"],
            "memory.journal.state",
            problems,
        )


KIND = JournalKind()
