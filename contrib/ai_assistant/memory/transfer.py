"""
Export and import of one assistant's whole memory as a JSON file.

A backup, an NPC moved to another game, a new NPC seeded with what another knows: the file
holds everything the assistant remembers, kind by kind, as records with their ids, and nothing
of the game's own (no API key, no endpoint, no game-wide setting). Its layout is documented
field by field in docs/memory.md ("Export and import"); `SCHEMA_VERSION` says which layout a
file has, and a file of another version is refused.

```
{"format": "evennia-ai-assistant-memory", "schema_version": 1, "exported_at": "...",
 "game": {"id": "...", "name": "..."},
 "assistant": {"name": "...", "dbref": "#5", "persona": "...", "settings": {...}},
 "people": {"#12": "Bob", ...},
 "memory": {"journal": {"state": {...}, "items": [...]}, "long_term": {...},
            "links": {"cursor": 0, "items": [...]}, "profiles": [...], "relationships": [...],
            "digests": {...}, "core_notes": [...], "review_log": {...}, "gossip_log": [...],
            "reminders": [...], "sleep_history": {...}}}
```

What the file leaves out, and why:

- **Embeddings.** Vectors belong to one embeddings model and mean nothing to another game's;
  they are large, and they are remade: the journal's by the next sleep's embeddings step
  (`sleep.embedding`, which embeds every entry without a vector), long-term memories are then
  found by their words (BM25) and through the journal entries they were drawn from.
- **Secrets.** Only this assistant's own settings overrides are written, only keys the
  configuration knows (`settings_allowed`), and an override whose value holds one of the
  game's secrets or anything shaped like an API key is left out. Every text in the file goes
  through the same redaction as the logs (`text.redact`). The settings table holds no key or
  URL: the endpoint and its key are game-wide (`AI_ASSISTANT_*`) and never exported.
- **What is not memory**: the conversation in progress, queued events, usage, the sleep debt
  and the snapshots (a rollback cannot cross an import: they are dropped when one is made).

An import checks the whole file before it writes anything (`parse_file`): the format and its
version, each kind known, every text and list within the live bounds, every id well formed and
unique, every reference (a memory's source entries, a link's ends, a digest's entries) to
something the file holds, every audience a list of person keys. A file that fails any check is
refused with a `TransferError` naming what was wrong, where (its path in the JSON, such as
`memory.journal.items[3].content`) and what is allowed; nothing is changed.

Person keys are dbrefs (`#12`) that name other characters in another game. A file made in
another game (its `game.id` is not this game's) is re-keyed on import (`rekey`): every `#N`
becomes `name:<lower-case name>` (the name the file knows for it, from `people`), so that a
memory private to Bob there stays private to no one here rather than to whoever has `#12`
here; a stranger with the same dbref gets nothing. Only someone known by name alone, with that
name, would match such a key. A dbref the file has no name for becomes `name:unknown #12`. An
account's key (a speaker's voice, `account#3`) becomes `account#3@<the file's game id>`, so that
nobody here counts as the same voice, or is forgotten with it.

"""

import json
import math
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import Refused
from ..text import counted, redact
from .core import KEY as CORE_KEY
from .core import _slot
from .entities import INDEX_KEY as ENTITY_INDEX
from .gossip import LOG_KEY as GOSSIP_KEY
from .gossip import MAX_LOG as MAX_GOSSIP_LOG
from .journal import CRITICAL_BOOKMARKS, EMBEDDED, REFLECTION_COUNTER, RESTED_COUNT
from .links import MemoryLinks, _chunk_key
from .relationships import INDEX_KEY as RELATIONSHIP_INDEX
from .relationships import MAX_REASON_CHARS, PREFIX as RELATIONSHIP_PREFIX
from .review import AUDIT, AUDIT_CHUNK
from .snapshots import Snapshots
from .store import ChunkedList, KeyValueStore

FORMAT = "evennia-ai-assistant-memory"
SCHEMA_VERSION = 1
SUPPORTED_VERSIONS = (1,)
# a file to import, at most (a journal of 100,000 entries of 400 bytes)
MAX_FILE_BYTES = 50_000_000
# the longest text anywhere in a file (a compaction summary is the longest memory written)
MAX_TEXT_CHARS = 8000
# the most items of one kind (a journal of 30 years of busy days stays below it)
MAX_ITEMS = 200_000
# the most items in a list or dict inside one record (cites, audience, observations)
MAX_INNER_ITEMS = 2000
# how deep records nest (an entry's gossip chain is the deepest: 4)
MAX_DEPTH = 10
# the most errors one refusal lists
MAX_ERRORS_SHOWN = 5
MAX_NAME_CHARS = 80
MAX_ID_CHARS = 200
MAX_PERSONA_CHARS = 2000  # the handler's (`handler.MAX_PERSONA_CHARS`)
MAX_CORE_VALUE_CHARS = 1000  # the memory_edit tool's and @assistant/core's
MAX_CORE_KEY_CHARS = 60
MAX_REMINDER_CHARS = 300  # `reminders.MAX_REMINDER_CHARS`
MAX_PATTERN_CHARS = 80
# an override left out of a file whatever its value: a name that could hold a secret
SECRET_NAME = re.compile(r"key|secret|password|token$|url|credential", re.IGNORECASE)

