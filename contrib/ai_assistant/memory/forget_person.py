"""
Forgetting a person: everything one assistant holds of them goes, and what remains is listed.

A person is named by their keys (their character's key `#12`, `name:bob` for someone known only
by name, the account that plays them, `account#3`) and their names (the character's name and
aliases). What is theirs (`PersonMatch.kinds_of`):

- the journal entries they said (`heard_from` is one of their names, or `voice` one of their
  keys), those about them (`about`), those private to them alone (an audience of their keys
  only: a whisper or page of theirs), and what other assistants told about them (a told
  entry's `gossip.people`);
- the long-term memories with the same marks in their provenance and audience;
- their profile (every observation and attribute) and, in other people's profiles, the
  observations they said or that are private to them;
- the core notes they had written (`owners`) or that are private to them.

Each is forgotten through the review's cascade (`MemoryReview.cascade`), so what was drawn from
it goes too: long-term memories, reflections citing it, daily digests, core notes resting on
it, attributes citing an observation, relationship reasons citing it. Then each kind of memory
removes what of theirs it keeps whole (`Kind.forget_person` over `memory.kinds.REGISTRY`: their
profile, their relationship, the gossip log's records naming them, the reminders they own or
that are private to them), and the forgotten
entries and long-term memories lose the marks that named them (`heard_from`, `voice`, the told
chain, `about`; a memory's provenance also the talk kept beside it). It is recorded
in the review log as one correction (`forget_person`): their keys, a digest of each name (to
find their words again after a rollback, never the name itself), and the ids forgotten, never
the words. A rollback makes it hold again (`reapply_forget_person`): the restored memory is
searched again, so what the person said before the snapshot goes as well.

What remains is listed by id, never by its words: entries and memories by other people that
still name them, entries whose audience or witnesses hold them among others (another person's
words they heard), and lore entries that name them (the game's lore book is builders' text,
never changed here). The shell's part (queued events, conversation history, the
snapshots' copies) is `memory_admin.MemoryAdmin.forget_person`.

"""

import copy
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..clock import from_iso
from ..errors import Refused
from . import entities, journal, relationships, semantic
from .entities import name_key
from .gossip import LOG_KEY as GOSSIP_LOG_KEY
from .kinds import REGISTRY
from .kinds.review_log import AUDIT
from .relationships import Relationships

# the review log's action
FORGET_PERSON = "forget_person"
# where a gossip log record names people by name (`memory.gossip.GossipLog`)
_GOSSIP_NAMING = ("teller", "to", "chain", "text")
# bounds: keys and names given, ids listed in a report, ids kept in the review log
MAX_KEYS = 20
MAX_NAMES = 20
MAX_NAME_CHARS = 80
MAX_LISTED = 30
MAX_RECORDED_IDS = 500
# what a person's core note is named by in a forget (as `memory.review.CORE_PREFIX`)
_CORE = "core:"
# a builder's setting of a relationship in the review log (`memory.review.RELATIONSHIP_SET`;
# the review imports this module)
_RELATIONSHIP_SET = "relationship"


class AmbiguousPerson(Refused):
    """A name that several characters an assistant knows have: name one by its #dbref."""


def name_digest(name: str) -> str:
    """A digest of a name, to know it again without keeping it.

    Args:
        name (str): The name.

    Returns:
        str: The first 16 hex digits of the SHA-256 of the name in lower case.

    """
    return hashlib.sha256(name.strip().lower().encode("utf-8")).hexdigest()[:16]


