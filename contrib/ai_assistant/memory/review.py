"""
A builder reviews and corrects what an assistant remembers: forget a memory, set how far it is
trusted, pin or remove a core note. Every change is recorded in an audit trail kept with the
memory (`audit:*`, newest last); a forget and a trust setting are also recorded on the memory
itself (`forgotten`, `trust_set`: when, by whom, what it was), a pinned note says who set it.

Memories are named by id: a journal entry `j000012`, a long-term memory `m000003`, an
observation or attribute of a person `#12/o3`, `#12/a5` (as `@assistant/memory` shows them).

Forgetting empties a memory in place (its id stays, so links to it are pruned and nothing
points to the wrong memory), and reaches everything drawn from it, however far: the long-term
memories drawn from a journal entry, the reflections citing it, the daily digests made from it,
the core notes resting on it (`sources`), a person's attributes citing a forgotten
observation, and the links and embeddings of all of these. What it touched is returned (and
shown to the builder) and recorded by id. The record keeps none of the words: a forgotten
entry keeps only its length and a digest of its text (`was_chars`, `was_sha256`). Recall never
brings back a forgotten memory.

A rollback never undoes a correction (`ai_assistant.memory.snapshots`): the audit trail is not
rolled back, and every correction it recorded since the snapshot began is made again in the
restored memory (`reapply_corrections`), before anything is written. Making one again writes
no new audit record: the original record still says who made it and when, and the rollback
itself is recorded in the sleep history.

Core notes are in the same memory, so a builder's edits of them are corrections too: a note a
builder removed (one that held a leaked secret, say) would otherwise come back with a rollback,
and a note pinned since would go. The record of a pin (`core_set`) keeps the whole note, made
again as it was set; the record of a removal (`core_remove`) keeps only the note's slot, never
its words, and takes the words out of the earlier pins of that note: what a builder removed is
not kept in a log that is never rolled back.

"""

import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..clock import from_iso, to_iso
from ..errors import Refused
from ..text import one_line
from .core import KEY as CORE_KEY
from .core import CoreMemory
from .digests import DigestArchive
from .entities import EntityMemory
from .forget_person import FORGET_PERSON, reapply_forget_person
from .journal import Journal
from .kinds.review_log import AUDIT, AUDIT_CHUNK, AUDIT_META
from .links import MemoryLinks
from .provenance import talk_without
from .relationships import DIMENSIONS, Relationships
from .semantic import EmbeddedMemoryStore
from .store import ChunkedList, KeyValueStore

TRUST_WORDS = {"low": 0.3, "medium": 0.6, "high": 0.9}
# the audit actions of a builder's core-note edits
CORE_SET = "core_set"
CORE_REMOVE = "core_remove"
# the audit action of a builder's relationship setting (`memory.relationships`)
RELATIONSHIP_SET = "relationship"
# how much of a memory's text a kept correction carries, for a builder to recognise it
KEPT_TEXT_CHARS = 80
# what a forget names a core note by: `core:<slot>`
CORE_PREFIX = "core:"


def is_audit_key(key: str) -> bool:
    """Whether a memory store key holds part of the audit trail (never rolled back).

    Args:
        key (str): A key of the character's memory store.

    Returns:
        bool: True for `audit:meta` and the audit trail's chunks.

    """
    return key.startswith(f"{AUDIT}:")


def audit_length(meta: Any) -> int:
    """How many records an audit trail held, from its stored `audit:meta` value.

    Args:
        meta: The value stored under `AUDIT_META` (None: no trail yet).

    Returns:
        int: The number of records.

    """
    return int(meta.get("count", 0)) if isinstance(meta, Mapping) else 0


def corrections_since(store: KeyValueStore, position: int) -> list[dict]:
    """The audit records from `position` on, oldest first, each with its `seq` (position).

    Args:
        store (KeyValueStore): The character's memory store.
        position (int): The first record wanted (how many there were at some moment).

    Returns:
        list: The records, as `MemoryReview.history` gives them, plus "seq".

    """
    audit = ChunkedList(store, AUDIT, AUDIT_CHUNK)
    return [
        {**record, "seq": seq}
        for seq, record in enumerate(audit.slice(position), start=max(0, position))
    ]


