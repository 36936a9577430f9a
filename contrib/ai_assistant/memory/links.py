"""
Memory links: which memories belong together, made while dreaming.

A link joins two memories (long-term memories `m...` or journal entries `j...`, reflections
among them) both ways, with a strength from 0 to 1 (how similar their words or embeddings are,
how close in time, how many people they share). Recall follows a hit's strongest links to
memories the query alone would have missed. Each memory keeps at most a configured number of
links, the strongest.

Links are stored in chunks on the character (`links:m0000`, `links:j0001`, ...: the
neighbours of a hundred memories each), so adding links rewrites only the chunks of the two
memories joined, and a lookup reads one chunk. How far the link step has gone through the
long-term memories (`links:progress`) is kept with them, from one sleep to the next.

"""

from .store import KeyValueStore

CHUNK = 100
# every key of the links starts with it: links:index, links:progress, links:m0000, ...
PREFIX = "links:"


def chunk_key(memory_id: str) -> str:
    """The key of the chunk holding a memory's links (`links:m0000`)."""
    prefix, number = memory_id[0], int(memory_id[1:])
    return f"{PREFIX}{prefix}{number // CHUNK:04d}"


class MemoryLinks:
    """The links of one assistant's memories.

    Args:
        store (KeyValueStore): The character's store.

    """

    INDEX = f"{PREFIX}index"
    # how far the link step has gone through the long-term memories, kept from sleep to sleep
    PROGRESS = f"{PREFIX}progress"

    def __init__(self, store: KeyValueStore):
        self.store = store
        self._chunks: dict[str, dict[str, dict[str, float]]] = {}

    def _chunk(self, key: str) -> dict[str, dict[str, float]]:
        if key not in self._chunks:
            self._chunks[key] = dict(self.store.get(key) or {})
        return self._chunks[key]

    def neighbours(self, memory_id: str) -> dict[str, float]:
        """Linked memory id -> strength, for one memory.

        Args:
            memory_id (str): A long-term memory (`m...`) or journal entry (`j...`) id.

        Returns:
            dict: Strengths keyed by linked memory id (empty for an id that cannot be linked).

        """
        if not _linkable(memory_id):
            return {}
        return dict(self._chunk(chunk_key(memory_id)).get(memory_id, {}))

    def link(self, pairs: list[tuple[str, str, float]], max_per_memory: int) -> int:
        """Add links both ways (a stronger link replaces a weaker one between the same two).

        Args:
            pairs (list): (memory id, memory id, strength) tuples.
            max_per_memory (int): Links each memory keeps, the strongest.

        Returns:
            int: Links added or strengthened.

        """
        touched: set[str] = set()
        added = 0
        for first, second, strength in pairs:
            if first == second or not (_linkable(first) and _linkable(second)):
                continue
            for one, other in ((first, second), (second, first)):
                key = chunk_key(one)
                links = self._chunk(key).setdefault(one, {})
                if strength > links.get(other, 0.0):
                    links[other] = round(strength, 3)
                    added += one == first
                    touched.add(key)
                if len(links) > max_per_memory:
                    weakest = min(links, key=links.get)
                    del links[weakest]
                    touched.add(key)
        self._write(touched)
        return added

    def prune(self, exists) -> int:
        """Remove links to memories that no longer exist.

        Args:
            exists (callable): `exists(memory_id) -> bool`.

        Returns:
            int: Links removed (each counted once, whichever end was gone).

        """
        removed: set[frozenset] = set()
        touched: set[str] = set()
        for key in self.chunk_keys():
            chunk = self._chunk(key)
            for memory_id in list(chunk):
                if not exists(memory_id):
                    removed |= {frozenset((memory_id, other)) for other in chunk.pop(memory_id)}
                    touched.add(key)
                    continue
                links = chunk[memory_id]
                for other in [other for other in links if not exists(other)]:
                    del links[other]
                    removed.add(frozenset((memory_id, other)))
                    touched.add(key)
        self._write(touched)
        return len(removed)

    def remove(self, memory_ids: list[str]) -> int:
        """Remove these memories' links, both ways; returns how many links went.

        Args:
            memory_ids (list): The memories whose links go; ids that cannot be linked are
                skipped.

        Returns:
            int: The number of links removed.

        """
        removed = 0
        touched: set[str] = set()
        for memory_id in memory_ids:
            if not _linkable(memory_id):
                continue
            key = chunk_key(memory_id)
            links = self._chunk(key).pop(memory_id, None)
            if links is None:
                continue
            touched.add(key)
            removed += len(links)
            for other in links:
                other_key = chunk_key(other)
                if self._chunk(other_key).get(other, {}).pop(memory_id, None) is not None:
                    touched.add(other_key)
        self._write(touched)
        return removed

    @property
    def cursor(self) -> int:
        """How many long-term memories, from the first, the link step has gone through (kept
        across sleeps, so a later sleep searches only what is new)."""
        return int((self.store.get(self.PROGRESS) or {}).get("cursor", 0))

    def move_cursor(self, position: int) -> None:
        """Keep how far the link step has gone through the long-term memories.

        Args:
            position (int): The first memory (by position) not yet looked at.

        """
        self.store.set(self.PROGRESS, {"cursor": position})

    def chunk_keys(self) -> list[str]:
        """The keys of every stored chunk of links.

        Returns:
            list: Keys such as `links:m0000`.

        """
        return list(self.store.get(self.INDEX) or [])

    def count(self) -> int:
        """How many links there are (each counted once).

        Returns:
            int: The number of links.

        """
        total = sum(len(links) for key in self.chunk_keys() for links in self._chunk(key).values())
        return total // 2

    def all(self) -> list[tuple[str, str, float]]:
        """Every link once, as (memory id, memory id, strength), strongest first.

        Returns:
            list: The links; in each, the first id sorts before the second.

        """
        seen = []
        for key in self.chunk_keys():
            for one, links in self._chunk(key).items():
                seen += [(one, other, strength) for other, strength in links.items() if one < other]
        return sorted(seen, key=lambda link: -link[2])

    def _write(self, keys: set[str]) -> None:
        if not keys:
            return
        for key in keys:
            self.store.set(key, self._chunks[key])
        index = set(self.chunk_keys())
        if not keys <= index:
            self.store.set(self.INDEX, sorted(index | keys))


def _linkable(memory_id: str) -> bool:
    return len(memory_id) > 1 and memory_id[0] in "mj" and memory_id[1:].isdigit()
