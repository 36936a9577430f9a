"""
The assistants of a game: finding them by name and creating one.

An assistant is a character tagged `ASSISTANT_TAG` (its typeclass mixes in
`characters.AssistantCharacterMixin`), so finding them is one tag search, whatever their
typeclass.

"""

from evennia.utils import create, search

from . import game_settings
from .errors import Refused
from .handler import MAX_PERSONA_CHARS, AssistantHandler

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


def create_assistant(name: str, location, persona: str = "", typeclass: str | None = None):
    """Create an assistant character in `location`.

    Args:
        name (str): Its name.
        location (Object): The room.
        persona (str, optional): Who it is; a default persona when empty.
        typeclass (str, optional): Its typeclass; default `AI_ASSISTANT_TYPECLASS`.

    Returns:
        Object: The new assistant.

    Raises:
        Refused: If the persona is too long or the typeclass is not an assistant.

    """
    persona = (persona or "").strip()
    if len(persona) > MAX_PERSONA_CHARS:
        raise Refused(f"The persona is {len(persona)} characters; at most {MAX_PERSONA_CHARS}.")
    typeclass = typeclass or game_settings.assistant_typeclass()
    assistant = create.create_object(typeclass, key=name, location=location, home=location)
    if not hasattr(assistant, "assistant") or not isinstance(assistant.assistant, AssistantHandler):
        assistant.delete()
        raise Refused(
            f"{typeclass} is not an assistant typeclass: mix AssistantCharacterMixin into it."
        )
    if persona:
        assistant.db.persona = persona
    return assistant