# characters a text may not hold: a terminal acts on them (ANSI escapes, bells), they are
# never typed by a player, and a builder's listing must show what it shows, nothing more
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# the largest whole number a file may hold (what JSON readers keep exactly)
MAX_NUMBER = 2**53
# the fields records hold, by kind, and what each must be when present (`_check_fields`)
JOURNAL_FIELDS = {
    "kind": "text",
    "author": "text?",
    "source_type": "text?",
    "heard_from": "text?",
    "location": "text?",
    "scoring_method": "text?",
    "voice": "text?",
    "rests_on": "text?",
    "about": "texts",
    "witnesses": "texts",
    "tags": "texts",
    "claims_of": "texts",
    "voices": "texts",
    "created_at": "time",
    "game_at": "time?",
    "importance": "score",
    "salience": "number?",
    "consolidated": "bool",
    "gossip": "dict?",
    "forgotten": "dict?",
    "trust_set": "dict?",
}
LONG_TERM_FIELDS = {
    "vector": "none",
    "importance": "score",
    "created_at": "time",
    "provenance": "dict",
    "forgotten": "dict?",
    "trust_set": "dict?",
}

PERSON_KEY = re.compile(r"^(#\d{1,12}|name:.{1,200})$", re.DOTALL)
DBREF = re.compile(r"^#\d{1,12}$")
ACCOUNT_KEY = re.compile(r"^account#\d{1,12}$")
DBREF_PREFIXED = re.compile(r"^(#\d{1,12})(/.*)$", re.DOTALL)
ID_PATTERNS = {
    "journal": re.compile(r"^j\d{6,}$"),
    "long_term": re.compile(r"^m\d{6,}$"),
    "digests": re.compile(r"^d\d{6,}$"),
    "sleep_history": re.compile(r"^s\d{1,9}$"),
    "reminders": re.compile(r"^t\d{1,9}$"),
}
# the kinds of memory a file holds, in the order they are listed (the keys of `Memory`)
KINDS = (
    "journal",
    "long_term",
    "links",
    "profiles",
    "relationships",
    "digests",
    "core_notes",
    "review_log",
    "gossip_log",
    "reminders",
    "sleep_history",
    "cursors",
)
# the small values sleep steps keep beside the memory, how far they have read it
# (`sleep.relationships.CURSOR_KEY`: the journal position relationships were updated through)
CURSOR_KEYS = ("relationship:cursor",)
# every key of the character's memory store a file covers, by its family (`covered`)
COVERED = re.compile(
    r"^(journal|ltm|digests|audit):(meta|\d{6})$|^journal_vectors:|^links:|^entity:|"
    r"^relationship:|^core_memory$|^gossip_log$"
)
# the chunked lists on the character's store, by kind, and their chunk sizes
CHUNKED = {"journal": ("journal", 100), "long_term": ("ltm", 100), "digests": ("digests", 50)}
REVIEW = (AUDIT, AUDIT_CHUNK)
SLEEP_HISTORY = ("sleep_history", 50)
TRIGGERS = "triggers"


class TransferError(Refused):
    """A file that cannot be exported or imported; the message says why. Nothing changed."""


# ---- the file's layout ----------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChunkedKind(_Strict):
    """A kind kept as a list: its records, oldest first, and its small values (counters,
    cursors: `state`)."""

    state: dict[str, Any] = Field(default_factory=dict)
    items: list[dict[str, Any]] = Field(default_factory=list, max_length=MAX_ITEMS)


class Link(_Strict):
    """One link between two memories, once."""

    a: str = Field(max_length=MAX_ID_CHARS)
    b: str = Field(max_length=MAX_ID_CHARS)
    strength: float = Field(ge=0.0, le=1.0)


class Links(_Strict):
    """The links, and how far the link step has gone through the long-term memories."""

    cursor: int = Field(default=0, ge=0)
    items: list[Link] = Field(default_factory=list, max_length=MAX_ITEMS)


