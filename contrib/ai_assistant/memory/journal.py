"""
The journal: the assistant's episodic memory, written by the `add_journal_entry` tool (and, in
later phases, by compaction and reflection).

Each entry keeps its provenance: who wrote it (the assistant), whether it is self-written or
heard from someone (and from whom), where and when. Entries are stored in a `ChunkedList`, so
the cost of a write does not grow with the journal.

"""

from datetime import datetime

from ..clock import to_iso
from .importance import heuristic_importance
from .store import ChunkedList, KeyValueStore

SELF = "self"
HEARD = "heard"
COMPACTION = "compaction"
SYNTHESIS_PREFIXES = ("[SYNTHESIS]", "[CONTEXT SYNTHESIS]")


class Journal:
    """The journal of one assistant.

    Args:
        store (KeyValueStore): The assistant character's store.
        chunk_size (int): Entries per stored chunk.

    """

    def __init__(self, store: KeyValueStore, chunk_size: int = 100):
        self.entries = ChunkedList(store, "journal", chunk_size)

    def __len__(self) -> int:
        return len(self.entries)

    def add(
        self,
        content: str,
        *,
        author: str,
        now: datetime,
        location: str | None = None,
        source_type: str = SELF,
        heard_from: str | None = None,
        importance: int | None = None,
        tags: list[str] | None = None,
    ) -> dict:
        """Append an entry and return it.

        Args:
            content (str): The text.
            author (str): Who wrote it (the assistant's name).
            now (datetime): When.
            location (str, optional): Where.
            source_type (str): SELF, HEARD, COMPACTION, ...
            heard_from (str, optional): Whose words it records, when HEARD.
            importance (int, optional): 1-10 given by the model; else a heuristic score.
            tags (list, optional): Short labels.

        """
        seq = len(self.entries)
        entry = {
            "id": f"j{seq:06d}",
            "seq": seq,
            "content": content,
            "author": author,
            "source_type": source_type,
            "heard_from": heard_from,
            "location": location,
            "created_at": to_iso(now),
            "importance": importance or heuristic_importance(content),
            "scoring_method": "llm" if importance else "heuristic",
            "tags": list(tags or []),
            "consolidated": False,
            "memory_ids": [],
        }
        self.entries.append(entry)
        return entry

    def recent(self, count: int) -> list[dict]:
        return self.entries.tail(count)

    def all(self) -> list[dict]:
        return self.entries.all()

    @staticmethod
    def is_synthesis(entry: dict) -> bool:
        return entry.get("content", "").startswith(SYNTHESIS_PREFIXES)

    def unconsolidated(self) -> list[dict]:
        """Entries not yet consolidated (nor skipped), synthesis entries excluded
        (they are summaries, not raw experience)."""
        return [
            entry
            for entry in self.entries.all()
            if not entry.get("consolidated")
            and not entry.get("skipped")
            and not self.is_synthesis(entry)
        ]
