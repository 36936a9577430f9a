"""
Storage primitives for memory that grows.

`KeyValueStore` is the small protocol the core writes through: the shell implements it over
Evennia Attributes (`ai_assistant.shell.storage`), tests over a dict. Evennia re-pickles a whole
Attribute value on every write, so nothing that grows may live in one value: `ChunkedList`
splits a list into fixed-size chunks, one stored value each, and writes back only the chunks a
change touched, once. Appending therefore costs the same at 100 or 100,000 items. Each chunk is
stored as one JSON string (items are plain JSON data), which Evennia pickles in one step.

"""

import copy
import json
from typing import Any, Protocol


class KeyValueStore(Protocol):
    """The interface the memory code stores its data through: get, set and delete by key."""

    def get(self, key: str, default: Any = None) -> Any:
        """Read a stored value.

        Args:
            key (str): The value's key.
            default (any, optional): What to return if nothing is stored under the key.

        Returns:
            any: The stored value, or `default`.

        """
        ...

    def set(self, key: str, value: Any) -> None:
        """Store a value, replacing any value already under the key.

        Args:
            key (str): The value's key.
            value (any): The value to store.

        """
        ...

    def delete(self, key: str) -> None:
        """Remove a stored value, if there is one.

        Args:
            key (str): The value's key.

        """
        ...


class DictStore:
    """An in-memory `KeyValueStore` that counts writes (for tests and benchmarks)."""

    def __init__(self):
        self.data: dict[str, Any] = {}
        self.writes = 0

    def get(self, key: str, default: Any = None) -> Any:
        """Read a copy of a stored value.

        Args:
            key (str): The value's key.
            default (any, optional): What to return if nothing is stored under the key.

        Returns:
            any: A deep copy of the stored value, or of `default`.

        """
        # a copy, as Attributes hand back a fresh unpickled value
        return copy.deepcopy(self.data.get(key, default))

    def set(self, key: str, value: Any) -> None:
        """Store a copy of a value and count the write.

        Args:
            key (str): The value's key.
            value (any): The value to store.

        """
        self.writes += 1
        self.data[key] = copy.deepcopy(value)

    def delete(self, key: str) -> None:
        """Remove a stored value, if there is one.

        Args:
            key (str): The value's key.

        """
        self.data.pop(key, None)


