"""
Lexical relevance: an incremental BM25 index over short texts, kept in memory.

Adding or removing a document touches only its own terms, so the index never needs a rebuild
as memories come and go; a search reads only the postings of the query's terms, so its cost
follows how common those terms are, not how many memories there are. Words are lower-cased,
stop words dropped and the rest stemmed with the Porter stemmer of `lunr` (which Evennia
ships), so "sisters" finds "sister" and "lives" finds "living".

"""

import heapq
import math
import re
from collections import Counter
from functools import lru_cache

from lunr.stemmer import PorterStemmer

_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STEMMER = PorterStemmer()
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t don't i'm it's that's what's let's tell told says said say""".split()
)


@lru_cache(maxsize=50000)
def _stem(word: str) -> str:
    return _STEMMER.stem(word)


def terms(text: str) -> list[str]:
    """The index terms of `text`, in order: lower-cased, stop words out, stemmed.

    Args:
        text (str): Any text.

    Returns:
        list: Its terms (possessives folded: "Bob's" -> "bob").

    """
    words = (word.removesuffix("'s") for word in _WORD_RE.findall(text.lower()))
    return [_stem(word) for word in words if word and word not in STOP_WORDS]


class LexicalIndex:
    """BM25 over documents added and removed one at a time.

    Args:
        k1 (float): Term-frequency saturation.
        b (float): Length normalisation.

    """

    def __init__(self, k1: float = 1.2, b: float = 0.75):
        self.k1 = k1
        self.b = b
        self._postings: dict[str, dict[str, int]] = {}
        self._lengths: dict[str, int] = {}
        self._doc_terms: dict[str, Counter] = {}
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self._lengths

    def add(self, doc_id: str, text: str) -> None:
        """Index `text` under `doc_id`, replacing what was indexed under it before."""
        if doc_id in self._lengths:
            self.remove(doc_id)
        counts = Counter(terms(text))
        self._doc_terms[doc_id] = counts
        length = sum(counts.values())
        self._lengths[doc_id] = length
        self._total_length += length
        for term, count in counts.items():
            self._postings.setdefault(term, {})[doc_id] = count

    def remove(self, doc_id: str) -> None:
        """Forget `doc_id` (nothing happens if it is not indexed)."""
        counts = self._doc_terms.pop(doc_id, None)
        if counts is None:
            return
        self._total_length -= self._lengths.pop(doc_id)
        for term in counts:
            posting = self._postings.get(term)
            if posting is not None:
                posting.pop(doc_id, None)
                if not posting:
                    del self._postings[term]

    def search(self, query: str, limit: int = 50) -> list[tuple[str, float]]:
        """The best `limit` documents for `query`, best first, as (doc id, BM25 score)."""
        count = len(self._lengths)
        if not count:
            return []
        average = self._total_length / count or 1.0
        scores: dict[str, float] = {}
        for term in set(terms(query)):
            posting = self._postings.get(term)
            if not posting:
                continue
            idf = math.log(1 + (count - len(posting) + 0.5) / (len(posting) + 0.5))
            for doc_id, frequency in posting.items():
                norm = self.k1 * (1 - self.b + self.b * self._lengths[doc_id] / average)
                gain = idf * frequency * (self.k1 + 1) / (frequency + norm)
                scores[doc_id] = scores.get(doc_id, 0.0) + gain
        return heapq.nlargest(limit, scores.items(), key=lambda item: item[1])