class PersonMatch:
    """Who is forgotten, and whether a record is theirs.

    Args:
        keys (iterable): Their keys (`#12`, `name:bob`, `account#3`); at most `MAX_KEYS`.
        names (iterable): Their names and aliases; at most `MAX_NAMES`.
        digests (iterable): Name digests (`name_digest`), for a rollback that has no names.

    """

    def __init__(self, keys: Iterable[str] = (), names: Iterable[str] = (), digests=()):
        self.names = []
        for name in names:
            name = str(name or "").strip().lstrip("@")[:MAX_NAME_CHARS]
            if name and name.lower() not in (n.lower() for n in self.names):
                self.names.append(name)
        self.names = self.names[:MAX_NAMES]
        self.keys = {str(key).strip() for key in keys if str(key or "").strip()}
        self.keys |= {name_key(name) for name in self.names}
        self.keys = set(sorted(self.keys)[: MAX_KEYS + MAX_NAMES])
        self.lower_keys = {key.lower() for key in self.keys}
        self.digests = {name_digest(name) for name in self.names} | set(digests)
        words = "|".join(re.escape(name) for name in sorted(self.names, key=len, reverse=True))
        self.mention = re.compile(rf"\b({words})\b", re.IGNORECASE) if words else None
        # other people who share one of their names (`find` fills it): a record by that name
        # that is about one of them, or in their voice, is theirs, not this person's
        self.others: set[str] = set()

    def named(self, name) -> bool:
        """Whether `name` is one of theirs."""
        return isinstance(name, str) and bool(name.strip()) and name_digest(name) in self.digests

    def _voiced(self, voice) -> bool:
        return isinstance(voice, str) and voice.strip().lower() in self.lower_keys

    def _someone_else(self, record: dict) -> bool:
        """Whether a record said under one of their names is another person's of that name
        (its voice, or everyone it is about, is one of `others`)."""
        if not self.others:
            return False
        voice = record.get("voice")
        if isinstance(voice, str) and voice.strip() in self.others:
            return True
        about = set(record.get("about") or [])
        return bool(about) and about <= self.others

    def said(self, record: dict) -> bool:
        """Whether they said it (its `heard_from` or its `voice`), or it rests on their words
        (a summary's or memory's `claims_of` and `voices`)."""
        if self._voiced(record.get("voice")):
            return True
        if self.named(record.get("heard_from")) and not self._someone_else(record):
            return True
        if any(self._voiced(voice) for voice in record.get("voices") or []):
            return True
        voices = set(record.get("voices") or [])
        others_only = bool(voices) and voices <= self.others
        return not others_only and any(self.named(name) for name in record.get("claims_of") or [])

    def private(self, audience) -> bool:
        """Whether an audience is theirs alone (a whisper of theirs)."""
        return bool(audience) and set(audience) <= self.keys

    def kinds_of(self, record: dict, provenance: dict | None = None) -> list[str]:
        """Why a journal entry or memory is theirs: "said", "about", "private", "gossip".

        Args:
            record (dict): The entry or memory.
            provenance (dict, optional): Where its source marks are (a memory's
                `provenance`); the record itself by default.

        Returns:
            list: The reasons, empty when it is not theirs.

        """
        marks = provenance if provenance is not None else record
        kinds = []
        if self.said(marks):
            kinds.append("said")
        if self.keys & set(record.get("about") or marks.get("about") or []):
            kinds.append("about")
        if self.private(record.get("audience")):
            kinds.append("private")
        gossip = marks.get("gossip") or {}
        if self.keys & set(gossip.get("people") or []):
            kinds.append("gossip")
        return kinds

    def mentions(self, text) -> bool:
        """Whether a text names them (a whole word, any case)."""
        return bool(self.mention and isinstance(text, str) and self.mention.search(text))


