"""
Recall: one retrieval pipeline over everything the assistant knows.

What it searches: journal entries (reflections and summaries among them), long-term memories,
the people it knows (each profile's observations and attributes) and the daily digests (kind
`digest`: a game day's summary, people met, open threads and new facts). `MemoryIndex` keeps all
of them indexed in memory, built once from the stores and then kept current as they change (the
stores tell it), so a search never rebuilds anything and never walks every memory.

A moment is searched with its context: a journal entry is indexed with the words of the entries
next to it in the same conversation (a question's words are often in the line before its
answer), its month and year, and the new words of the facts sleep drew from it; once sleep has
consolidated it, with the lines farther around it as well, each counting half as much as the
one nearer (`_moment_context`). Those facts are
folded into their entry while it is indexed, so sleep adds words to a moment rather than a
second document that competes with it; once the entry is pruned, its facts are searched alone,
with the conversation around them that consolidation kept (`provenance["talk"]`).

How it ranks: relevance, recency, importance, trust and people, mixed by `RecallWeights`
(`memory.recall_weights`, whose doc says what each signal is). Relevance is measured here: the
lexical score (BM25 over stemmed words, always, the query widened by the words of its best hits:
`memory.lexical`) scaled to the best hit, plus, when an embeddings model is configured and the
caller passes the query's nearest vectors (`memory.vectors`), their cosine similarity spread
between the weakest and the best candidate, mixed by `recall_semantic_share`; a daily digest's
relevance counts half, and at most one is recalled.

The best hits then pull in their strongest linked memories (`memory.links`). One fact is
recalled once (`memory.recalled.Shown`, `_superseded`): a fact and the entry it came from, the
same words twice from one person, an observation and the attribute drawn from it. Only what the
people served may know is considered at all (`memory.audience`), and nothing made after the
moment of the recall. Each result (`memory.recalled.Recalled`) names the journal entries it
rests on.

"""

import re
from itertools import islice
from dataclasses import dataclass
from datetime import datetime

from ..clock import from_iso
from .audience import Audience, AudienceGroups, visible
from .digests import DigestArchive, digest_text
from .entities import EntityMemory
from .journal import QUESTION_MARKS, Journal, same_talk
from ..conf import AssistantConfig
from .lexical import DEFAULT_STEMMER, MAX_QUERY_CHARS, LexicalIndex, terms
from .links import MemoryLinks
from .recall_weights import RecallWeights
from .recalled import Recalled, Shown, without_repeats
from .semantic import EmbeddedMemoryStore, unpack_vector
from .vectors import Vectors

_NAME_WORD_RE = re.compile(r"[^\W\d_][\w'\-]+")  # a name in any script
LINK_FACTOR = 0.8
PER_PERSON = 6
# at most this many daily digests among the results: one points at a whole day, not a moment
MAX_DIGESTS = 1
# a digest's relevance counts half: it tells of a whole day, where a moment answers a question
DIGEST_WEIGHT = 0.5
# an entry's own words count this many times its neighbours' (`_moment_text`): the line that
# says it comes before the lines around it
OWN_WEIGHT = 2
# a consolidated entry (its talk is over) is indexed with the talk up to this many places
# before and after it, a place farther counting half as much (`_moment_context`)
TALK_REACH = 5
# a lexical hit brings the lines said just before and after it as candidates, at half its score
# (`_with_next_lines`; half, as a line's words count half in the next line's context)
NEXT_LINE_SHARE = 0.5


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