class Memory(_Strict):
    """Every kind of memory, each documented in docs/memory.md."""

    journal: ChunkedKind = Field(default_factory=ChunkedKind)
    long_term: ChunkedKind = Field(default_factory=ChunkedKind)
    links: Links = Field(default_factory=Links)
    profiles: list[dict[str, Any]] = Field(default_factory=list, max_length=MAX_ITEMS)
    relationships: list[dict[str, Any]] = Field(default_factory=list, max_length=MAX_ITEMS)
    digests: ChunkedKind = Field(default_factory=ChunkedKind)
    core_notes: list[dict[str, Any]] = Field(default_factory=list, max_length=MAX_INNER_ITEMS)
    review_log: ChunkedKind = Field(default_factory=ChunkedKind)
    gossip_log: list[dict[str, Any]] = Field(default_factory=list, max_length=MAX_GOSSIP_LOG)
    reminders: list[dict[str, Any]] = Field(default_factory=list, max_length=MAX_INNER_ITEMS)
    sleep_history: ChunkedKind = Field(default_factory=ChunkedKind)
    cursors: dict[Literal["relationship:cursor"], dict[str, Any]] = Field(default_factory=dict)


class Game(_Strict):
    """Which game the file was made in (`id` decides whether person keys are re-keyed)."""

    id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    name: str = Field(default="", max_length=MAX_ID_CHARS)


class Assistant(_Strict):
    """The assistant the memory is of."""

    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    dbref: str | None = Field(default=None, max_length=20)
    persona: str = Field(default="", max_length=MAX_PERSONA_CHARS)
    settings: dict[str, Any] = Field(default_factory=dict)


class MemoryFile(_Strict):
    """A whole file."""

    format: Literal["evennia-ai-assistant-memory"]
    schema_version: int
    exported_at: str = Field(max_length=40)
    game: Game
    assistant: Assistant
    people: dict[str, str] = Field(default_factory=dict)
    memory: Memory


# ---- export ---------------------------------------------------------------------------------


def _chunked(store: KeyValueStore, name: str, size: int, drop: Iterable[str] = ()) -> dict:
    items = ChunkedList(store, name, size)
    state = {key: value for key, value in items.extra.items() if key not in set(drop)}
    return {"state": state, "items": items.all()}


