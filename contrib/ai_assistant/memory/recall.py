"""
Recall: one retrieval pipeline over everything the assistant knows.

What it searches is `memory.indexing.IndexedMemories`, which says what each memory is searched
as and how it is kept current.

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
from datetime import datetime
from itertools import islice

from ..conf import AssistantConfig
from .audience import visible
from .indexing import Doc, IndexedMemories
from .journal import QUESTION_MARKS
from .lexical import MAX_QUERY_CHARS, terms
from .recall_weights import RecallWeights
from .recalled import Recalled, Shown, without_repeats

_NAME_WORD_RE = re.compile(r"[^\W\d_][\w'\-]+")  # a name in any script
LINK_FACTOR = 0.8
PER_PERSON = 6
# at most this many daily digests among the results: one points at a whole day, not a moment
MAX_DIGESTS = 1
# a digest's relevance counts half: it tells of a whole day, where a moment answers a question
DIGEST_WEIGHT = 0.5
# a lexical hit brings the lines said just before and after it as candidates, at half its score
# (`_with_next_lines`; half, as a line's words count half in the next line's context)
NEXT_LINE_SHARE = 0.5


class MemoryIndex(IndexedMemories):
    """Everything one assistant knows, searched for what a moment calls to mind (kept current
    by `memory.indexing.IndexedMemories`, whose arguments it takes)."""

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
            kept = self._with_neighbours(kept, neighbours, allowed, weights)
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

    def _with_neighbours(self, top, neighbours, allowed, weights) -> list[Recalled]:
        """The best hits and the memories linked to them most strongly (`_linked`), each
        scored as its hit's score times the link's strength and `LINK_FACTOR`."""
        have = {item.id for item in top}
        pulled = []
        for item in top:
            for other, strength in self._linked(item, neighbours, allowed):
                doc = self._docs[other]
                if other in have:
                    continue
                have.add(other)
                score = item.score * strength * LINK_FACTOR
                pulled.append(
                    _recalled(
                        doc,
                        score,
                        {"link": round(strength, 3)},
                        via=item.id,
                        trust=weights.trust_of(doc),
                    )
                )
        return sorted(top + pulled, key=lambda item: -item.score)

    def _linked(self, item: Recalled, neighbours: int, allowed) -> list[tuple[str, float]]:
        """The strongest links of a hit to memories this recall may show: its own, and those
        of the facts folded into its moment (sleep links facts, and a moment is found by its
        entry). What it may not show is left out first, so it takes no linked memory's place."""
        moments = item.entry_ids if item.kind == "memory" else [item.id]
        sources = [item.id, *(m for e in moments for m in sorted(self._folded.get(e, ())))]
        found: dict[str, float] = {}
        for source in dict.fromkeys(sources):
            for other, strength in self.links.neighbours(source).items():
                if other not in sources and allowed(self._docs.get(other)):
                    found[other] = max(found.get(other, 0.0), strength)
        return sorted(found.items(), key=lambda pair: -pair[1])[:neighbours]


def _asks(text: str) -> bool:
    """Whether a line asks a question: it ends with a question mark (of any script)."""
    # a fact copied from a line may close it with a period or a quote ("...styles?.")
    return text.rstrip().rstrip(".\"'\u201d\u2019").rstrip().endswith(QUESTION_MARKS)


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
