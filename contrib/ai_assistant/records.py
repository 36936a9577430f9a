"""
The records that travel between modules, typed: what a journal entry, a long-term memory, a
person's profile, a core note, a reminder, a sleep record or a turn's summary holds.

They are stored as plain dicts (Attributes pickle them; JSON round-trips them), so each is a
`TypedDict`, as `evennia.contrib.rpg.traits` types its data: the shape is written down once,
and a reader knows every key without opening the module that writes it. `total=False` where
records written by older versions may lack a key.

A field's bounds are `Annotated` on it, with the words a refusal uses for what is allowed
(`Allowed`): pydantic validates a record against them (`check_record`: the memory file's check),
the tools' arguments and the builders' edits read the same bounds (`MAX_CORE_KEY_CHARS`...),
and docs/memory.md's record tables are made from them (`record_table`).

"""

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, get_args, get_origin, get_type_hints

# pydantic validates a TypedDict only from typing_extensions on Python < 3.12 (Evennia 5)
from typing_extensions import TypedDict

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationError, with_config

# the bounds of what a builder, a tool or a memory file may write (one definition each)
MAX_CORE_KEY_CHARS = 60
MAX_CORE_VALUE_CHARS = 1000
MAX_PATTERN_CHARS = 80
MAX_REMINDER_CHARS = 300
MAX_TIME_CHARS = 40
MAX_REASON_CHARS = 200  # a relationship change's
MAX_PERSONA_CHARS = 2000  # an assistant's persona (`handler.AssistantHandler.persona`)
MAX_QUERY_CHARS = 200  # a builder's search of the memory or the lore
MAX_SHARE_CHARS = 500  # what a member shares with its group (`memory.groups`)
MAX_GROUP_NAME_CHARS = 40


@dataclass(frozen=True)
class Allowed:
    """What a field allows, in the words of a refusal ("a number from 1 to 10")."""

    words: str


def _iso_time(value: str) -> str:
    if len(value) > MAX_TIME_CHARS:
        raise ValueError("too long for a time")
    datetime.fromisoformat(value)
    return value


Text = Annotated[str, Allowed("a text")]
Texts = Annotated[list[str], Allowed("a list of texts")]
Time = Annotated[
    str, AfterValidator(_iso_time), Allowed("a time (ISO 8601, as 2026-01-01T12:00:00+00:00)")
]
Score = Annotated[float, Field(ge=1, le=10), Allowed("a number from 1 to 10")]
Count = Annotated[int, Field(ge=0), Allowed("a whole number")]
Number = Annotated[float, Allowed("a number")]
Flag = Annotated[bool, Allowed("true or false")]
Object = Annotated[dict, Allowed("an object")]
Salience = Annotated[int, Field(ge=1, le=3), Allowed("a whole number from 1 to 3")]
Audience = list[str] | None


@with_config(ConfigDict(strict=True))
class JournalEntry(TypedDict, total=False):
    """One entry of the journal (`memory.journal.Journal.add`)."""

    id: str  # "j000042"
    seq: int
    content: str
    kind: Text  # experience, reflection, synthesis
    author: Text | None
    source_type: Text | None  # memory.provenance: said, claim, overheard, observed, ...
    heard_from: Text | None
    voice: Text | None  # who plays the speaker (their account)
    voices: Texts
    claims_of: Texts
    rests_on: Text | None
    about: Texts  # person keys
    audience: Audience
    witnesses: Texts
    location: Text | None
    created_at: Time  # real time
    game_at: Time | None  # game time
    importance: Score
    scoring_method: Text | None
    tags: Texts
    cites: list[str]
    consolidated: Flag
    memory_ids: list[str]
    salience: Salience | None  # a bookmark's
    skipped: bool
    compacting_failures: int  # failed consolidation calls it was part of
    rested: dict  # {"failures", "error"}: left out of consolidation (sleep.consolidating)
    pruned: bool
    forgotten: Object | None  # when, by whom, why; of what it was only its length and a digest
    trust_set: Object | None
    gossip: Object | None  # told by another assistant: origin, tellers, trust (memory.gossip)


@with_config(ConfigDict(strict=True))
class LongTermMemory(TypedDict, total=False):
    """One long-term memory (`memory.semantic.LongTermMemory.add`)."""

    id: str  # "m000042"
    text: str
    importance: Score
    created_at: Time
    source_entry_ids: list[str]  # the journal entries it was drawn from
    provenance: Object  # how it was learned (memory.provenance), the talk kept beside it
    audience: Audience
    vector: list[float] | None  # its embedding; never in a memory file
    forgotten: Object | None
    trust_set: Object | None


class Observation(TypedDict, total=False):
    """One thing noted about a person (`memory.entities.EntityMemory.observe`)."""

    id: str  # "o3"
    text: str
    at: str
    where: str | None
    author: str
    source_type: str
    heard_from: str | None
    audience: Audience
    importance: int
    consolidated: bool