def _redacted(value: Any, secrets: list[str]) -> Any:
    """`value` with every text redacted as the logs are (`text.redact`)."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, list):
        return [_redacted(item, secrets) for item in value]
    if isinstance(value, dict):
        return {key: _redacted(item, secrets) for key, item in value.items()}
    return value


def exported_settings(overrides: dict, allowed: Iterable[str], secrets: list[str]) -> dict:
    """The overrides that go into a file: known keys only, none that could hold a secret.

    Args:
        overrides (dict): The assistant's own configuration overrides.
        allowed (iterable): The configuration keys (`conf.config_keys()`).
        secrets (list): The game's secrets (`game_settings.secrets()`).

    Returns:
        dict: The overrides kept.

    """
    allowed = set(allowed)
    kept = {}
    for key, value in overrides.items():
        if key not in allowed or SECRET_NAME.search(key):
            continue
        if isinstance(value, str) and redact(value, secrets) != value:
            continue  # a value holding a secret, or shaped like a key
        kept[key] = value
    return kept


def export_memory(
    memory: KeyValueStore,
    state: KeyValueStore,
    *,
    assistant: dict,
    game: dict,
    exported_at: str,
    secrets: list[str],
) -> dict:
    """Everything one assistant remembers, as a file's data (see the module's doc).

    Args:
        memory (KeyValueStore): The character's memory store.
        state (KeyValueStore): The script's store (reminders, sleep history).
        assistant (dict): "name", "dbref", "persona" and "settings" (already filtered by
            `exported_settings`).
        game (dict): "id" and "name" of this game.
        exported_at (str): When (ISO).
        secrets (list): The game's secrets, redacted from every text.

    Returns:
        dict: The file's data, ready for `json.dumps`.

    """
    journal = _chunked(memory, "journal", 100, drop=(EMBEDDED,))
    long_term = _chunked(memory, "ltm", 100)
    long_term["items"] = [{**item, "vector": None} for item in long_term["items"]]
    links = MemoryLinks(memory)
    profiles = [
        profile
        for key in (memory.get(ENTITY_INDEX) or {})
        if isinstance(profile := memory.get(f"entity:{key}"), dict)
    ]
    relationships = [
        value
        for key in (memory.get(RELATIONSHIP_INDEX) or {})
        if isinstance(value := memory.get(RELATIONSHIP_PREFIX + key), dict)
    ]
    people = {
        **dict(memory.get(RELATIONSHIP_INDEX) or {}),
        **dict(memory.get(ENTITY_INDEX) or {}),
    }
    data = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "exported_at": exported_at,
        "game": dict(game),
        "assistant": dict(assistant),
        "people": {key: name for key, name in people.items() if PERSON_KEY.match(key)},
        "memory": {
            "journal": journal,
            "long_term": long_term,
            "links": {
                "cursor": links.cursor,
                "items": [{"a": a, "b": b, "strength": s} for a, b, s in links.all()],
            },
            "profiles": profiles,
            "relationships": relationships,
            "digests": _chunked(memory, "digests", 50),
            "core_notes": list((memory.get(CORE_KEY) or {}).values()),
            "review_log": _chunked(memory, *REVIEW),
            "gossip_log": list(memory.get(GOSSIP_KEY) or []),
            "reminders": list(state.get(TRIGGERS) or []),
            "sleep_history": _chunked(state, *SLEEP_HISTORY),
            "cursors": {
                key: value for key in CURSOR_KEYS if isinstance(value := memory.get(key), dict)
            },
        },
    }
    return _redacted(data, secrets)


def counts(data: dict) -> dict[str, int]:
    """How many records of each kind a file's data holds.

    Args:
        data (dict): A file's data (as `export_memory` gives it, or parsed).

    Returns:
        dict: Counts keyed by kind, in `KINDS` order.

    """
    memory = data["memory"]
    found = {}
    for kind in KINDS:
        value = memory.get(kind) or []
        found[kind] = len(value["items"] if isinstance(value, dict) and "items" in value else value)
    return found


def held(memory: KeyValueStore, state: KeyValueStore) -> dict[str, int]:
    """How much memory an assistant holds now, by kind (nothing: an import needs no replace).

    Args:
        memory (KeyValueStore): The character's memory store.
        state (KeyValueStore): The script's store.

    Returns:
        dict: Counts keyed by kind, only those above zero.

    """
    found = {
        "journal": len(ChunkedList(memory, "journal")),
        "long_term": len(ChunkedList(memory, "ltm")),
        "profiles": len(memory.get(ENTITY_INDEX) or {}),
        "relationships": len(memory.get(RELATIONSHIP_INDEX) or {}),
        "digests": len(ChunkedList(memory, "digests")),
        "core_notes": len(memory.get(CORE_KEY) or {}),
        "gossip_log": len(memory.get(GOSSIP_KEY) or []),
        "reminders": len(state.get(TRIGGERS) or []),
    }
    return {kind: count for kind, count in found.items() if count}


# ---- checking a file --------------------------------------------------------------------------


def _where(loc: Iterable) -> str:
    path = ""
    for part in loc:
        if part == "[key]":  # pydantic's mark of a dict's key
            path += " (a key)"
            continue
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(the file)"


def _refuse(problems: list[str]) -> None:
    # a problem may quote the file (a key, an id, a reference): shown on a builder's screen,
    # it holds no Evennia markup (a `|lc` link would run a command when clicked) and no
    # control character; `|` shows as `¦`, as the listings show stored values
    shown = [CONTROL.sub("?", problem).replace("|", "\N{BROKEN BAR}") for problem in problems]
    shown = shown[:MAX_ERRORS_SHOWN]
    more = len(problems) - len(shown)
    tail = f" (and {more} more)" if more > 0 else ""
    raise TransferError(
        "The file was not imported, nothing was changed: " + "; ".join(shown) + tail + "."
    )


def parse_file(raw: bytes | str) -> MemoryFile:
    """Parse and check a whole file before anything is written.

    Args:
        raw (bytes or str): The file's content.

    Returns:
        MemoryFile: The checked file.

    Raises:
        TransferError: Naming what was wrong, where, and what is allowed.

    """
    if len(raw) > MAX_FILE_BYTES:
        _refuse([f"a memory file is at most {MAX_FILE_BYTES} bytes"])
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as err:
        _refuse([f"it is not valid JSON ({str(err)[:200]})"])
    except RecursionError:
        # a hostile file of thousands of nested brackets: deeper than any record nests
        _refuse([f"it nests deeper than {MAX_DEPTH} levels"])
    if not isinstance(data, dict):
        _refuse(['a memory file is a JSON object: {"format": ..., "memory": ...}'])
    if data.get("format") != FORMAT:
        _refuse([f'format: this is not a memory file (expected "{FORMAT}")'])
    version = data.get("schema_version")
    if version not in SUPPORTED_VERSIONS:
        _refuse(
            [
                f"schema_version: {str(version)[:20]} is not supported; this version of the "
                f"contrib reads {', '.join(map(str, SUPPORTED_VERSIONS))}"
            ]
        )
    problems: list[str] = []
    try:
        _walk_bounds(data, (), 0, problems)
    except RecursionError:  # pragma: no cover - json.loads refuses such depth first
        problems.append(f"(the file): nested deeper than {MAX_DEPTH} levels")
    if problems:
        _refuse(problems)
    try:
        parsed = MemoryFile.model_validate(data)
    except ValidationError as err:
        for error in err.errors():
            where = _where(error["loc"])
            if error["type"] == "extra_forbidden":
                if len(error["loc"]) == 2 and error["loc"][0] == "memory":
                    problems.append(f"{where}: unknown kind of memory (known: {', '.join(KINDS)})")
                else:
                    problems.append(f"{where}: not a field of this schema version")
            else:
                problems.append(f"{where}: {error['msg']}")
        _refuse(problems)
    _check_records(parsed, problems)
    if problems:
        _refuse(problems)
    return parsed


def _walk_bounds(value: Any, loc: tuple, depth: int, problems: list[str]) -> None:
    """Every text at most `MAX_TEXT_CHARS`, every inner list at most `MAX_INNER_ITEMS`."""
    if len(problems) > MAX_ERRORS_SHOWN:
        return
    if depth > MAX_DEPTH:
        problems.append(f"{_where(loc)}: nested deeper than {MAX_DEPTH} levels")
        return
    if isinstance(value, str):
        if len(value) > MAX_TEXT_CHARS:
            problems.append(
                f"{_where(loc)}: a text of {len(value)} characters (at most {MAX_TEXT_CHARS})"
            )
        elif control := CONTROL.search(value):
            problems.append(
                f"{_where(loc)}: a control character (U+{ord(control.group()):04X}); texts "
                "hold printable characters, line breaks and tabs only"
            )
        return
    if isinstance(value, float) and not math.isfinite(value):
        problems.append(f"{_where(loc)}: {value} is not a finite number")
        return
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_NUMBER:
        problems.append(f"{_where(loc)}: a number beyond ±{MAX_NUMBER}")
        return
    # the lists of a kind's records are bounded by `MAX_ITEMS`, anything inside by less
    limit = MAX_ITEMS if depth <= 3 else MAX_INNER_ITEMS
    if isinstance(value, list):
        if len(value) > limit:
            problems.append(f"{_where(loc)}: {len(value)} items (at most {limit})")
            return
        for number, item in enumerate(value):
            _walk_bounds(item, (*loc, number), depth + 1, problems)
    elif isinstance(value, dict):
        if len(value) > limit:
            problems.append(f"{_where(loc)}: {len(value)} fields (at most {limit})")
            return
        for key, item in value.items():
            if len(key) > MAX_ID_CHARS or CONTROL.search(key):
                problems.append(
                    f"{_where(loc)}: a field name over {MAX_ID_CHARS} characters or with a "
                    "control character"
                )
                continue
            _walk_bounds(item, (*loc, key), depth + 1, problems)


def _text(record: dict, field: str, limit: int, where: str, problems: list, required=True):
    value = record.get(field)
    if value is None and not required:
        return
    if not isinstance(value, str) or len(value) > limit:
        problems.append(f"{where}.{field}: a text of at most {limit} characters is required")


def _check_audiences(value: Any, loc: tuple, problems: list[str]) -> None:
    """Every `audience` None (public) or a list of person keys (`#12`, `name:bob`)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "audience" and not (
                item is None
                or (
                    isinstance(item, list)
                    and all(isinstance(k, str) and PERSON_KEY.match(k) for k in item)
                )
            ):
                problems.append(
                    f"{_where((*loc, key))}: an audience is null (public) or a list of person "
                    "keys (#12 or name:<name>)"
                )
            else:
                _check_audiences(item, (*loc, key), problems)
    elif isinstance(value, list):
        for number, item in enumerate(value):
            _check_audiences(item, (*loc, number), problems)


