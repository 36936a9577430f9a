"""
The turn log: what each awake turn heard and did (`records.TurnSummary`), for the status and
the dashboard's conversation, kept in the script's store as a chunked list.

The log keeps at least the last `TURN_LOG_KEPT` turns: once a whole chunk more is held, the
oldest chunk is deleted (one delete, no rewrite), so a turn's write costs one chunk and the
small meta value however long the assistant has talked. Positions are never reused: the first
kept one is in the list's meta (`first`). Forgetting a person rewrites the log without their
turns (`replace`), and takes their words out of the turns that quote them (`rewrite`).

A game that kept the last ten turns in one value (`state.RECENT_TURNS`) finds them here: they
are read as the log until its first turn, which moves them in.

"""

from collections.abc import Callable, Iterator

from ..state import LAST_TURN, RECENT_TURNS, TURN_LOG, TURN_LOG_CHUNK, TURN_LOG_KEPT
from .store import ChunkedList, KeyValueStore

FIRST = "first"  # the first kept position, in the list's meta


class TurnLog:
    """The turns of one assistant, oldest first.

    Args:
        state (KeyValueStore): The script's store.

    """

    def __init__(self, state: KeyValueStore):
        self.state = state
        self.items = ChunkedList(state, TURN_LOG, TURN_LOG_CHUNK)

    @property
    def first(self) -> int:
        return int(self.items.extra.get(FIRST) or 0)

    def _legacy(self, alone: bool = True) -> list[dict]:
        """The last turns an earlier version kept in one value (and, `alone`, the last turn
        kept alone by one before it), while the log is empty."""
        if len(self.items):
            return []
        recent = self.state.get(RECENT_TURNS)
        if recent:
            return [turn for turn in recent if isinstance(turn, dict)]
        last = self.state.get(LAST_TURN) if alone else None
        return [last] if isinstance(last, dict) else []

    def __len__(self) -> int:
        """How many turns it keeps."""
        return len(self.items) - self.first or len(self._legacy())

    def add(self, turn: dict) -> None:
        """Add a turn at the end; drop the oldest chunk once a whole chunk past the bound.

        Args:
            turn (dict): The turn's summary.

        """
        legacy = self._legacy(alone=False)
        if legacy:
            self.items.extend(legacy)
            self.state.delete(RECENT_TURNS)
        self.items.append(turn)
        size = self.items.chunk_size
        first = self.first
        if len(self.items) - first >= TURN_LOG_KEPT + size:
            self.state.delete(f"{TURN_LOG}:{first // size:06d}")
            self.items._chunks.pop(first // size, None)
            self.items.extra[FIRST] = first + size
            self.items.save_meta()

    def last(self) -> dict | None:
        """The newest turn, None before the first (reads one chunk)."""
        if len(self.items) > self.first:
            return self.items.get(len(self.items) - 1)
        legacy = self._legacy()
        return legacy[-1] if legacy else None

    def slice(self, start: int, stop: int) -> list[dict]:
        """The kept turns from `start` to `stop` (0 is the oldest kept), oldest first, reading
        only the chunks they are in."""
        legacy = self._legacy()
        if legacy:
            return legacy[start:stop]
        return self.items.slice(self.first + max(0, start), self.first + max(0, stop))

    def all(self) -> list[dict]:
        """Every kept turn, oldest first."""
        return self.slice(0, len(self))

    def newest_first(self) -> "NewestFirst":
        """The kept turns newest first, as a sequence read a slice at a time (a page of the
        dashboard reads only the chunks it shows)."""
        return NewestFirst(self)

    def replace(self, turns: list[dict]) -> None:
        """Keep these turns instead (forgetting a person), renumbered from 0.

        Args:
            turns (list): The turns, oldest first.

        """
        self.items.extra[FIRST] = 0
        # the chunks before the first kept one are gone already; the rest are rewritten
        self.items.replace_all(turns)
        if self.state.get(RECENT_TURNS) is not None:
            self.state.delete(RECENT_TURNS)

    def rewrite(self, change: Callable[[dict], dict]) -> bool:
        """Change turns in place, chunk by chunk, writing only the chunks that changed.

        Args:
            change (callable): `change(turn)` -> the turn as it should be (the same object
                when unchanged).

        Returns:
            bool: Whether any turn changed.

        """
        if self._legacy():
            self.replace(self._legacy())
        size = self.items.chunk_size
        count = len(self.items)
        changed = False
        for start in range(self.first, count, size):
            updates = {}
            for offset, turn in enumerate(self.items.slice(start, min(start + size, count))):
                new = change(turn)
                if new is not turn:
                    updates[start + offset] = new
            if updates:
                self.items.update(updates)
                changed = True
        return changed


class NewestFirst:
    """A turn log read newest first: `len`, an index, or a slice (what a Django `Paginator`
    asks of a list), each reading only the chunks it needs."""

    def __init__(self, log: TurnLog):
        self.log = log
        self.count = len(log)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index):
        if isinstance(index, slice):
            start, stop, step = index.indices(self.count)
            if step != 1 or start >= stop:
                return [self[i] for i in range(start, stop, step)] if step != 1 else []
            return list(reversed(self.log.slice(self.count - stop, self.count - start)))
        if index < 0:
            index += self.count
        if not 0 <= index < self.count:
            raise IndexError(index)
        return self.log.slice(self.count - 1 - index, self.count - index)[0]

    def __iter__(self) -> Iterator[dict]:
        return iter(self[:])


def last_turn(state: KeyValueStore) -> dict | None:
    """The last awake turn's summary.

    Args:
        state (KeyValueStore): The script's store.

    Returns:
        dict or None: The newest turn of the log, None before the first turn.

    """
    return TurnLog(state).last()
