"""
Lexical relevance: an incremental BM25 index over short texts, kept in memory.

Adding or removing a document touches only its own terms, so the index never needs a rebuild
as memories come and go. Each term's postings (which documents have it, how often) are arrays
that grow in place; a search scores the postings of the query's terms with a few vectorised
operations, exactly as BM25 defines it, so its cost grows only slowly with the number of
memories.

Words are found in any script (Unicode letters and digits, after NFKC normalisation, in lower
case), so "Привет" and "généralement" are words like "hello". A hyphenated word counts as
its parts and as one word ("well-known": well, known, wellknown). Chinese and Japanese, written
without spaces, count as overlapping pairs of characters. English stop words are dropped, and
the rest stemmed with the Snowball stemmer of the game's language (`snowballstemmer`, the
`recall_stemmer` setting: english by default), so "sisters" finds "sister" and "lives" finds
"living". Before it is stemmed, a word is turned into its dictionary form where `simplemma`
knows the language (`LEMMA_LANGUAGES`), so irregular forms, which no stemmer joins, meet: "lost"
finds "lose", "grew" finds "grow", "Павла" finds "Павел"; a word it also knows as a name keeps
its own ("Maria" is not "mare"). The dictionary is loaded once (`prepare`, when the server
starts). A word in another script than the game's language is only stemmed, as that script's
main language (`SCRIPT_LANGUAGES`: Cyrillic as Russian, Greek, Arabic, Devanagari as Hindi,
Armenian, Tamil), so a Russian player is understood in a game set to english; words of other
scripts are left as they are. Accents of Latin, Greek and Cyrillic letters are dropped from the
stems, so "chateau" finds "château". Characters that do not show (zero-width spaces and joiners,
soft hyphens) are dropped before words are found, so none hides a word from recall (a zero-width
non-joiner parts words, as a space does), and only the first `MAX_WORD_CHARS` letters of a word
count.

A document may be indexed with context that counts less than its own words (`add`'s
`context`: text and a weight, as BM25F weighs fields), and a search may widen its query with
the words of its own best hits (`search`'s `expand`: pseudo-relevance feedback, as RM3 does),
so a moment told in other words than the question's is found through the moments that share
both.

"""

import math
import re
import threading
import unicodedata
from collections import Counter
from functools import lru_cache

import numpy
import regex
import snowballstemmer

# a word: letters (with their combining marks) and digits of any script, with inner
# apostrophes ("don't", "o'clock")
_LETTERS = r"[\p{L}\p{N}][\p{L}\p{M}\p{N}]*"
_WORD_RE = regex.compile(rf"{_LETTERS}(?:['\u2019]{_LETTERS})*")
# a hyphenated word, taken whole as well as in parts
_HYPHENATED_RE = regex.compile(rf"{_LETTERS}(?:-{_LETTERS})+")
# the same, for text that is all ASCII (the standard library's `re` is faster)
_ASCII_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")
_ASCII_HYPHENATED_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
# scripts written without spaces between words: indexed as pairs of characters
_UNSPACED_RE = regex.compile(
    r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]+"
)
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
DEFAULT_STEMMER = "english"
# pseudo-relevance feedback (`LexicalIndex.search`'s `expand`): the best hits read, the terms
# taken from them, and the share of the score the added terms give (the query's keeps the
# rest). Common values of RM3 (10 documents, 10 terms), with the query weighing most
FEEDBACK_DOCS = 10
FEEDBACK_TERMS = 10
FEEDBACK_SHARE = 0.3
# the step the document count and average length BM25 scores with are rounded to (a factor)
BASIS_STEP = 1.05
# the most characters of a query read (as many as are sent to an embeddings model,
# `llm.embedding_roles.MAX_EMBED_CHARS`): a turn's words are far fewer, and every word of a
# longer text would be looked up
MAX_QUERY_CHARS = 2000