class ChunkedList:
    """A persistent list stored as fixed-size chunks, cached after the first read.

    Args:
        store (KeyValueStore): Where the chunks live.
        name (str): Key prefix, e.g. "journal".
        chunk_size (int): Items per stored chunk.

    Items must be plain data (dicts, lists, strings, numbers). Reads return the cached objects:
    treat them as read-only and change items through `update`.

    """

    def __init__(self, store: KeyValueStore, name: str, chunk_size: int = 100):
        self.store = store
        self.name = name
        meta = store.get(self._meta_key) or {}
        self.chunk_size = meta.get("chunk_size", chunk_size)
        self._count = meta.get("count", 0)
        # small values kept with the meta (one write instead of two), e.g. a token total
        self.extra: dict = dict(meta.get("extra") or {})
        self._chunks: dict[int, list] = {}

    @property
    def _meta_key(self) -> str:
        return f"{self.name}:meta"

    def _chunk_key(self, index: int) -> str:
        return f"{self.name}:{index:06d}"

    def _chunk(self, index: int) -> list:
        if index not in self._chunks:
            stored = self.store.get(self._chunk_key(index)) or []
            self._chunks[index] = json.loads(stored) if isinstance(stored, str) else list(stored)
        return self._chunks[index]

    def _write(self, chunk_indexes) -> None:
        for index in sorted(set(chunk_indexes)):
            # one JSON string per chunk: stores (Attributes) pickle a string in one step
            # instead of walking every nested dict of every item
            self.store.set(
                self._chunk_key(index), json.dumps(self._chunks[index], separators=(",", ":"))
            )
        self.save_meta()

    def save_meta(self) -> None:
        """Write the count and the small `extra` values (after changing `extra` alone)."""
        self.store.set(
            self._meta_key,
            {"count": self._count, "chunk_size": self.chunk_size, "extra": self.extra},
        )

    def __len__(self) -> int:
        return self._count

    def extend(self, items: list) -> None:
        """Append items, writing only the chunks they land in.

        Args:
            items (list): The items to add at the end.

        """
        if not items:
            return
        added: dict[int, list] = {}
        for item in items:
            added.setdefault(self._count // self.chunk_size, []).append(item)
            self._count += 1
        for index, new in added.items():
            key = self._chunk_key(index)
            stored = self.store.get(key)
            if isinstance(stored, str):
                # the new items' JSON joined to the stored text: an append neither reads the
                # chunk's items nor writes them again (a turn's log and history were a tenth
                # of an assistant's reactor time, decoding and encoding what was there)
                if index in self._chunks:
                    self._chunks[index].extend(new)
                text = json.dumps(new, separators=(",", ":"))
                joint = "" if stored == "[]" else ","
                self.store.set(key, stored[:-1] + joint + text[1:])
            else:  # a new chunk, or one stored as a list by an earlier version
                chunk = self._chunk(index)
                chunk.extend(new)
                self.store.set(key, json.dumps(chunk, separators=(",", ":")))
        self.save_meta()

    def append(self, item: Any) -> None:
        """Append one item, writing only the chunk it lands in.

        Args:
            item (any): The item to add at the end.

        """
        self.extend([item])

    def get(self, position: int) -> Any:
        """Read one item by position.

        Args:
            position (int): The item's index, from 0.

        Returns:
            any: The item (the cached object: do not change it in place).

        Raises:
            IndexError: If `position` is negative or past the end.

        """
        if not 0 <= position < self._count:
            raise IndexError(position)
        return self._chunk(position // self.chunk_size)[position % self.chunk_size]

    def update(self, changes: dict[int, Any]) -> None:
        """Replace items by position; each touched chunk is written once.

        Args:
            changes (dict): New items keyed by their position.

        Raises:
            IndexError: If a position is negative or past the end.

        """
        touched = []
        for position, item in changes.items():
            if not 0 <= position < self._count:
                raise IndexError(position)
            index = position // self.chunk_size
            self._chunk(index)[position % self.chunk_size] = item
            touched.append(index)
        if touched:
            self._write(touched)

    def slice(self, start: int, stop: int | None = None) -> list:
        """Items from `start` to `stop`, loading only the chunks needed.

        Args:
            start (int): The first position; values below 0 count as 0.
            stop (int, optional): The position after the last item; None means the end.

        Returns:
            list: The items, in order (empty if `start` is not before `stop`).

        """
        stop = self._count if stop is None else min(stop, self._count)
        start = max(0, start)
        items: list = []
        if start >= stop:
            return items
        for index in range(start // self.chunk_size, (stop - 1) // self.chunk_size + 1):
            base = index * self.chunk_size
            chunk = self._chunk(index)
            items.extend(chunk[max(start - base, 0) : stop - base])
        return items

    def all(self) -> list:
        """Every item, in order.

        Returns:
            list: All the items.

        """
        return self.slice(0)

    def tail(self, count: int) -> list:
        """The last items, in order.

        Args:
            count (int): How many items to return from the end.

        Returns:
            list: Up to `count` items, oldest first.

        """
        return self.slice(self._count - count)

    def replace_all(self, items: list) -> None:
        """Replace the whole list (e.g. after compaction), deleting chunks no longer used.

        Args:
            items (list): The new contents.

        """
        old_chunks = -(-self._count // self.chunk_size)
        size = self.chunk_size
        items = list(items)
        self._chunks = {
            index: items[index * size : (index + 1) * size]
            for index in range(-(-len(items) // size))
        }
        self._count = len(items)
        new_chunks = len(self._chunks)
        for index in range(new_chunks, old_chunks):
            self.store.delete(self._chunk_key(index))
        self._write(range(new_chunks))
