"""
A builder reviews and corrects what an assistant remembers: forget a memory, set how far it is
trusted. Every change is recorded twice: on the memory itself (`forgotten`, `trust_set`: when,
by whom, what it was) and in an audit trail kept with the memory (`audit:*`, newest last).

Memories are named by id: a journal entry `j000012`, a long-term memory `m000003`, an
observation or attribute of a person `#12/o3`, `#12/a5` (as `@assistant/memory` shows them).

Forgetting empties a memory in place (its id stays, so links to it are pruned and nothing
points to the wrong memory); forgetting a journal entry also forgets the long-term memories
drawn from it alone. Recall never brings back a forgotten memory.

"""

from datetime import datetime

from ..clock import to_iso
from .entities import EntityMemory
from .journal import Journal
from .links import MemoryLinks
from .store import ChunkedList, KeyValueStore

TRUST_WORDS = {"low": 0.3, "medium": 0.6, "high": 0.9}


class ReviewError(ValueError):
    """A review that cannot be made; the message says why and what is allowed."""


def parse_trust(level: str) -> float:
    """A trust level from a word (low, medium, high) or a number from 0 to 1.

    Args:
        level (str): The word or number as typed; case and surrounding spaces are ignored.

    Returns:
        float: The trust: low 0.3, medium 0.6, high 0.9, or the number given.

    Raises:
        ReviewError: Anything else.

    """
    text = (level or "").strip().lower()
    if text in TRUST_WORDS:
        return TRUST_WORDS[text]
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise ReviewError(
            f"A trust level is low, medium, high or a number from 0 to 1, not '{level[:20]}'."
        )
    return value


class MemoryReview:
    """Forgetting and trust settings, with their record.

    Args:
        store (KeyValueStore): The character's memory store.
        journal (Journal): The journal.
        long_term: The long-term store (`EmbeddedMemoryStore`).
        entities (EntityMemory): The profiles.
        links (MemoryLinks): The links.

    """

    def __init__(self, store: KeyValueStore, journal: Journal, long_term, entities, links):
        self.journal = journal
        self.long_term = long_term
        self.entities: EntityMemory = entities
        self.links: MemoryLinks = links
        self.audit = ChunkedList(store, "audit", 100)

    def forget(self, memory_id: str, now: datetime, by: str, reason: str = "") -> list[str]:
        """Forget a memory; returns the ids of everything forgotten.

        A journal entry or long-term memory is emptied in place; a person's observation or
        attribute is removed. Forgetting a journal entry also forgets the long-term memories
        drawn from it alone. Links to what was forgotten are removed and the change is
        recorded in the audit trail.

        Args:
            memory_id (str): The memory (`j000012`, `m000003`, `#12/o3` or `#12/a5`).
            now (datetime): When it is forgotten.
            by (str): Who forgets it (the builder).
            reason (str, optional): Why; kept up to 200 characters.

        Returns:
            list: The ids of every memory forgotten.

        Raises:
            ReviewError: No memory has that id, or the id is not a memory id.

        """
        memory_id = memory_id.strip()
        mark = {"at": to_iso(now), "by": by, "reason": reason[:200]}
        gone: list[str] = []
        if memory_id.startswith("j"):
            entry = self.journal.get(memory_id)
            if entry is None or entry.get("forgotten"):
                raise ReviewError(f"There is no journal entry {memory_id}.")
            self.journal.update(
                [
                    {
                        **entry,
                        "content": "",
                        "tags": [],
                        "forgotten": {**mark, "was": entry["content"][:200]},
                    }
                ]
            )
            gone.append(memory_id)
            for drawn in entry.get("memory_ids") or []:
                memory = self.long_term.get(drawn)
                if memory and set(memory.get("source_entry_ids") or []) <= {memory_id}:
                    self.long_term.forget(drawn, now, f"its entry {memory_id} was forgotten")
                    gone.append(drawn)
        elif memory_id.startswith("m"):
            if not self.long_term.forget(memory_id, now, reason or f"forgotten by {by}"):
                raise ReviewError(f"There is no long-term memory {memory_id}.")
            gone.append(memory_id)
        elif "/" in memory_id:
            key, item_id = memory_id.rsplit("/", 1)
            if self.entities.change(key, item_id, lambda item: None) is None:
                raise ReviewError(f"There is no observation or attribute {memory_id}.")
            gone.append(memory_id)
        else:
            raise ReviewError(
                f"'{memory_id[:30]}' is not a memory id: use a journal entry (j000012), a "
                "long-term memory (m000003) or a person's observation or attribute (#12/o3)."
            )
        self.links.remove([one for one in gone if "/" not in one])
        self._record("forget", memory_id, by, now, {"forgotten": gone, "reason": reason[:200]})
        return gone

    def set_trust(self, memory_id: str, trust: float, now: datetime, by: str) -> float | None:
        """Set how far a memory is trusted; returns what it was set to before (None: its
        source's trust).

        The setting is stored on the memory and recorded in the audit trail.

        Args:
            memory_id (str): The memory (`j000012`, `m000003`, `#12/o3` or `#12/a5`).
            trust (float): The new trust, 0-1 (see `parse_trust`).
            now (datetime): When it is set.
            by (str): Who sets it (the builder).

        Returns:
            float or None: The trust a builder set before, or None if none was set.

        Raises:
            ReviewError: No memory has that id, or the id is not a memory id.

        """
        memory_id = memory_id.strip()
        mark = {"trust": trust, "at": to_iso(now), "by": by}
        if memory_id.startswith("j"):
            entry = self.journal.get(memory_id)
            if entry is None or entry.get("forgotten") or entry.get("pruned"):
                raise ReviewError(f"There is no journal entry {memory_id}.")
            before = (entry.get("trust_set") or {}).get("trust")
            self.journal.update([{**entry, "trust_set": mark}])
        elif memory_id.startswith("m"):
            memory = self.long_term.get(memory_id)
            if memory is None:
                raise ReviewError(f"There is no long-term memory {memory_id}.")
            before = (memory.get("trust_set") or {}).get("trust")
            self.long_term.update({**memory, "trust_set": mark})
        elif "/" in memory_id:
            key, item_id = memory_id.rsplit("/", 1)
            old = self.entities.change(key, item_id, lambda item: {**item, "trust_set": mark})
            if old is None:
                raise ReviewError(f"There is no observation or attribute {memory_id}.")
            before = (old.get("trust_set") or {}).get("trust")
        else:
            raise ReviewError(
                f"'{memory_id[:30]}' is not a memory id: use j000012, m000003 or #12/o3."
            )
        self._record("trust", memory_id, by, now, {"trust": trust, "was": before})
        return before

    def _record(self, action: str, memory_id: str, by: str, now: datetime, detail: dict) -> None:
        self.audit.append(
            {"at": to_iso(now), "by": by, "action": action, "id": memory_id, **detail}
        )

    def history(self, limit: int = 50) -> list[dict]:
        """The latest reviews, newest first.

        Args:
            limit (int): The most records to return.

        Returns:
            list: Audit records (`at`, `by`, `action`, `id` and the details).

        """
        return list(reversed(self.audit.tail(limit)))
