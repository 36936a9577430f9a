"""
What every kind of memory is to the operations across kinds (`memory.kinds.REGISTRY`): the
memory file (its section, the export, the check, the write), the counts, which keys of the
character's store it owns (and which a first turn reads), and what of a forgotten person it
removes whole.

A kind kept as a chunked list (`ChunkedKind`) says only its storage layout, its record type and
its ids; one kept otherwise writes its own `export`, `check` and `write`.

"""

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ...records import check_record
from ..store import ChunkedList, KeyValueStore

# the longest text anywhere in a file (a compaction summary is the longest memory written)
MAX_TEXT_CHARS = 8000
# the most items of one kind (a journal of 30 years of busy days stays below it)
MAX_ITEMS = 200_000
# the most items in a list or dict inside one record (cites, audience, observations)
MAX_INNER_ITEMS = 2000
MAX_NAME_CHARS = 80
MAX_ID_CHARS = 200
PERSON_KEY = re.compile(r"^(#\d{1,12}|name:.{1,200})$", re.DOTALL)
# who made a correction, in the review log, when the caller did not say
BUILDER = "a builder"

Problems = list[str]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChunkedSection(Strict):
    """A kind kept as a list: its records, oldest first, and its small values (counters,
    cursors: `state`)."""

    state: dict[str, Any] = Field(default_factory=dict)
    items: list[dict[str, Any]] = Field(default_factory=list, max_length=MAX_ITEMS)


class Kind:
    """One kind of memory. Subclasses set the class attributes and override what differs.

    Attributes:
        name (str): Its section of the memory file ("journal").
        label (str): How a count of it reads ("journal entries").
        one (str): How one of it reads ("journal entry").
        section (type): The section's pydantic type; `default` makes an empty one.
        on_state (bool): Kept on the script's store (not the character's).
        keys (re.Pattern): The keys of the character's store it owns (None on the script).
        counts_as_held (bool): Whether an import must be told to replace it.
        forgotten_label (str): How a forget's report counts the records of a person it removes
            whole (`forget_person`); empty for a kind that removes none.
        first_read (tuple): The keys of the character's store a first turn reads (created
            empty with the character, so that the first turn finds them in one query).
        in_status (bool): Whether a status counts it (`size`, `kinds.sizes`): not when
            counting would read every record, nor for marks that are not records.

    """

    name: ClassVar[str]
    label: ClassVar[str]
    one: ClassVar[str]
    section: ClassVar[Any] = list[dict[str, Any]]
    on_state: ClassVar[bool] = False
    keys: ClassVar[re.Pattern | None] = None
    counts_as_held: ClassVar[bool] = True
    first_read: ClassVar[tuple[str, ...]] = ()
    forgotten_label: ClassVar[str] = ""
    in_status: ClassVar[bool] = True

    def default(self) -> Any:
        """An empty section."""
        return []

    def field(self) -> tuple[Any, Any]:
        """The section as a field of the file's `Memory` model."""
        return self.section, Field(default_factory=self.default)

    def owns(self, key: str) -> bool:
        """Whether a key of the character's store is this kind's."""
        return bool(self.keys and self.keys.match(key))

    def store(self, memory: KeyValueStore, state: KeyValueStore) -> KeyValueStore:
        return state if self.on_state else memory

    def export(self, memory: KeyValueStore, state: KeyValueStore) -> Any:
        """Its section of a memory file, from the stores."""
        raise NotImplementedError

    def count(self, section: Any) -> int:
        """How many records a section holds (a file's, parsed or exported)."""
        if isinstance(section, dict) and "items" in section:
            return len(section["items"])
        return len(section or [])

    def stored(self, memory: KeyValueStore, state: KeyValueStore) -> int:
        """How many records the stores hold now."""
        return self.count(self.export(memory, state))

    def held(self, memory: KeyValueStore, state: KeyValueStore) -> int:
        """How many records the stores hold now (0 for a kind an import replaces unasked)."""
        return self.stored(memory, state) if self.counts_as_held else 0

    def size(self, brain) -> int:
        """How many records a brain holds now, as a status counts them (`kinds.sizes`)."""
        return self.stored(brain.memory_store, brain.state)

    def ids(self, section: Any, problems: Problems) -> set[str]:
        """Its ids, checked well formed and unique (others' references are checked on them)."""
        return set()

    def check(self, section: Any, known: dict[str, set[str]], problems: Problems) -> None:
        """Its records within their description, their references to what the file holds
        (`known`: the ids of each kind)."""

    def write(self, section: Any, memory: KeyValueStore, state: KeyValueStore) -> None:
        """Its section of a checked file, into stores emptied of it."""
        raise NotImplementedError

    def forget_traces(self, memory: KeyValueStore, state: KeyValueStore, traces) -> int:
        """Drop the records that hold a trace of a forgotten person though they are not theirs
        (`memory.forget_person.Traces.found`), after `forget_person`; returns how many went
        (counted under `forgotten_label`); 0 for a kind that keeps no such records."""
        return 0

    def people(self, memory: KeyValueStore) -> dict[str, str]:
        """The names it knows people by, by person key (a file's `people`)."""
        return {}

    def builder(self, brain, now: Callable[[], datetime]) -> Any:
        """What builders read and correct of this kind, over a brain's stores
        (`MemoryAdmin.kind`): None for a kind they only see through the operations across
        kinds (the memory file, the counts, forgetting a person).

        Args:
            brain (Brain): The assistant's brain.
            now (callable): `now()` -> the current real time.

        Returns:
            object or None: The kind's builder operations, bound to the brain.

        """
        return None

    def forget_person(self, review, person, state: KeyValueStore | None = None) -> int:
        """Remove the records of this kind that are a person's whole (their profile, their
        relationship, the gossip naming them), for `memory.forget_person`. The records
        forgotten one by one (entries, memories, digests, core notes, observations) go through
        the review's cascade instead.

        Args:
            review (MemoryReview): The assistant's review (its stores and the live objects
                whose caches must hear of a removal).
            person (PersonMatch): Who, with every key `forget_person.find` found for them.
            state (KeyValueStore, optional): The script's store (None: leave its kinds).

        Returns:
            int: How many records were removed.

        """
        return 0


