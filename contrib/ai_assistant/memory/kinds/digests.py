"""Day digests as a kind of memory: a day's summary, by audience (`memory.digests`)."""

import re
from typing_extensions import TypedDict  # pydantic on Python 3.11 needs this one

from ...records import Count, Text, check_record
from ..digests import DigestArchive
from .base import ChunkedKind, next_id_given, refs


class DigestsState(TypedDict, total=False):
    """The small values kept with the digests."""

    next_seq: Count
    last_day: Text | None
    next_id: Count


class DigestsKind(ChunkedKind):
    name = "digests"
    label = "digests"
    one = "digest"
    prefix = DigestArchive.NAME
    chunk = DigestArchive.CHUNK
    id_pattern = re.compile(r"^d\d{6,}$")

    def check(self, section, known, problems) -> None:
        for number, digest in enumerate(section.items):
            where = f"memory.digests.items[{number}].entry_ids"
            refs(digest.get("entry_ids"), known["journal"], where, problems)
        problems.extend(check_record(DigestsState, section.state, "memory.digests.state"))
        next_id_given(self.name, section, problems)


KIND = DigestsKind()