# the language whose stemmer a word in a script other than the game language's gets (a Russian
# player in a game set to english), and the scripts of the Snowball languages not written in
# Latin letters (Serbian's stemmer reads both of its alphabets)
SCRIPT_LANGUAGES = {
    "Cyrillic": "russian",
    "Greek": "greek",
    "Arabic": "arabic",
    "Devanagari": "hindi",
    "Armenian": "armenian",
    "Tamil": "tamil",
}
LANGUAGE_SCRIPTS = {
    "russian": "Cyrillic",
    "serbian": "Cyrillic",
    "greek": "Greek",
    "arabic": "Arabic",
    "persian": "Arabic",
    "hindi": "Devanagari",
    "nepali": "Devanagari",
    "armenian": "Armenian",
    "tamil": "Tamil",
    "yiddish": "Hebrew",
}
_LETTER_RE = regex.compile(r"\p{L}")
_SCRIPT_RE = regex.compile(
    "|".join(rf"(?P<{script}>\p{{{script}}})" for script in SCRIPT_LANGUAGES)
)


# the Snowball languages simplemma has a dictionary for (its language codes): their words are
# put in their dictionary form before they are stemmed
LEMMA_LANGUAGES = {
    "arabic": "ar",
    "armenian": "hy",
    "catalan": "ca",
    "czech": "cs",
    "danish": "da",
    "dutch": "nl",
    "dutch_porter": "nl",
    "english": "en",
    "esperanto": "eo",
    "estonian": "et",
    "finnish": "fi",
    "french": "fr",
    "german": "de",
    "greek": "el",
    "hindi": "hi",
    "hungarian": "hu",
    "indonesian": "id",
    "irish": "ga",
    "italian": "it",
    "lithuanian": "lt",
    "norwegian": "nb",
    "persian": "fa",
    "polish": "pl",
    "porter": "en",
    "portuguese": "pt",
    "romanian": "ro",
    "russian": "ru",
    "serbian": "hbs",
    "spanish": "es",
    "swedish": "sv",
    "turkish": "tr",
}


# Serbian's dictionary is written in Latin letters; its stemmer reads both alphabets
_SERBIAN_LATIN = str.maketrans(
    {
        **dict(zip("абвгдђежзијклмнопрстћуфхцчш", "abvgdđežzijklmnoprstćufhcčš")),
        **{"љ": "lj", "њ": "nj", "џ": "dž"},
    }
)
# languages that write every noun with a capital, where a word the dictionary knows capitalised
# is not thereby a name ("hat" is still "haben")
_NOUNS_CAPITALISED = {"de"}
# the simplemma codes whose dictionary is in memory, and the lock one is loaded under (two
# threads must not both load one: most of a second and tens of MiB each)
_LOADED: set[str] = set()
_LOAD_LOCK = threading.Lock()


def _rounded(value: float) -> float:
    """`value` (above 0) rounded to the nearest power of `BASIS_STEP`; 0 stays 0."""
    if value <= 0:
        return 0.0
    return BASIS_STEP ** round(math.log(value, BASIS_STEP))


@lru_cache(maxsize=64)
def _stemmer(language: str):
    return None if language == "none" else snowballstemmer.stemmer(language)


@lru_cache(maxsize=1)
def _dictionaries():
    from simplemma.strategies.dictionaries import StreamDictionaryFactory

    # the memory-frugal dictionaries (3 MiB for English, 24 for Russian, against 25 and 140
    # held as dicts), each kept once loaded: simplemma keeps 8, and a server whose words
    # cycle through more would load one again, for most of a second, for each new word
    return StreamDictionaryFactory(cache_max_size=len(set(LEMMA_LANGUAGES.values())))


@lru_cache(maxsize=1)
def _lemmatizer():
    from simplemma import Lemmatizer
    from simplemma.strategies import DefaultStrategy

    # `_stem` keeps the words already seen
    return Lemmatizer(
        cache_max_size=0,
        lemmatization_strategy=DefaultStrategy(dictionary_factory=_dictionaries()),
    )


