"""
What an assistant hears: events, their classification, urgency and importance, and the queue.

Classification:

- `direct_message`: whispers and pages to the assistant, and builder instructions;
- `direct_addressing`: speech in the room that names the assistant (or an alias);
- `ambient`: everything else (other speech, emotes, arrivals and departures).

An event is urgent (it may wake a light sleeper, and it makes the awake tick call the model) when
it is a direct message or addressing, or its metadata says `urgent` or `priority >= 8`.

Heard text is kept on one line (line breaks made visible, control characters dropped) and, when
longer than the configured limit, truncated with a note saying how much was cut.

"""

import json
import re
import time
from collections.abc import Callable
from datetime import datetime
from dataclasses import asdict, dataclass
from typing import Literal, NamedTuple

from pydantic import BaseModel, Field

from .clock import from_iso, to_iso
from .memory.importance import heuristic_importance
from .memory.store import KeyValueStore
from .memory.audience import person_key, private_to
from .text import one_line

EventType = Literal["say", "whisper", "page", "emote", "arrive", "depart", "instruction", "notice"]
DIRECT_MESSAGE = "direct_message"
DIRECT_ADDRESSING = "direct_addressing"
AMBIENT = "ambient"
DIRECT_TYPES = frozenset({"whisper", "page", "instruction", "notice"})
# heard in private: known only to the speaker (and the assistant)
PRIVATE_TYPES = frozenset({"whisper", "page"})
ROOM = "room"
# builders' instructions are a thread of their own: a player's line heard in the same tick
# never shares a turn with one, so never borrows a builder's standing
BUILDER = "builder"
# events whose text a person typed (an emote is a player's words about their own character):
# only their speakers may be named as a source, and what the model notes from them is theirs
SPEECH_TYPES = frozenset({"say", "whisper", "page", "emote", "instruction"})
BUILDER_BONUS = 2
URGENT_PRIORITY = 8
# the metadata of a line deferred by the per-player turn limit: when it may start its turn
DEFERRED_UNTIL = "deferred_until"
# the metadata of a line said in a scene (`shell/scenes.py`): the scene's id. Such a line from
# another assistant starts a turn at the tick (never at once: a scene is never urgent)
SCENE = "scene"


class Event(BaseModel):
    """Something the assistant heard or was told, classified and scored, waiting in its queue.

    Attributes:
        id (int): Increasing within the queue.
        type (str): say, whisper, page, emote, arrive, depart, instruction or notice.
        speaker (str): Who (one line, at most 80 characters).
        speaker_key (str, optional): The speaker's dbref.
        text (str): What was said, on one line, possibly cut.
        time (str): When, as an ISO string.
        location (str, optional): Where.
        classification (str): "direct_message", "direct_addressing" or "ambient".
        urgent (bool): Whether it can wake a light sleeper and start a turn at once.
        importance (int): A heuristic score from 1 to 10.
        truncated_chars (int): How many characters were cut from the text.
        from_assistant (bool): The speaker is another assistant.
        metadata (dict): Extra flags, e.g. {"urgent": True}, {"priority": 9}.
        audience (list, optional): Who may know what it says; None: public.
        witnesses (list): Keys of those present.

    """

    id: int
    type: EventType
    speaker: str
    speaker_key: str | None = None
    text: str
    time: str
    location: str | None = None
    classification: str = AMBIENT
    urgent: bool = False
    importance: int = Field(3, ge=1, le=10)
    truncated_chars: int = 0
    from_assistant: bool = False
    metadata: dict = Field(default_factory=dict)
    audience: list[str] | None = None
    witnesses: list[str] = Field(default_factory=list)

    @property
    def person(self) -> str:
        """The speaker's key (`#12`, or `name:bob` for someone known only by name)."""
        return person_key(self.speaker_key, self.speaker)

    @property
    def thread(self) -> str:
        """The conversation it belongs to: `room`, `private:<key>` for a whisper or page, or
        `builder` for a builder's instruction. A turn answers one thread, so private words never
        ride in a request for others, and players' lines never share a builder's turn."""
        if self.type in PRIVATE_TYPES:
            return f"private:{self.person}"
        return BUILDER if self.type == "instruction" else ROOM