def reapply_corrections(store: KeyValueStore, records: list[dict], long_term=None) -> list[dict]:
    """Make builder corrections hold again in memory that was put back to an earlier state.

    Pure: it reads and writes only `store` (a rollback passes a view of the restored memory
    whose writes it keeps aside, see `memory.snapshots`). Each part of memory is read afresh
    from `store`, so no cache of the memory as it was before the restore is used.

    Args:
        store (KeyValueStore): The restored memory.
        records (list): Audit records (`corrections_since`), oldest first.
        long_term (callable, optional): `long_term(store)` -> the long-term `MemoryStore` over
            `store`; an `EmbeddedMemoryStore` by default.

    Returns:
        list: One dict per correction, as `MemoryReview.reapply` gives them.

    """
    if not records:
        return []
    journal = Journal(store)
    memories = (long_term or EmbeddedMemoryStore)(store)
    review = MemoryReview(
        store, journal, memories, EntityMemory(store), MemoryLinks(store), DigestArchive(store)
    )
    return review.reapply(records)


class Forgotten(list):
    """The ids a forget touched, in order: the memory, then everything drawn from it.

    Attributes:
        rewritten (list): The ids of memories kept but rewritten, their copy of the forgotten
            words taken out (see `MemoryReview.forget`).
        reopened (list): The journal entries a forgotten memory was also drawn from (another
            person's words) that are kept, and filed again at the next sleep.
        words (list): The forgotten words, for the caller to take out of what it keeps
            (`memory.snapshots.Snapshots.scrub`); never stored.

    """

    def __init__(self, ids=()):
        super().__init__(ids)
        self.rewritten: list[str] = []
        self.reopened: list[str] = []
        self.words: list[str] = []


