"""
Finding the game's assistants: one tag search, whatever their typeclass (`ai_assistant.assistants`
gives the same names to games).

"""

from evennia.utils import search

ASSISTANT_TAG = ("ai_assistant", "ai_assistant")


def find_assistants(name: str | None = None) -> list:
    """Every assistant in the game, or those called `name` (key, alias or dbref).

    Args:
        name (str, optional): What to match, case-insensitively.

    Returns:
        list: The matching assistant characters.

    """
    assistants = list(search.search_tag(ASSISTANT_TAG[0], category=ASSISTANT_TAG[1]))
    if name is None:
        return assistants
    wanted = name.strip().lower()
    return [
        obj
        for obj in assistants
        if obj.key.lower() == wanted or obj.dbref == name.strip() or wanted in obj.aliases.all()
    ]