@dataclass
class PersonForgotten:
    """What forgetting a person did, and what remains of them.

    Attributes:
        keys (list): Their keys, as matched.
        found (dict): What was theirs, by kind ("said", "about", "private", "gossip",
            "observations", "core notes") -> ids.
        forgotten (list): Every id forgotten, what was drawn from theirs included.
        counts (dict): What was forgotten or removed, by what it is -> how many.
        remains (dict): What remains that names them, by what it is -> ids (at most
            `MAX_LISTED` each; `remains_total` has the counts).
        remains_total (dict): How many of each remain.
        words (list): The forgotten words, for the caller to take out of what it keeps;
            never shown or stored.

    """

    keys: list = field(default_factory=list)
    found: dict = field(default_factory=dict)
    forgotten: list = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    remains: dict = field(default_factory=dict)
    remains_total: dict = field(default_factory=dict)
    words: list = field(default_factory=list)

    def remain(self, what: str, item_id: str) -> None:
        """Note one thing that remains (listed up to `MAX_LISTED`, all counted)."""
        self.remains_total[what] = self.remains_total.get(what, 0) + 1
        listed = self.remains.setdefault(what, [])
        if len(listed) < MAX_LISTED:
            listed.append(item_id)


def _profile_keys(review, person: PersonMatch) -> list[str]:
    """The keys of their profiles and relationships: by key, or by one of their names when
    they are known by that name only (`name:bob`) or nobody is named by a dbref. Another
    character of the same name (another dbref) is someone else: noted in `person.others`."""
    known = {**Relationships(review.core.store).index(), **review.entities.index()}
    dbrefs = {key for key in person.keys if key.startswith("#")}
    keys = []
    for key, name in known.items():
        if key in person.keys:
            keys.append(key)
        elif person.named(name):
            if dbrefs and key.startswith("#"):
                person.others.add(key)
            else:
                keys.append(key)
    return sorted(keys)


def find(review, person: PersonMatch) -> dict[str, list[str]]:
    """What one assistant holds of a person, without changing anything.

    Args:
        review (MemoryReview): The assistant's review (its journal, long-term store, profiles
            and core notes).
        person (PersonMatch): Who.

    Returns:
        dict: ids by kind: "said", "about", "private", "gossip" (journal entries and
            long-term memories), "observations" (`#12/o3`), "core notes" (`core:<slot>`),
            "profiles" and "relationships" (person keys).

    """
    found: dict[str, list[str]] = {}

    def note(kind: str, item_id: str) -> None:
        found.setdefault(kind, []).append(item_id)

    # a profile found by one of their names brings its key (`name:bob`, a dbref) along
    keys = _profile_keys(review, person)
    # known through gossip by name only: the key the first teller knew them by is theirs too
    # (the told entry and the gossip log are keyed by it)
    for entry in review.journal.all():
        origin = (entry.get("gossip") or {}).get("origin") or {}
        key = origin.get("key")
        if isinstance(key, str) and person.named(origin.get("name")) and key not in person.others:
            keys.append(key)
    keys = sorted(set(keys))
    person.keys |= set(keys)
    person.lower_keys |= {key.lower() for key in keys}
    for entry in review.journal.all():
        if entry.get("forgotten"):
            continue
        kinds = person.kinds_of(entry)
        if kinds:
            note(kinds[0], entry["id"])
    long_term = review.long_term
    for memory in long_term.all() if hasattr(long_term, "all") else []:
        if memory.get("forgotten"):
            continue
        kinds = person.kinds_of(memory, memory.get("provenance") or {})
        if kinds:
            note(kinds[0], memory["id"])
    for key in keys:
        if review.entities.profile(key) is not None:
            note("profiles", key)
        if Relationships(review.core.store).get(key) is not None:
            note("relationships", key)
    for profile in review.entities.profiles():
        own = profile["key"] in person.keys
        for item in profile.get("observations", []) + profile.get("attributes", []):
            if own or person.said(item) or person.private(item.get("audience")):
                note("observations", f"{profile['key']}/{item['id']}")
    for slot, note_ in review.core.items().items():
        owners = set((note_.get("owners") or {}).keys())
        if (owners and owners <= person.keys) or person.private(note_.get("audience")):
            note("core notes", f"{_CORE}{slot}")
    return found


