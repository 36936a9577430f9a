"""
Run by `test_new_kind.py` in a process of its own: a kind of memory that no module knows (places
the assistant visited, with whom) is added the way docs/architecture.md says, its module and one
line in the registry, before anything else imports the registry; then every operation across
kinds is run and what each did with the new kind is printed as JSON.

"""

import json
import re
import sys
from datetime import datetime, timezone
from typing import Annotated

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict

from ai_assistant.memory import kinds
from ai_assistant.memory.kinds.base import ChunkedKind

T0 = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc)


# ---- the new kind's module: its record, its layout, its share of forgetting a person ----------
@with_config(ConfigDict(strict=True))
class Place(TypedDict, total=False):
    """A place the assistant visited, and with whom (person keys)."""

    id: str
    name: Annotated[str, Field(min_length=1, max_length=80)]
    visited_with: list[Annotated[str, Field(max_length=200)]]


class PlacesKind(ChunkedKind):
    name = "places"
    label = "places"
    one = "place"
    prefix = "places"
    chunk = 50
    record_type = Place
    required = ("id", "name")
    id_pattern = re.compile(r"^p\d{6}$")
    forgotten_label = "places visited with them"

    def forget_person(self, review, person, state=None) -> int:
        items = self.items(review.core.store)
        every = items.all()
        kept = [p for p in every if not set(p.get("visited_with", [])) & set(person.keys)]
        if len(kept) != len(every):
            items.replace_all(kept)
        return len(every) - len(kept)


PLACES = PlacesKind()
# ---- the one line in the registry -------------------------------------------------------------
kinds.REGISTRY = (*kinds.REGISTRY, PLACES)
kinds.BY_NAME[PLACES.name] = PLACES

# nothing else is changed: the rest of the package is imported only now, as a game imports it
from ai_assistant.memory.store import ChunkedList  # noqa: E402
from ai_assistant.memory_api import AssistantMemory  # noqa: E402
from ai_assistant.status import status_of  # noqa: E402

ASSISTANT = {"name": "Aria", "dbref": "#5", "persona": "A librarian.", "settings": {}}
GAME = {"id": "game-new-kind", "name": "New kind"}

found = {}
memory = AssistantMemory("Aria")
memory.add_entry("Bob says hello.", time=T0, speaker="Bob")
places = ChunkedList(memory.brain.memory_store, "places", PlacesKind.chunk)
places.replace_all(
    [
        {"id": "p000000", "name": "the well", "visited_with": ["name:bob"]},
        {"id": "p000001", "name": "the tavern", "visited_with": ["name:carol"]},
    ]
)
data = memory.admin.export_data(dict(ASSISTANT), dict(GAME), [], [])
found["exported"] = data["memory"].get("places")
found["counts"] = dict(memory.brain and status_of(memory.brain, memory.now()).memory)

# the check: a bad record of the new kind is refused, naming where, and nothing changes
bad = json.loads(json.dumps(data))
bad["memory"]["places"]["items"][1]["name"] = "x" * 81
other = AssistantMemory("Mira")
try:
    other.admin.import_plan(json.dumps(bad), GAME["id"], False)
    found["bad_refused"] = None
except Exception as error:  # Refused
    found["bad_refused"] = str(error)
found["bad_changed"] = len(ChunkedList(other.brain.memory_store, "places", 50))

# an import writes it back
plan = other.admin.import_plan(json.dumps(data), GAME["id"], False)
other.admin.import_memory(plan, [])
found["imported"] = ChunkedList(other.brain.memory_store, "places", 50).all()

# forgetting a person removes their share of it
report = memory.admin.forget_person("Bob", by="Ann", reason="he asked", keys=["name:bob"])
found["after_forget"] = ChunkedList(memory.brain.memory_store, "places", 50).all()
found["report"] = str(getattr(report, "removed", report))[:400]

# a builder reaches a kind by its name; one with no builder's operations is refused by name
try:
    memory.admin.kind("places")
    found["builder"] = "reached"
except Exception as error:
    found["builder"] = str(error)

json.dump(found, sys.stdout)