def _load(code: str) -> None:
    """Load the dictionary of `code` (a simplemma language code), once."""
    if code in _LOADED:
        return  # (a word of a loaded language never waits while another loads)
    with _LOAD_LOCK:
        if code not in _LOADED:
            _dictionaries().get_dictionary(code)
            _LOADED.add(code)


def _dictionary_form(word: str, code: str) -> str:
    """`word` (lower case) in its dictionary form for `code`, or as it is: when simplemma does
    not know it, when it is also a name ("Maria" is not the lunar seas, "Don" is not "do";
    except in German, see `_NOUNS_CAPITALISED`), or when its form is not one word ("1850s" ->
    "eighteen-fifties")."""
    if code == "hbs":
        word = word.translate(_SERBIAN_LATIN)
    _load(code)
    lemma = _lemmatizer().lemmatize(word, lang=code)
    if lemma == word and word != word.casefold():
        # unknown as written: as case folding writes it ("gewußt", the old spelling of
        # "gewusst"); a Greek final "ς" is found as written, where folding would lose it
        word = word.casefold()
        lemma = _lemmatizer().lemmatize(word, lang=code)
    if lemma == word or not _WORD_RE.fullmatch(lemma):
        return word
    name = word.capitalize()
    if code not in _NOUNS_CAPITALISED and _dictionaries().get_dictionary(code).get(name) == name:
        return word
    return lemma


@lru_cache(maxsize=100000)
def _stem(word: str, language: str, dictionary_form: bool = True) -> str:
    own = _language_of(word, language)
    # (the game's language only: the dictionary of another script's, loaded on the turn that
    # first hears it, would keep that turn waiting up to a second, and loaded at the start it
    # would cost every game tens of MiB; its stemmer alone does without)
    if dictionary_form and own == language and own in LEMMA_LANGUAGES:
        word = _dictionary_form(word, LEMMA_LANGUAGES[own])
    # (lower case until here: the dictionaries are, and case folding would change some
    # words, as Greek's final "ς")
    word = word.casefold()
    stemmer = _stemmer(own)
    # (a stemmer may leave nothing of a word it reads as an ending: porter's "s")
    return _without_accents(word if stemmer is None else stemmer.stemWord(word) or word)


def prepare(language: str) -> None:
    """Load `language`'s dictionary and stemmer now (about 0.1 s for English, up to a second
    for Russian or German), so that the first words heard do not wait for it: a server calls
    this in a thread when it starts, for each assistant's language.

    Args:
        language (str): A `recall_stemmer` value (a Snowball language, or "none").

    """
    _stem("words", language)


def _language_of(word: str, language: str) -> str:
    """The language `word` is stemmed as: the game's, unless the word is written in another
    script that has a language of its own (`SCRIPT_LANGUAGES`); "none" stems nothing."""
    if language == "none" or word.isascii():
        return language
    letter = _LETTER_RE.search(word)  # its script is that of its first letter ("2кг", "d'анна")
    script = _SCRIPT_RE.match(letter.group()) if letter else None
    if script is None or script.lastgroup == LANGUAGE_SCRIPTS.get(language):
        return language
    return SCRIPT_LANGUAGES[script.lastgroup]