def forget_person(
    review,
    person: PersonMatch,
    now: datetime,
    by: str,
    reason: str = "",
    record: bool = True,
    state=None,
) -> PersonForgotten:
    """Forget a person in one assistant's memory (see the module doc), recorded.

    Args:
        review (MemoryReview): The assistant's review.
        person (PersonMatch): Who.
        now (datetime): When.
        by (str): Who forgets them (a builder, or the game on the player's request).
        reason (str, optional): Why; kept up to 200 characters.
        record (bool, optional): Record it in the review log (a rollback making it hold
            again records nothing).
        state (KeyValueStore, optional): The script's store, for the kinds kept there (the
            reminders they own); None leaves them (a rollback restores no reminder).

    Returns:
        PersonForgotten: What was forgotten, and what remains.

    """
    found = find(review, person)
    report = PersonForgotten(keys=sorted(person.keys), found=found)
    named = [
        item_id
        for kind in ("said", "about", "private", "gossip", "observations", "core notes")
        for item_id in found.get(kind, [])
    ]
    why = reason or "forgetting a person"
    gone = review.cascade(named, now, by, why) if named else []
    report.forgotten = list(gone)
    report.words = list(getattr(gone, "words", []))
    _unmark(review, person, [one for one in gone if one.startswith("j")])
    _unmark_memories(review, person, [one for one in gone if one.startswith("m")])
    # what of theirs each kind keeps whole (a profile, a relationship, the gossip naming them)
    removed = {
        kind: kind.forget_person(review, person, state) for kind in REGISTRY if kind.forgotten_label
    }
    _unrecord_reasons(review, person)
    report.counts = {**_counted(review, gone)}
    report.counts.update({kind.forgotten_label: count for kind, count in removed.items()})
    report.counts = {what: count for what, count in report.counts.items() if count}
    # what the memory lost is recorded (the script's kinds are not memory a rollback restores)
    if record and (gone or any(count for kind, count in removed.items() if not kind.on_state)):
        # the log keeps no name: a `name:` key is kept as its name's digest (a rollback finds
        # their profile by the digest, and what was forgotten by id)
        keys = sorted(key for key in person.keys if not key.startswith("name:"))
        keys += sorted(f"name#{name_digest(key[5:])}" for key in person.keys - set(keys))
        review._record(
            FORGET_PERSON,
            keys[0] if keys else "?",
            by,
            now,
            {
                "keys": keys,
                "names_sha256": sorted(person.digests),
                "forgotten": list(gone)[:MAX_RECORDED_IDS],
                "forgotten_count": len(gone),
                "reason": reason[:200],
            },
        )
    return report


def unmarked(person: PersonMatch, record: dict, keys: set[str]) -> dict:
    """A forgotten record (an entry, a memory's provenance) without the marks that name them:
    who said it, their voice, the told chain, them among whom it was about, and the talk kept
    beside it (the words around a forgotten memory, theirs among them)."""
    record = dict(record)
    if person.said(record):
        record["heard_from"] = None
        record.pop("voice", None)
        record.pop("claims_of", None)
        record.pop("voices", None)
    record.pop("gossip", None)
    record["about"] = [key for key in record.get("about") or [] if key not in keys]
    # who heard it: an empty husk's audience narrows (no one else is let in), never widens
    for part in ("audience", "witnesses"):
        if isinstance(record.get(part), list):
            record[part] = [key for key in record[part] if key not in keys]
    if "talk" in record:
        record["talk"] = ""
    return record


def _unmark(review, person: PersonMatch, entry_ids: list[str]) -> None:
    """Take the marks that name them off their forgotten entries (the words went already)."""
    changed = []
    for entry_id in entry_ids:
        entry = review.journal.get(entry_id)
        if entry and entry.get("forgotten"):
            changed.append(unmarked(person, entry, person.keys))
    review.journal.update(changed)


