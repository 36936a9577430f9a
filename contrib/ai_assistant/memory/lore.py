"""
Shared lore: what builders write once and every assistant allowed to may know.

A lore book holds entries (an id such as `L12`, a title, a text, tags and who may know it),
stored once for the whole game through a `KeyValueStore` (the shell keeps it on one global
script: `ai_assistant.shell.lore_book`). Who may know an entry is a list of any of:

| item | who |
| --- | --- |
| `Aria` or `#12` | the assistant with that name, alias or dbref |
| `room:Reading Room` or `room:#5` | an assistant standing in that room (its name or dbref) |
| `tag:guards` | an assistant with that Evennia tag |
| (nothing) or `everyone` | every assistant |

Recall searches the book as it searches an assistant's own memories, and the two are ranked
together (`merged`): an entry is shown marked as lore ("[lore; trust high] You know that: ..."),
with the source `lore`, never as something a person said, and trusted as a builder's
instruction (`trust_instruction`). It carries no audience (lore is public: builders write it,
nothing a player whispered is ever in it) and no author.

The whole game shares ONE in-memory BM25 index (`memory.lexical.LexicalIndex`), built once and
kept current edit by edit; a search scores the index once and then keeps the entries the
assistant may know (`Knower`). A version counter in the stored meta tells every book over the
same store that another changed it (another process, a rolled-back step): it then reads the
book again.

Bounds (every one checked before anything is written; a refusal changes nothing):

| bound | value |
| --- | --- |
| title | 1-`MAX_TITLE_CHARS` characters, one line |
| text | 1-`MAX_TEXT_CHARS` characters |
| tags | at most `MAX_TAGS`, each 1-`MAX_TAG_CHARS` characters of letters, digits, `_ -` |
| who may know it | at most `MAX_WHO` items, each at most `MAX_WHO_CHARS` characters |
| entries | at most `MAX_ENTRIES` in the book |
| an import | a file of `MAX_FILE_BYTES` at most; every entry valid, or none is added |

"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

from ..clock import from_iso, to_iso
from ..errors import Refused
from ..llm.model_json import INVALID_JSON, ModelJSONError, decode_model_json
from ..text import for_prompt
from .lexical import DEFAULT_STEMMER, LexicalIndex, terms
from .recall_weights import RecallWeights
from .recalled import Recalled, trust_word
from .store import KeyValueStore

MAX_TITLE_CHARS = 120
MAX_TEXT_CHARS = 1000  # about 250 tokens: lore shares recall's budget
MAX_TAGS = 10
MAX_TAG_CHARS = 40
MAX_WHO = 20
MAX_WHO_CHARS = 80
MAX_ENTRIES = 20000
MAX_FILE_BYTES = 2_000_000  # a lore file to import (20,000 entries of 100 bytes)
# how deep a lore JSON file may nest: {"entries": [{"tags": [...]}]} is three levels
MAX_FILE_DEPTH = 6
# entries per stored value: an edit rewrites one value of at most this many entries
BUCKET_SIZE = 100
META_KEY = "lore_meta"
# the removals kept on record (id, title, by whom, when), newest first
MAX_REMOVALS_KEPT = 50
# what a recall is given at most of lore: half its results (own memories keep the rest)
LORE_SHARE = 0.5
# the fewest of a query's words an entry must have to be recalled (all, for a shorter query)
MIN_SHARED_WORDS = 2
# how important lore counts in the score, 1-10 (a builder wrote it down)
LORE_IMPORTANCE = 6
# the source lore is shown with, and the kind of its recalled items
LORE = "lore"
EVERYONE = ("everyone", "*", "all")
FIELDS = ("title", "text", "tags", "who")
_TAG_RE = re.compile(r"^[\w][\w \-]*$")
_ID_RE = re.compile(r"^[Ll](\d{1,9})$")


class LoreError(Refused):
    """A lore entry or operation that was refused; nothing was changed."""


@dataclass(frozen=True)
class Knower:
    """Who is recalling: the keys an entry's "who may know it" is matched against.

    Build one with `Knower.of`.

    """

    keys: frozenset[str]

    @classmethod
    def of(
        cls,
        name: str,
        aliases: Iterable[str] = (),
        dbref: str | None = None,
        room: str | None = None,
        room_dbref: str | None = None,
        tags: Iterable[str] = (),
    ) -> "Knower":
        """The knower an assistant is, where it stands now.

        Args:
            name (str): Its name.
            aliases (iterable): Its other names.
            dbref (str, optional): Its dbref (`#12`).
            room (str, optional): The name of the room it is in.
            room_dbref (str, optional): That room's dbref.
            tags (iterable): Its Evennia tags (their keys).

        Returns:
            Knower: Its keys, lower-case.

        """
        keys = {_norm(name), *(_norm(alias) for alias in aliases)}
        if dbref:
            keys.add(_norm(dbref))
        for place in (room, room_dbref):
            if place:
                keys.add("room:" + _norm(place))
        keys.update("tag:" + _norm(tag) for tag in tags if tag)
        keys.discard("")
        return cls(frozenset(keys))

    def may_know(self, who: Iterable[str]) -> bool:
        """Whether an entry whose "who may know it" is `who` is known to this knower.

        Args:
            who (iterable): The entry's normalised items (empty: everyone).

        Returns:
            bool: True when it is for everyone or names one of the knower's keys.

        """
        who = tuple(who)
        return not who or any(item in self.keys for item in who)


def _norm(text: str) -> str:
    return " ".join(str(text).split()).lower()


@dataclass
class LoreRecalled(Recalled):
    """A recalled lore entry: shown marked as lore, never as someone's words."""

    title: str = ""

    def line(self, show_id: bool = False) -> str:
        """One line for a prompt: `- [lore; trust high] You know that: <title>: <text>`.

        Args:
            show_id (bool): End it with the entry's id, as `Recalled.line` does.

        Returns:
            str: The line, escaped.

        """
        tags = f"{LORE}; trust {trust_word(self.trust)}"
        shown = f"- [{tags}] You know that: {for_prompt(self.title)}: {for_prompt(self.text)}"
        return f"{shown} (id {for_prompt(self.id)})" if show_id else shown