def _check_ids(kind: str, items: list[dict], problems: list[str], positional: str = "") -> set:
    """Ids well formed and unique; `positional` ones must equal their position (`j000042`)."""
    pattern = ID_PATTERNS[kind]
    seen: set[str] = set()
    base = f"memory.{kind}" + (".items" if kind not in ("reminders",) else "")
    for number, item in enumerate(items):
        where = f"{base}[{number}].id"
        item_id = item.get("id")
        if not isinstance(item_id, str) or not pattern.match(item_id):
            problems.append(f"{where}: {str(item_id)[:40]!r} is not an id of this kind")
        elif item_id in seen:
            problems.append(f"{where}: {item_id} appears twice (ids are unique)")
        elif positional and item_id != f"{positional}{number:06d}":
            problems.append(
                f"{where}: {item_id} at position {number} (ids number the records in order: "
                f"{positional}{number:06d})"
            )
        seen.add(item_id)
    return seen


def _check_records(parsed: MemoryFile, problems: list[str]) -> None:
    """The records of each kind: ids, the texts bounded as live, the references held."""
    memory = parsed.memory
    journal_ids = _check_ids("journal", memory.journal.items, problems, positional="j")
    memory_ids = _check_ids("long_term", memory.long_term.items, problems, positional="m")
    _check_ids("digests", memory.digests.items, problems)
    _check_ids("sleep_history", memory.sleep_history.items, problems)
    _check_ids("reminders", memory.reminders, problems)
    for number, entry in enumerate(memory.journal.items):
        where = f"memory.journal.items[{number}]"
        _text(entry, "content", MAX_TEXT_CHARS, where, problems)
        _check_fields(entry, JOURNAL_FIELDS, where, problems)
        if entry.get("seq") not in (None, number):
            problems.append(f"{where}.seq: {entry.get('seq')} is not its position {number}")
        _refs(entry.get("cites"), journal_ids, f"{where}.cites", problems)
        _refs(entry.get("memory_ids"), memory_ids, f"{where}.memory_ids", problems)
    for number, item in enumerate(memory.long_term.items):
        where = f"memory.long_term.items[{number}]"
        _text(item, "text", MAX_TEXT_CHARS, where, problems)
        _check_fields(item, LONG_TERM_FIELDS, where, problems)
        _refs(item.get("source_entry_ids"), journal_ids, f"{where}.source_entry_ids", problems)
    for number, link in enumerate(memory.links.items):
        for end in (link.a, link.b):
            if end not in journal_ids | memory_ids:
                problems.append(
                    f"memory.links.items[{number}]: {end[:40]} is not a journal entry or "
                    "long-term memory of the file"
                )
    for number, digest in enumerate(memory.digests.items):
        where = f"memory.digests.items[{number}]"
        _refs(digest.get("entry_ids"), journal_ids, f"{where}.entry_ids", problems)
    _check_people(memory.profiles, "profiles", problems)
    _check_people(memory.relationships, "relationships", problems)
    for number, state in enumerate(memory.relationships):
        for dimension, value in state.items():
            for change_number, change in enumerate(
                value.get("changes") or [] if isinstance(value, dict) else []
            ):
                _text(
                    change,
                    "reason",
                    MAX_REASON_CHARS,
                    f"memory.relationships[{number}].{dimension}.changes[{change_number}]",
                    problems,
                    required=False,
                )
    slots: set[str] = set()
    for number, note in enumerate(memory.core_notes):
        where = f"memory.core_notes[{number}]"
        _text(note, "key", MAX_CORE_KEY_CHARS, where, problems)
        _text(note, "value", MAX_CORE_VALUE_CHARS, where, problems)
        if isinstance(note.get("key"), str):
            slot = _slot(note["key"], note.get("audience"))
            if slot in slots:
                problems.append(f"{where}: a second note {note['key'][:40]!r} of that audience")
            slots.add(slot)
    for number, trigger in enumerate(memory.reminders):
        where = f"memory.reminders[{number}]"
        _text(trigger, "pattern", MAX_PATTERN_CHARS, where, problems)
        _text(trigger, "reminder", MAX_REMINDER_CHARS, where, problems)
        _check_fields(trigger, REMINDER_FIELDS, where, problems)
    _check_states(memory, journal_ids, problems)
    for key, name in parsed.people.items():
        if not PERSON_KEY.match(key) or len(name) > MAX_NAME_CHARS:
            problems.append(
                f"people.{key[:40]}: a person key (#12 or name:<name>) with a name of at most "
                f"{MAX_NAME_CHARS} characters"
            )
    _check_audiences(parsed.model_dump()["memory"], ("memory",), problems)


