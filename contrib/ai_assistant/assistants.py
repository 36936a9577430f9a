"""
The assistants of a game: finding them by name and creating one.

An assistant is a character tagged `ASSISTANT_TAG` (its typeclass mixes in
`characters.AssistantCharacterMixin`), so finding them is one tag search, whatever their
typeclass (`shell.finding`, which the shell's own modules use; both names are importable from
here).

"""

from evennia.utils import create

from .errors import Refused
from .handler import MAX_PERSONA_CHARS, AssistantHandler
from .shell import game_settings
from .shell.finding import ASSISTANT_TAG, find_assistants  # noqa: F401 (their public place)


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


def assistant_holdings(assistant) -> dict[str, int]:
    """What an assistant holds that deleting it removes, counted (without building a brain
    beyond what the memory views read).

    Args:
        assistant (Object): The assistant character.

    Returns:
        dict: "journal entries", "memories", "people", "snapshots" -> counts.

    """
    memory = assistant.assistant.memory
    return {
        "journal entries": len(memory.admin.kind("journal").newest()),
        "memories": len(memory.admin.kind("long_term").newest()),
        "people": len(memory.admin.kind("profiles").index()),
        "snapshots": len(memory.admin.snapshots()),
    }


def delete_assistant(assistant) -> dict[str, int]:
    """Delete an assistant and everything it holds: its ticker subscription, its script (the
    queue, history and snapshots on it) and its character with the journal, memories and
    profiles kept on it as Attributes.

    Args:
        assistant (Object): The assistant character.

    Returns:
        dict: What it held (see `assistant_holdings`).

    Raises:
        Refused: A model call of its is in flight (its answer would land on nothing); or it
            is already gone.

    """
    if not assistant.pk:
        raise Refused("That assistant is already gone.")
    handler = assistant.assistant
    if handler.in_flight:
        raise Refused(
            f"{assistant.key} is waiting on the model; try again when the call is done "
            f"(@assistant/pause {assistant.dbref} stops new ones)."
        )
    held = assistant_holdings(assistant)
    for script in assistant.scripts.all():
        # removed with the arguments it was added with (the script keeps them), before the
        # script goes: a subscription left behind would call a deleted script every tick
        if hasattr(script, "remove_ticker"):
            script.remove_ticker()
    # Evennia deletes the character's scripts and Attributes with it
    assistant.delete()
    return held


def person_of(who) -> tuple[list[str], list[str]]:
    """The keys and names a person is known by, from their character or their account.

    Args:
        who (Object, Account or str): A character (its dbref, its account, its name and
            aliases), an account (`account#<id>` and every character it plays), or a name.

    Returns:
        tuple: (keys, names).

    """
    if isinstance(who, str):
        return [], [who.strip()[:80]]
    if hasattr(who, "characters") or hasattr(who, "db_is_connected"):  # an account
        characters = getattr(who, "characters", None)
        characters = characters.all() if hasattr(characters, "all") else list(characters or [])
        keys, names = [f"account#{who.id}"], []
        for character in characters:
            more_keys, more_names = person_of(character)
            keys += more_keys
            names += more_names
        return keys, names
    keys = [who.dbref]
    account = getattr(who, "account", None)
    if account is not None:
        keys.append(f"account#{account.id}")
    return keys, [who.key, *who.aliases.all()]


def forget_person(who, assistants=None, by: str = "the game", reason: str = "") -> dict:
    """Make every assistant (or those given) forget everything about a person: what they
    said, what is about them, their whispers, profile, relationship and gossip, what was drawn
    from those, their reminders, queued lines and traces in snapshots (recorded in each
    assistant's review log; a rollback does not bring them back). A game's own command can
    call it on a player's request (docs/using.md, Forgetting a player).

    Args:
        who (Object, Account or str): The person: a character, an account (all its
            characters) or a name (`person_of`).
        assistants (list, optional): The assistant characters; every assistant by default.
        by (str, optional): Who asked, kept in the review log.
        reason (str, optional): Why, kept in the review log.

    Returns:
        dict: Assistant name -> `memory.forget_person.PersonForgotten` (what was forgotten,
            `counts`, and what remains, `remains`, by id), or the `Refused` of one that could
            not forget now (in the middle of a turn: call again for it).

    """
    keys, names = person_of(who)
    done = {}
    for assistant in find_assistants() if assistants is None else assistants:
        try:
            done[assistant.key] = assistant.assistant.memory.forget_person(
                None, by, reason, keys=keys, names=names
            )
        except Refused as err:
            done[assistant.key] = err
    return done