def lore_id(value) -> int:
    """The number of a lore id (`L12` or `l12`).

    Args:
        value: What was given.

    Returns:
        int: The number.

    Raises:
        LoreError: Not a lore id.

    """
    text = str(value).strip()
    match = _ID_RE.match(text)
    if not match:
        raise LoreError(f"'{text[:20]}' is not a lore id: lore ids look like L12.")
    return int(match.group(1))


def check_title(title) -> str:
    """A title, checked: one line of 1-`MAX_TITLE_CHARS` characters."""
    title = " ".join(str(title or "").split())
    if not title or len(title) > MAX_TITLE_CHARS:
        raise LoreError(
            f"A lore title is 1 to {MAX_TITLE_CHARS} characters; this one has {len(title)}."
        )
    return title


def check_text(text) -> str:
    """A text, checked: 1-`MAX_TEXT_CHARS` characters (line breaks kept)."""
    text = str(text or "").strip()
    if not text or len(text) > MAX_TEXT_CHARS:
        raise LoreError(
            f"A lore text is 1 to {MAX_TEXT_CHARS} characters; this one has {len(text)}."
        )
    return text


def check_tags(tags) -> list[str]:
    """Tags, checked: a list (or a comma-separated string) of at most `MAX_TAGS`."""
    if isinstance(tags, str):
        tags = tags.split(",")
    if not isinstance(tags, (list, tuple)):
        raise LoreError("Lore tags are a list of words (or words separated by commas).")
    found = list(dict.fromkeys(_norm(tag) for tag in tags if str(tag).strip()))
    if len(found) > MAX_TAGS:
        raise LoreError(f"A lore entry has at most {MAX_TAGS} tags; this one has {len(found)}.")
    for tag in found:
        if len(tag) > MAX_TAG_CHARS or not _TAG_RE.match(tag):
            raise LoreError(
                f"'{tag[:MAX_TAG_CHARS]}' is not a tag: 1 to {MAX_TAG_CHARS} letters, digits, "
                "spaces, _ or -."
            )
    return found


