"""
Long-term (semantic) memory: what consolidation distils from the journal.

`MemoryStore` is the small interface the rest of the contrib uses, small enough for an adapter
to an external service (add, get, search, count, recent). `EmbeddedMemoryStore` is the default,
needing no extra service: memories live in a `ChunkedList` on the character. Search ranks them
lexically with an incremental BM25 index (`memory.lexical`), or by cosine similarity when they
carry embeddings and the caller passes the query's vector.

A memory keeps the journal entries it was drawn from, its provenance (who said it and how it
was learned) and its audience (who may know it: `memory.audience`). Computing an embedding is
HTTP, so it is never done here: the caller gets vectors in a worker thread and passes them in.
Vectors are stored compactly (base64 of float16 values).

"""

import base64
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

import numpy

from ..clock import to_iso
from .audience import Audience
from .lexical import LexicalIndex
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
        audience: Audience = None,
    ) -> str: ...

    def find_same(self, text: str, audience: Audience) -> dict | None:
        """A memory with exactly this text and audience, if one exists (consolidation stores a
        repeated fact once, and links the new entry to it)."""
        wanted = " ".join(text.lower().split())
        for memory_id, _ in self._lexical_index().search(text, 5):
            memory = self.get(memory_id)
            if (
                memory is not None
                and " ".join(memory["text"].lower().split()) == wanted
                and memory.get("audience") == (None if audience is None else sorted(audience))
            ):
                return memory
        return None

    def find_corroborated(
        self, fact: str, speaker: str | None, audience: Audience, content: Callable[[str], str]
    ) -> dict | None:
        """A memory of the same claim from someone else (same audience), if one exists.

        Args:
            fact (str): The new fact ("Bob says: the bridge is out").
            speaker (str, optional): Who made the new claim.
            audience (list or None): Its audience.
            content (callable): What a claim says, without who said it.

        """
        wanted = content(fact)
        if not wanted or not speaker:
            return None
        audience = None if audience is None else sorted(audience)
        for memory_id, _ in self._lexical_index().search(wanted, 5):
            memory = self.get(memory_id)
            if memory is None or memory.get("audience") != audience:
                continue
            provenance = memory.get("provenance") or {}
            others = set(provenance.get("sources") or [provenance.get("heard_from")]) - {None}
            if content(memory["text"]) == wanted and others and speaker not in others:
                return memory
        return None

    def _lexical_index(self) -> LexicalIndex:
        if self._lexical is None:
            self._lexical = LexicalIndex()
            for memory in self.all():
                self._lexical.add(memory["id"], memory["text"])
        return self._lexical

    def get(self, memory_id: str) -> dict | None: ...

    def search(
        self, query: str, limit: int = 5, query_vector: list[float] | None = None
    ) -> list[dict]: ...

    def count(self) -> int: ...

    def recent(self, limit: int) -> list[dict]: ...


def pack_vector(vector) -> str:
    """A vector as base64 of float16 values (a quarter of its JSON size)."""
    return base64.b64encode(numpy.asarray(vector, dtype=numpy.float16).tobytes()).decode()


def unpack_vector(packed) -> numpy.ndarray | None:
    """The float32 vector of `pack_vector`'s text (a plain list is accepted too)."""
    if packed is None:
        return None
    if isinstance(packed, str):
        return numpy.frombuffer(base64.b64decode(packed), dtype=numpy.float16).astype(numpy.float32)
    return numpy.asarray(packed, dtype=numpy.float32)


def cosine(a, b) -> float:
    a = numpy.asarray(a, dtype=numpy.float32)
    b = numpy.asarray(b, dtype=numpy.float32)
    norm = float(numpy.linalg.norm(a) * numpy.linalg.norm(b))
    return float(a @ b) / norm if norm else 0.0