class ReviewError(Refused):
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
    """Forgetting, trust settings and builders' core-note edits, with their record.

    Args:
        store (KeyValueStore): The character's memory store.
        journal (Journal): The journal.
        long_term: The long-term store (`EmbeddedMemoryStore`).
        entities (EntityMemory): The profiles.
        links (MemoryLinks): The links.

    """

    def __init__(
        self, store: KeyValueStore, journal: Journal, long_term, entities, links, digests=None
    ):
        self.journal = journal
        # the daily digests (`memory.digests.DigestArchive`): what forgetting reaches too
        self.digests = digests if digests is not None else DigestArchive(store)
        self.long_term = long_term
        self.entities: EntityMemory = entities
        self.links: MemoryLinks = links
        # the notes as stored (no token counts needed: a correction is made again as it was)
        self.core = CoreMemory(store, None)
        self.audit = ChunkedList(store, AUDIT, AUDIT_CHUNK)

    def forget(self, memory_id: str, now: datetime, by: str, reason: str = "") -> list[str]:
        """Forget a memory and everything drawn from it; returns the ids of all it touched.

        A journal entry or long-term memory is emptied in place; a person's observation or
        attribute is removed. Then everything drawn from what was forgotten goes too, and what
        was drawn from that, and so on (`_drawn_from`): the long-term memories drawn from an
        entry, the reflections citing it, the daily digests made from it, the core notes resting
        on it, a person's attributes citing a forgotten observation; the reasons of
        relationship changes citing it are taken out (`memory.relationships`). Links to what was
        forgotten are removed (embeddings go with the words) and the change is recorded in the
        audit trail: the ids, never the words.

        Args:
            memory_id (str): The memory (`j000012`, `m000003`, `#12/o3` or `#12/a5`).
            now (datetime): When it is forgotten.
            by (str): Who forgets it (the builder).
            reason (str, optional): Why; kept up to 200 characters.

        Returns:
            Forgotten: The ids of everything forgotten: the memory first, then what was drawn
                from it (`d000003` for a digest, `core:<slot>` for a core note); its
                `rewritten` lists the memories kept but with the words taken out (the talk
                kept beside a fact).

        Raises:
            ReviewError: No memory has that id, or the id is not a memory id.

        """
        memory_id = memory_id.strip()
        if memory_id.startswith("j"):
            entry = self.journal.get(memory_id)
            if entry is None or entry.get("forgotten"):
                raise ReviewError(f"There is no journal entry {memory_id}.")
        elif memory_id.startswith("m"):
            if self.long_term.get(memory_id) is None:
                raise ReviewError(f"There is no long-term memory {memory_id}.")
        elif "/" in memory_id:
            key, item_id = memory_id.rsplit("/", 1)
            if self.entities.item(key, item_id) is None:
                raise ReviewError(f"There is no observation or attribute {memory_id}.")
        else:
            raise ReviewError(
                f"'{memory_id[:30]}' is not a memory id: use a journal entry (j000012), a "
                "long-term memory (m000003) or a person's observation or attribute (#12/o3)."
            )
        gone = self.cascade([memory_id], now, by, reason)
        self._record(
            "forget",
            memory_id,
            by,
            now,
            {
                "forgotten": list(gone),
                "rewritten": gone.rewritten,
                "reopened": gone.reopened,
                "reason": reason[:200],
            },
        )
        return gone

    def cascade(self, memory_ids: list[str], now: datetime, by: str, reason: str = "") -> Forgotten:
        """Forget these memories and everything drawn from them, as `forget` does, recording
        nothing (the caller records: `forget`, `memory.forget_person`). One pass over what
        rests on what, however many memories are named.

        Args:
            memory_ids (list): The memories named (ids as `forget` takes them); one that is
                not here, or is forgotten already, is skipped.
            now (datetime): When they are forgotten.
            by (str): Who forgets them.
            reason (str, optional): Why; kept up to 200 characters.

        Returns:
            Forgotten: As `forget` returns it.

        """
        mark = {"at": to_iso(now), "by": by, "reason": reason[:200]}
        drawn = self._drawn_from()
        gone = Forgotten()
        fed_by: set[str] = set()  # the journal entries the forgotten memories were drawn from
        words: list[str] = []
        named = set(memory_ids)
        # each memory with the one named that it goes with
        queue = [(one, one) for one in memory_ids]
        while queue:
            one, root = queue.pop(0)
            if one in gone:
                continue
            why = reason or f"forgotten by {by}"
            if one not in named:
                why = f"drawn from {root}, which was forgotten"
            sources = self._sources_of(one) if one.startswith("m") else []
            if self._forget_one(one, now, {**mark, "reason": why[:200]}, words):
                gone.append(one)
                fed_by.update(sources)
                queue += [(other, root) for other in drawn.get(one, [])]
                if one in named:
                    # the line a fact a builder forgot was drawn from says it too: it goes
                    # when nothing else was drawn from it. (A fact forgotten because one of
                    # its lines was leaves the others: they are filed again, `_reopen`.)
                    queue += [
                        (j, root) for j in sources if set(self._memories_of(j)) <= set(gone) | named
                    ]
        self.links.remove([one for one in gone if _linkable(one)])
        gone.reopened = self._reopen(sorted(fed_by - set(gone)), gone)
        gone.rewritten = self._unsaid(words, gone)
        # a relationship's reason drawn from what was forgotten goes (its value stays)
        gone.rewritten += Relationships(self.core.store).drop_reasons(set(gone))
        gone.words = words
        return gone

    def _reopen(self, entry_ids: list[str], gone: list[str]) -> list[str]:
        """The entries a forgotten memory was drawn from that are not forgotten themselves
        (another person's words, corroborating a claim with the forgotten one): their memory
        went with it, so they are filed again at the next sleep. Returns their ids."""
        reopened = []
        for entry_id in entry_ids:
            entry = self.journal.get(entry_id)
            if not entry or entry.get("forgotten") or not entry.get("content"):
                continue
            kept = [m for m in entry.get("memory_ids") or () if m not in gone]
            self.journal.update([{**entry, "consolidated": bool(kept), "memory_ids": kept}])
            if not kept:
                reopened.append(entry_id)
        return reopened

    def _unsaid(self, words: list[str], gone: list[str]) -> list[str]:
        """Take forgotten words out of what kept them beside other memories: the talk around a
        fact (`provenance["talk"]`: its entry's neighbours' words), and the embeddings of a
        forgotten entry's neighbours (their passage held its words: made again next sleep).
        Returns the ids of the memories whose stored words were rewritten."""
        words = [text for text in words if text.strip()]
        if not words:
            return []
        rewritten = []
        for memory in self.long_term.all() if hasattr(self.long_term, "all") else []:
            provenance = memory.get("provenance") or {}
            talk = talk_without(provenance.get("talk") or "", words)
            if memory["id"] in gone or talk is None:
                continue
            provenance = {**provenance, "talk": talk}
            self.long_term.update({**memory, "provenance": provenance})
            rewritten.append(memory["id"])
        neighbours = []
        for entry_id in gone:
            entry = self.journal.get(entry_id) if entry_id.startswith("j") else None
            for other in self.journal.neighbours(entry) if entry else ():
                if other["id"] not in gone:
                    neighbours.append(other)
        if neighbours:
            # their own words stay as they are: only what is made from them beside their
            # neighbour's (an embedding, remade next sleep; what recall searches them by, told
            # again now) lets the forgotten words go
            self.journal.forget_vectors([other["seq"] for other in neighbours])
            self.journal.update(neighbours)
        return rewritten

    def _drawn_from(self) -> dict[str, list[str]]:
        """What each memory has drawn from it: memory id -> the ids resting on it."""
        drawn: dict[str, list[str]] = {}

        def rests(item_id: str, on) -> None:
            for source in on or []:
                drawn.setdefault(source, []).append(item_id)

        for memory in self.long_term.all() if hasattr(self.long_term, "all") else []:
            rests(memory["id"], memory.get("source_entry_ids"))
        for entry in self.journal.all():
            rests(entry["id"], entry.get("cites"))
            # the memories consolidation drew from it (also where a store cannot list them all)
            drawn.setdefault(entry["id"], []).extend(entry.get("memory_ids") or [])
        for digest in self.digests.all() if self.digests is not None else []:
            rests(digest["id"], digest.get("entry_ids"))
        for slot, note in self.core.items().items():
            rests(f"{CORE_PREFIX}{slot}", note.get("sources"))
        for profile in self.entities.profiles():
            for attribute in profile.get("attributes", []):
                rests(
                    f"{profile['key']}/{attribute['id']}",
                    [f"{profile['key']}/{cite}" for cite in attribute.get("cites") or []],
                )
        return drawn

    def _sources_of(self, memory_id: str) -> list[str]:
        """The journal entries a long-term memory was drawn from (still there)."""
        memory = self.long_term.get(memory_id) or {}
        return [j for j in memory.get("source_entry_ids") or () if str(j).startswith("j")]

    def _memories_of(self, entry_id: str) -> list[str]:
        """The long-term memories drawn from a journal entry."""
        entry = self.journal.get(entry_id) or {}
        return list(entry.get("memory_ids") or ())

    def _forget_one(self, memory_id: str, now: datetime, mark: dict, words: list) -> bool:
        """Forget one memory of any kind, adding a forgotten entry's words to `words`; False
        when it is not here (or already forgotten)."""
        if memory_id.startswith(CORE_PREFIX):
            notes = self.core.items()
            if notes.pop(memory_id.removeprefix(CORE_PREFIX), None) is None:
                return False
            self.core.store.set(CORE_KEY, notes)
            return True
        if memory_id.startswith("d"):
            return bool(self.digests is not None and self.digests.remove({memory_id}))
        if memory_id.startswith("j"):
            entry = self.journal.get(memory_id)
            if entry is None or entry.get("forgotten"):
                return False
            words.append(entry.get("content") or "")
            self.journal.update([_emptied(entry, mark)])
            return True
        if memory_id.startswith("m"):
            memory = self.long_term.get(memory_id)
            words.append((memory or {}).get("text") or "")
            return self.long_term.forget(memory_id, now, mark.get("reason") or "forgotten")
        if "/" in memory_id:
            key, item_id = memory_id.rsplit("/", 1)
            return self.entities.change(key, item_id, lambda item: None) is not None
        return False

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

    def record_core_set(self, note: dict, now: datetime, by: str) -> None:
        """Record that a builder set (pinned) a core note, so a rollback keeps it.

        Args:
            note (dict): The note as stored (`key`, `value`, `recorded`, `pinned`, ...).
            now (datetime): When it was set.
            by (str): Who set it.

        """
        slot = note["key"]  # a builder's note is public: its slot is its name
        self._record(CORE_SET, slot, by, now, {"note": dict(note)})

    def record_core_remove(self, slot: str, now: datetime, by: str) -> None:
        """Record that a builder removed a core note, so a rollback does not bring it back.

        Only the slot is kept, not what the note said (see the module doc).

        Args:
            slot (str): The note's slot, as `CoreMemory.items()` lists it.
            now (datetime): When it was removed.
            by (str): Who removed it.

        """
        self._record(CORE_REMOVE, slot, by, now, {})
        # the words of an earlier pin of that note go from the log too (a rollback makes the
        # pin and then this removal again: the words are not needed for that)
        scrubbed = {
            position: {**record, "note": {**record["note"], "value": ""}, "removed": True}
            for position, record in enumerate(self.audit.all())
            if record.get("action") == CORE_SET
            and record.get("id") == slot
            and isinstance(record.get("note"), dict)
            and record["note"].get("value")
        }
        if scrubbed:
            self.audit.update(scrubbed)

    def record_relationship(
        self, key: str, dimension: str, value: float, was: float, reason: str, now, by: str
    ) -> None:
        """Record that a builder set a relationship's dimension (`memory.relationships`).

        Args:
            key (str): The person's key.
            dimension (str): familiarity, warmth or trust.
            value (float): The value set.
            was (float): The value before.
            reason (str): Why, as given.
            now (datetime): When.
            by (str): Who set it.

        """
        detail = {"dimension": dimension, "value": value, "was_value": was, "reason": reason}
        self._record(RELATIONSHIP_SET, key, by, now, detail)

    def reapply(self, records: list[dict]) -> list[dict]:
        """Make each recorded correction hold again, oldest first, recording nothing new.

        A forget empties again each memory it forgot that is here and not forgotten (with the
        original mark: when, by whom, why) and removes their links; a trust setting is set
        again on its memory. A memory that is not here (it was learned after the moment memory
        was put back to) is left alone: it is gone anyway. A builder's pinned core note is set
        again as it was; a core note a builder removed is removed again when it is here. A
        person forgotten (`memory.forget_person`) is looked for again in the restored memory,
        and everything of theirs found there forgotten.

        Args:
            records (list): Audit records (`corrections_since`), oldest first.

        Returns:
            list: For each forget, trust and core-note record, a dict: "seq", "action",
                "id", "ids" (every memory it named), "at", "by", "trust" (for a trust),
                "applied" (the ids made to hold again here) and "text" (the start of what
                would have come back, on one line, empty when nothing would have; for a
                pinned note, its text).

        """
        kept = []
        for record in records:
            if record.get("action") == "forget":
                applied, text = self._forget_again(record)
            elif record.get("action") == "trust":
                applied, text = self._trust_again(record), ""
            elif record.get("action") == CORE_SET:
                applied, text = self._core_set_again(record)
            elif record.get("action") == CORE_REMOVE:
                applied, text = self._core_remove_again(record)
            elif record.get("action") == RELATIONSHIP_SET:
                applied, text = self._relationship_again(record), ""
            elif record.get("action") == FORGET_PERSON:
                # a person forgotten stays forgotten; what came back is not shown (theirs)
                applied, text = reapply_forget_person(self, record), ""
            else:
                continue  # not a correction of a memory: nothing to make hold
            kept.append(
                {
                    "seq": record.get("seq"),
                    "action": record["action"],
                    "id": record["id"],
                    "ids": list(record.get("forgotten") or [record["id"]]),
                    "at": record.get("at"),
                    "by": record.get("by"),
                    "trust": record.get("trust"),
                    "applied": applied,
                    "text": one_line(text)[:KEPT_TEXT_CHARS],
                }
            )
        return kept

    def _forget_again(self, record: dict) -> tuple[list[str], str]:
        """Forget again what a forget record names; returns the ids forgotten and the start of
        the first one's text."""
        primary, by, reason = record["id"], record.get("by") or "", record.get("reason") or ""
        # the original time, not now: the memory says when the builder forgot it
        at = from_iso(record.get("at"))
        mark = {"at": record.get("at"), "by": by, "reason": reason}
        applied: list[str] = []
        texts: list[str] = []
        for memory_id in record.get("forgotten") or [primary]:
            if memory_id.startswith(CORE_PREFIX) or _is_digest(memory_id):
                if self._forget_one(memory_id, at, mark, []):
                    applied.append(memory_id)
                continue
            if memory_id.startswith("j"):
                entry = self.journal.get(memory_id)
                if entry is None or entry.get("forgotten"):
                    continue
                self.journal.update([_emptied(entry, mark)])
                texts.append(entry.get("content") or "")
            elif memory_id.startswith("m"):
                memory = self.long_term.get(memory_id)
                if memory is None:
                    continue
                # the reason `forget` gave it: the builder's own, or what it was drawn from
                why = (
                    (reason or f"forgotten by {by}")
                    if memory_id == primary
                    else f"drawn from {primary}, which was forgotten"
                )
                self.long_term.forget(memory_id, at, why)
                texts.append(memory.get("text") or "")
            elif "/" in memory_id:
                key, item_id = memory_id.rsplit("/", 1)
                old = self.entities.change(key, item_id, lambda item: None)
                if old is None:
                    continue
                texts.append(old.get("text") or "")
            else:
                continue
            applied.append(memory_id)
        self.links.remove([one for one in applied if _linkable(one)])
        Relationships(self.core.store).drop_reasons(set(record.get("forgotten") or [primary]))
        return applied, next((text for text in texts if text), "")

    def _trust_again(self, record: dict) -> list[str]:
        """Set again the trust a record set; returns [its id] when its memory is here."""
        memory_id = record["id"]
        mark = {"trust": record.get("trust"), "at": record.get("at"), "by": record.get("by")}
        if memory_id.startswith("j"):
            entry = self.journal.get(memory_id)
            if entry is None or entry.get("forgotten"):
                return []
            self.journal.update([{**entry, "trust_set": mark}])
        elif memory_id.startswith("m"):
            memory = self.long_term.get(memory_id)
            if memory is None:
                return []
            self.long_term.update({**memory, "trust_set": mark})
        elif "/" in memory_id:
            key, item_id = memory_id.rsplit("/", 1)
            if self.entities.change(key, item_id, lambda item: {**item, "trust_set": mark}) is None:
                return []
        else:
            return []
        return [memory_id]

    def _core_set_again(self, record: dict) -> tuple[list[str], str]:
        """Set again the note a `core_set` record kept; returns [its slot] and its text."""
        note = record.get("note")
        if not isinstance(note, dict) or not note.get("key") or not note.get("value"):
            return [], ""  # (a pin whose words went with a later removal, made again after it)
        notes = self.core.items()
        notes[record["id"]] = dict(note)
        # written as stored, slot by slot: a note kept from an older version never stops it
        self.core.store.set(CORE_KEY, notes)
        return [record["id"]], note.get("value") or ""

    def _core_remove_again(self, record: dict) -> tuple[list[str], str]:
        """Remove again the note a `core_remove` record names; returns [its slot] and the
        start of what would have come back (nothing when it is not here)."""
        notes = self.core.items()
        gone = notes.pop(record["id"], None)
        if gone is None:
            return [], ""
        self.core.store.set(CORE_KEY, notes)
        return [record["id"]], gone.get("value") or ""

    def _relationship_again(self, record: dict) -> list[str]:
        """Set again a relationship a builder set (a rollback keeps a builder's word)."""
        if record.get("dimension") not in DIMENSIONS:
            return []
        relationships = Relationships(self.core.store)
        state = relationships.get(record["id"]) or {}
        relationships.change(
            record["id"],
            str(state.get("name") or record["id"].removeprefix("name:")),
            record["dimension"],
            value=float(record.get("value") or 0.0),
            reason=record.get("reason") or f"set by {record.get('by')}",
            at=from_iso(record.get("at")),
            by=str(record.get("by") or ""),
        )
        return [record["id"]]

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


def _emptied(entry: dict, mark: dict) -> dict:
    """A journal entry forgotten in place: its text and tags go, the mark says when, by whom
    and why, and keeps of what it was only its length and a digest of it (so a builder can
    tell whether a text was the one forgotten, and nobody can read it back)."""
    content = entry.get("content") or ""
    return {
        **entry,
        "content": "",
        "tags": [],
        "forgotten": {
            **mark,
            "was_chars": len(content),
            "was_sha256": hashlib.sha256(content.encode("utf-8")).hexdigest()[:16],
        },
    }


def _linkable(memory_id: str) -> bool:
    """A memory links join: a journal entry or a long-term memory (`memory.links`)."""
    return memory_id[:1] in ("j", "m") and memory_id[1:].isdigit()


def _is_digest(memory_id: str) -> bool:
    return memory_id[:1] == "d" and memory_id[1:].isdigit()
