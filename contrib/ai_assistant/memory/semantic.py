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
    """The interface for long-term memory that the rest of the contrib uses.

    It is small on purpose, so an adapter to an external memory service can implement it.

    """

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
    ) -> str:
        """Store a new memory.

        Args:
            text (str): What is remembered.
            importance (int): How important the memory is.
            now (datetime): When it is stored.
            source_entry_ids (list): Ids of the journal entries it was drawn from.
            provenance (dict): Who said it and how it was learned.
            vector (list, optional): The text's embedding, if one was computed.
            audience (list or None): Who may know it; None means anyone.

        Returns:
            str: The new memory's id.

        """
        ...

    def find_same(self, text: str, audience: Audience) -> dict | None:
        """A memory with exactly this text and audience, if one exists (consolidation stores a
        repeated fact once, and links the new entry to it).

        Case and runs of whitespace are ignored when comparing texts.

        Args:
            text (str): The text to look for.
            audience (list or None): The audience the memory must have.

        Returns:
            dict or None: The matching memory, or None if there is none.

        """
        ...

    def find_corroborated(
        self,
        fact: str,
        speaker: str | None,
        audience: Audience,
        content: Callable[[str], str],
        voice: str | None = None,
    ) -> dict | None:
        """A memory of the same claim from someone else (same audience), if one exists.

        Args:
            fact (str): The new fact ("Bob says: the bridge is out").
            speaker (str, optional): Who made the new claim.
            audience (list or None): Its audience.
            content (callable): What a claim says, without who said it.
            voice (str, optional): Who the speaker is, counted once however many characters
                they play (`memory.provenance.voice_of`).

        Returns:
            dict or None: A memory with the same content and audience whose sources include
                neither `speaker` nor `voice`, or None (also when `speaker` or the content is
                empty).

        """
        ...

    def get(self, memory_id: str) -> dict | None:
        """Look up one memory by id.

        Args:
            memory_id (str): The memory's id.

        Returns:
            dict or None: The memory, or None if there is no such memory.

        """
        ...

    def search(
        self, query: str, limit: int = 5, query_vector: list[float] | None = None
    ) -> list[dict]:
        """Find the memories that best match a query.

        Args:
            query (str): The text to search for.
            limit (int): The most memories to return.
            query_vector (list, optional): The query's embedding, for a similarity search.

        Returns:
            list: Matching memories, best first, each with a `score`.

        """
        ...

    def count(self) -> int:
        """Count the stored memories.

        Returns:
            int: How many memories there are.

        """
        ...

    def recent(self, limit: int) -> list[dict]:
        """The most recently stored memories.

        Args:
            limit (int): The most memories to return.

        Returns:
            list: The memories, newest first.

        """
        ...


def pack_vector(vector) -> str:
    """A vector as base64 of float16 values (a quarter of its JSON size).

    Args:
        vector (list or numpy.ndarray): The numbers to pack.

    Returns:
        str: The packed text.

    """
    return base64.b64encode(numpy.asarray(vector, dtype=numpy.float16).tobytes()).decode()


def unpack_vector(packed) -> numpy.ndarray | None:
    """The float32 vector of `pack_vector`'s text (a plain list is accepted too).

    Args:
        packed (str, list or None): Text from `pack_vector`, or a plain list of numbers.

    Returns:
        numpy.ndarray or None: The vector as float32, or None if `packed` is None.

    """
    if packed is None:
        return None
    if isinstance(packed, str):
        return numpy.frombuffer(base64.b64decode(packed), dtype=numpy.float16).astype(numpy.float32)
    return numpy.asarray(packed, dtype=numpy.float32)


def cosine(a, b) -> float:
    """The cosine similarity of two vectors.

    Args:
        a (list or numpy.ndarray): The first vector.
        b (list or numpy.ndarray): The second vector.

    Returns:
        float: The similarity, from -1 to 1; 0.0 if either vector has zero length.

    """
    a = numpy.asarray(a, dtype=numpy.float32)
    b = numpy.asarray(b, dtype=numpy.float32)
    norm = float(numpy.linalg.norm(a) * numpy.linalg.norm(b))
    return float(a @ b) / norm if norm else 0.0


# its storage: a chunked list on the character
MEMORIES = "ltm"
CHUNK = 100