def event_audience(
    event_type: str, speaker: str, speaker_key: str | None, witnesses: list[str], room: str
) -> list[str] | None:
    """Who may know what an event says (see `memory.audience`).

    Args:
        event_type (str): The event's type.
        speaker (str): Who.
        speaker_key (str, optional): Their dbref.
        witnesses (list): Keys of those present.
        room (str): `room_speech_audience`: "public" or "present".

    Returns:
        list or None: The speaker alone for a whisper or page; those present for room speech
            when `room` is "present"; else None (public).

    """
    if event_type in PRIVATE_TYPES:
        return private_to(person_key(speaker_key, speaker))
    if room == "present" and event_type in ("say", "emote"):
        return private_to(person_key(speaker_key, speaker), *witnesses)
    return None


def mentions(text: str, names: list[str]) -> bool:
    """True when `text` names any of `names` as a word (case-insensitive, '@name' too).

    Args:
        text (str): The text to search.
        names (list): Names to look for; blank names are ignored.

    Returns:
        bool: True when one of the names appears as a whole word.

    """
    for name in names:
        name = name.strip()
        if name and re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text, re.IGNORECASE):
            return True
    return False


def classify(event_type: str, text: str, names: list[str]) -> str:
    """Say how directly an event concerns the assistant.

    Args:
        event_type (str): The event's type.
        text (str): What was said.
        names (list): The assistant's names.

    Returns:
        str: "direct_message" for a whisper, page, instruction or notice;
            "direct_addressing" for a say or emote naming the assistant; else "ambient".

    """
    if event_type in DIRECT_TYPES:
        return DIRECT_MESSAGE
    if event_type in ("say", "emote") and mentions(text, names):
        return DIRECT_ADDRESSING
    return AMBIENT


def is_urgent(classification: str, metadata: dict) -> bool:
    """Decide whether an event is urgent.

    Args:
        classification (str): The event's classification (see `classify`).
        metadata (dict): The event's metadata.

    Returns:
        bool: True when it is direct, flagged "urgent", or has a "priority" of 8 or more.

    """
    if classification in (DIRECT_MESSAGE, DIRECT_ADDRESSING):
        return True
    if metadata.get("urgent"):
        return True
    priority = metadata.get("priority")
    return isinstance(priority, (int, float)) and priority >= URGENT_PRIORITY


def truncate(text: str, limit: int) -> tuple[str, int]:
    """Cut `text` to `limit` characters with a note.

    Args:
        text (str): The text.
        limit (int): The most characters kept.

    Returns:
        tuple: `(text, cut)`: the text (with a note when cut) and how many characters were cut.

    """
    if len(text) <= limit:
        return text, 0
    cut = len(text) - limit
    return f"{text[:limit]} [truncated: {cut} more characters not shown]", cut


def make_event(
    *,
    event_id: int,
    event_type: str,
    speaker: str,
    text: str,
    now: datetime,
    assistant_names: list[str],
    max_chars: int,
    speaker_key: str | None = None,
    location: str | None = None,
    from_assistant: bool = False,
    metadata: dict | None = None,
    witnesses: list[str] | None = None,
    room_speech_audience: str = "public",
) -> Event:
    """Build a classified, scored event from what the character heard.

    Args:
        event_id (int): Its id, increasing in the queue.
        event_type (str): say, whisper, page, emote, arrive, depart, instruction or notice.
        speaker (str): Who.
        text (str): What (kept on one line, cut to `max_chars` with a note).
        now (datetime): When.
        assistant_names (list): The assistant's names (for "addressed by name").
        max_chars (int): The most characters kept.
        speaker_key (str, optional): The speaker's dbref.
        location (str, optional): Where.
        from_assistant (bool): The speaker is another assistant.
        metadata (dict, optional): e.g. {"urgent": True} or {"priority": 9}.
        witnesses (list, optional): Keys of those present.
        room_speech_audience (str): "public" or "present" (see `event_audience`).

    Returns:
        Event: The event.

    """
    metadata = dict(metadata or {})
    # a player's line breaks (Evennia's |/ included) and escape codes never reach a prompt
    text, cut = truncate(one_line(text), max_chars)
    classification = classify(event_type, text, assistant_names)
    importance = heuristic_importance(
        text,
        direct=classification == DIRECT_MESSAGE,
        mentioned=classification == DIRECT_ADDRESSING,
        sender_bonus=BUILDER_BONUS if event_type == "instruction" else 0,
    )
    return Event(
        id=event_id,
        type=event_type,
        speaker=one_line(speaker)[:80],
        speaker_key=speaker_key,
        text=text,
        time=to_iso(now),
        location=location,
        classification=classification,
        urgent=is_urgent(classification, metadata),
        importance=importance,
        truncated_chars=cut,
        from_assistant=from_assistant,
        metadata=metadata,
        audience=event_audience(
            event_type, speaker, speaker_key, witnesses or [], room_speech_audience
        ),
        witnesses=sorted(witnesses or []),
    )


