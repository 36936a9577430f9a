"""The logs as kinds of memory: the review log (every correction, so a rollback keeps it:
`memory.review`), the gossip log (who told whom what: `memory.gossip`) and the sleep history
(`sleep_history`)."""

import re

from pydantic import Field

from ... import sleep_history
from ...state import SLEEP_HISTORY
from .. import gossip, review
from ..store import KeyValueStore
from .base import ChunkedKind, Kind, next_id_given


class ReviewLogKind(ChunkedKind):
    name = "review_log"
    label = "review records"
    prefix = review.AUDIT
    chunk = review.AUDIT_CHUNK
    counts_as_held = False


class GossipLogKind(Kind):
    name = "gossip_log"
    label = "gossip records"
    keys = re.compile(rf"^{re.escape(gossip.LOG_KEY)}$")

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
    prefix = SLEEP_HISTORY
    chunk = sleep_history.CHUNK
    on_state = True
    counts_as_held = False
    always_written = True
    id_pattern = re.compile(r"^s\d{1,9}$")

    def owns(self, key: str) -> bool:
        return False  # on the script's store, not the character's

    def check(self, section, known, problems) -> None:
        next_id_given(self.name, section, problems)


REVIEW_LOG = ReviewLogKind()
GOSSIP_LOG = GossipLogKind()
SLEEP_HISTORY_KIND = SleepHistoryKind()
