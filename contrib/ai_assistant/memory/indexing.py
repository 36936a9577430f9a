"""
What each memory is searched as, kept current as the stores change.

`IndexedMemories` holds one document (`Doc`) for each thing the assistant knows: journal entries
(reflections and summaries among them), long-term memories, the people it knows (each
profile's observations and attributes) and the daily digests (kind `digest`: a game day's
summary, people met, open threads and new facts). It is built once from the stores and then kept
current as they change (the stores tell it), so a search never rebuilds anything and never walks
every memory. `memory.recall.MemoryIndex` searches it.

A moment is searched with its context: a journal entry is indexed with the words of the entries
next to it in the same conversation (a question's words are often in the line before its
answer), its month and year, and the new words of the facts sleep drew from it; once sleep has
consolidated it, with the lines farther around it as well, each counting half as much as the
one nearer (`_moment_context`). Those facts are folded into their entry while it is indexed, so
sleep adds words to a moment rather than a second document that competes with it; once the
entry is pruned, its facts are searched alone, with the conversation around them that
consolidation kept (`provenance["talk"]`). When a line is forgotten or told again in other
words, the lines whose context held its words are indexed again, once each, before the next
search.

"""

import re
from bisect import bisect_left, insort
from dataclasses import dataclass
from datetime import datetime, timezone

from ..clock import from_iso
from .audience import Audience, AudienceGroups
from .digests import DigestArchive, digest_text
from .entities import EntityMemory
from .journal import Journal
from .lexical import DEFAULT_STEMMER, LexicalIndex, terms
from .links import MemoryLinks
from .semantic import EmbeddedMemoryStore, unpack_vector
from .vectors import Vectors

# an entry's own words count this many times its neighbours' (`_moment_text`): the line that
# says it comes before the lines around it
OWN_WEIGHT = 2
# a consolidated entry (its talk is over) is indexed with the talk up to this many places
# before and after it, a place farther counting half as much (`_moment_context`)
TALK_REACH = 5


@dataclass
class Doc:
    """One searchable memory."""

    id: str
    kind: str  # entry, reflection, summary, memory, observation, attribute, digest
    text: str
    time: datetime
    importance: int
    audience: Audience
    people: frozenset[str]
    entry_ids: tuple[str, ...]
    provenance: dict
    trust: float | None = None  # set by a builder; else the source's
    corroborated: bool = False
    standing: tuple | None = None  # (weights, importance and trust part of the score, shown id)
    cites: tuple[str, ...] = ()  # an attribute: the observations it was drawn from (doc ids)
    # the moments just before and after it in the same talk, as (entry id, whether it comes
    # after): an entry's, and a fact's that stands for entries no longer indexed
    beside: tuple[tuple[str, bool], ...] = ()
    # a fact: when the last of the lines it rests on was said (it is not known before)
    told: datetime | None = None
    group: int = 0  # its audience's number (`AudienceGroups`)