def _is_time(value: Any) -> bool:
    if not isinstance(value, str) or len(value) > 40:
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


# what each kind of field must be (`JOURNAL_FIELDS`), and how a refusal says it
FIELD_KINDS = {
    "text": (lambda v: isinstance(v, str), "a text"),
    "texts": (
        lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v),
        "a list of texts",
    ),
    "time": (_is_time, "a time (ISO 8601, as 2026-01-01T12:00:00+00:00)"),
    "score": (
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 1 <= v <= 10,
        "a number from 1 to 10",
    ),
    "number": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "dict": (lambda v: isinstance(v, dict), "an object"),
    "count": (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "a whole number",
    ),
    "none": (lambda v: v is None, "null (embeddings are made again, never imported)"),
}
REMINDER_FIELDS = {"max_fires": "count", "fired_count": "count", "owners": "dict?"}


def _check_states(memory, journal_ids: set, problems: list[str]) -> None:
    """The small values kept beside the records (counters, cursors, the next id to give): of
    their type, and a next id past every id the file holds (else a new record would take an
    id already given)."""
    journal = memory.journal.state
    if EMBEDDED in journal:
        problems.append(
            f"memory.journal.state.{EMBEDDED}: not in a memory file (embeddings are made again)"
        )
    _check_fields(
        journal,
        {REFLECTION_COUNTER: "number", RESTED_COUNT: "count", CRITICAL_BOOKMARKS: "texts"},
        "memory.journal.state",
        problems,
    )
    _refs(journal.get(CRITICAL_BOOKMARKS), journal_ids, "memory.journal.state", problems)
    digests = memory.digests.state
    _check_fields(
        digests,
        {"next_seq": "count", "last_day": "text?", "next_id": "count"},
        "memory.digests.state",
        problems,
    )
    for kind, state, items in (
        ("digests", digests, memory.digests.items),
        ("sleep_history", memory.sleep_history.state, memory.sleep_history.items),
    ):
        numbers = [
            int(item["id"][1:])
            for item in items
            if isinstance(item.get("id"), str) and item["id"][1:].isdigit()
        ]
        next_id = state.get("next_id")
        if next_id is None:
            continue
        if isinstance(next_id, bool) or not isinstance(next_id, int) or next_id < 0:
            problems.append(f"memory.{kind}.state.next_id: a whole number")
        elif numbers and next_id <= max(numbers):
            problems.append(
                f"memory.{kind}.state.next_id: {next_id} is an id given already (more than "
                f"{max(numbers)})"
            )
    for key, cursor in memory.cursors.items():
        _check_fields(cursor, {"seq": "count", "at": "time?"}, f"memory.cursors.{key}", problems)


