"""The review log as a kind of memory: every correction a builder made, so that a rollback
keeps it (`memory.review`, which reads and writes it; its layout is said here, as the review
imports what forgetting a person does, which loops over the kinds)."""

from collections.abc import Callable
from datetime import datetime

from .base import ChunkedKind

# the audit trail's name: its records are `audit:meta` (the count) and `audit:000000`, ...
AUDIT = "audit"
AUDIT_META = f"{AUDIT}:meta"
AUDIT_CHUNK = 100


class BuildersReviewLog:
    """The review log as builders read it (`MemoryAdmin.kind("review_log")`).

    Args:
        brain (Brain): The assistant's brain (its review).
        now (callable): `now()` -> the current real time.

    """

    def __init__(self, brain, now: Callable[[], datetime]):
        self.brain = brain
        self.now = now

    def count(self) -> int:
        """How many corrections are on record."""
        return len(self.brain.review.audit)

    def latest(self, limit: int = 50) -> list[dict]:
        """The latest recorded corrections (forgotten memories, trust settings, core notes
        pinned or removed), newest first.

        Args:
            limit (int, optional): How many at most.

        Returns:
            list: The corrections, as dicts.

        """
        return self.brain.review.history(limit)


class ReviewLogKind(ChunkedKind):
    name = "review_log"
    label = "review records"
    one = "review record"
    prefix = AUDIT
    chunk = AUDIT_CHUNK
    counts_as_held = False

    def builder(self, brain, now: Callable[[], datetime]) -> BuildersReviewLog:
        return BuildersReviewLog(brain, now)


KIND = ReviewLogKind()