def _without_accents(word: str) -> str:
    """A stem without the accents of Latin, Greek and Cyrillic letters ("général" -> "general",
    "ёлка" -> "елка"): players type them or not. Marks of other scripts (a Devanagari vowel
    sign) are part of the letter, and stay."""
    if word.isascii():
        return word
    kept = []
    base = ""
    for char in unicodedata.normalize("NFD", word):
        if unicodedata.category(char) == "Mn":
            if base and ord(base) < 0x0530:
                continue
        else:
            base = char
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def _words(text: str) -> list[str]:
    """The words of a normalised, lower-case text, in order (see the module doc)."""
    if text.isascii():
        # most speech: the same words as below, found faster
        words = _ASCII_WORD_RE.findall(text)
        found = [word.removesuffix("'s") for word in words]
        if "-" in text:
            found += [compound.replace("-", "") for compound in _ASCII_HYPHENATED_RE.findall(text)]
        return found
    found = []
    unspaced = _UNSPACED_RE.search(text) is not None
    for word in _WORD_RE.findall(text):
        word = word.replace("\u2019", "'").removesuffix("'s")
        if unspaced and _UNSPACED_RE.search(word):
            for run in _UNSPACED_RE.findall(word):
                found += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
            found += _UNSPACED_RE.sub(" ", word).split()
        else:
            found.append(word)
    found += [compound.replace("-", "") for compound in _HYPHENATED_RE.findall(text)]
    return found


# the most characters of one word that count: no language's words are longer, and each word
# stemmed is remembered (`_stem`'s cache), so a player's 2,000-letter "word" must not be
MAX_WORD_CHARS = 64
# characters that do not show but split a word ("sis\u200bter"): zero-width spaces and joiners,
# soft hyphens, byte-order marks (Unicode's format characters), but the zero-width non-joiner,
# which parts a Persian word from its prefix as a space would ("می\u200cخواهم": "خواهم" finds it)
_INVISIBLE_RE = regex.compile(r"(?:(?!\u200c)\p{Cf})+")


def terms(text: str, stemmer: str = DEFAULT_STEMMER, dictionary_forms: bool = True) -> list[str]:
    """The index terms of `text`: words found in any script, stop words out, stemmed.

    Args:
        text (str): Any text.
        stemmer (str, optional): The Snowball stemmer's language, or "none".
        dictionary_forms (bool, optional): Put words in their dictionary form before they are
            stemmed (see the module doc); False: stem them only (a name as it is written:
            "Drew" is not "draw").

    Returns:
        list: Its terms (possessives folded: "Bob's" -> "bob").

    """
    if not text.isascii():
        text = _INVISIBLE_RE.sub("", text)
    text = unicodedata.normalize("NFKC", text).lower()
    return [
        _stem(word[:MAX_WORD_CHARS], stemmer, dictionary_forms)
        for word in _words(text)
        if word and word not in STOP_WORDS
    ]


class _Postings:
    """The documents (by number) that have one term, and how often: arrays grown in place."""

    __slots__ = ("docs", "counts", "size", "alive", "gains", "epoch")

    def __init__(self):
        self.docs = numpy.empty(8, dtype=numpy.int32)
        self.counts = numpy.empty(8, dtype=numpy.float32)
        self.size = 0
        self.alive = 0  # documents still indexed (removed ones stay until a compaction)
        self.gains = None  # each document's BM25 score for the term, for `epoch`
        self.epoch = -1

    def append(self, doc: int, count: int) -> None:
        if self.size == len(self.docs):
            self.docs = numpy.resize(self.docs, self.size * 2)
            self.counts = numpy.resize(self.counts, self.size * 2)
        self.docs[self.size] = doc
        self.counts[self.size] = count
        self.size += 1
        self.alive += 1
        self.gains = None


class _Usable:
    """What a search may use: the rows of the groups asked for, then what `usable` allows."""

    __slots__ = ("rows", "usable")

    def __init__(self, rows: numpy.ndarray, usable=None):
        self.rows = rows
        self.usable = usable