class HeardLine(NamedTuple):
    """A line as heard, before it is classified and scored: cheap to make, because hearing
    runs inside the speaker's command once per listening assistant."""

    event_type: str
    speaker: str
    speaker_key: str | None
    text: str
    time: datetime
    location: str | None
    from_assistant: bool = False
    metadata: dict | None = None

    def to_event(
        self,
        event_id: int,
        assistant_names: list[str],
        max_chars: int,
        witnesses: list[str] | None = None,
        room_speech_audience: str = "public",
    ) -> Event:
        """Classify and score this line as an `Event` (see `make_event`).

        Args:
            event_id (int): The event's id.
            assistant_names (list): The assistant's names.
            max_chars (int): The most characters kept.
            witnesses (list, optional): Keys of those present.
            room_speech_audience (str): "public" or "present".

        Returns:
            Event: The event.

        """
        return make_event(
            witnesses=witnesses,
            room_speech_audience=room_speech_audience,
            event_id=event_id,
            event_type=self.event_type,
            speaker=self.speaker,
            speaker_key=self.speaker_key,
            text=self.text,
            now=self.time,
            assistant_names=assistant_names,
            max_chars=max_chars,
            location=self.location,
            from_assistant=self.from_assistant,
            metadata=self.metadata,
        )


@dataclass(frozen=True)
class Speaker:
    """Someone who said something in a conversation: the only people a memory may name as
    its source.

    Attributes:
        name (str): Their name.
        key (str): Their key (`#12` or `name:bob`).
        instruction (bool): What they said was a builder's instruction.
        addressed (bool): They spoke to the assistant (else it overheard them).
        importance (int): The heuristic importance of what they said (the highest).
        account (str, optional): The account that played them when they spoke, when known
            (their voice, however many characters they play: `memory.provenance`).

    """

    name: str
    key: str
    instruction: bool = False
    addressed: bool = True
    importance: int = 3
    account: str | None = None

    def as_dict(self) -> dict:
        """The speaker as a plain dict.

        Returns:
            dict: Its fields by name.

        """
        return asdict(self)


def speakers_of(events: list[Event]) -> dict[str, Speaker]:
    """Who said something in `events` (lower-case name -> `Speaker`): says, whispers, pages,
    emotes and instructions, the text a person typed. Arrivals and departures are what the
    game produced, so they make no one a source of what the assistant writes.

    Events from assistants are skipped. A speaker heard more than once keeps the highest
    importance, and is an instructor or addressed if any of their events was.

    Args:
        events (list): The events of one conversation.

    Returns:
        dict: Lower-case name -> `Speaker`.

    """
    speakers: dict[str, Speaker] = {}
    for event in events:
        if event.type not in SPEECH_TYPES or event.from_assistant:
            continue
        earlier = speakers.get(event.speaker.lower())
        speakers[event.speaker.lower()] = Speaker(
            name=event.speaker,
            key=event.person,
            instruction=event.type == "instruction" or bool(earlier and earlier.instruction),
            addressed=event.classification != AMBIENT or bool(earlier and earlier.addressed),
            importance=max(event.importance, earlier.importance if earlier else 0),
            # taken as they spoke: a player who changes character mid-turn is still one voice
            account=event.metadata.get("account") or (earlier.account if earlier else None),
        )
    return speakers


# the most characters of one speaker's words kept for `said_by`
SAID_CHARS = 4000


def said_by(events: list[Event]) -> dict[str, str]:
    """What each speaker of `speakers_of` said in `events` (lower-case name -> their words,
    at most `SAID_CHARS`): what a note the model writes without naming its source is compared
    with (`tools.memory`).

    Args:
        events (list): The events of one conversation.

    Returns:
        dict: Lower-case name -> their words, in order.

    """
    said: dict[str, str] = {}
    for event in events:
        if event.type not in SPEECH_TYPES or event.from_assistant:
            continue
        name = event.speaker.lower()
        said[name] = f"{said.get(name, '')} {event.text}".strip()[:SAID_CHARS]
    return said


def triggers_model(event: Event, respond_to_ambient: bool, respond_to_assistants: bool) -> bool:
    """Whether this event alone justifies a model call.

    Args:
        event (Event): The event.
        respond_to_ambient (bool): Whether ambient says and emotes start a turn.
        respond_to_assistants (bool): Whether events from other assistants may start a turn.

    Returns:
        bool: True for an urgent event, a line of a scene it takes part in (`SCENE`), or an
            ambient say/emote when allowed; unless it comes from an assistant that is not
            answered (outside a scene), or was held back by a limit on players (deferred until
            the player's minute has room, or its token budget spent).

    """
    scene = bool(event.metadata.get(SCENE))
    if event.from_assistant and not (respond_to_assistants or scene):
        return False
    if event.metadata.get("held_back"):
        return False  # its speaker starts too many turns a minute
    return event.urgent or scene or (respond_to_ambient and event.type in ("say", "emote"))