class ChunkedKind(Kind):
    """A kind kept as a chunked list (`store.ChunkedList`).

    Attributes:
        prefix (str): The list's name in the store ("journal": journal:meta, journal:000000).
        chunk (int): Records per stored chunk.
        record_type (type): Its records' `TypedDict` (`records`), or None.
        required (tuple): The fields each record must hold.
        id_pattern (re.Pattern): What its ids look like.
        positional (str): Ids number the records in order, after this letter ("j").
        left_out (tuple): Small values never exported (made again after an import).
        always_written (bool): Written by an import even when the file's section is empty.

    """

    section = ChunkedSection
    prefix: ClassVar[str]
    chunk: ClassVar[int]
    record_type: ClassVar[type | None] = None
    required: ClassVar[tuple] = ()
    id_pattern: ClassVar[re.Pattern | None] = None
    positional: ClassVar[str] = ""
    left_out: ClassVar[tuple] = ()
    always_written: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # its count and chunk size, read by every first turn (on the character's store only)
        if hasattr(cls, "prefix") and not cls.on_state:
            cls.first_read = (f"{cls.prefix}:meta",)

    def default(self) -> ChunkedSection:
        return ChunkedSection()

    def owns(self, key: str) -> bool:
        return bool(re.match(rf"^{re.escape(self.prefix)}:(meta|\d{{6}})$", key))

    def items(self, store: KeyValueStore) -> ChunkedList:
        return ChunkedList(store, self.prefix, self.chunk)

    def export(self, memory: KeyValueStore, state: KeyValueStore) -> dict:
        items = self.items(self.store(memory, state))
        kept = {key: value for key, value in items.extra.items() if key not in self.left_out}
        return {"state": kept, "items": items.all()}

    def stored(self, memory: KeyValueStore, state: KeyValueStore) -> int:
        return len(self.items(self.store(memory, state)))  # its count, without its records

    def ids(self, section: ChunkedSection, problems: Problems) -> set[str]:
        if self.id_pattern is None:
            return set()
        return check_ids(f"memory.{self.name}.items", section.items, self, problems)

    def check(self, section: ChunkedSection, known: dict, problems: Problems) -> None:
        if self.record_type is None:
            return
        for number, record in enumerate(section.items):
            where = f"memory.{self.name}.items[{number}]"
            problems.extend(check_record(self.record_type, record, where, self.required))

    def write(self, section: dict, memory: KeyValueStore, state: KeyValueStore) -> None:
        if section["items"] or section["state"] or self.always_written:
            items = self.items(self.store(memory, state))
            items.extra = dict(section["state"])
            items.replace_all(section["items"])


def check_ids(base: str, items: list[dict], kind: Kind, problems: Problems) -> set[str]:
    """Ids well formed and unique; positional ones must equal their position (`j000042`).

    Args:
        base (str): Where the records are ("memory.journal.items").
        items (list): The records.
        kind (Kind): Their kind (its `id_pattern` and `positional`).
        problems (list): Where problems are added.

    Returns:
        set: The ids seen.

    """
    seen: set[str] = set()
    positional = getattr(kind, "positional", "")
    for number, item in enumerate(items):
        where = f"{base}[{number}].id"
        item_id = item.get("id")
        if not isinstance(item_id, str) or not kind.id_pattern.match(item_id):
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


def refs(ids: Any, known: set, where: str, problems: Problems) -> None:
    """Every id of a list of references held by the file."""
    if ids is None:
        return
    if not isinstance(ids, list):
        problems.append(f"{where}: a list of ids")
        return
    for value in ids:
        if value not in known:
            problems.append(f"{where}: {str(value)[:40]} is not in the file")
            return


def next_id_given(kind: str, section: ChunkedSection, problems: Problems) -> None:
    """A section's next id past every id it holds (else a new record would take one given)."""
    numbers = [
        int(item["id"][1:])
        for item in section.items
        if isinstance(item.get("id"), str) and item["id"][1:].isdigit()
    ]
    next_id = section.state.get("next_id")
    if next_id is None:
        return
    if isinstance(next_id, bool) or not isinstance(next_id, int) or next_id < 0:
        problems.append(f"memory.{kind}.state.next_id: a whole number")
    elif numbers and next_id <= max(numbers):
        problems.append(
            f"memory.{kind}.state.next_id: {next_id} is an id given already (more than "
            f"{max(numbers)})"
        )


def check_people(records: list[dict], kind: str, problems: Problems) -> None:
    """One record a person, each under a person key, with a bounded name."""
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
        name = record.get("name")
        if name is not None and (not isinstance(name, str) or len(name) > MAX_NAME_CHARS):
            problems.append(
                f"memory.{kind}[{number}].name: a text of at most {MAX_NAME_CHARS} characters "
                "is required"
            )