class MemoryIndex:
    """Everything one assistant knows, indexed for recall.

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
        self._refolded: set[str] | None = None  # while building: entries to index again
        journal.watchers.append(self._entry_changed)
        entities.watchers.append(self._profile_changed)
        if isinstance(long_term, EmbeddedMemoryStore):
            long_term.watchers.append(self._memory_changed)
        if digests is not None:
            digests.watchers.append(self._digest_changed)

    # ---- keeping current -------------------------------------------------------------------

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

    def _put(
        self,
        doc: Doc,
        index_text: str | None = None,
        searchable: bool = True,
        context: list[tuple[str, float]] = (),
    ) -> None:
        # a changed memory keeps its row of vectors (written over if its vector changed)
        self._drop(doc.id, keep_vector=True)
        doc.group = self._groups.number(doc.audience)
        self._docs[doc.id] = doc
        if searchable:
            text = doc.text if index_text is None else index_text
            self._lexical.add(doc.id, text, context, group=doc.group)
        for person in doc.people:
            if person not in self._by_person:
                self._add_name_stem(person)
            self._by_person.setdefault(person, []).append(doc.id)

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

    def _drop(self, doc_id: str, keep_vector: bool = False) -> None:
        doc = self._docs.pop(doc_id, None)
        if doc is None:
            return
        self._lexical.remove(doc_id)
        if not keep_vector:
            self._vectors.drop(doc_id)
        for person in doc.people:
            ids = self._by_person.get(person)
            if ids and doc_id in ids:
                ids.remove(doc_id)

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
            before = self.journal.at(entry["seq"] - 1)
            if before and before["id"] in self._docs and same_talk(before, entry):
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
        and it is searched with the lines farther around it (up to `TALK_REACH` places, the same
        conversation and audience only), each place farther counting half as much: what a
        question asks is often said a few lines before or after the line that answers it."""
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
        """The entries said just before and after `entries` in the same talk (`same_talk`),
        each with whether it comes after, emptied ones too: a line whose entry retention
        emptied is still there, as the facts sleep drew from it (`_moment_docs`)."""
        own = {entry["id"] for entry in entries}
        found = []
        for entry in entries:
            seq = entry.get("seq")
            if seq is None:
                continue
            for other, after in (
                (self.journal.at(seq - 1), False),
                (self.journal.at(seq + 1), True),
            ):
                if other is not None and other["id"] not in own and same_talk(other, entry):
                    found.append((other, after))
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

    # ---- searching -------------------------------------------------------------------------

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

    def search(
        self,
        query: str,
        *,
        now: datetime,
        served: frozenset[str] | None,
        people: list[str] = (),
        limit: int = 8,
        weights: RecallWeights | None = None,
        semantic: list[tuple[str, float]] | None = None,
        time_factor: float = 1.0,
        candidates: int = 50,
        neighbours: int = 2,
        kinds: set[str] | None = None,
    ) -> list[Recalled]:
        """The best memories for `query`, best first.

        Args:
            query (str): What to recall (the words of this turn, or the model's query).
            now (datetime): The moment of the recall: nothing made after it is recalled.
            served (frozenset or None): Who the conversation serves (`audience.served_by`);
                None sees everything (a builder's view).
            people (list): Names or keys of people named or present; what is about them gets
                the person boost.
            limit (int): How many to return.
            weights (RecallWeights, optional): How relevance, recency, importance and people
                mix; by default the configuration's defaults.
            semantic (list, optional): (doc id, similarity) from `memory.vectors.nearest`,
                when embeddings are on.
            time_factor (float): Game seconds per real second (recency decays on game time).
            candidates (int): How many lexical and semantic hits to consider.
            neighbours (int): Linked memories each of the best hits may pull in.
            kinds (set, optional): Only these kinds (entry, memory, observation, ...).

        Returns:
            list: `Recalled` items.

        """
        weights = weights or RecallWeights.from_config(AssistantConfig())
        self.build()
        if limit <= 0:
            return []

        query = query[:MAX_QUERY_CHARS]

        def known(doc: Doc | None) -> bool:
            """Told by the moment of the recall, to those it serves."""
            return (
                doc is not None
                and doc.time <= now
                and visible(doc.audience, served)
                # (a fact two people told is known once the second told it; its own time is
                # the first telling's)
                and (doc.told is None or doc.told <= now)
            )

        def allowed(doc: Doc | None) -> bool:
            return known(doc) and (kinds is None or doc.kind in kinds)

        # relevance: each signal scaled to its best hit (BM25 keeps how far apart the hits
        # are, which reciprocal ranks would squeeze together), mixed by `weights.semantic`
        fused: dict[str, float] = {}
        entries_wanted = kinds is None or "entry" in kinds
        lexical: dict[str, float] = {}

        shown_ids: dict[str, bool] = {}  # the lexical search asks of a hit more than once

        def shows(doc_id: str) -> bool:
            found = shown_ids.get(doc_id)
            if found is None:
                stand_ins = self._stand_ins(doc_id, entries_wanted)
                found = shown_ids[doc_id] = any(allowed(self._docs.get(d)) for d in stand_ins)
            return found

        # only what this recall may show is a hit and widens its query (a whisper's words
        # would point the way to what it said, and whispers many and strong would leave no
        # room for what may be shown)
        groups = self._groups.open_to(served)
        open_groups = set(groups) if groups is not None else None
        # (when only facts are wanted, a hit on an entry stands for its facts, whose audience
        # is the entry's group's or narrower: the groups are asked of what stands in)
        for hit_id, score in self._lexical.search(
            query,
            candidates + 5,
            expand=True,
            usable=shows,
            groups=groups if entries_wanted else None,
        ):
            for doc_id in self._stand_ins(hit_id, entries_wanted):
                if doc_id not in lexical and allowed(self._docs.get(doc_id)):
                    lexical[doc_id] = score
        lexical = list(lexical.items())[:candidates]
        if entries_wanted:
            lexical = self._with_next_lines(lexical, allowed)
        top = lexical[0][1] if lexical else 0.0
        lexical_share = 1.0 - (weights.semantic if semantic else 0.0)
        for doc_id, score in lexical:
            fused[doc_id] = lexical_share * score / top
        # the nearest moments this recall may show, the first `candidates` of them (`semantic`
        # is every vector, most similar first: what it may not show takes no place)
        moments: dict[str, float] = {}
        for doc_id, similarity in semantic or []:
            doc = self._docs.get(doc_id)
            if doc is None or (open_groups is not None and doc.group not in open_groups):
                continue  # (at once: many may be whispers to others)
            if not known(doc):
                continue
            for moment in self._stand_ins(doc_id, entries_wanted):
                if moment not in moments and allowed(self._docs.get(moment)):
                    moments[moment] = similarity
            if len(moments) >= candidates:
                break
        allowed_semantic = list(moments.items())[:candidates]
        if allowed_semantic:
            # cosines of one model crowd together (e5's lie between 0.7 and 0.9): spread the
            # candidates' between the weakest and the best, so the share weighs how much
            # nearer one is than another, not how near they all are
            best_similarity, floor = allowed_semantic[0][1], allowed_semantic[-1][1]
            spread = best_similarity - floor
            for doc_id, similarity in allowed_semantic:
                nearness = (similarity - floor) / spread if spread > 1e-6 else 1.0
                share = weights.semantic * nearness
                fused[doc_id] = fused.get(doc_id, 0.0) + share
        people_keys = {person.lower() for person in people if person}
        people_keys |= self._named_in(query)
        # what is about someone known only by name is kept under "name:<name>" (`person_key`)
        people_keys |= {f"name:{key}" for key in people_keys if not key.startswith(("#", "name:"))}
        pool = set(fused)
        for person in people_keys:
            pool.update(self._latest_about(person, allowed))
        if not pool:
            return []
        self._weights = weights
        best = max(fused.values(), default=0.0) or 1.0
        hours_per_second = time_factor / 3600
        w_relevance, w_recency, w_person = weights.relevance, weights.recency, weights.person
        decay = weights.decay
        scored = []
        for doc_id in pool:
            doc = self._docs[doc_id]
            relevance = fused.get(doc_id, 0.0) / best
            if doc.kind == "digest":
                relevance *= DIGEST_WEIGHT
            hours = max((now - doc.time).total_seconds(), 0.0) * hours_per_second
            person = 1.0 if people_keys & doc.people else 0.0
            # a moment stands as high as the best-trusted thing it tells (`_told_best`)
            score = (
                w_relevance * relevance
                + w_recency * decay**hours
                + w_person * person
                + self._standing(doc, weights, known)
            )
            scored.append((score, doc_id, relevance, hours, person))
        # best first, one fact once: a memory and the entry it came from, the same words twice,
        # an observation and the attribute drawn from it (`Shown`, `_superseded`); results
        # are built only for what is kept
        kept = []
        shown = Shown()
        superseded = _superseded(self._docs, pool)
        digests = 0
        for item in sorted(scored, reverse=True):
            doc = self._docs[item[1]]
            if doc.id in superseded:
                continue
            if doc.kind == "digest" and digests >= MAX_DIGESTS:
                continue
            recalled = self._recalled(weights, *item, known=known)
            if shown.repeats(recalled):
                continue
            digests += doc.kind == "digest"
            kept.append(recalled)
            if len(kept) == limit:
                break
        if neighbours:
            kept = self._with_neighbours(kept, limit, neighbours, allowed)
        return without_repeats(kept, limit)

    def _with_next_lines(self, hits: list[tuple[str, float]], allowed) -> list[tuple[str, float]]:
        """The lexical hits and the lines said just before and after each (`Doc.beside`), at
        `NEXT_LINE_SHARE` of its score: the line that answers a question often shares no word
        with it, but stands beside the line that does. The line said just after a hit that
        asks a question (`_asks`) gets its whole score: it is the answer, and a question's
        words are what its answer is found by."""
        found = dict(hits)
        for doc_id, score in hits:
            hit = self._docs[doc_id]
            asks = _asks(hit.text)
            for entry_id, after in hit.beside:
                for other in self._moment_docs(entry_id):
                    if not allowed(self._docs.get(other)):
                        continue
                    share = score if asks and after else score * NEXT_LINE_SHARE
                    if share > found.get(other, 0.0):
                        found[other] = share
        return sorted(found.items(), key=lambda hit: -hit[1])

    def _latest_about(self, person: str, allowed) -> list[str]:
        """The newest memories about `person` this recall may use (a bounded look back)."""
        ids = self._by_person.get(person, ())
        found = []
        for doc_id in islice(reversed(ids), PER_PERSON * 2):
            if allowed(self._docs.get(doc_id)):
                found.append(doc_id)
                if len(found) == PER_PERSON:
                    break
        return found

    def _named_in(self, query: str) -> set[str]:
        """People the query names: words that are the name of someone memories are about, as
        they are, or written as a name (capitalised, or in a script without capitals) in
        another form of it, found by its stem ("Бориса", "d'Anne"; "robbed" is not Rob)."""
        named = set()
        stemmer = self._lexical.stemmer
        for word in _NAME_WORD_RE.findall(query):
            key = word.lower().removesuffix("'s")
            if self._by_person.get(key):
                named.add(key)
                continue
            head, elided, rest = word.partition("'")
            if elided and len(head) <= 2:
                word = rest  # after an elided article or preposition: "d'Anne"
            if not word or word[0].islower():
                continue
            # its stem, or the stem of its dictionary form ("Павла": Павел; "Draw" is not Drew)
            stems = set(terms(word, stemmer, dictionary_forms=False)) | set(terms(word, stemmer))
            # (someone known only by name, kept under "name:<name>", is found this way: a
            # word written as a name, so "may I ask" does not name May)
            for stem in stems:
                named.update(k for k in self._name_stems.get(stem, ()) if self._by_person.get(k))
        return named

    def _standing(self, doc: Doc, weights: RecallWeights, known=None) -> float:
        """The part of a memory's score that does not depend on the query or the moment:
        importance and trust of what it shows (`_told_best`), remembered on the memory for
        these weights. When what it shows is not `known` to this recall (a fact told again
        later than the recall's moment), the moment's own, from what is."""
        cached = doc.standing
        if cached is None or cached[0] is not weights:
            shown = self._told_best(doc, weights)
            value = weights.standing(shown.importance, weights.trust_of(shown))
            cached = doc.standing = (weights, value, shown.id)
        if known is not None and cached[2] != doc.id and not known(self._docs.get(cached[2])):
            shown = self._told_best(doc, weights, known)
            return weights.standing(shown.importance, weights.trust_of(shown))
        return cached[1]

    def _stand_ins(self, doc_id: str, entries_wanted: bool) -> list[str]:
        """What a hit on `doc_id` is found as: a fact folded into its entries is found as their
        moment; when only facts are wanted (sleep's links), a moment is found as its facts."""
        doc = self._docs.get(doc_id)
        if doc is None:
            return []
        if doc.kind == "memory" and entries_wanted and doc_id not in self._lexical:
            return list(doc.entry_ids)
        if doc.kind == "entry" and not entries_wanted:
            return sorted(self._folded.get(doc_id, ()))
        return [doc_id]

    def _told_best(self, doc: Doc, weights, known=None) -> Doc:
        """What to show for a moment: the entry, or a fact drawn from it that is trusted more
        (a claim two people made, a builder's trust), among those `known` allows."""
        best, trust = doc, weights.trust_of(doc)
        for memory_id in sorted(self._folded.get(doc.id, ())):
            memory = self._docs.get(memory_id)
            if memory is None or (known is not None and not known(memory)):
                continue
            if weights.trust_of(memory) > trust:
                best, trust = memory, weights.trust_of(memory)
        return best

    def _recalled(self, weights, score, doc_id, relevance, hours, person, known=None) -> Recalled:
        doc = self._told_best(self._docs[doc_id], weights, known)
        trust = weights.trust_of(doc)
        parts = {
            "relevance": round(relevance, 4),
            "recency": round(weights.decay**hours, 4),
            "importance": round(doc.importance / 10, 4),
            "person": person,
            "trust": round(trust, 4),
        }
        return _recalled(doc, score, parts, trust=trust)

    def _with_neighbours(self, top, limit, neighbours, allowed) -> list[Recalled]:
        have = {item.id for item in top}
        pulled = []
        for item in top:
            for other, strength in self._linked(item, neighbours):
                doc = self._docs.get(other)
                if other in have or not allowed(doc):
                    continue
                have.add(other)
                score = item.score * strength * LINK_FACTOR
                pulled.append(
                    _recalled(
                        doc,
                        score,
                        {"link": round(strength, 3)},
                        via=item.id,
                        trust=self._weights.trust_of(doc),
                    )
                )
        return sorted(top + pulled, key=lambda item: -item.score)

    def _linked(self, item: Recalled, neighbours: int) -> list[tuple[str, float]]:
        """The strongest links of a hit: its own, and those of the facts folded into its
        moment (sleep links facts, and a moment is found by its entry)."""
        moments = item.entry_ids if item.kind == "memory" else [item.id]
        sources = [item.id, *(m for e in moments for m in sorted(self._folded.get(e, ())))]
        found: dict[str, float] = {}
        for source in dict.fromkeys(sources):
            for other, strength in self.links.strongest(source, neighbours):
                if other not in sources:
                    found[other] = max(found.get(other, 0.0), strength)
        return sorted(found.items(), key=lambda pair: -pair[1])[:neighbours]


