"""
Long-term (semantic) memory: what consolidation distils from the journal.

`MemoryStore` is the small interface the rest of the contrib uses, small enough for an adapter
to an external service such as Mem0 (add, get, search, count, recent). `EmbeddedMemoryStore` is
the default, needing no extra service: memories live in a `ChunkedList` on the character, and
search ranks them by cosine similarity when they carry embeddings (an embeddings model is
configured) and lexically with `lunr` (which Evennia already ships) otherwise.

Computing an embedding is HTTP, so it is never done here: the caller gets vectors in a worker
thread and passes them in.

"""

import math
from datetime import datetime
from typing import Protocol

from lunr import lunr

from ..clock import to_iso
from .store import ChunkedList, KeyValueStore


class MemoryStore(Protocol):
    def add(
        self,
        text: str,
        *,
        importance: int,
        now: datetime,
        source_entry_ids: list[str],
        provenance: dict,
        vector: list[float] | None = None,
    ) -> str: ...

    def get(self, memory_id: str) -> dict | None: ...

    def search(
        self, query: str, limit: int = 5, query_vector: list[float] | None = None
    ) -> list[dict]: ...

    def count(self) -> int: ...

    def recent(self, limit: int) -> list[dict]: ...


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


class EmbeddedMemoryStore:
    """The default `MemoryStore`, kept in the assistant character's Attributes."""

    def __init__(self, store: KeyValueStore, chunk_size: int = 100):
        self.memories = ChunkedList(store, "ltm", chunk_size)
        self._index = None
        self._indexed_count = -1

    def add(self, text, *, importance, now, source_entry_ids, provenance, vector=None) -> str:
        memory_id = f"m{len(self.memories):06d}"
        self.memories.append(
            {
                "id": memory_id,
                "text": text,
                "importance": importance,
                "created_at": to_iso(now),
                "source_entry_ids": list(source_entry_ids),
                "provenance": dict(provenance),
                "vector": list(vector) if vector else None,
            }
        )
        return memory_id

    def get(self, memory_id: str) -> dict | None:
        try:
            position = int(memory_id.lstrip("m"))
            memory = self.memories.get(position)
        except (ValueError, IndexError):
            return None
        return memory if memory["id"] == memory_id else None

    def count(self) -> int:
        return len(self.memories)

    def recent(self, limit: int) -> list[dict]:
        return list(reversed(self.memories.tail(limit)))

    def search(self, query: str, limit: int = 5, query_vector=None) -> list[dict]:
        """The best matches, best first, each with a `score`."""
        memories = self.memories.all()
        if query_vector is not None and any(m.get("vector") for m in memories):
            scored = [
                {**m, "score": cosine(query_vector, m["vector"])}
                for m in memories
                if m.get("vector")
            ]
            scored.sort(key=lambda m: m["score"], reverse=True)
            return scored[:limit]
        return self._lexical(memories, query, limit)

    def _lexical(self, memories: list[dict], query: str, limit: int) -> list[dict]:
        if not memories or not query.strip():
            return []
        if self._index is None or self._indexed_count != len(memories):
            self._index = lunr(
                ref="id",
                fields=["text"],
                documents=[{"id": m["id"], "text": m["text"]} for m in memories],
            )
            self._indexed_count = len(memories)
        by_id = {m["id"]: m for m in memories}
        # lunr's query syntax is for builders; players' words are searched as plain terms
        terms = " ".join(word for word in _plain_words(query))
        if not terms:
            return []
        try:
            hits = self._index.search(terms)
        except Exception:
            return []
        return [{**by_id[hit["ref"]], "score": hit["score"]} for hit in hits[:limit]]


def _plain_words(text: str) -> list[str]:
    return [
        "".join(ch for ch in word if ch.isalnum())
        for word in text.split()
        if any(c.isalnum() for c in word)
    ]
