"""
Builds the demo world: a reading room with the assistant Aria. Idempotent.

Called by `server/conf/at_initial_setup.py` on a server's first start, and by the headless demo.

"""

from evennia.objects.models import ObjectDB
from evennia.utils import create, search

ASSISTANT_NAME = "Aria"
PERSONA = (
    "Aria is the keeper of the Reading Room: warm, brief and a little bookish. She welcomes "
    "visitors, remembers names and what people ask her to keep in mind, and answers in one or "
    "two sentences."
)
ROOM_DESC = (
    "Tall shelves lean over a long oak table. A brass lamp hums above an open ledger where the "
    "keeper writes down what visitors tell her."
)


def build_demo_world(room=None):
    """Create the reading room (or use `room`) and its assistant; return (room, assistant)."""
    if room is None:
        room = ObjectDB.objects.get_id(2) or create.create_object(
            "typeclasses.rooms.Room", key="Reading Room"
        )
        room.key = "Reading Room"
    room.db.desc = ROOM_DESC
    found = [obj for obj in search.search_object(ASSISTANT_NAME) if obj.location == room]
    if found:
        return room, found[0]
    assistant = create.create_object(
        "typeclasses.characters.Assistant", key=ASSISTANT_NAME, location=room, home=room
    )
    assistant.db.persona = PERSONA
    assistant.db.desc = "A woman in ink-stained sleeves, a pencil tucked behind one ear."
    return room, assistant
