"""The review log as a kind of memory: every correction a builder made, so that a rollback
keeps it (`memory.review`, which reads and writes it; its layout is said here, as the review
imports what forgetting a person does, which loops over the kinds)."""

from .base import ChunkedKind

# the audit trail's name: its records are `audit:meta` (the count) and `audit:000000`, ...
AUDIT = "audit"
AUDIT_META = f"{AUDIT}:meta"
AUDIT_CHUNK = 100


class ReviewLogKind(ChunkedKind):
    name = "review_log"
    label = "review records"
    one = "review record"
    prefix = AUDIT
    chunk = AUDIT_CHUNK
    counts_as_held = False


KIND = ReviewLogKind()