def _check_fields(record: dict, spec: dict[str, str], where: str, problems: list[str]) -> None:
    """The fields of a record the live code reads, each of its kind when present (a wrong
    type would break recall or sleep after the import, not at it)."""
    for name, kind in spec.items():
        if name not in record:
            continue
        value = record[name]
        optional = kind.endswith("?")
        if optional and value is None:
            continue
        check, allowed = FIELD_KINDS[kind.rstrip("?")]
        if not check(value):
            problems.append(f"{where}.{name}: {allowed}{' or null' if optional else ''}")


def _refs(ids: Any, known: set, where: str, problems: list[str]) -> None:
    if ids is None:
        return
    if not isinstance(ids, list):
        problems.append(f"{where}: a list of ids")
        return
    for value in ids:
        if value not in known:
            problems.append(f"{where}: {str(value)[:40]} is not in the file")
            return


def _check_people(records: list[dict], kind: str, problems: list[str]) -> None:
    seen: set[str] = set()
    for number, record in enumerate(records):
        where = f"memory.{kind}[{number}].key"
        key = record.get("key")
        if not isinstance(key, str) or not PERSON_KEY.match(key):
            problems.append(f"{where}: a person key (#12 or name:<name>) is required")
        elif key in seen:
            problems.append(f"{where}: {key[:40]} appears twice (one record a person)")
        else:
            seen.add(key)
        _text(record, "name", MAX_NAME_CHARS, f"memory.{kind}[{number}]", problems, False)


# ---- re-keying for another game ---------------------------------------------------------------