def _asks(text: str) -> bool:
    """Whether a line asks a question: it ends with a question mark (of any script)."""
    # a fact copied from a line may close it with a period or a quote ("...styles?.")
    return text.rstrip().rstrip(".\"'\u201d\u2019").rstrip().endswith(QUESTION_MARKS)


def _beside(adjacent: list[tuple[dict, bool]]) -> tuple[tuple[str, bool], ...]:
    """`MemoryIndex._adjacent`'s entries as a `Doc.beside`: (entry id, whether it comes after),
    each once (an entry named twice among a fact's sources brings its neighbours once)."""
    return tuple(dict.fromkeys((other["id"], after) for other, after in adjacent))


def _set_trust(entry: dict) -> float | None:
    """A journal entry's or memory's own trust: a builder's setting, else a telling's
    (`memory.gossip`), else None (its source's)."""
    trust = (entry.get("trust_set") or {}).get("trust")
    if trust is None:
        trust = (entry.get("gossip") or {}).get("trust")
    return trust


def _recalled(
    doc: Doc, score: float, parts: dict, via: str | None = None, trust: float = 0.5
) -> Recalled:
    return Recalled(
        id=doc.id,
        kind=doc.kind,
        text=doc.text,
        score=round(score, 4),
        scores=parts,
        entry_ids=list(doc.entry_ids),
        time=doc.time,
        importance=doc.importance,
        audience=doc.audience,
        provenance=doc.provenance,
        via=via,
        trust=trust,
    )


def _superseded(docs: dict, pool) -> set[str]:
    """The observations in a recall's pool that an attribute there was drawn from: the
    attribute is what sleep made of them, and tells it.

    Args:
        docs (dict): The index's memories by id.
        pool (iterable): The ids considered.

    Returns:
        set: Ids of observations to leave out.

    """
    gone: set[str] = set()
    for doc_id in pool:
        doc = docs[doc_id]
        if doc.kind == "attribute":
            gone.update(doc.cites)
    return gone