def _unmark_memories(review, person: PersonMatch, memory_ids: list[str]) -> None:
    """Take the marks that name them off their forgotten long-term memories' provenance (the
    text went already): the export and recall keep nothing of theirs."""
    memories = getattr(review.long_term, "memories", None)  # a game's own store keeps its own
    if memories is None:
        return
    changed = {}
    for memory_id in memory_ids:
        position = int(memory_id.removeprefix("m")) if memory_id[1:].isdigit() else -1
        memory = memories.get(position) if 0 <= position < len(memories) else None
        if memory and memory.get("id") == memory_id and memory.get("forgotten"):
            provenance = unmarked(person, memory.get("provenance") or {}, person.keys)
            changed[position] = {**memory, "provenance": provenance}
    if changed:
        memories.update(changed)


def _unrecord_reasons(review, person: PersonMatch) -> None:
    """Take the words out of the review log's records of their relationship set by a builder
    (the reason given is about them); the records stay, so a rollback sets and forgets it
    again in order."""
    scrubbed = {
        position: {**record, "reason": ""}
        for position, record in enumerate(review.audit.all())
        if record.get("action") == _RELATIONSHIP_SET
        and record.get("id") in person.keys
        and record.get("reason")
    }
    if scrubbed:
        review.audit.update(scrubbed)


# the words for one of each kind a report counts (its keys are the words for several)
ONE = {
    "journal entries": "journal entry",
    "reflections": "reflection",
    "long-term memories": "long-term memory",
    "observations and attributes": "observation or attribute",
    "digests": "digest",
    "core notes": "core note",
    "profiles": "profile",
    "relationships": "relationship",
    "gossip log records": "gossip log record",
    "journal entries naming them": "journal entry naming them",
    "entries they heard (another's words)": "entry they heard (another's words)",
    "long-term memories naming them": "long-term memory naming them",
    "observations naming them": "observation naming them",
    "core notes naming them": "core note naming them",
    "lore entries naming them": "lore entry naming them",
}


def _counted(review, gone: list[str]) -> dict[str, int]:
    """What was forgotten, by what it is."""
    counts = {
        "journal entries": 0,
        "reflections": 0,
        "long-term memories": 0,
        "observations and attributes": 0,
        "digests": 0,
        "core notes": 0,
    }
    for one in gone:
        if one.startswith(_CORE):
            counts["core notes"] += 1
        elif "/" in one:
            counts["observations and attributes"] += 1
        elif one.startswith("j"):
            entry = review.journal.get(one) or {}
            counts["reflections" if review.journal.is_reflection(entry) else "journal entries"] += 1
        elif one.startswith("m"):
            counts["long-term memories"] += 1
        elif one.startswith("d"):
            counts["digests"] += 1
    return counts


def remaining(review, person: PersonMatch, report: PersonForgotten, lore=None) -> None:
    """Add to `report` what still names the person, by id (never the words).

    Args:
        review (MemoryReview): The assistant's review.
        person (PersonMatch): Who (with their names: what is searched for).
        report (PersonForgotten): The report to fill.
        lore (LoreBook, optional): The game's lore book: its entries that name them are
            listed (lore is builders' text: it is never changed here).

    """
    for entry in review.journal.all():
        if entry.get("forgotten") or not entry.get("content"):
            continue
        if person.mentions(entry["content"]):
            report.remain("journal entries naming them", entry["id"])
        elif person.keys & set((entry.get("audience") or []) + (entry.get("witnesses") or [])):
            report.remain("entries they heard (another's words)", entry["id"])
    long_term = review.long_term
    for memory in long_term.all() if hasattr(long_term, "all") else []:
        if not memory.get("forgotten") and person.mentions(memory.get("text")):
            report.remain("long-term memories naming them", memory["id"])
    for profile in review.entities.profiles():
        for item in profile.get("observations", []) + profile.get("attributes", []):
            if person.mentions(item.get("text") or item.get("value")):
                report.remain("observations naming them", f"{profile['key']}/{item['id']}")
    for slot, note in review.core.items().items():
        if person.mentions(note.get("value")):
            report.remain("core notes naming them", f"{_CORE}{slot}")
    if lore is not None and person.mention is not None:
        for entry in lore.entries():
            if person.mentions(entry.get("title")) or person.mentions(entry.get("text")):
                report.remain("lore entries naming them", str(entry.get("id")))


