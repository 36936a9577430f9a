"""The journal as a kind of memory: what happened and was said, in order (`memory.journal`)."""

import re
from typing import TypedDict

from ...records import Count, JournalEntry, Number, Texts, check_record
from .. import journal
from .base import ChunkedKind, refs


class JournalState(TypedDict, total=False):
    """The small values kept with the journal."""

    importance_since_reflection: Number  # journal.REFLECTION_COUNTER
    rested: Count  # journal.RESTED_COUNT
    critical_bookmarks: Texts  # journal.CRITICAL_BOOKMARKS


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