class Profile(TypedDict, total=False):
    """What the assistant knows of one person (`memory.entities`)."""

    key: str  # "#12", "name:bob"
    name: str
    observations: list[Observation]
    attributes: list[dict]  # "a5": what sleep consolidated, with the observations it cites
    next_id: int
    updated_at: str


@with_config(ConfigDict(strict=True))
class CoreNote(TypedDict, total=False):
    """One core memory note (`memory.core.CoreMemory`)."""

    key: Annotated[
        str,
        Field(min_length=1, max_length=MAX_CORE_KEY_CHARS),
        Allowed(f"a text of 1 to {MAX_CORE_KEY_CHARS} characters"),
    ]
    value: Annotated[
        str,
        Field(min_length=1, max_length=MAX_CORE_VALUE_CHARS),
        Allowed(f"a text of 1 to {MAX_CORE_VALUE_CHARS} characters"),
    ]
    recorded: str
    audience: Audience
    pinned: bool  # a builder's: read-only to the model
    by: str | None
    owners: dict[str, str]  # person key -> name: whom the model wrote it for


@with_config(ConfigDict(strict=True))
class RelationshipChange(TypedDict, total=False):
    """One change of a relationship's dimension (`memory.relationships.Relationships.change`)."""

    at: str
    by: str | None  # "sleep" or a builder
    change: float
    value: float
    reason: Annotated[
        str,
        Field(max_length=MAX_REASON_CHARS),
        Allowed(f"a text of at most {MAX_REASON_CHARS} characters"),
    ]
    audience: Audience
    cites: list[str]


@with_config(ConfigDict(strict=True))
class Reminder(TypedDict, total=False):
    """One reminder (`reminders.Reminders.add`)."""

    id: str  # "t3"
    pattern: Annotated[
        str,
        Field(min_length=1, max_length=MAX_PATTERN_CHARS),
        Allowed(f"a text of 1 to {MAX_PATTERN_CHARS} characters"),
    ]
    reminder: Annotated[
        str,
        Field(min_length=1, max_length=MAX_REMINDER_CHARS),
        Allowed(f"a text of 1 to {MAX_REMINDER_CHARS} characters"),
    ]
    max_fires: Count
    fired_count: Count
    audience: Audience
    by: str
    builder: bool  # a builder's: public, in a room of its own
    owners: Object | None  # person key -> name
    created_at: str


@with_config(ConfigDict(strict=True))
class GroupShare(TypedDict, total=False):
    """What a member shared with its group (`memory.groups.GroupShares.add`): a telling
    (`memory.gossip.telling`) kept once, with the member."""

    id: str  # "g3" (in its group: "g17.3", the member's dbref first)
    group: Annotated[
        str,
        Field(min_length=1, max_length=MAX_GROUP_NAME_CHARS),
        Allowed(f"a group's name of 1 to {MAX_GROUP_NAME_CHARS} characters"),
    ]
    memory_id: str  # the member's memory it shared ("j000004")
    text: Annotated[
        str,
        Field(min_length=1, max_length=MAX_SHARE_CHARS),
        Allowed(f"a text of 1 to {MAX_SHARE_CHARS} characters"),
    ]
    origin: Object  # who first said, saw or concluded it: name, key, how
    tellers: list[Object]  # the hands it passed through, oldest first, the member last
    member: Object  # name and key of the member who shared it
    trust: Annotated[float, Field(ge=0, le=1), Allowed("a number from 0 to 1")]
    origin_trust: Annotated[float, Field(ge=0, le=1), Allowed("a number from 0 to 1")]
    rests_on: str | None
    importance: Annotated[int, Field(ge=1, le=10), Allowed("a whole number from 1 to 10")]
    about: Texts  # keys of the people it is about
    people: Texts  # keys of everyone in its chain and whom it is about
    location: str | None
    at: Time


class SleepRecord(TypedDict, total=False):
    """One sleep (`sleep_history.SleepHistory`)."""

    id: str  # "s4"
    start: str  # game time
    end: str | None
    real_start: str | None  # real time (ISO); absent from records made before it was kept
    real_end: str | None
    began: str  # tool, builder, schedule, debt
    depth: str
    quiet: bool
    phases: list[str]
    debt_before: int
    debt_after: int | None
    counts: dict[str, int]
    calls: int
    tokens: int
    errors: int
    rolled_back: dict


class TurnSummary(TypedDict, total=False):
    """What one awake turn did, kept for the status and the dashboard
    (`awake.turn.TurnOutcome.summary`)."""

    at: str
    events: int
    model_calls: int
    tools: list[str]
    stop_reason: str
    error: str | None
    recalled: list[str]
    prompt: dict[str, int]
    # the details the dashboard's conversation view shows (`TurnOutcome.details`), bounded
    heard: list[dict]
    texts: list[str]  # the model's own text in its replies, where it wrote any
    calls: list[dict]
    audience: list[str] | None
    tokens: dict[str, int]
    seconds: float


