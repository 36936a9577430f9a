"""The logs as kinds of memory: the gossip log (who told whom what: `memory.gossip`) and the
sleep history (`sleep_history`)."""

import re

from pydantic import Field

from ...state import SLEEP_HISTORY, SLEEP_HISTORY_CHUNK
from .. import gossip
from ..store import KeyValueStore
from .base import ChunkedKind, Kind, next_id_given


class GossipLogKind(Kind):
    name = "gossip_log"
    label = "gossip records"
    one = "gossip record"
    keys = re.compile(rf"^{re.escape(gossip.LOG_KEY)}$")
    forgotten_label = "gossip log records"

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

    def owns(self, key: str) -> bool:
        return False  # on the script's store, not the character's

    def check(self, section, known, problems) -> None:
        next_id_given(self.name, section, problems)


GOSSIP_LOG = GossipLogKind()
SLEEP_HISTORY_KIND = SleepHistoryKind()