class EventQueue:
    """Pending events, oldest first, bounded.

    On overflow the oldest ambient event is dropped (and counted); urgent events, and lines
    deferred until they may start their turn (`DEFERRED_UNTIL`), are dropped only when nothing
    else is left to drop, so a flood of chatter cannot push out a direct question.

    The queue is stored as one JSON string: it is rewritten at every tick that heard something,
    and a string is pickled in one step where a list of dicts is walked item by item.

    """

    KEY = "pending_events"
    DROPPED = "events_dropped"

    def __init__(self, store: KeyValueStore):
        self.store = store

    def _load(self) -> list[dict]:
        raw = self.store.get(self.KEY)
        if not raw:
            return []
        # a list is the older format, still read
        return json.loads(raw) if isinstance(raw, str) else list(raw)

    def _save(self, queue: list[dict]) -> None:
        self.store.set(self.KEY, json.dumps(queue, separators=(",", ":")))

    def peek(self) -> list[Event]:
        """Read the pending events without removing them.

        Returns:
            list: The events, oldest first.

        """
        return [Event.model_validate(data) for data in self._load()]

    def __len__(self) -> int:
        return len(self._load())

    def next_id(self, after: int = 0) -> int:
        """A new id, increasing within the queue (and past `after`), costing no write.

        Args:
            after (int): The id must be greater than this.

        Returns:
            int: The largest of the current time in nanoseconds, the top id + 1, after + 1.

        """
        top = max((item["id"] for item in self._load()), default=0)
        return max(time.time_ns(), top + 1, after + 1)

    def push(self, event: Event, max_pending: int) -> None:
        """Append one event, then drop overflow (see `push_many`).

        Args:
            event (Event): The event.
            max_pending (int): The most events the queue keeps.

        """
        self.push_many([event], max_pending)

    def push_many(self, events: list[Event], max_pending: int) -> None:
        """Append events in one write, then drop overflow (oldest ambient first).

        Args:
            events (list): The events to append.
            max_pending (int): The most events the queue keeps; drops are counted.

        """
        if not events:
            return
        queue = self._load()
        queue.extend(event.model_dump(mode="json") for event in events)
        dropped = 0
        while len(queue) > max_pending:
            position = next(
                (
                    i
                    for i, item in enumerate(queue)
                    if not item["urgent"] and DEFERRED_UNTIL not in item.get("metadata", {})
                ),
                0,
            )
            queue.pop(position)
            dropped += 1
        self._save(queue)
        if dropped:
            self.store.set(self.DROPPED, (self.store.get(self.DROPPED) or 0) + dropped)

    def release_deferred(
        self, now: datetime, held: Callable[[dict], str | None] | None = None
    ) -> datetime | None:
        """Let the lines deferred until `now` or earlier start their turns: they are urgent
        again, as when heard (one write, only when one is due).

        Args:
            now (datetime): The time.
            held (callable, optional): Asked of each line whose moment came (the stored
                item: its "speaker_key" and "metadata"): why it must still start no turn (its player's tokens are spent), or
                None. A line held is kept as context, with that reason, and never released.

        Returns:
            datetime or None: When the next line still deferred is due; None when none is.

        """
        queue = self._load()
        released = False
        later = []
        for item in queue:
            metadata = item.get("metadata") or {}
            until = from_iso(metadata.get(DEFERRED_UNTIL))
            if until is None:
                continue
            if until > now:
                later.append(until)
                continue
            del metadata[DEFERRED_UNTIL]
            released = True
            reason = held(item) if held else None
            if reason:
                metadata["held_back"] = reason
                continue
            metadata.pop("held_back", None)
            item["urgent"] = True
        if released:
            self._save(queue)
        return min(later) if later else None

    def remove(self, event_ids: set[int]) -> None:
        """Remove events from the queue.

        Args:
            event_ids (set): Ids of the events to remove.

        """
        self._save([item for item in self._load() if item["id"] not in event_ids])

    def dropped(self) -> int:
        """How many events were dropped on overflow, in all.

        Returns:
            int: The count.

        """
        return self.store.get(self.DROPPED) or 0
