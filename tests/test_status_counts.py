"""
A status counts what an assistant holds kind by kind (`memory.kinds.sizes`): each kind of the
registry counts its own records, and the fields the pages read (`journal_size`,
`long_term_memories`) are two of those counts.

"""

from ai_assistant.memory.kinds import REGISTRY
from ai_assistant.memory_admin import MemoryAdmin
from ai_assistant.status import status_of

from .core_fakes import T0, make_assistant


def test_a_status_counts_each_kind_it_holds():
    brain = make_assistant()
    for text in ("Bob came in.", "Bob asked for the atlas.", "Alice left."):
        brain.journal.add(text, author="Aria", now=T0)
    brain.long_term.add(
        "Bob likes atlases.", importance=5, now=T0, source_entry_ids=["j000000"], provenance={}
    )
    brain.entities.observe("#12", "Bob", "Tall, asks for maps.", now=T0, author="Aria")
    MemoryAdmin(brain, now=lambda: T0).kind("reminders").add("Bob", "He owes a book.", 2, "Ann")

    status = status_of(brain, T0)

    assert status.memory["journal"] == 3
    assert status.memory["long_term"] == 1
    assert status.memory["profiles"] == 1
    assert status.memory["relationships"] == 0
    assert status.memory["reminders"] == 1
    assert (status.journal_size, status.long_term_memories) == (3, 1)
    # every kind a status shows is counted, in the registry's order; links are not (counting
    # them would read every link), nor sleep's progress marks
    shown = [kind.name for kind in REGISTRY if kind.in_status]
    assert list(status.memory) == shown
    assert "links" not in status.memory and "cursors" not in status.memory


def test_a_status_counts_the_memories_of_a_store_a_game_plugs_in():
    brain = make_assistant()

    class OwnStore:
        """A game's own long-term store (`handler.make_long_term_store`)."""

        def count(self):
            return 7

    brain.long_term = OwnStore()
    assert status_of(brain, T0).long_term_memories == 7
