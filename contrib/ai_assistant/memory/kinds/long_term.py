"""Long-term memories as a kind of memory: what sleep drew from the journal
(`memory.semantic`)."""

import re

from ...records import LongTermMemory
from .. import semantic
from .base import ChunkedKind, refs


class LongTermKind(ChunkedKind):
    name = "long_term"
    label = "long-term memories"
    one = "long-term memory"
    prefix = semantic.MEMORIES
    chunk = semantic.CHUNK
    record_type = LongTermMemory
    required = ("text",)
    id_pattern = re.compile(r"^m\d{6,}$")
    positional = "m"

    def export(self, memory, state) -> dict:
        section = super().export(memory, state)
        # embeddings belong to one model: found by their words until made again
        section["items"] = [{**item, "vector": None} for item in section["items"]]
        return section

    def check(self, section, known, problems) -> None:
        super().check(section, known, problems)
        for number, item in enumerate(section.items):
            where = f"memory.long_term.items[{number}]"
            if item.get("vector") is not None:
                problems.append(f"{where}.vector: null (embeddings are made again, never imported)")
            refs(
                item.get("source_entry_ids"),
                known["journal"],
                f"{where}.source_entry_ids",
                problems,
            )


KIND = LongTermKind()