class EmbeddedMemoryStore:
    """The default `MemoryStore`, kept in the assistant character's Attributes.

    Args:
        store (KeyValueStore): The character's store.
        chunk_size (int): Memories per stored chunk.

    Attributes:
        watchers (list): Callables told of every new or changed memory (the recall index).

    """

    def __init__(self, store: KeyValueStore, chunk_size: int = CHUNK):
        self.memories = ChunkedList(store, MEMORIES, chunk_size)
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
        """Store a memory; returns its id (`m000042`).

        Watchers and the lexical index are told of the new memory.

        Args:
            text (str): What is remembered.
            importance (int): How important the memory is.
            now (datetime): When it is stored.
            source_entry_ids (list): Ids of the journal entries it was drawn from.
            provenance (dict): Who said it and how it was learned.
            vector (list, optional): The text's embedding; stored packed if given.
            audience (list or None): Who may know it; None means anyone.

        Returns:
            str: The new memory's id.

        """
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
        """Look for the text among the best lexical matches (see `MemoryStore.find_same`).

        Args:
            text (str): The text to look for.
            audience (list or None): The audience the memory must have.

        Returns:
            dict or None: The memory, or None.

        """
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
        self,
        fact: str,
        speaker: str | None,
        audience: Audience,
        content: Callable[[str], str],
        voice: str | None = None,
    ) -> dict | None:
        """Look for the claim among the best lexical matches of what it says (see
        `MemoryStore.find_corroborated`).

        Args:
            fact (str): The new fact.
            speaker (str, optional): Who made it.
            audience (list or None): Its audience.
            content (callable): What a claim says, without who said it.
            voice (str, optional): Who the speaker is (their account, else their key): a
                memory of the same voice is not someone else's.

        Returns:
            dict or None: A memory of the same claim from someone else, or None.

        """
        wanted = content(fact)
        if not wanted or not speaker:
            return None
        audience = None if audience is None else sorted(audience)
        mine = {speaker.strip().lower(), (voice or "").strip().lower()} - {""}
        for memory_id, _ in self._lexical_index().search(wanted, 5):
            memory = self.get(memory_id)
            if memory is None or memory.get("audience") != audience:
                continue
            provenance = memory.get("provenance") or {}
            names = set(provenance.get("sources") or [provenance.get("heard_from")]) - {None}
            # a person is one voice however many characters they speak through (their
            # account): the same voice, or the same name, is not someone else
            others = {name.lower() for name in names} | {
                v.lower() for v in provenance.get("voices") or [provenance.get("voice")] if v
            }
            if content(memory["text"]) == wanted and names and not mine & others:
                return memory
        return None

    def _lexical_index(self) -> LexicalIndex:
        if self._lexical is None:
            self._lexical = LexicalIndex()
            for memory in self.all():
                self._lexical.add(memory["id"], memory["text"])
        return self._lexical

    def get(self, memory_id: str) -> dict | None:
        """Look up one memory by id.

        Args:
            memory_id (str): The memory's id, such as `m000042`.

        Returns:
            dict or None: The memory, or None if the id is unknown or malformed or the
                memory was forgotten.

        """
        try:
            position = int(memory_id.removeprefix("m"))
            memory = self.memories.get(position)
        except (ValueError, IndexError):
            return None
        if memory["id"] != memory_id or memory.get("forgotten"):
            return None
        return memory

    def update(self, memory: dict) -> None:
        """Write back one changed memory.

        Watchers and the lexical index are told of the change.

        Args:
            memory (dict): The memory, with its `id` unchanged.

        """
        self.memories.update({int(memory["id"].removeprefix("m")): memory})
        self._changed(memory)

    def forget(self, memory_id: str, now: datetime, reason: str) -> bool:
        """Empty a memory in place (its id stays, so links to it can be pruned).

        Its text and vector are cleared and the time and reason are recorded.

        Args:
            memory_id (str): The memory to forget.
            now (datetime): When it is forgotten.
            reason (str): Why it is forgotten.

        Returns:
            bool: True if the memory was forgotten, False if there was no such memory.

        """
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
        """Count the stored memories, forgotten ones included.

        Returns:
            int: How many memories were ever stored.

        """
        return len(self.memories)

    def all(self) -> list[dict]:
        """Every memory not forgotten, oldest first.

        Returns:
            list: The memories.

        """
        return [m for m in self.memories.all() if not m.get("forgotten")]

    def recent(self, limit: int) -> list[dict]:
        """The most recently stored memories, skipping forgotten ones.

        Args:
            limit (int): How many of the newest memories to look at.

        Returns:
            list: Those not forgotten, newest first (may be fewer than `limit`).

        """
        return [m for m in reversed(self.memories.tail(limit)) if not m.get("forgotten")]

    def search(self, query: str, limit: int = 5, query_vector=None) -> list[dict]:
        """The best matches, best first, each with a `score`.

        With a query vector, memories that have vectors are ranked by cosine similarity;
        otherwise (or if no memory has a vector) they are ranked lexically with BM25.

        Args:
            query (str): The text to search for.
            limit (int): The most memories to return.
            query_vector (list, optional): The query's embedding.

        Returns:
            list: Copies of the matching memories, each with a `score` added.

        """
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