_EVENT = re.compile(r'<event [^>]*?from="([^"]*)"[^>]*>(.*?)</event>', re.DOTALL)
_EVENT_TAG = re.compile(r"<event [^>]*>.*?</event>", re.DOTALL)


def spoken_in(messages: list, person: PersonMatch, most: int = 1000) -> list[str]:
    """What they said as the conversation history shows it (`prompt.render_event`): the text
    of each event from one of their names, for the caller to take out.

    Args:
        messages (list): The history's messages.
        person (PersonMatch): Who.
        most (int, optional): The most texts returned.

    Returns:
        list: The texts, as the messages hold them.

    """
    found = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        parts = content if isinstance(content, list) else [content]
        for part in parts:
            text = part.get("text") if isinstance(part, dict) else part
            if not isinstance(text, str) or "<event " not in text:
                continue
            for speaker, said in _EVENT.findall(text):
                speaker = speaker.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                if person.named(speaker.replace("&amp;", "&")) and said.strip():
                    found.append(said)
    return found[:most]


def reapply_forget_person(review, record: dict) -> list[str]:
    """Make a recorded forget of a person hold again in restored memory (a rollback): the
    memory is searched again by their keys and name digests, and what is theirs forgotten,
    with the original time, recording nothing.

    Args:
        review (MemoryReview): The review over the restored memory.
        record (dict): The `forget_person` record.

    Returns:
        list: The ids forgotten again, and the keys of profiles and relationships removed.

    """
    keys = record.get("keys") or []
    digests = [key[5:] for key in keys if key.startswith("name#")]
    person = PersonMatch(
        keys=[key for key in keys if not key.startswith("name#")],
        digests=[*(record.get("names_sha256") or []), *digests],
    )
    # the original time, not now: the memory says when it was forgotten
    at = from_iso(record.get("at")) or datetime.now(timezone.utc)
    report = forget_person(
        review, person, at, str(record.get("by") or ""), record.get("reason") or "", record=False
    )
    # and what it forgot then, by id (a snapshot's copy kept only as an empty husk)
    again = review.cascade(
        [one for one in record.get("forgotten") or [] if one not in report.forgotten],
        at,
        str(record.get("by") or ""),
        record.get("reason") or "",
    )
    found = report.found
    return [
        *report.forgotten,
        *again,
        *found.get("profiles", []),
        *found.get("relationships", []),
    ]