def check_who(who) -> list[str]:
    """Who may know an entry, checked (see the module doc); empty means everyone."""
    if who is None:
        return []
    if isinstance(who, str):
        who = who.split(",")
    if not isinstance(who, (list, tuple)):
        raise LoreError(
            "Who may know lore is a list (or items separated by commas) of assistant names, "
            "room:<room>, tag:<tag>, or everyone."
        )
    found = list(dict.fromkeys(_norm(item) for item in who if str(item).strip()))
    if any(item in EVERYONE for item in found):
        if len(found) > 1:
            raise LoreError("'everyone' stands alone: name no one else with it.")
        return []
    if len(found) > MAX_WHO:
        raise LoreError(
            f"At most {MAX_WHO} items say who may know a lore entry; this one has {len(found)}."
        )
    for item in found:
        kind, colon, rest = item.partition(":")
        if len(item) > MAX_WHO_CHARS or (colon and (kind not in ("room", "tag") or not rest)):
            raise LoreError(
                f"'{item[:MAX_WHO_CHARS]}' cannot say who may know lore: use an assistant's "
                f"name or #dbref, room:<room name or #dbref>, tag:<tag> or everyone (at most "
                f"{MAX_WHO_CHARS} characters each)."
            )
    return found


def checked(fields: dict) -> dict:
    """An entry's fields, every one checked.

    Args:
        fields (dict): title, text, and optionally tags and who.

    Returns:
        dict: The fields as they would be stored.

    Raises:
        LoreError: A field is missing, unknown or out of bounds.

    """
    if not isinstance(fields, dict):
        raise LoreError("A lore entry is an object with title, text, tags and who.")
    unknown = sorted(set(fields) - set(FIELDS) - {"id"})
    if unknown:
        raise LoreError(
            f"Unknown lore field(s): {', '.join(map(str, unknown))[:80]}. Fields: "
            f"{', '.join(FIELDS)}."
        )
    return {
        "title": check_title(fields.get("title")),
        "text": check_text(fields.get("text")),
        "tags": check_tags(fields.get("tags") or []),
        "who": check_who(fields.get("who")),
    }