class EmbeddedMemoryStore:
    """The default `MemoryStore`, kept in the assistant character's Attributes.

    Args:
        store (KeyValueStore): The character's store.
        chunk_size (int): Memories per stored chunk.

    Attributes:
        watchers (list): Callables told of every new or changed memory (the recall index).

    """

    def __init__(self, store: KeyValueStore, chunk_size: int = 100):
        self.memories = ChunkedList(store, "ltm", chunk_size)
        self.watchers: list[Callable[[dict], None]] = []
        self._lexical: LexicalIndex | None = None

    def add(
        self,
        text,
        *,
        importance,
        now,
        source_entry_ids,
        provenance,
        vector=None,
        audience=None,
    ) -> str:
        """Store a memory; returns its id (`m000042`)."""
        memory_id = f"m{len(self.memories):06d}"
        memory = {
            "id": memory_id,
            "text": text,
            "importance": importance,
            "created_at": to_iso(now),
            "source_entry_ids": list(source_entry_ids),
            "provenance": dict(provenance),
            "audience": None if audience is None else sorted(set(audience)),
            "vector": pack_vector(vector) if vector is not None else None,
        }
        self.memories.append(memory)
        self._changed(memory)
        return memory_id

    def find_same(self, text: str, audience: Audience) -> dict | None:
        """A memory with exactly this text and audience, if one exists (consolidation stores a
        repeated fact once, and links the new entry to it)."""
        wanted = " ".join(text.lower().split())
        for memory_id, _ in self._lexical_index().search(text, 5):
            memory = self.get(memory_id)
            if (
                memory is not None
                and " ".join(memory["text"].lower().split()) == wanted
                and memory.get("audience") == (None if audience is None else sorted(audience))
            ):
                return memory
        return None

    def find_corroborated(
        self, fact: str, speaker: str | None, audience: Audience, content: Callable[[str], str]
    ) -> dict | None:
        """A memory of the same claim from someone else (same audience), if one exists.

        Args:
            fact (str): The new fact ("Bob says: the bridge is out").
            speaker (str, optional): Who made the new claim.
            audience (list or None): Its audience.
            content (callable): What a claim says, without who said it.

        """
        wanted = content(fact)
        if not wanted or not speaker:
            return None
        audience = None if audience is None else sorted(audience)
        for memory_id, _ in self._lexical_index().search(wanted, 5):
            memory = self.get(memory_id)
            if memory is None or memory.get("audience") != audience:
                continue
            provenance = memory.get("provenance") or {}
            others = set(provenance.get("sources") or [provenance.get("heard_from")]) - {None}
            if content(memory["text"]) == wanted and others and speaker not in others:
                return memory
        return None

    def _lexical_index(self) -> LexicalIndex:
        if self._lexical is None:
            self._lexical = LexicalIndex()
            for memory in self.all():
                self._lexical.add(memory["id"], memory["text"])
        return self._lexical

    def get(self, memory_id: str) -> dict | None:
        try:
            position = int(memory_id.removeprefix("m"))
            memory = self.memories.get(position)
        except (ValueError, IndexError):
            return None
        if memory["id"] != memory_id or memory.get("forgotten"):
            return None
        return memory

    def update(self, memory: dict) -> None:
        """Write back one changed memory."""
        self.memories.update({int(memory["id"].removeprefix("m")): memory})
        self._changed(memory)

    def forget(self, memory_id: str, now: datetime, reason: str) -> bool:
        """Empty a memory in place (its id stays, so links to it can be pruned)."""
        memory = self.get(memory_id)
        if memory is None:
            return False
        self.update(
            {
                **memory,
                "text": "",
                "vector": None,
                "forgotten": {"at": to_iso(now), "reason": reason},
            }
        )
        return True

    def _changed(self, memory: dict) -> None:
        if self._lexical is not None:
            if memory.get("forgotten"):
                self._lexical.remove(memory["id"])
            else:
                self._lexical.add(memory["id"], memory["text"])
        for watcher in self.watchers:
            watcher(memory)

    def count(self) -> int:
        return len(self.memories)

    def all(self) -> list[dict]:
        """Every memory not forgotten, oldest first."""
        return [m for m in self.memories.all() if not m.get("forgotten")]

    def recent(self, limit: int) -> list[dict]:
        return [m for m in reversed(self.memories.tail(limit)) if not m.get("forgotten")]

    def search(self, query: str, limit: int = 5, query_vector=None) -> list[dict]:
        """The best matches, best first, each with a `score`."""
        if query_vector is not None:
            scored = [
                {**m, "score": cosine(query_vector, unpack_vector(m["vector"]))}
                for m in self.all()
                if m.get("vector") is not None
            ]
            if scored:
                scored.sort(key=lambda m: m["score"], reverse=True)
                return scored[:limit]
        return [
            {**self.get(memory_id), "score": score}
            for memory_id, score in self._lexical_index().search(query, limit)
        ]
