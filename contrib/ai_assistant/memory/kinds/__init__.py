"""
The kinds of memory, one object each (`base.Kind`), in the order a memory file lists them: the
operations across kinds (the memory file's export, check and write in `memory.transfer`, the
counts an import asks about, the counts a status shows: `sizes`, forgetting a person's traces)
loop over `REGISTRY`, as sleep's dreaming loops over its steps.

Each kind's module says its storage layout (from its store's module, where the keys are
spelled), its record type (`records`) and its share of each operation. To add a kind: a module
here with a `Kind`, and one line below (docs/architecture.md, "How to add a kind of memory").

"""

from . import core_notes, cursors, digests, groups, journal, links, logs, long_term, people
from . import reminders, review_log
from .base import Kind

REGISTRY: tuple[Kind, ...] = (
    journal.KIND,
    long_term.KIND,
    links.KIND,
    people.PROFILES,
    people.RELATIONSHIPS,
    digests.KIND,
    core_notes.KIND,
    review_log.KIND,
    logs.GOSSIP_LOG,
    groups.KIND,
    reminders.KIND,
    logs.SLEEP_HISTORY_KIND,
    cursors.KIND,
)
BY_NAME: dict[str, Kind] = {kind.name: kind for kind in REGISTRY}
# the keys of the character's store a first turn reads: created empty with the character
# (`characters.AssistantCharacterMixin`), so the first turn finds them in one query
FIRST_READ: tuple[str, ...] = tuple(key for kind in REGISTRY for key in kind.first_read)


def sizes(brain) -> dict[str, int]:
    """How many records of each kind a brain holds now, for a status (`Kind.in_status`).

    Args:
        brain (Brain): The assistant's brain.

    Returns:
        dict: Counts keyed by kind, in `REGISTRY` order.

    """
    return {kind.name: kind.size(brain) for kind in REGISTRY if kind.in_status}