def snapshot_change(person: PersonMatch, report: PersonForgotten, traces=None):
    """What the snapshots keep of a person forgotten (`Snapshots.rewrite`): their profiles and
    relationships as if they never existed, their keys out of the indexes, the gossip log's
    records naming them out, the marks naming them off their forgotten entries (the words
    go with `Snapshots.scrub`), and the reasons of their relationship's settings out of the
    review log's copy.

    Args:
        person (PersonMatch): Who (their keys as `find` completed them).
        report (PersonForgotten): What was forgotten.
        traces (Traces, optional): Their traces: the gossip records and the talk kept beside
            others' memories holding one go as they do live
            (`person_forgetting.PersonForgetting._traces`).

    Returns:
        callable: `change(key, value)` for `Snapshots.rewrite`.

    """
    keys = set(person.keys)
    gone = {one for one in report.forgotten if one.startswith("j")}
    memories_gone = {one for one in report.forgotten if one.startswith("m")}
    dropped = {entities.PREFIX + key for key in keys}
    dropped |= {relationships.PREFIX + key for key in keys}
    indexes = (entities.INDEX_KEY, relationships.INDEX_KEY)

    def chunk_of(name: str, key: str) -> bool:
        return key.startswith(f"{name}:") and key != f"{name}:meta"

    def change(key: str, value):
        if key in dropped:
            return (False, None)
        if key in indexes and isinstance(value, dict):
            kept = {k: v for k, v in value.items() if k not in keys}
            return (True, kept) if len(kept) != len(value) else None
        if key == GOSSIP_LOG_KEY and isinstance(value, list):
            kept = [
                r
                for r in value
                if not keys & set(r.get("people") or [])
                and not any(person.mentions(r.get(part)) for part in _GOSSIP_NAMING)
                and not (traces and traces.found(r))
            ]
            return (True, kept) if len(kept) != len(value) else None
        entries = chunk_of(journal.ENTRIES, key) and gone
        memories = chunk_of(semantic.MEMORIES, key) and (memories_gone or traces)
        audit = chunk_of(AUDIT, key)
        if entries or memories or audit:
            items = json.loads(value) if isinstance(value, str) else copy.deepcopy(value)
            if not isinstance(items, list):
                return None
            touched = False
            for position, item in enumerate(items):
                if not isinstance(item, dict):
                    continue
                if entries and item.get("id") in gone:
                    items[position] = unmarked(person, item, keys)
                    touched = True
                elif memories and item.get("id") in memories_gone:
                    provenance = unmarked(person, item.get("provenance") or {}, keys)
                    items[position] = {**item, "provenance": provenance}
                    touched = True
                elif (
                    memories and traces and traces.found((item.get("provenance") or {}).get("talk"))
                ):
                    # `Snapshots.scrub` took the whole copies out: a trace left empties it
                    provenance = {**item["provenance"], "talk": ""}
                    items[position] = {**item, "provenance": provenance}
                    touched = True
                elif (
                    audit
                    and item.get("action") == _RELATIONSHIP_SET
                    and item.get("id") in keys
                    and item.get("reason")
                ):
                    items[position] = {**item, "reason": ""}  # as `_unrecord_reasons`
                    touched = True
            if not touched:
                return None
            return (
                True,
                json.dumps(items, separators=(",", ":")) if isinstance(value, str) else items,
            )
        return None

    return change


# a trace of their words in what is kept elsewhere (tool calls, results, a working-memory line,
# kept talk): a run of this many words of one of their lines (a cut or quoted part of it), or a
# word of theirs with a digit of at least this length (a code, a combination); a line of three
# words is one run of three
TRACE_WORDS = 4
TRACE_CODE_CHARS = 4
_WORD = re.compile(r"\w+(?:[-./:']\w+)*")
# what stands for a stretch of the conversation history that held something of theirs
FORGOTTEN_TURNS = "[Some of this conversation was forgotten.]"
_COMPACTION = "compaction"


def _strings(value, depth: int = 0):
    """Every text in a stored value (messages, records), a tool call's JSON arguments read."""
    if depth > 20:
        return
    if isinstance(value, str):
        yield value
        if value[:1] in "{[":
            try:
                inner = json.loads(value)
            except ValueError:
                return
            yield from _strings(inner, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item, depth + 1)


