"""
The memory an assistant of version 1 wrote (issue 36's walls): one assistant holding every kind
of memory, its stores as stored and its memory file, kept in `tests/fixtures/` so that a later
layout of the code must read both as they were written.

`python -m tests.memory_fixture` (with the contrib on the path and the tests' settings) writes
the two files again; `tests/test_memory_walls.py` checks that the code of the day still writes,
reads and imports them the same.

"""

import json
from datetime import timedelta
from pathlib import Path

from ai_assistant.conf import config_keys
from ai_assistant.memory.digests import DayDigest
from ai_assistant.memory.relationships import Relationships
from ai_assistant.memory_api import AssistantMemory

from .core_fakes import T0

FIXTURES = Path(__file__).parent / "fixtures"
STORE_FILE = FIXTURES / "memory_store_v1.json"
MEMORY_FILE = FIXTURES / "memory_file_v1.json"
GAME = {"id": "game-walls", "name": "Walls"}
ASSISTANT = {"name": "Aria", "dbref": "#5", "persona": "A librarian.", "settings": {}}
EXPORTED_AT = "2026-01-02T00:00:00+00:00"
# what recall is asked of the memory, and by whom (None: a builder, who may see everything)
QUERIES = ("east door", "vault code brick", "fish market", "Carol", "lantern", "compass")
AUDIENCES = (None, ["name:carol"], ["#12"])


def remembering() -> AssistantMemory:
    """An assistant with every kind of memory: talk (a whisper among it), people, a
    relationship, gossip, a digest, core notes, reminders (one private), and a night's sleep
    (long-term memories, links, the review log, the sleep history and its snapshot)."""
    memory = AssistantMemory("Aria")
    memory._now = lambda: T0 + timedelta(minutes=30)  # a builder's edits are stamped with it
    brain = memory.brain
    memory.add_entry("Carol says the east door sticks in the rain.", time=T0, speaker="Carol")
    memory.add_entry(
        "Bob whispers that the vault code is hidden under the loose brick.",
        time=T0 + timedelta(minutes=1),
        speaker="#12",
        audience=["#12"],
        importance=8,
        account="account#3",
    )
    memory.add_entry(
        "Carol says the harbour fish market opens at dawn.",
        time=T0 + timedelta(minutes=2),
        speaker="Carol",
        importance=6,
    )
    memory.add_entry(
        "Bob lent you his lantern for the night walk.",
        time=T0 + timedelta(minutes=3),
        about=["#12"],
        importance=5,
    )
    memory.observe("Carol", "Carol smiles at every customer.", time=T0 + timedelta(minutes=4))
    brain.entities.observe(
        "#12", "Bob", "Bob fears the dark.", now=T0, author="Aria", audience=["#12"]
    )
    Relationships(brain.memory_store).change(
        "#12", "Bob", "warmth", value=0.5, reason="lent his lantern", at=T0, by="sleep"
    )
    brain.gossip_log.add(
        {
            "at": "2026-01-01T00:00:00+00:00",
            "direction": "heard",
            "teller": "Mira",
            "text": "Bob found a silver compass",
            "people": ["#12", "#40"],
        }
    )
    memory.admin.kind("core_notes").set("motto", "books first", by="Builder")
    memory.admin.kind("reminders").add(
        "festival", "Tell them about the harvest festival.", 3, "Builder"
    )
    memory.consolidate(T0 + timedelta(hours=1))
    brain.digests.add(
        DayDigest(summary="A day of doors, markets and a borrowed lantern."),
        day="2026-01-01",
        audience=None,
        entries=brain.journal.all()[:3],
        now=T0 + timedelta(hours=2),
    )
    return memory


def plain(value):
    """`value` as JSON gives it back (tuples become lists)."""
    return json.loads(json.dumps(value))


def stores(memory: AssistantMemory) -> dict:
    """Both stores of an assistant, as stored: its character's memory and its script's."""
    brain = memory.brain
    return plain({"memory": brain.memory_store.inner.data, "state": brain.state.data})


def exported(memory: AssistantMemory) -> dict:
    """The assistant's memory file (as `export_data` makes it, at a fixed time)."""
    data = memory.admin.export_data(dict(ASSISTANT), dict(GAME), [], config_keys())
    return plain({**data, "exported_at": EXPORTED_AT})


def write() -> None:
    """Write both fixtures again (only when the walls are meant to move: never in issue 36)."""
    memory = remembering()
    FIXTURES.mkdir(exist_ok=True)
    STORE_FILE.write_text(json.dumps(stores(memory), indent=1) + "\n")
    MEMORY_FILE.write_text(json.dumps(exported(memory), indent=1) + "\n")


if __name__ == "__main__":
    write()