class LexicalIndex:
    """BM25 over documents added and removed one at a time.

    Args:
        k1 (float): Term-frequency saturation.
        b (float): Length normalisation.
        stemmer (str, optional): The Snowball stemmer's language (see `terms`).

    """

    def __init__(self, k1: float = 1.2, b: float = 0.75, stemmer: str = DEFAULT_STEMMER):
        self.k1 = k1
        self.b = b
        self.stemmer = stemmer
        self._postings: dict[str, _Postings] = {}
        self._numbers: dict[str, int] = {}  # doc id -> its number (a row of the arrays)
        self._ids: list[str | None] = []  # number -> doc id (None once removed)
        self._lengths = numpy.zeros(64, dtype=numpy.float32)  # 0 for a removed document
        # each document's group (the caller's: who may see it), so a search for some groups
        # leaves the others out at once (`search`'s `groups`)
        self._groups = numpy.zeros(64, dtype=numpy.int32)
        self._doc_terms: dict[str, Counter] = {}
        self._total_length = 0
        self._removed = 0
        # the document count and average length scores are computed for, each rounded to a
        # step of `BASIS_STEP` (`_scoring_basis`), so a term's scores are reused until its
        # postings change
        self._epoch = 0
        self._basis = (0.0, 1.0)

    def __len__(self) -> int:
        return len(self._numbers)

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self._numbers

    def terms_of(self, doc_id: str) -> frozenset[str]:
        """The terms `doc_id` was indexed with (none when it is not indexed): what a caller
        that also filters by words reads instead of stemming the text a second time.

        Args:
            doc_id (str): The document's id.

        Returns:
            frozenset: Its terms.

        """
        return frozenset(self._doc_terms.get(doc_id) or ())

    def add(self, doc_id: str, text: str, context=(), group: int = 0) -> None:
        """Index `text` under `doc_id`, replacing what was indexed under it before.

        Args:
            doc_id (str): The document's id.
            text (str): The document's text.
            context (iterable, optional): (text, weight) pairs indexed with it, each of their
                terms counting `weight` (0-1) times an own word's, in its frequency and in the
                document's length.
            group (int, optional): Its group, for `search`'s `groups` (0 by default).

        """
        counts = Counter(terms(text, self.stemmer))
        for more, weight in context:
            if not 0 < weight <= 1:
                raise ValueError(f"a context's weight must be within (0, 1], not {weight!r}")
            for term in terms(more, self.stemmer):
                counts[term] += weight
        self._add_counts(doc_id, counts, group)

    def _add_counts(self, doc_id: str, counts: Counter, group: int = 0) -> None:
        """Index a document by its terms' counts (`add`, and `_compact`, which must not stem
        terms a second time)."""
        if doc_id in self._numbers:
            self.remove(doc_id)
        number = len(self._ids)
        if number == len(self._lengths):
            self._lengths = numpy.concatenate([self._lengths, numpy.zeros_like(self._lengths)])
            self._groups = numpy.concatenate([self._groups, numpy.zeros_like(self._groups)])
        self._groups[number] = group
        length = sum(counts.values())
        self._ids.append(doc_id)
        self._numbers[doc_id] = number
        self._lengths[number] = max(length, 1)
        self._doc_terms[doc_id] = counts
        self._total_length += length
        for term, count in counts.items():
            posting = self._postings.get(term)
            if posting is None:
                posting = self._postings[term] = _Postings()
            posting.append(number, count)

    def remove(self, doc_id: str) -> None:
        """Forget `doc_id` (nothing happens if it is not indexed).

        Args:
            doc_id (str): The document's id.

        """
        number = self._numbers.pop(doc_id, None)
        if number is None:
            return
        counts = self._doc_terms.pop(doc_id)
        self._total_length -= sum(counts.values())
        self._lengths[number] = 0.0  # its postings stay, and score nothing
        self._ids[number] = None
        self._removed += 1
        for term in counts:
            posting = self._postings[term]
            posting.alive -= 1
            posting.gains = None
        if self._removed > 1000 and self._removed > len(self._numbers):
            self._compact()

    def _compact(self) -> None:
        """Rebuild without removed documents (when they outnumber the living)."""
        living = [
            (doc_id, self._doc_terms[doc_id], int(self._groups[number]))
            for number, doc_id in enumerate(self._ids)
            if doc_id
        ]
        self.__init__(self.k1, self.b, self.stemmer)
        for doc_id, counts, group in living:
            self._add_counts(doc_id, counts, group)

    def _scoring_basis(self) -> tuple[float, float]:
        """The document count and average length, each rounded to a power of `BASIS_STEP`:
        they move by a step only every twentieth or so, so scores are reused meanwhile, and
        the same documents are scored the same however the index came to hold them (as it
        is now, or rebuilt after a restart)."""
        count = len(self._numbers)
        average = self._total_length / count if count else 1.0
        basis = (_rounded(count), _rounded(average))
        if basis != self._basis:
            self._basis = basis
            self._epoch += 1
        return basis

    def _gains(self, posting: _Postings) -> numpy.ndarray:
        """Each of the term's documents' BM25 score for it (a removed document's is 0)."""
        count, average = self._scoring_basis()
        if posting.gains is None or posting.epoch != self._epoch:
            docs = posting.docs[: posting.size]
            frequency = posting.counts[: posting.size]
            lengths = self._lengths[docs]
            # (the rounded count may be below the term's: a term in every document)
            count = max(count, posting.alive)
            idf = math.log(1 + (count - posting.alive + 0.5) / (posting.alive + 0.5))
            norm = self.k1 * (1 - self.b + self.b * lengths / average)
            gains = idf * frequency * (self.k1 + 1) / (frequency + norm)
            posting.gains = numpy.where(lengths > 0, gains, 0.0).astype(numpy.float32)
            posting.epoch = self._epoch
        return posting.gains

    def search(
        self, query: str, limit: int = 50, expand: bool = False, usable=None, groups=None
    ) -> list[tuple[str, float]]:
        """The best `limit` documents for `query`, best first, as (doc id, BM25 score).

        Terms found in more than a quarter of the documents the caller may see (a name
        everyone mentions) carry little weight: they add to the candidates the other terms
        found instead of bringing in thousands of their own, unless the others find nothing
        the caller may show. A query is read up to `MAX_QUERY_CHARS` characters.

        Args:
            query (str): The text to search for.
            limit (int): The most documents to return.
            expand (bool): Widen the query with the words of its best hits (see `_feedback`);
                the scores are then the query's share of BM25 scaled to its best usable hit
                (1.0) plus the added words' share, scaled alike.
            usable (callable, optional): `usable(doc_id)`: whether the caller may show a hit;
                None: every hit. Only usable hits are returned and lend their words to the
                query, so a document the caller may not show never takes the place of one
                it may, nor steers what it finds.
            groups (iterable, optional): Only documents of these groups (`add`'s `group`)
                are returned and lend their words, before `usable` is asked; None: all.

        Returns:
            list: (doc id, score) pairs, best first; empty when nothing matches.

        """
        count = len(self._numbers)
        if not count:
            return []
        query_terms = set(terms(query[:MAX_QUERY_CHARS], self.stemmer))
        postings = [self._postings.get(term) for term in query_terms]
        postings = [p for p in postings if p is not None and p.alive]
        rows = None
        if groups is not None:
            # (a mask of the rows, so what no group asked for costs no call of `usable`)
            wanted = numpy.fromiter(groups, dtype=numpy.int32)
            rows = numpy.isin(self._groups[: len(self._ids)], wanted)
            rows &= self._lengths[: len(self._ids)] > 0
            usable = _Usable(rows, usable)
            # which words are common is told by what the caller may see: a flood of others'
            # whispers makes no word common for it, nor takes away the candidates it brings
            count = int(numpy.count_nonzero(rows))
        alive = {
            posting: (
                posting.alive
                if rows is None
                else int(numpy.count_nonzero(rows[posting.docs[: posting.size]]))
            )
            for posting in postings
        }
        postings = [posting for posting in postings if alive[posting]]
        if not postings:
            return []
        common = max(64, count // 4)
        leading = [p for p in postings if alive[p] <= common] or postings
        scores = numpy.zeros(len(self._ids), dtype=numpy.float32)
        for posting in leading:
            scores[posting.docs[: posting.size]] += self._gains(posting)
        # (a comparison first: numpy finds the true values of a bool array far faster)
        hits = numpy.flatnonzero(scores > 0)
        rest = [posting for posting in postings if posting not in leading]
        for posting in rest:
            scores[posting.docs[: posting.size]] += self._gains(posting)
        if rest and not self._best(scores, hits, 1, usable):
            # the rarer words found only what may not be shown (a word of someone else's
            # whisper): the common words bring the candidates, as when the rarer are nowhere,
            # so a hidden document neither empties a search nor tells that it is there
            hits = numpy.flatnonzero(scores > 0)
        if expand and len(hits):
            scores, hits = self._feedback(scores, hits, query_terms, usable)
        ranked = self._best(scores, hits, limit, usable)
        return [(self._ids[number], float(scores[number])) for number in ranked]

    def _best(self, scores, hits, limit: int, usable=None) -> list[int]:
        """The numbers of the best `limit` of `hits` that `usable` allows, best first: the best
        few are looked at first, and all of them in order only when too few of those may be
        used (hidden documents many and strong)."""
        if isinstance(usable, _Usable):
            hits = hits[usable.rows[hits]]
            usable = usable.usable
        if usable is None:
            if len(hits) > limit:
                hits = hits[numpy.argpartition(-scores[hits], limit - 1)[:limit]]
            return list(hits[numpy.argsort(-scores[hits], kind="stable")])
        look = min(len(hits), 2 * limit)
        while True:
            part = hits
            if look < len(hits):
                part = hits[numpy.argpartition(-scores[hits], look - 1)[:look]]
            ranked = part[numpy.argsort(-scores[part], kind="stable")]
            best = []
            for number in ranked:
                if usable(self._ids[number]):
                    best.append(number)
                    if len(best) == limit:
                        return best
            if look == len(hits):
                return best
            look = len(hits)

    def _feedback(self, scores, hits, query_terms: set[str], usable=None):
        """Pseudo-relevance feedback: the terms that weigh most in the query's best hits
        (`FEEDBACK_DOCS`), each by its share of a hit's length, the hit's score and its rarity,
        are searched as well, and count `FEEDBACK_SHARE` of the score; the documents only they
        find become candidates. Terms of the query, of one document or of more than a quarter
        of them say nothing new. Only hits `usable` allows lend words."""
        count = len(self._numbers)
        common = count // 4
        best = self._best(scores, hits, FEEDBACK_DOCS, usable)
        if not best:
            return scores, hits
        top = float(scores[best[0]]) or 1.0
        weights: Counter = Counter()
        for number in best:
            counts = self._doc_terms[self._ids[number]]
            share = float(scores[number]) / top / (sum(counts.values()) or 1)
            for term, frequency in counts.items():
                alive = self._postings[term].alive
                if term in query_terms or alive < 2 or alive > common:
                    continue
                rarity = math.log(1 + (count - alive + 0.5) / (alive + 0.5))
                weights[term] += share * frequency * rarity
        chosen = weights.most_common(FEEDBACK_TERMS)
        if not chosen:
            return scores, hits
        total = sum(weight for _, weight in chosen)
        added = numpy.zeros(len(self._ids), dtype=numpy.float32)
        for term, weight in chosen:
            posting = self._postings[term]
            added[posting.docs[: posting.size]] += self._gains(posting) * (weight / total)
        # each part scaled to its best usable hit: what the caller may not show sets no scale
        # (it still counts, as in any one index, in how rare a word is)
        found = numpy.flatnonzero(added > 0)
        most = self._best(added, found, 1, usable)
        scores = (1 - FEEDBACK_SHARE) * scores / top + (
            FEEDBACK_SHARE * added / (float(added[most[0]]) if most else 1.0)
        )
        return scores, numpy.flatnonzero(scores > 0)