# ---- checking a record against its description ---------------------------------------------


def _allowed(annotation: Any) -> tuple[str, bool]:
    """The words of `Allowed` on a field's type, and whether it may be null."""
    optional = False
    if get_origin(annotation) is not Annotated and type(None) in get_args(annotation):
        optional = True
        annotation = next(arg for arg in get_args(annotation) if arg is not type(None))
    for meta in getattr(annotation, "__metadata__", ()):
        if isinstance(meta, Allowed):
            return meta.words, optional
    return "", optional


def check_record(
    record_type: type, record: dict, where: str, required: tuple = (), fields: tuple = ()
) -> list[str]:
    """What is wrong with a stored record, by its type's description: one problem a field,
    naming where and what is allowed.

    Args:
        record_type (type): The record's `TypedDict` (`JournalEntry`...).
        record (dict): The record.
        where (str): Its place, for the problems ("memory.journal.items[3]").
        required (tuple, optional): Fields it must hold.
        fields (tuple, optional): Only these fields (all but `CHECKED_ELSEWHERE` by default).

    Returns:
        list: Problems, such as "memory.journal.items[3].importance: a number from 1 to 10".

    """
    hints = get_type_hints(record_type, include_extras=True)
    fields = fields or tuple(name for name in hints if name not in CHECKED_ELSEWHERE)
    missing = [
        f"{where}.{name}: {_words(hints[name])} is required"
        for name in required
        if record.get(name) is None
    ]
    if missing:
        return missing
    present = {name: record[name] for name in fields if name in record}
    adapter = _adapter(record_type, fields)
    try:
        adapter.validate_python(present)
    except ValidationError as err:
        problems, seen = [], set()
        for error in err.errors():
            name = error["loc"][0]
            if name in seen:
                continue
            seen.add(name)
            problems.append(f"{where}.{name}: {_words(hints[name])}")
        return problems
    return []


# fields whose check says more than their type: ids and positions (`memory.kinds`), audiences
# (person keys, checked across the whole memory file)
CHECKED_ELSEWHERE = ("id", "seq", "audience")
_ADAPTERS: dict[tuple, TypeAdapter] = {}


def _adapter(record_type: type, fields: tuple) -> TypeAdapter:
    """A validator of those fields of a record type (made once)."""
    key = (record_type, fields)
    if key not in _ADAPTERS:
        hints = get_type_hints(record_type, include_extras=True)
        part = TypedDict(record_type.__name__, {name: hints[name] for name in fields}, total=False)
        part.__pydantic_config__ = ConfigDict(strict=True)
        _ADAPTERS[key] = TypeAdapter(part)
    return _ADAPTERS[key]


_PLAIN = {str: "a text", int: "a whole number", float: "a number", bool: "true or false"}
_PLURAL = {"a text": "texts", "a number": "numbers", "a whole number": "whole numbers"}


def _words(annotation: Any) -> str:
    """What a field allows, in words (its `Allowed`, or said from its type)."""
    words, optional = _allowed(annotation)
    if not words:
        base = annotation
        if optional:
            base = next(arg for arg in get_args(annotation) if arg is not type(None))
        if get_origin(base) is Annotated:
            base = get_args(base)[0]
        if get_origin(base) is list:
            inner = _PLAIN.get(get_args(base)[0], "an object")
            words = f"a list of {_PLURAL.get(inner, 'objects')}"
        elif base is dict or get_origin(base) is dict:
            words = "an object"
        else:
            words = _PLAIN.get(base, getattr(base, "__name__", str(base)))
    return words + (" or null" if optional else "")


# the records docs/memory.md describes field by field ("The records, field by field")
DOCUMENTED = (
    "JournalEntry",
    "LongTermMemory",
    "CoreNote",
    "Reminder",
    "RelationshipChange",
    "GroupShare",
)


def record_table(record_type: type) -> str:
    """A record's fields as a Markdown table (docs/memory.md's are made by it).

    Args:
        record_type (type): The record's `TypedDict`.

    Returns:
        str: The table: each field and what it allows.

    """
    rows = [f"`{record_type.__name__}`:", "", "| field | allowed |", "| --- | --- |"]
    for name, annotation in get_type_hints(record_type, include_extras=True).items():
        rows.append(f"| `{name}` | {_words(annotation)} |")
    return "\n".join(rows)


def markdown_tables() -> str:
    """Every documented record's table, as docs/memory.md holds them (`python -m
    ai_assistant.records` prints them).

    Returns:
        str: The tables, one after another.

    """
    return "\n\n".join(record_table(globals()[name]) for name in DOCUMENTED)


if __name__ == "__main__":
    print(markdown_tables())