class LoreBook:
    """The game's lore book, and its one shared index.

    Args:
        store (KeyValueStore): Where the book is kept (once for the whole game).
        stemmer (str, optional): The Snowball stemmer of the game's language.
        clock (callable, optional): Returns now (UTC); for tests.

    """

    def __init__(self, store: KeyValueStore, stemmer: str = DEFAULT_STEMMER, clock=None):
        self.store = store
        self.stemmer = stemmer
        self.clock = clock or (lambda: datetime.now(timezone.utc))
        self._entries: dict[int, dict] | None = None
        self._index: LexicalIndex | None = None
        self._terms: dict[int, frozenset[str]] = {}  # each entry's words (stems)
        self._who: dict[int, frozenset[str]] = {}  # who may know each (empty: everyone)
        self._version: int | None = None
        self.builds = 0  # how many times the index was built (a test and the benchmark read it)

    # ---- reading ---------------------------------------------------------------------------

    def _meta(self) -> dict:
        return self.store.get(META_KEY) or {"next": 1, "version": 0, "count": 0}

    def _current(self) -> dict[int, dict]:
        """The entries, read and indexed once, and again only when the stored version moved
        (the book was changed through another book over the same store)."""
        meta = self._meta()
        if self._entries is None or meta.get("version", 0) != self._version:
            self._load(meta)
        return self._entries

    def _load(self, meta: dict) -> None:
        entries: dict[int, dict] = {}
        for bucket in range((meta.get("next", 1) - 1) // BUCKET_SIZE + 1):
            for key, entry in (self.store.get(f"lore_{bucket}") or {}).items():
                entries[int(key)] = entry
        self._entries = entries
        self._index = LexicalIndex(stemmer=self.stemmer)
        self._terms = {}
        self._who = {}
        for number, entry in entries.items():
            self._index_entry(number, entry)
        self._version = meta.get("version", 0)
        self.builds += 1

    def forget_cache(self) -> None:
        """Drop what was read: the next use reads the store again (after a rolled-back step)."""
        self._entries = None

    def _index_entry(self, number: int, entry: dict) -> None:
        text = " ".join([entry["title"], entry["text"], *entry.get("tags", ())])
        self._index.add(str(number), text)
        # the words the index found (stemming them again doubled a server start's first recall)
        self._terms[number] = self._index.terms_of(str(number))
        self._who[number] = frozenset(entry["who"])

    def __len__(self) -> int:
        return len(self._current())

    @property
    def version(self) -> int:
        """The stored version: it moves with every change."""
        return self._meta().get("version", 0)

    def get(self, entry_id) -> dict:
        """One entry.

        Args:
            entry_id: Its id (`L12`).

        Returns:
            dict: A copy of the entry (id, title, text, tags, who, by, created_at, edited_at,
                edited_by).

        Raises:
            LoreError: No such entry.

        """
        number = lore_id(entry_id)
        entry = self._current().get(number)
        if entry is None:
            raise LoreError(f"There is no lore entry L{number}. '@assistant/lore' lists them.")
        return dict(entry)

    def entries(self, start: int = 0, stop: int | None = None) -> list[dict]:
        """Entries by id, oldest first (a slice of them: a page).

        Args:
            start (int): The first position.
            stop (int, optional): Past the last position.

        Returns:
            list: Copies of the entries.

        """
        current = self._current()
        return [dict(current[number]) for number in sorted(current)[start:stop]]

    def known_to(self, knower: Knower, limit: int = 100) -> list[dict]:
        """The entries `knower` may know, by id (at most `limit`).

        Args:
            knower (Knower): Who.
            limit (int): The most to return.

        Returns:
            list: Copies of the entries.

        """
        found = []
        current = self._current()
        for number in sorted(current):
            if knower.may_know(current[number]["who"]):
                found.append(dict(current[number]))
                if len(found) >= limit:
                    break
        return found

    # ---- writing ---------------------------------------------------------------------------

    def _write(self, changed: dict[int, dict | None], meta: dict) -> None:
        """Store the changed entries (None: removed), bucket by bucket, then the meta with its
        version moved on; keep the index current."""
        current = self._current()
        buckets: dict[int, dict] = {}
        for number, entry in changed.items():
            bucket = number // BUCKET_SIZE
            if bucket not in buckets:
                buckets[bucket] = self.store.get(f"lore_{bucket}") or {}
            if entry is None:
                buckets[bucket].pop(str(number), None)
            else:
                buckets[bucket][str(number)] = entry
        for bucket, values in buckets.items():
            if values:
                self.store.set(f"lore_{bucket}", values)
            else:
                self.store.delete(f"lore_{bucket}")
        for number, entry in changed.items():
            if entry is None:
                current.pop(number, None)
                self._index.remove(str(number))
                self._terms.pop(number, None)
                self._who.pop(number, None)
            else:
                current[number] = entry
                self._index_entry(number, entry)
        meta = {**meta, "version": meta.get("version", 0) + 1, "count": len(current)}
        self.store.set(META_KEY, meta)
        self._version = meta["version"]

    def add(self, title, text, tags=(), who=None, by: str | None = None) -> dict:
        """Add an entry.

        Args:
            title (str): Its title.
            text (str): What it says.
            tags (list or str, optional): Its tags.
            who (list or str, optional): Who may know it (see the module doc); None: everyone.
            by (str, optional): The builder who wrote it (kept for builders, never recalled).

        Returns:
            dict: The entry as stored.

        Raises:
            LoreError: A bad field, or the book is full; nothing was changed.

        """
        return self.add_many([{"title": title, "text": text, "tags": tags, "who": who}], by)[0]

    def add_many(self, items: list[dict], by: str | None = None) -> list[dict]:
        """Add entries, all or none: every one is checked before any is stored.

        Args:
            items (list): Entries' fields (title, text, tags, who).
            by (str, optional): The builder who added them.

        Returns:
            list: The entries as stored.

        Raises:
            LoreError: Naming the first bad entry (counted from 1); nothing was changed.

        """
        if not isinstance(items, list) or not items:
            raise LoreError("Give at least one lore entry.")
        current = self._current()
        if len(current) + len(items) > MAX_ENTRIES:
            raise LoreError(
                f"The lore book holds at most {MAX_ENTRIES} entries; it has {len(current)} and "
                f"{len(items)} more would not fit."
            )
        fields = []
        for position, item in enumerate(items, 1):
            try:
                fields.append(checked(item))
            except LoreError as err:
                raise LoreError(f"Entry {position}: {err}" if len(items) > 1 else str(err))
        meta = self._meta()
        number = meta.get("next", 1)
        now = to_iso(self.clock())
        made = {}
        for field_values in fields:
            made[number] = {
                "id": f"L{number}",
                **field_values,
                "by": by,
                "created_at": now,
            }
            number += 1
        self._write(made, {**meta, "next": number})
        return [dict(entry) for entry in made.values()]

    def edit(self, entry_id, field: str, value, by: str | None = None) -> dict:
        """Change one field of an entry.

        Args:
            entry_id: Its id.
            field (str): title, text, tags or who.
            value: The new value (checked as `add` checks it).
            by (str, optional): The builder.

        Returns:
            dict: The entry as stored now.

        Raises:
            LoreError: No such entry, an unknown field or a bad value; nothing was changed.

        """
        entry = self.get(entry_id)
        field = str(field or "").strip().lower()
        if field not in FIELDS:
            raise LoreError(f"'{field[:20]}' is not a lore field. Fields: {', '.join(FIELDS)}.")
        entry[field] = checked({**{name: entry[name] for name in FIELDS}, field: value})[field]
        entry["edited_at"] = to_iso(self.clock())
        entry["edited_by"] = by
        number = lore_id(entry["id"])
        self._write({number: entry}, self._meta())
        return dict(entry)

    def remove(self, entry_id, by: str | None = None, now: str | None = None) -> dict:
        """Remove an entry, recording who removed it (`removals`).

        Args:
            entry_id: Its id.
            by (str, optional): The builder.
            now (str, optional): When (ISO time), for the record.

        Returns:
            dict: The entry removed.

        Raises:
            LoreError: No such entry; nothing was changed.

        """
        entry = self.get(entry_id)
        meta = self._meta()
        record = {"id": entry["id"], "title": entry["title"], "by": (by or "")[:80], "at": now}
        removals = [record, *meta.get("removed", [])][:MAX_REMOVALS_KEPT]
        self._write({lore_id(entry["id"]): None}, {**meta, "removed": removals})
        return entry

    def removals(self) -> list[dict]:
        """The latest removals, newest first: id, title, by whom and when (at most
        `MAX_REMOVALS_KEPT`).

        Returns:
            list: The records.

        """
        return list(self._meta().get("removed", []))

    # ---- searching -------------------------------------------------------------------------

    def search(
        self, query: str, knower: Knower | None = None, limit: int = 8, min_words: int = 1
    ) -> list[tuple[dict, float]]:
        """The entries best matching `query` that `knower` may know, best first.

        The one index is scored once; entries the knower may not know are passed over. When
        too few of the first candidates are known to it, more are looked at (up to all hits).

        Args:
            query (str): What to look for.
            knower (Knower, optional): Who is asking; None: a builder, who sees all.
            limit (int): The most to return.
            min_words (int): The fewest of the query's words an entry must have (all of them,
                for a query of fewer words).

        Returns:
            list: (entry, BM25 score) pairs.

        """
        current = self._current()
        if limit <= 0 or not current:
            return []
        wanted = frozenset(terms(query, self.stemmer))
        enough = min(min_words, len(wanted))
        keys = knower.keys if knower is not None else None
        who_of, terms_of = self._who, self._terms
        want = limit * 3
        while True:
            hits = self._index.search(query, want)
            found = []
            for hit_id, score in hits:
                number = int(hit_id)
                who = who_of[number]
                if keys is not None and who and who.isdisjoint(keys):
                    continue
                if enough > 1 and len(wanted & terms_of[number]) < enough:
                    continue
                found.append((current[number], score))
                if len(found) == limit:
                    return found
            if len(hits) < want:
                return found
            want *= 8

    def recall(
        self, query: str, knower: Knower, limit: int, weights: RecallWeights
    ) -> list[LoreRecalled]:
        """Lore as recall shows it, scored as recall scores memories (see `merged`).

        An entry is considered when it has at least `MIN_SHARED_WORDS` of the query's words
        (all of them, for a shorter query): one common word is not what a question is about.
        Relevance is its BM25 scaled to the best lore hit, as an own memory's is to the best
        memory; recency counts in full (lore is always current); importance is
        `LORE_IMPORTANCE`; trust a builder's instruction's.

        Args:
            query (str): What is recalled.
            knower (Knower): Who recalls.
            limit (int): The most to return.
            weights (RecallWeights): The assistant's weights.

        Returns:
            list: `LoreRecalled` items, best first.

        """
        hits = self.search(query, knower, limit, MIN_SHARED_WORDS)
        if not hits:
            return []
        best = max(hit[1] for hit in hits) or 1.0
        trust = dict(weights.trusts).get("instruction", 1.0)
        found = []
        for entry, score in hits:
            relevance = score / best
            parts = {
                "relevance": round(relevance, 4),
                "recency": 1.0,
                "importance": LORE_IMPORTANCE / 10,
                "person": 0.0,
                "trust": round(trust, 4),
            }
            total = weights.score(relevance, 1.0, LORE_IMPORTANCE, trust)
            found.append(
                LoreRecalled(
                    id=f"lore:{entry['id']}",
                    kind=LORE,
                    text=entry["text"],
                    score=round(total, 4),
                    scores=parts,
                    entry_ids=[],
                    time=from_iso(entry.get("edited_at") or entry["created_at"]),
                    importance=LORE_IMPORTANCE,
                    audience=None,  # lore is public: builders write it, no one whispered it
                    provenance={"source_type": LORE, "lore_id": entry["id"]},
                    trust=trust,
                    title=entry["title"],
                )
            )
        return sorted(found, key=lambda item: -item.score)


def parse_lore_text(text: str) -> list[dict]:
    """The entries of a lore text file (not yet checked: `LoreBook.add_many` checks them).

    The format: entries separated by a line of `---`; each starts with header lines
    `title: ...` (required), `tags: a, b` and `who: Aria, room:Hall, tag:guards` (optional),
    and the lines after the headers are its text. Lines starting with `#` before the headers
    are comments.

        # the founding of the town
        title: The founding of Millbrook
        tags: history, town
        who: everyone
        Millbrook was founded by the river smith Oda.
        ---
        title: The bell
        The bell rings at dusk.

    Args:
        text (str): The file's text.

    Returns:
        list: Each entry's fields.

    Raises:
        LoreError: A file with no entry, or too many.

    """
    items = []
    for block in re.split(r"(?m)^---[ \t]*$", text):
        lines = block.strip().splitlines()
        while lines and (not lines[0].strip() or lines[0].lstrip().startswith("#")):
            lines.pop(0)
        if not lines:
            continue
        fields: dict = {}
        while lines:
            key, colon, value = lines[0].partition(":")
            key = key.strip().lower()
            if not colon or key not in ("title", "tags", "who") or key in fields:
                break
            fields[key] = value.strip()
            lines.pop(0)
        fields["text"] = "\n".join(lines).strip()
        items.append(fields)
        if len(items) > MAX_ENTRIES:
            raise LoreError(f"A lore file holds at most {MAX_ENTRIES} entries.")
    if not items:
        raise LoreError("The file holds no lore entry (see 'help @assistant' for the format).")
    return items


def parse_lore_json(text: str) -> list[dict]:
    """The entries of a lore JSON file (not yet checked: `LoreBook.add_many` checks them).

    The format: a list of objects, or an object whose `entries` is that list; each object has
    `title` and `text` (strings), and optionally `tags` and `who` (lists of strings).

        {"entries": [{"title": "The bell", "text": "The bell rings at dusk.",
                      "tags": ["town"], "who": ["room:Square"]}]}

    Args:
        text (str): The file's text.

    Returns:
        list: Each entry's fields.

    Raises:
        LoreError: Not JSON, or not in that shape.

    """
    try:
        # bounded before it is parsed: a file nested 100,000 deep never reaches the decoder
        data = decode_model_json(
            text, "a lore file's contents", max_chars=MAX_FILE_BYTES, max_depth=MAX_FILE_DEPTH
        )
    except ModelJSONError as err:
        what = "not JSON" if err.kind == INVALID_JSON else "refused"
        raise LoreError(f"The file is {what}: {str(err)[:200]}.") from None
    if isinstance(data, dict) and set(data) == {"entries"}:
        data = data["entries"]
    if not isinstance(data, list) or not data:
        raise LoreError('A lore JSON file is a list of entries, or {"entries": [...]}.')
    if len(data) > MAX_ENTRIES:
        raise LoreError(f"A lore file holds at most {MAX_ENTRIES} entries.")
    for position, item in enumerate(data, 1):
        if not isinstance(item, dict) or not all(
            isinstance(item.get(key), str) for key in ("title", "text")
        ):
            raise LoreError(f"Entry {position}: an object with title and text (strings).")
    return data


def merged(found: list[Recalled], lore: list[Recalled], limit: int) -> list[Recalled]:
    """An assistant's recalled memories and its lore, ranked together by score.

    Lore takes at most `LORE_SHARE` of the results (at least one), so its own memories keep
    their place beside what the world's lore says.

    Args:
        found (list): The memories recalled, best first.
        lore (list): The lore recalled, best first.
        limit (int): How many results in all.

    Returns:
        list: The best `limit`, best first.

    """
    if not lore or limit <= 0:
        return found[:limit] if limit > 0 else []
    cap = max(1, int(limit * LORE_SHARE))
    return sorted(found + lore[:cap], key=lambda item: -item.score)[:limit]