class IndexedMemories:
    """Everything one assistant knows, as documents kept current with its stores (searched by
    `memory.recall.MemoryIndex`).

    Args:
        journal (Journal): Its journal.
        long_term: Its long-term store (indexed when it is an `EmbeddedMemoryStore`).
        entities (EntityMemory): Its profiles.
        links (MemoryLinks): Links between memories.
        digests (DigestArchive, optional): The daily digests.
        stemmer (str, optional): The Snowball stemmer of the game's language (`recall_stemmer`).
        embedding_model (str, optional): The embeddings model whose vectors of journal entries
            are searched (`Journal.embedded`); None searches none.

    """

    def __init__(
        self,
        journal: Journal,
        long_term,
        entities: EntityMemory,
        links: MemoryLinks,
        digests: DigestArchive | None = None,
        stemmer: str = DEFAULT_STEMMER,
        embedding_model: str | None = None,
    ):
        self.journal = journal
        self.embedding_model = embedding_model
        self.digests = digests
        self.long_term = long_term
        self.entities = entities
        self.links = links
        self._docs: dict[str, Doc] = {}
        self._lexical = LexicalIndex(stemmer=stemmer)
        # the memories about each person, oldest first (by time, then id): recall looks back from
        # the newest, and a memory indexed again (a neighbour, a fact folded in) keeps its place
        self._by_person: dict[str, list[str]] = {}
        # the stem of each one-word name in `_by_person` (stem -> keys): a name is said in other
        # forms ("Бориса" of Борис, "d'Anne")
        self._name_stems: dict[str, set[str]] = {}
        self._profile_docs: dict[str, list[str]] = {}
        # long-term memories folded into the journal entries they were drawn from (entry id ->
        # memory ids), while those entries are indexed: one moment, one searchable document
        self._folded: dict[str, set[str]] = {}
        self._folded_into: dict[str, tuple[str, ...]] = {}  # memory id -> its entries
        # every indexed fact by the entries it was drawn from (entry id -> memory ids), folded
        # or not: a moment whose entry is gone (emptied by retention) is found as its facts
        self._drawn: dict[str, set[str]] = {}
        self._drawn_from: dict[str, tuple[str, ...]] = {}  # memory id -> its entries
        self._vectors = Vectors()
        # each memory's audience by number, so a search leaves out at once the memories of
        # audiences a recall may not see (`LexicalIndex.search`'s `groups`)
        self._groups = AudienceGroups()
        # entries whose talk changed (a neighbour forgotten), indexed again before the next
        # search, each once however many of its neighbours went
        self._retold: set[str] = set()
        self._built = False
        # when the newest line or observation held was said (`newest_told`)
        self._newest_told: datetime | None = None
        self._refolded: set[str] | None = None  # while building: entries to index again
        journal.watchers.append(self._entry_changed)
        entities.watchers.append(self._profile_changed)
        if isinstance(long_term, EmbeddedMemoryStore):
            long_term.watchers.append(self._memory_changed)
        if digests is not None:
            digests.watchers.append(self._digest_changed)

    def build(self) -> None:
        """Index everything the stores hold (once; later changes arrive one by one, and the
        talk around what was forgotten is indexed again here)."""
        if self._built:
            if self._retold:
                self._retell()
            return
        self._built = True
        # each entry is indexed with its neighbours already; the entries facts fold into are
        # indexed again once, at the end, not once a fact
        self._refolded = set()
        for entry in self.journal.all():
            self._entry_changed(entry, neighbours=False)
        if isinstance(self.long_term, EmbeddedMemoryStore):
            for memory in self.long_term.all():
                self._memory_changed(memory)
        refolded, self._refolded = self._refolded, None
        for about in self._by_person.values():
            about.sort(key=self._about_order)
        for entry_id in sorted(refolded):
            entry = self.journal.get(entry_id)
            if entry is not None:
                self._entry_changed(entry, neighbours=False)
        for profile in self.entities.profiles():
            self._profile_changed(profile)
        for digest in self.digests.all() if self.digests is not None else []:
            self._digest_changed(digest)

    def __len__(self) -> int:
        self.build()
        return len(self._docs)

    def newest_told(self) -> datetime | None:
        """When the newest journal line or observation of a person it has held was said
        (`AssistantMemory.recall`'s moment when none is given).

        Returns:
            datetime or None: The time; None before anything was said.

        """
        self.build()
        return self._newest_told

    def _put(
        self,
        doc: Doc,
        index_text: str | None = None,
        searchable: bool = True,
        context: list[tuple[str, float]] = (),
    ) -> None:
        was = self._docs.get(doc.id)
        # (indexed again about the same people at the same time: it keeps its place among
        # the memories about each, as a line does when the next one is said)
        same_place = was is not None and was.people == doc.people and was.time == doc.time
        # a changed memory keeps its row of vectors (written over if its vector changed)
        self._drop(doc.id, keep_vector=True, keep_place=same_place)
        doc.group = self._groups.number(doc.audience)
        self._docs[doc.id] = doc
        if doc.kind in ("entry", "observation") and doc.time is not None:
            # (a time written without a zone, by a game's own code, is taken as UTC)
            told = doc.time if doc.time.tzinfo else doc.time.replace(tzinfo=timezone.utc)
            if self._newest_told is None or told > self._newest_told:
                self._newest_told = told
        if searchable:
            text = doc.text if index_text is None else index_text
            self._lexical.add(doc.id, text, context, group=doc.group)
        for person in () if same_place else doc.people:
            if person not in self._by_person:
                self._add_name_stem(person)
            about = self._by_person.setdefault(person, [])
            # (most often what is new was said last; while building, sorted once at the end)
            building = self._refolded is not None
            if building or not about or self._about_order(about[-1]) <= self._about_order(doc.id):
                about.append(doc.id)
            else:
                insort(about, doc.id, key=self._about_order)

    def _add_name_stem(self, person: str) -> None:
        """Know `person` (a key) by the stem of its name, when the key is a one-word name (or
        `name:` and one)."""
        name = person.removeprefix("name:")
        if name.startswith("#") or ":" in name or len(name.split()) != 1:
            return  # a dbref, another kind of key, or a name of several words
        # (stemmed only: a name is not put in a dictionary form, so "Drew" is not "draw")
        stems = terms(name, self._lexical.stemmer, dictionary_forms=False)
        if len(stems) == 1:
            self._name_stems.setdefault(stems[0], set()).add(person)

    def _about_order(self, doc_id: str) -> tuple[float, str]:
        """Where a memory stands among those about a person: by time, then id."""
        doc = self._docs[doc_id]
        return (doc.time.timestamp() if doc.time else 0.0, doc_id)

    def _drop(self, doc_id: str, keep_vector: bool = False, keep_place: bool = False) -> None:
        if doc_id not in self._docs:
            return
        doc = self._docs[doc_id]
        for person in () if keep_place else doc.people:
            about = self._by_person.get(person)
            if about:
                # (found by its place in time: still indexed, so it can be looked up)
                place = bisect_left(about, self._about_order(doc_id), key=self._about_order)
                if place < len(about) and about[place] == doc_id:
                    del about[place]
                elif doc_id in about:
                    about.remove(doc_id)  # (not in its place: while building)
        del self._docs[doc_id]
        self._lexical.remove(doc_id)
        if not keep_vector:
            self._vectors.drop(doc_id)

    def _entry_changed(self, entry: dict, neighbours: bool = True) -> None:
        if not self._built:
            return
        was = self._docs.get(entry["id"])
        if neighbours and (
            entry.get("forgotten")
            or (was is not None and entry.get("content") and was.text != entry["content"])
        ):
            # forgotten (pruned or not), or told again in other words: the talk around it
            # that held its words is searched by what is left
            self._retell_around(entry)
        if entry.get("pruned") or not entry.get("content"):
            self._drop(entry["id"])
            self._unfold(entry["id"])
            return
        kind = "entry"
        if Journal.is_reflection(entry):
            kind = "reflection"
        elif Journal.is_synthesis(entry):
            kind = "summary"
        people = {key.lower() for key in entry.get("about") or []}
        adjacent = self._adjacent([entry]) if kind == "entry" else []
        # its neighbours' words are searched with its own (`Journal.neighbours`: those with words)
        beside = [other for other, _ in adjacent if other.get("content")]
        if entry.get("heard_from"):
            people.add(entry["heard_from"].lower())
        self._put(
            Doc(
                id=entry["id"],
                kind=kind,
                text=entry["content"],
                time=from_iso(entry["created_at"]),
                importance=entry.get("importance") or 3,
                audience=entry.get("audience"),
                people=frozenset(people),
                entry_ids=tuple(entry.get("cites") or []) or (entry["id"],),
                provenance={
                    "source_type": entry.get("source_type"),
                    "heard_from": entry.get("heard_from"),
                    "location": entry.get("location"),
                    "rests_on": entry.get("rests_on"),
                    "claims_of": entry.get("claims_of") or [],
                    "gossip": entry.get("gossip"),
                },
                # a builder's trust, else what a telling left it (decayed per hand)
                trust=_set_trust(entry),
                beside=_beside(adjacent),
            ),
            self._moment_text(entry, beside) if kind == "entry" else None,
            context=self._moment_context(entry) if kind == "entry" else (),
        )
        vector = unpack_vector(self.journal.vector(entry, self.embedding_model))
        if vector is not None:
            self._vectors.put(entry["id"], vector)
        else:
            # let go (its passage held a neighbour's words now forgotten): embedded again,
            # from its words as they are now, next sleep
            self._vectors.drop(entry["id"])
        if neighbours and kind == "entry" and entry.get("seq"):
            # the entry before gains this one as its neighbour
            before, _ = self.journal.beside(entry)
            if before and before["id"] in self._docs:
                self._entry_changed(before, neighbours=False)

    def _retell_around(self, entry: dict) -> None:
        """Mark for indexing again the entries whose searched words hold `entry`'s (those
        beside it, and after sleep those up to `TALK_REACH` places around it), once its words
        changed (`_retell`)."""
        self._retold.update(other["id"] for _, other in self.journal.around(entry, TALK_REACH))

    def _retell(self) -> None:
        """Index again, once each, the entries whose talk changed (`_retell_around`)."""
        retold, self._retold = self._retold, set()
        for entry_id in sorted(retold):
            entry = self.journal.get(entry_id)
            if entry is not None and entry_id in self._docs:
                self._entry_changed(entry, neighbours=False)

    def _moment_text(self, entry: dict, beside: list[dict]) -> str:
        """What an entry is searched by: its words, the words of the entries next to it in the
        same conversation (`beside`: same audience, within `NEIGHBOUR_SECONDS`), its month, and
        the new words of the facts sleep drew from it."""
        parts = [entry["content"]] * OWN_WEIGHT
        parts += [other["content"] for other in beside]
        when = from_iso(entry.get("game_at") or entry["created_at"])
        parts.append(when.strftime("%B %Y"))
        # who said it is not what it says: a fact's attribution ("Bob says: ...") adds nothing
        stemmer = self._lexical.stemmer
        known = set(terms(entry["content"], stemmer)) | set(
            terms(entry.get("heard_from") or "", stemmer)
        )
        for memory_id in sorted(self._folded.get(entry["id"], ())):
            memory = self._docs.get(memory_id)
            if memory is not None:
                new = [w for w in memory.text.split() if not set(terms(w, stemmer)) <= known]
                parts.append(" ".join(new))
        return " ".join(parts)

    def _moment_context(self, entry: dict) -> list[tuple[str, float]]:
        """What sleep adds to a moment's words: once an entry is consolidated its talk is over,
        and it is searched with the lines farther around it (up to `TALK_REACH` lines of the same
        conversation and audience, `Journal.around`), each line farther counting half as much:
        what a question asks is often said a few lines before or after the line that answers
        it."""
        if not entry.get("consolidated"):
            return []
        return [
            (other["content"], 0.5 ** (distance - 1))
            for distance, other in self.journal.around(entry, TALK_REACH)
            if distance > 1  # the nearest are in `_moment_text` already
        ]

    def _unfold(self, entry_id: str) -> None:
        """An entry left the index: the facts drawn from it become searchable on their own."""
        for memory_id in self._folded.pop(entry_id, ()):
            memory = self.long_term.get(memory_id) if hasattr(self.long_term, "get") else None
            if memory is not None:
                self._memory_changed(memory)  # unfolds it from its other entries too
            else:
                self._folded_into.pop(memory_id, None)

    def _memory_changed(self, memory: dict) -> None:
        if not self._built:
            return
        sources = tuple(memory.get("source_entry_ids") or [])
        if memory.get("forgotten") or not memory.get("text"):
            self._drop(memory["id"])
            self._refold(memory["id"], sources)
            self._record_drawn(memory["id"], ())
            return
        provenance = dict(memory.get("provenance") or {})
        people = {key.lower() for key in provenance.get("about") or []}
        if provenance.get("heard_from"):
            people.add(provenance["heard_from"].lower())
        # a fact drawn from entries the index holds is the same moment as they are: its new
        # words are searched through them (the corpus and each moment's standing stay as
        # they were, so a night's sleep never pushes a moment down); alone, it is searched
        # by its own words
        folded = bool(sources) and all(
            (doc := self._docs.get(entry_id)) is not None and doc.kind == "entry"
            for entry_id in sources
        )
        # alone, a fact is searched as its moment was: by what it says (twice; not who said
        # it: the person boost knows that), the talk around the entry it was drawn from, kept
        # when it was made, and its month, so pruning a moment never lowers what finds it
        said = memory["text"]
        speaker = provenance.get("heard_from")
        if speaker:
            said = re.sub(
                rf"^\W*{re.escape(speaker)}\s+(?:says|said):\s*", "", said, flags=re.IGNORECASE
            )
        self._put(
            Doc(
                id=memory["id"],
                kind="memory",
                text=memory["text"],
                time=from_iso(memory["created_at"]),
                importance=memory.get("importance") or 3,
                audience=memory.get("audience"),
                people=frozenset(people),
                entry_ids=sources,
                provenance=provenance,
                # corroborated by two voices: trusted as such, not as one telling
                trust=_set_trust(
                    {
                        **memory,
                        "gossip": None if memory.get("corroborated") else provenance.get("gossip"),
                    }
                ),
                corroborated=bool(memory.get("corroborated")),
                # alone, it stands for its moment among the lines said around it
                beside=() if folded else _beside(self._adjacent(self._entries(sources))),
                # (the lines keep their time when retention empties them)
                told=max(
                    (from_iso(entry["created_at"]) for entry in self._entries(sources)),
                    default=None,
                ),
            ),
            " ".join(
                [said] * OWN_WEIGHT
                + [provenance.get("talk") or "", from_iso(memory["created_at"]).strftime("%B %Y")]
            ),
            searchable=not folded,
        )
        self._refold(memory["id"], sources if folded else ())
        self._record_drawn(memory["id"], sources)
        for entry_id in sources if folded else ():
            # what its moment shows, and so its standing, may have changed with it
            self._docs[entry_id].standing = None
        vector = unpack_vector(memory.get("vector"))
        if vector is not None:
            self._vectors.put(memory["id"], vector)

    def _record_drawn(self, memory_id: str, sources: tuple) -> None:
        """Record that `memory_id` is drawn from the entries `sources` (none: it is gone)."""
        for entry_id in self._drawn_from.pop(memory_id, ()):
            memories = self._drawn.get(entry_id)
            if memories is not None:
                memories.discard(memory_id)
                if not memories:
                    del self._drawn[entry_id]
        if sources:
            self._drawn_from[memory_id] = tuple(sources)
            for entry_id in sources:
                self._drawn.setdefault(entry_id, set()).add(memory_id)

    def _entries(self, entry_ids) -> list[dict]:
        return [entry for entry_id in entry_ids if (entry := self.journal.get(entry_id))]

    def _adjacent(self, entries: list[dict]) -> list[tuple[dict, bool]]:
        """The entries said just before and after `entries` in their conversation
        (`Journal.beside`), each with whether it comes after, emptied ones too: a line whose
        entry retention emptied is still there, as the facts sleep drew from it
        (`_moment_docs`)."""
        own = {entry["id"] for entry in entries}
        found = []
        for entry in entries:
            before, after = self.journal.beside(entry)
            for other, comes_after in ((before, False), (after, True)):
                if other is not None and other["id"] not in own:
                    found.append((other, comes_after))
        return found

    def _moment_docs(self, entry_id: str) -> list[str]:
        """What stands for a journal entry's moment in the index: the entry, or once it is
        no longer indexed (emptied by retention), the facts drawn from it that are."""
        if entry_id in self._docs:
            return [entry_id]
        return sorted(m for m in self._drawn.get(entry_id, ()) if m in self._docs)

    def _refold(self, memory_id: str, into: tuple) -> None:
        """Record that `memory_id` is folded into the entries `into` (none: into none), and
        index again each entry whose folded facts changed."""
        changed = []
        for entry_id in self._folded_into.pop(memory_id, ()):
            memories = self._folded.get(entry_id)
            if memories and memory_id in memories and entry_id not in into:
                memories.discard(memory_id)
                changed.append(entry_id)
        if into:
            self._folded_into[memory_id] = tuple(into)
        for entry_id in into:
            memories = self._folded.setdefault(entry_id, set())
            if memory_id not in memories:
                memories.add(memory_id)
                changed.append(entry_id)
        if self._refolded is not None:
            self._refolded.update(changed)
            return
        for entry_id in changed:
            entry = self.journal.get(entry_id)
            if entry is not None:
                self._entry_changed(entry, neighbours=False)

    def _digest_changed(self, digest: dict) -> None:
        if not self._built:
            return
        if digest.get("removed"):
            self._drop(digest["id"])
            return
        people = {person.lower() for person in digest.get("people_met") or []}
        self._put(
            Doc(
                id=digest["id"],
                kind="digest",
                text=digest_text(digest),
                time=from_iso(digest["at"]),
                importance=5,
                audience=digest.get("audience"),
                people=frozenset(people),
                entry_ids=tuple(digest.get("entry_ids") or ()),
                provenance={
                    "source_type": "summary",
                    "day": digest["day"],
                    "rests_on": digest.get("rests_on"),
                    "claims_of": digest.get("claims_of") or [],
                },
            )
        )

    def _profile_changed(self, profile: dict) -> None:
        if not self._built:
            return
        key = profile["key"]
        for doc_id in self._profile_docs.pop(key, []):
            self._drop(doc_id)
        if profile.get("removed"):
            return
        name = profile.get("name") or key
        people = frozenset({key.lower(), name.lower()})
        ids = []
        for observation in profile.get("observations", []):
            doc = Doc(
                id=f"{key}/{observation['id']}",
                kind="observation",
                text=f"{name}: {observation['text']}",
                time=from_iso(observation["at"]),
                importance=observation.get("importance") or 5,
                audience=observation.get("audience"),
                people=people,
                entry_ids=(),
                provenance={
                    "source_type": observation.get("source_type"),
                    "heard_from": observation.get("heard_from"),
                    "location": observation.get("where"),
                },
                trust=(observation.get("trust_set") or {}).get("trust"),
            )
            self._put(doc)
            ids.append(doc.id)
        for attribute in profile.get("attributes", []):
            doc = Doc(
                id=f"{key}/{attribute['id']}",
                kind="attribute",
                text=f"{name}: {attribute['value']}",
                time=from_iso(attribute.get("at") or profile.get("updated_at")),
                importance=attribute.get("importance") or 6,
                audience=attribute.get("audience"),
                people=people,
                entry_ids=tuple(attribute.get("entry_ids") or []),
                provenance={
                    "source_type": "inferred",
                    "type": attribute.get("type"),
                    "rests_on": attribute.get("rests_on"),
                    "claims_of": attribute.get("claims_of") or [],
                },
                trust=(attribute.get("trust_set") or {}).get("trust"),
                cites=tuple(f"{key}/{cited}" for cited in attribute.get("cites") or []),
            )
            self._put(doc)
            ids.append(doc.id)
        self._profile_docs[key] = ids

    def doc(self, doc_id: str) -> Doc | None:
        """One indexed memory by id, building the index first if needed.

        Args:
            doc_id (str): The memory's id (`j000012`, `m000003`, `#12/o3`, ...).

        Returns:
            Doc or None: The memory, or None if it is not indexed.

        """
        self.build()
        return self._docs.get(doc_id)

    def vector_snapshot(self):
        """The embeddings as a worker thread may read them (see `memory.vectors.nearest`).

        Returns:
            tuple: The matrix of vectors (or None) and the list of their ids.

        """
        self.build()
        return self._vectors.snapshot()


def _beside(adjacent: list[tuple[dict, bool]]) -> tuple[tuple[str, bool], ...]:
    """`IndexedMemories._adjacent`'s entries as a `Doc.beside`: (entry id, whether it comes after),
    each once (an entry named twice among a fact's sources brings its neighbours once)."""
    return tuple(dict.fromkeys((other["id"], after) for other, after in adjacent))


def _set_trust(entry: dict) -> float | None:
    """A journal entry's or memory's own trust: a builder's setting, else a telling's
    (`memory.gossip`), else None (its source's)."""
    trust = (entry.get("trust_set") or {}).get("trust")
    if trust is None:
        trust = (entry.get("gossip") or {}).get("trust")
    return trust
