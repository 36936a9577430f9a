"""
The records that travel between modules, typed: what a journal entry, a person's profile, a core
note, a reminder, a sleep record or a turn's summary holds.

They are stored as plain dicts (Attributes pickle them; JSON round-trips them), so each is a
`TypedDict`, as `evennia.contrib.rpg.traits` types its data: the shape is written down once,
and a reader knows every key without opening the module that writes it. `total=False` where
records written by older versions may lack a key.

"""

from typing import TypedDict

Audience = list[str] | None


class JournalEntry(TypedDict, total=False):
    """One entry of the journal (`memory.journal.Journal.add`)."""

    id: str  # "j000042"
    seq: int
    content: str
    kind: str  # experience, reflection, synthesis
    author: str
    source_type: str  # memory.provenance: said, claim, overheard, observed, ...
    heard_from: str | None
    about: list[str]  # person keys
    audience: Audience
    witnesses: list[str]
    location: str | None
    created_at: str  # ISO, real time
    game_at: str  # ISO, game time
    importance: int  # 1-10
    scoring_method: str
    tags: list[str]
    cites: list[str]
    consolidated: bool
    memory_ids: list[str]
    salience: int  # a bookmark's, 1-3
    skipped: bool
    compacting_failures: int  # failed consolidation calls it was part of
    rested: dict  # {"failures", "error"}: left out of consolidation (sleep.consolidating)
    pruned: bool
    forgotten: dict  # when, by whom, why; of what it was only its length and a digest
    trust_set: dict
    gossip: dict  # told by another assistant: origin, tellers, trust (memory.gossip)


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


class CoreNote(TypedDict, total=False):
    """One core memory note (`memory.core.CoreMemory`)."""

    key: str
    value: str
    recorded: str
    audience: Audience
    pinned: bool  # a builder's: read-only to the model
    by: str
    owners: dict[str, str]  # person key -> name: whom the model wrote it for


class Trigger(TypedDict, total=False):
    """One reminder (`reminders.Reminders.add`)."""

    id: str  # "t3"
    pattern: str
    reminder: str
    max_fires: int
    fired_count: int
    audience: Audience
    by: str
    builder: bool  # a builder's: public, in a room of its own
    owners: dict[str, str]  # person key -> name
    created_at: str


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
    calls: list[dict]
    audience: list[str] | None
    tokens: dict[str, int]
    seconds: float