def rekey_map(parsed: MemoryFile) -> dict[str, str]:
    """The `name:` key each dbref of a file from another game becomes.

    Args:
        parsed (MemoryFile): The checked file.

    Returns:
        dict: New keys by dbref (`#12` -> `name:bob`); two people of one name, or a name the
            file already uses as a key, get their dbref after the name (`name:bob #13`). An
            account's key gets the file's game id (`account#3` -> `account#3@<game id>`).

    """
    dbrefs = set()

    accounts = set()

    def collect(value: Any) -> None:
        if isinstance(value, str):
            match = DBREF_PREFIXED.match(value)
            if ACCOUNT_KEY.match(value):
                accounts.add(value)
            elif DBREF.match(value):
                dbrefs.add(value)
            elif match:
                dbrefs.add(match.group(1))
        elif isinstance(value, list):
            for item in value:
                collect(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                collect(key)
                collect(item)

    data = parsed.model_dump()
    collect(data["memory"])
    collect(data["people"])
    taken = {key for key in parsed.people if not DBREF.match(key)}
    mapping = {}
    for dbref in sorted(dbrefs, key=lambda key: int(key[1:])):
        name = (parsed.people.get(dbref) or "").strip().lower()
        new = f"name:{name}" if name else f"name:unknown {dbref}"
        if new in taken:
            new = f"{new} {dbref}"
        taken.add(new)
        mapping[dbref] = new
    # an account's key (a speaker's voice) is another account here: it keeps the game it
    # came from, so that nobody here is taken for the same voice
    for account in sorted(accounts):
        mapping[account] = f"{account}@{parsed.game.id[:MAX_ID_CHARS]}"
    return mapping


def rekeyed(value: Any, mapping: dict[str, str]) -> Any:
    """`value` with every dbref of `mapping` replaced, as a whole text or as the start of an
    id (`#12/o3`), in values and in dict keys alike."""
    if isinstance(value, str):
        if value in mapping:
            return mapping[value]
        match = DBREF_PREFIXED.match(value)
        if match and match.group(1) in mapping:
            return mapping[match.group(1)] + match.group(2)
        return value
    if isinstance(value, list):
        return [rekeyed(item, mapping) for item in value]
    if isinstance(value, dict):
        return {rekeyed(key, mapping): rekeyed(item, mapping) for key, item in value.items()}
    return value


# ---- writing ----------------------------------------------------------------------------------


def write_memory(
    parsed: MemoryFile,
    memory: KeyValueStore,
    state: KeyValueStore,
    old_keys: Iterable[str],
    mapping: dict[str, str] | None = None,
) -> dict[str, int]:
    """Replace an assistant's memory with a checked file's. The caller runs it in one
    transaction (`storage.step_transaction`) and builds the brain again after it.

    Args:
        parsed (MemoryFile): The checked file (`parse_file`).
        memory (KeyValueStore): The character's memory store, written directly (not through
            the snapshots' recording: the snapshots are dropped).
        state (KeyValueStore): The script's store (reminders, sleep history, snapshots).
        old_keys (iterable): Every key the memory store holds now (all are removed first).
        mapping (dict, optional): Dbrefs to re-key (`rekey_map`), for a file from another game.

    Returns:
        dict: The records written, by kind.

    """
    data = parsed.model_dump()["memory"]
    if mapping:
        data = rekeyed(data, mapping)
    # the snapshots recorded the memory replaced: a rollback cannot cross an import
    Snapshots(state).open("", "", 0)
    for key in list(old_keys):
        memory.delete(key)
    for kind, (name, size) in [*CHUNKED.items(), ("review_log", REVIEW)]:
        if data[kind]["items"] or data[kind]["state"]:
            items = ChunkedList(memory, name, size)
            items.extra = dict(data[kind]["state"])
            items.replace_all(data[kind]["items"])
    for key, value in data["cursors"].items():
        memory.set(key, value)
    links = MemoryLinks(memory)
    chunks: dict[str, dict] = {}
    for link in data["links"]["items"]:
        a, b, strength = link["a"], link["b"], link["strength"]
        chunks.setdefault(_chunk_key(a), {}).setdefault(a, {})[b] = strength
        chunks.setdefault(_chunk_key(b), {}).setdefault(b, {})[a] = strength
    for key, value in chunks.items():
        memory.set(key, value)
    if chunks:
        memory.set(MemoryLinks.INDEX, sorted(chunks))
    if data["links"]["cursor"]:
        links.move_cursor(data["links"]["cursor"])
    if data["profiles"]:
        for profile in data["profiles"]:
            memory.set(f"entity:{profile['key']}", profile)
        memory.set(ENTITY_INDEX, {p["key"]: p.get("name") or p["key"] for p in data["profiles"]})
    if data["relationships"]:
        for relation in data["relationships"]:
            memory.set(RELATIONSHIP_PREFIX + relation["key"], relation)
        memory.set(
            RELATIONSHIP_INDEX,
            {r["key"]: r.get("name") or r["key"] for r in data["relationships"]},
        )
    if data["core_notes"]:
        memory.set(CORE_KEY, {_slot(n["key"], n.get("audience")): n for n in data["core_notes"]})
    if data["gossip_log"]:
        memory.set(GOSSIP_KEY, data["gossip_log"])
    state.set(TRIGGERS, data["reminders"])
    history = ChunkedList(state, *SLEEP_HISTORY)
    history.extra = dict(data["sleep_history"]["state"])
    history.replace_all(data["sleep_history"]["items"])
    return counts({"memory": data})


def uncovered(keys: Iterable[str]) -> list[str]:
    """The keys of a memory store that a file would not cover (a kind added since this
    schema version; the export logs them, so that nothing is left out unseen).

    Args:
        keys (iterable): The keys the character's memory store holds.

    Returns:
        list: Those outside every kind of `KINDS`, sorted.

    """
    return sorted(key for key in keys if not COVERED.match(key))


def same_game(parsed: MemoryFile, game_id: str) -> bool:
    """Whether a file was made in this game (its person keys mean the same characters).

    Args:
        parsed (MemoryFile): The checked file.
        game_id (str): This game's id.

    Returns:
        bool: True when the ids match.

    """
    return parsed.game.id == game_id


def describe_counts(found: dict[str, int]) -> str:
    """Counts by kind in words: "12 journal entries, 3 long-term memories, ...".

    Args:
        found (dict): Counts keyed by kind.

    Returns:
        str: The counts above zero, or "nothing".

    """
    labels = {
        "journal": "journal entry",
        "long_term": "long-term memory",
        "links": "link",
        "profiles": "person's profile",
        "relationships": "relationship",
        "digests": "digest",
        "core_notes": "core note",
        "review_log": "review record",
        "gossip_log": "gossip record",
        "reminders": "reminder",
        "sleep_history": "sleep",
        # where each sleep step stopped reading the journal: bookkeeping, said plainly
        "cursors": "sleep progress mark",
    }
    plurals = {"profiles": "people's profiles"}
    parts = [
        counted(count, labels.get(kind, kind), plurals.get(kind))
        for kind, count in found.items()
        if count
    ]
    return ", ".join(parts) or "nothing"
