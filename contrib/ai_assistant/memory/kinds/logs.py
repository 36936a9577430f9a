"""The logs as kinds of memory: the gossip log (who told whom what: `memory.gossip`) and the
sleep history (`sleep_history`)."""

import re
from collections.abc import Callable
from datetime import datetime

from pydantic import Field

from ...errors import Refused
from ...records import SleepRecord
from ..sleep_history import SleepHistory
from ...state import SLEEP_HISTORY, SLEEP_HISTORY_CHUNK
from .. import gossip
from ..store import KeyValueStore
from .base import ChunkedKind, Kind, next_id_given

# the most sleeps a builder lists at once
MAX_SLEEPS_LISTED = 500


class BuildersGossip:
    """The gossip log as builders read it (`MemoryAdmin.kind("gossip_log")`).

    Args:
        brain (Brain): The assistant's brain (its gossip log).
        now (callable): `now()` -> the current real time.

    """

    def __init__(self, brain, now: Callable[[], datetime]):
        self.brain = brain
        self.now = now

    def records(self, limit: int | None = None, person: str | None = None) -> list[dict]:
        """Who told whom what, as this assistant saw it (`memory.gossip.GossipLog`): what it
        told other assistants and what it heard them tell, newest first.

        Args:
            limit (int, optional): How many at most.
            person (str, optional): Only the records whose chain holds, or is about, this
                person's key.

        Returns:
            list: The records, as dicts ("at", "direction", "teller", "to", "memory_id",
                "text", "chain", "trust", "people", "location").

        """
        return self.brain.gossip_log.records(limit, person)


class BuildersSleeps:
    """The sleep history as builders read it (`MemoryAdmin.kind("sleep_history")`).

    Args:
        brain (Brain): The assistant's brain (its script's store).
        now (callable): `now()` -> the current real time.

    """

    def __init__(self, brain, now: Callable[[], datetime]):
        self.brain = brain
        self.now = now

    def recent(self, limit: int = 20, current: bool = False) -> list[SleepRecord]:
        """The assistant's last sleeps, newest first (see `ai_assistant.memory.sleep_history`).

        Args:
            limit (int): How many at most (1-500).
            current (bool, optional): Put the sleep under way first, as far as it has got
                (`SleepHistory.in_progress`), counted in the limit.

        Returns:
            list: Sleep records.

        Raises:
            Refused: A limit outside 1-500.

        """
        if isinstance(limit, bool) or not isinstance(limit, int):
            limit = -1
        if not 1 <= limit <= MAX_SLEEPS_LISTED:
            raise Refused(
                f"The limit must be a whole number from 1 to {MAX_SLEEPS_LISTED}, not {limit!r}."
            )
        history = SleepHistory(self.brain.state)
        under_way = history.in_progress() if current else None
        if under_way is None:
            return history.recent(limit)
        return [under_way, *history.recent(limit - 1)]


class GossipLogKind(Kind):
    name = "gossip_log"
    label = "gossip records"
    one = "gossip record"
    keys = re.compile(rf"^{re.escape(gossip.LOG_KEY)}$")
    forgotten_label = "gossip log records"

    def builder(self, brain, now: Callable[[], datetime]) -> BuildersGossip:
        return BuildersGossip(brain, now)

    def forget_person(self, review, person, state=None) -> int:
        # by key, and by name: an assistant that knew them by name only holds records keyed
        # by the dbref the teller knew them by, and the chain and text name them
        log = gossip.GossipLog(review.core.store)
        dropped = sum(log.forget(key) for key in sorted(person.keys))
        records = log.records()
        kept = [
            record
            for record in records
            if not any(
                person.mentions(record.get(part)) for part in ("teller", "to", "chain", "text")
            )  # as `forget_person.snapshot_change` does in the snapshots' copies
        ]
        if len(kept) != len(records):
            review.core.store.set(gossip.LOG_KEY, kept)
        return dropped + len(records) - len(kept)

    def forget_traces(self, memory: KeyValueStore, state: KeyValueStore, traces) -> int:
        records = list(memory.get(gossip.LOG_KEY) or [])
        kept = [record for record in records if not traces.found(record)]
        if len(kept) != len(records):
            memory.set(gossip.LOG_KEY, kept)
        return len(records) - len(kept)

    def field(self):
        return list[dict], Field(default_factory=list, max_length=gossip.MAX_LOG)

    def export(self, memory: KeyValueStore, state: KeyValueStore) -> list[dict]:
        return list(memory.get(gossip.LOG_KEY) or [])

    def write(self, section: list[dict], memory: KeyValueStore, state: KeyValueStore) -> None:
        if section:
            memory.set(gossip.LOG_KEY, section)


class SleepHistoryKind(ChunkedKind):
    name = "sleep_history"
    label = "sleeps"
    one = "sleep"
    prefix = SLEEP_HISTORY
    chunk = SLEEP_HISTORY_CHUNK
    on_state = True
    counts_as_held = False
    always_written = True
    id_pattern = re.compile(r"^s\d{1,9}$")

    def builder(self, brain, now: Callable[[], datetime]) -> BuildersSleeps:
        return BuildersSleeps(brain, now)

    def owns(self, key: str) -> bool:
        return False  # on the script's store, not the character's

    def check(self, section, known, problems) -> None:
        next_id_given(self.name, section, problems)


GOSSIP_LOG = GossipLogKind()
SLEEP_HISTORY_KIND = SleepHistoryKind()
