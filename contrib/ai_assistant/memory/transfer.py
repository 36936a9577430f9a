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
from typing import Any, Literal

from pydantic import Field, ValidationError, create_model

from ..errors import Refused
from ..records import MAX_PERSONA_CHARS
from ..text import counted, redact
from .kinds import BY_NAME, REGISTRY
from .kinds.base import MAX_ID_CHARS, MAX_ITEMS, MAX_NAME_CHARS, MAX_TEXT_CHARS, PERSON_KEY, Strict
from .snapshots import Snapshots
from .store import KeyValueStore

FORMAT = "evennia-ai-assistant-memory"
SCHEMA_VERSION = 1
SUPPORTED_VERSIONS = (1,)
# a file to import, at most (a journal of 100,000 entries of 400 bytes)
MAX_FILE_BYTES = 50_000_000
# the most items in a list or dict inside one record (cites, audience, observations)
MAX_INNER_ITEMS = 2000
# how deep records nest (an entry's gossip chain is the deepest: 4)
MAX_DEPTH = 10
# the most errors one refusal lists
MAX_ERRORS_SHOWN = 5
# an override left out of a file whatever its value: a name that could hold a secret
SECRET_NAME = re.compile(r"key|secret|password|token$|url|credential", re.IGNORECASE)

# characters a text may not hold: a terminal acts on them (ANSI escapes, bells), they are
# never typed by a player, and a builder's listing must show what it shows, nothing more
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# the largest whole number a file may hold (what JSON readers keep exactly)
MAX_NUMBER = 2**53
DBREF = re.compile(r"^#\d{1,12}$")
ACCOUNT_KEY = re.compile(r"^account#\d{1,12}$")
DBREF_PREFIXED = re.compile(r"^(#\d{1,12})(/.*)$", re.DOTALL)
# the kinds of memory a file holds, in the order they are listed (`memory.kinds.REGISTRY`)
KINDS = tuple(kind.name for kind in REGISTRY)


class TransferError(Refused):
    """A file that cannot be exported or imported; the message says why. Nothing changed."""


# ---- the file's layout ----------------------------------------------------------------------

# every kind of memory, its section as its kind describes it (each documented in docs/memory.md)
Memory = create_model(
    "Memory",
    __base__=Strict,
    __doc__="Every kind of memory, a section each.",
    **{kind.name: kind.field() for kind in REGISTRY},
)


class Game(Strict):
    """Which game the file was made in (`id` decides whether person keys are re-keyed)."""

    id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    name: str = Field(default="", max_length=MAX_ID_CHARS)


class Assistant(Strict):
    """The assistant the memory is of."""

    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    dbref: str | None = Field(default=None, max_length=20)
    persona: str = Field(default="", max_length=MAX_PERSONA_CHARS)
    settings: dict[str, Any] = Field(default_factory=dict)


class MemoryFile(Strict):
    """A whole file."""

    format: Literal["evennia-ai-assistant-memory"]
    schema_version: int
    exported_at: str = Field(max_length=40)
    game: Game
    assistant: Assistant
    people: dict[str, str] = Field(default_factory=dict)
    memory: Memory


# ---- export ---------------------------------------------------------------------------------


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
    people: dict[str, str] = {}
    # a name a later kind knows a person by gives way to an earlier kind's (a profile's name
    # is the one they were seen under)
    for kind in reversed(REGISTRY):
        people.update(kind.people(memory))
    data = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "exported_at": exported_at,
        "game": dict(game),
        "assistant": dict(assistant),
        "people": {key: name for key, name in people.items() if PERSON_KEY.match(key)},
        "memory": {kind.name: kind.export(memory, state) for kind in REGISTRY},
    }
    return _redacted(data, secrets)


def counts(data: dict) -> dict[str, int]:
    """How many records of each kind a file's data holds.

    Args:
        data (dict): A file's data (as `export_memory` gives it, or parsed).

    Returns:
        dict: Counts keyed by kind, in `KINDS` order.

    """
    return {kind.name: kind.count(data["memory"].get(kind.name)) for kind in REGISTRY}


def held(memory: KeyValueStore, state: KeyValueStore) -> dict[str, int]:
    """How much memory an assistant holds now, by kind (nothing: an import needs no replace).

    Args:
        memory (KeyValueStore): The character's memory store.
        state (KeyValueStore): The script's store.

    Returns:
        dict: Counts keyed by kind, only those above zero.

    """
    found = {kind.name: kind.held(memory, state) for kind in REGISTRY}
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


def _check_records(parsed: MemoryFile, problems: list[str]) -> None:
    """The records of each kind, as its kind checks them: ids, what each record's fields
    allow (`records`), the references to what the file holds; then the people and audiences."""
    memory = parsed.memory
    known = {kind.name: kind.ids(getattr(memory, kind.name), problems) for kind in REGISTRY}
    for kind in REGISTRY:
        kind.check(getattr(memory, kind.name), known, problems)
    for key, name in parsed.people.items():
        if not PERSON_KEY.match(key) or len(name) > MAX_NAME_CHARS:
            problems.append(
                f"people.{key[:40]}: a person key (#12 or name:<name>) with a name of at most "
                f"{MAX_NAME_CHARS} characters"
            )
    _check_audiences(parsed.model_dump()["memory"], ("memory",), problems)


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
    for kind in REGISTRY:
        kind.write(data[kind.name], memory, state)
    return counts({"memory": data})


def uncovered(keys: Iterable[str]) -> list[str]:
    """The keys of a memory store that a file would not cover (a kind added since this
    schema version; the export logs them, so that nothing is left out unseen).

    Args:
        keys (iterable): The keys the character's memory store holds.

    Returns:
        list: Those outside every kind of `KINDS`, sorted.

    """
    return sorted(key for key in keys if not any(kind.owns(key) for kind in REGISTRY))


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
    parts = [
        (
            counted(count, BY_NAME[kind].one, BY_NAME[kind].label)
            if kind in BY_NAME
            else f"{count} {kind}"
        )
        for kind, count in found.items()
        if count
    ]
    return ", ".join(parts) or "nothing"