class Traces:
    """Whether something kept holds a trace of a forgotten person: one of their names or keys,
    a run of `TRACE_WORDS` words of one of their lines, or a code of theirs (a word with a digit
    of `TRACE_CODE_CHARS` or more). A model quotes, cuts and re-words what it heard; whole
    copies alone (`provenance.words_out`) miss a cut line or a code repeated in a tool call.

    Args:
        person (PersonMatch): Who.
        words (iterable): Their lines (what was forgotten, and what they said in the history).

    """

    def __init__(self, person: PersonMatch, words: Iterable[str]):
        self.person = person
        self.runs: set[tuple] = set()
        self.codes: set[str] = set()
        for text in words:
            tokens = _WORD.findall(str(text or "").lower())
            size = min(TRACE_WORDS, len(tokens))
            if size >= 3:
                self.runs.update(
                    tuple(tokens[at : at + size]) for at in range(len(tokens) - size + 1)
                )
            self.codes.update(
                token
                for token in tokens
                if len(token) >= TRACE_CODE_CHARS and any(ch.isdigit() for ch in token)
            )
        self.sizes = {len(run) for run in self.runs}
        keys = sorted(person.keys, key=len, reverse=True)
        self.key_pattern = (
            re.compile(
                "|".join(rf"(?<![\w#:]){re.escape(key)}(?![\w])" for key in keys), re.IGNORECASE
            )
            if keys
            else None
        )

    def in_text(self, text: str) -> bool:
        """Whether one text holds a trace of theirs."""
        if not isinstance(text, str) or not text.strip():
            return False
        if self.person.mentions(text) or (self.key_pattern and self.key_pattern.search(text)):
            return True
        tokens = _WORD.findall(text.lower())
        if self.codes and self.codes.intersection(tokens):
            return True
        return any(
            tuple(tokens[at : at + size]) in self.runs
            for size in self.sizes
            for at in range(len(tokens) - size + 1)
        )

    def found(self, value) -> bool:
        """Whether a stored value (a message, a record, lists and dicts of them) holds one."""
        return any(self.in_text(text) for text in _strings(value))

    def lines_without(self, text: str) -> tuple[str, bool]:
        """A text without its lines that hold a trace: (the text, whether any went)."""
        lines = text.split("\n")
        kept = [line for line in lines if not self.in_text(line)]
        return "\n".join(kept), len(kept) != len(lines)


def history_without(messages: list[dict], person: PersonMatch, traces: Traces):
    """The conversation history without what holds anything of a person.

    The history is cut into turns (a user message and the replies, tool calls and results
    after it: a model's call and its result stay together). A turn private to them, or holding
    a trace of theirs anywhere (their event, their name or key, their words however cut, in a
    tool call's arguments or result, a reminder or working-memory line), goes whole: what the
    model did in it was drawn from them. One note stands for each run of turns gone. A
    compaction summary keeps its lines without a trace.

    Args:
        messages (list): The stored messages.
        person (PersonMatch): Who.
        traces (Traces): Their traces.

    Returns:
        tuple: (the messages kept, how many messages went or were rewritten).

    """
    turns: list[list[dict]] = []
    for message in messages:
        if not turns or message.get("role") == "user":
            turns.append([])
        turns[-1].append(message)
    kept: list[dict] = []
    changed = 0
    noted = False
    for turn in turns:
        rest = []
        for message in turn:
            metadata = message.get("metadata") or {}
            if metadata.get("type") == _COMPACTION and isinstance(message.get("content"), str):
                content, touched = traces.lines_without(message["content"])
                if touched:
                    derived = unmarked(person, metadata.get("derived") or {}, person.keys)
                    message = {
                        **message,
                        "content": content,
                        "metadata": {**metadata, "derived": derived},
                    }
                    changed += 1
                kept.append(message)
                noted = False
            else:
                rest.append(message)
        if not rest:
            continue
        theirs = any(person.private((m.get("metadata") or {}).get("audience")) for m in rest)
        if theirs or traces.found(rest):
            changed += len(rest)
            # what others said in it stays (their events holding no trace), with a note
            first = rest[0]
            others = (
                [
                    event.group(0)
                    for event in _EVENT_TAG.finditer(first["content"])
                    if not traces.in_text(event.group(0))
                ]
                if not theirs
                and first.get("role") == "user"
                and isinstance(first.get("content"), str)
                else []
            )
            if others:
                content = "\n".join([FORGOTTEN_TURNS, *others])
                metadata = dict(first.get("metadata") or {})
                if isinstance(metadata.get("speakers"), dict):  # who spoke: them no longer
                    metadata["speakers"] = {
                        name: speaker
                        for name, speaker in metadata["speakers"].items()
                        if not traces.found([name, speaker])
                    }
                kept.append({**first, "content": content, "metadata": metadata})
                noted = False
            elif not noted:
                kept.append({"role": "user", "content": FORGOTTEN_TURNS})
                noted = True
        else:
            kept.extend(rest)
            noted = False
    return kept, changed
