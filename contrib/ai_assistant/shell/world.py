"""
The world an assistant's tools act on: its character's own hooks, never commands.

`CharacterWorld` implements the core's `World` protocol (`ai_assistant.tools.base.World`) for an
Evennia character: speaking is `at_say`, an emote is `msg_contents` from the character, looking is
`at_look`. Tools act with the character's own rights: a whisper reaches only someone present,
`look` sees only what the character sees. Games that want their assistants to act differently
subclass it and return theirs from `AssistantHandler.make_world`.

"""

import re
from functools import lru_cache

from evennia.objects.objects import DefaultCharacter
from evennia.utils import search
from evennia.utils.ansi import strip_ansi

from ..tools.base import ToolError

_SPEECH_RE = re.compile(r'"(?P<speech>.*)"\s*$', re.DOTALL)


def plain(text) -> str:
    """The text of a message, without colour codes or surrounding space.

    Args:
        text (str or tuple): The message, or (message, options).

    Returns:
        str: The plain text.

    """
    if isinstance(text, (tuple, list)):
        text = text[0] if text else ""
    return plain_string(str(text or ""))


# a line said in a room reaches every assistant there as the same string: strip it once
@lru_cache(maxsize=512)
def plain_string(text: str) -> str:
    """A string without colour codes or surrounding space (cached).

    Args:
        text (str): The string.

    Returns:
        str: The plain string.

    """
    return strip_ansi(text).strip()


@lru_cache(maxsize=512)
def speech_of(plain: str) -> str:
    """The quoted words of a say or whisper line, else the whole line.

    Args:
        plain (str): The line, without colour codes.

    Returns:
        str: The speech.

    """
    match = _SPEECH_RE.search(plain)
    return match.group("speech") if match else plain


class CharacterWorld:
    """The `World` the tools act through: the character's own hooks, never commands."""

    def __init__(self, character):
        self.character = character

    def _others(self) -> list:
        location = self.character.location
        if not location:
            return []
        character = self.character
        # `is not`: Evennia keeps one instance per object, and its `!=` is a Python method
        # called once per object in the room
        return [
            obj
            for obj in location.contents
            if obj is not character and isinstance(obj, DefaultCharacter)
        ]

    def _find_present(self, name: str):
        name = name.strip().lstrip("@").lower()
        others = self._others()
        exact = [obj for obj in others if obj.key.lower() == name]
        if not exact:
            # aliases are a query per object: only when no name matched
            exact = [obj for obj in others if name in obj.aliases.all()]
        if len(exact) == 1:
            return exact[0]
        partial = [obj for obj in others if obj.key.lower().startswith(name)]
        if len(partial) == 1 and not exact:
            return partial[0]
        present = ", ".join(obj.key for obj in others) or "no one"
        if len(exact) > 1 or len(partial) > 1:
            raise ToolError(f"'{name}' could mean several people here: {present}.")
        raise ToolError(f"no one called '{name}' is here. Present: {present}.")

    def say(self, text: str) -> None:
        """Say something in the room, as the `say` command would.

        Args:
            text (str): What to say.

        """
        self.character.at_say(text)

    def emote(self, action: str) -> None:
        """Show an action to the room, starting with the character's name.

        Args:
            action (str): What the character does, e.g. "waves.".

        """
        location = self.character.location
        if location:
            # the action rides in the mapping: text in the template itself would be parsed
            # ($funcs, {keys}); the line always starts with the assistant's own name
            location.msg_contents(
                text=("{actor} {action}", {"type": "pose"}),
                from_obj=self.character,
                mapping={"actor": self.character, "action": action.strip()},
            )

    def whisper(self, target: str, text: str) -> str:
        """Whisper to one person in the room.

        Args:
            target (str): The person's name (a unique start of it is enough).
            text (str): What to whisper.

        Returns:
            str: The key of the person whispered to.

        Raises:
            ToolError: No one, or several people, match `target`.

        """
        receiver = self._find_present(target)
        self.character.at_say(text, whisper=True, receivers=[receiver])
        return receiver.key

    @property
    def own_key(self) -> str:
        """The assistant's own key ("#12"), as others know it."""
        return f"#{self.character.id}"

    def assistant_here(self, name: str) -> tuple[str, str]:
        """Another assistant in the room, awake, to tell something (the `tell` tool).

        Args:
            name (str): Its name (a unique start of it is enough).

        Returns:
            tuple: Its (key, name).

        Raises:
            ToolError: No one, or several, by that name here; not an assistant; asleep.

        """
        other = self._find_present(name)
        if getattr(other, "is_ai_assistant", False) is not True:
            raise ToolError(f"{other.key} is not an assistant: say it to them instead.")
        if other.assistant.brain.asleep:
            raise ToolError(f"{other.key} is asleep and would not hear it; nothing was told.")
        return f"#{other.id}", other.key

    def tell(self, key: str, text: str, told: dict) -> list[str]:
        """Say `text` aloud to another assistant, and hand every assistant in the room the
        telling (`memory.gossip`): each records it in code, if its gossip is on.

        Players present see the speech as any line said to someone. Assistants are sent no
        line: they get the telling itself, which starts no turn, so two assistants alone never
        answer each other's gossip.

        Args:
            key (str): The key of the assistant told ("#12").
            text (str): What is said, already cleaned for players.
            told (dict): The telling.

        Returns:
            list: The names of the assistants that recorded it.

        """
        character = self.character
        location = character.location
        others = self._others()
        receiver = next((obj for obj in others if f"#{obj.id}" == key), None)
        assistants = [obj for obj in others if getattr(obj, "is_ai_assistant", False) is True]
        if location:
            # the speech rides in the mapping: text in the template itself would be parsed
            location.msg_contents(
                text=('{actor} says to {receiver}, "{speech}"', {"type": "say"}),
                from_obj=character,
                exclude=[character, *assistants],
                mapping={"actor": character, "receiver": receiver or key, "speech": text},
            )
        witnesses = [f"#{obj.id}" for obj in others]
        recorded = []
        for obj in assistants:
            entry = obj.assistant.receive_gossip(
                told, addressed=obj is receiver, witnesses=witnesses
            )
            if entry is not None:
                recorded.append(obj.key)
        return recorded

    def page(self, key: str, text: str) -> str:
        """Page someone who is elsewhere (the answer to their page), as the contrib's `page`
        delivers a page: the line names the assistant, and the receiver alone sees it.

        Args:
            key (str): The person's dbref ("#12").
            text (str): What to page.

        Returns:
            str: The name of the person paged.

        Raises:
            ToolError: No character has that key.

        """
        found = [obj for obj in search.search_object(key) if isinstance(obj, DefaultCharacter)]
        if len(found) != 1:
            raise ToolError("they cannot be reached now.")
        receiver = found[0]
        # another assistant reads the words from `ai_speech` (as from the contrib's page); a
        # player's session gets only the line (an unknown keyword would reach its client)
        extra = {"ai_speech": text} if getattr(receiver, "is_ai_assistant", False) else {}
        receiver.msg(
            text=(f"{self.character.key} pages: {text}", {"type": "page"}),
            from_obj=self.character,
            **extra,
        )
        return receiver.key

    def look(self, target: str | None) -> str:
        """Look at the room, or at something in it.

        Args:
            target (str or None): What to look at; None for the room.

        Returns:
            str: What the character sees, without colour codes.

        Raises:
            ToolError: Nothing here matches `target`.

        """
        location = self.character.location
        if not location:
            return "You are nowhere."
        obj = location
        if target:
            matches = self.character.search(target, location=location, quiet=True)
            if not matches:
                raise ToolError(f"you see no '{target}' here.")
            obj = matches[0]
        return plain(self.character.at_look(obj))

    def present(self) -> list[str]:
        """The names of the other characters in the room.

        Returns:
            list: Their keys.

        """
        return [obj.key for obj in self._others()]

    def present_people(self) -> list[tuple[str, str]]:
        """The other characters in the room.

        Returns:
            list: (key, name) tuples: each one's dbref and name.

        """
        return [(f"#{obj.id}", obj.key) for obj in self._others()]

    def account_of(self, key: str) -> str | None:
        """The account that plays a character, so one player speaking through two characters
        counts as one voice (`memory.provenance.voice_of`).

        Args:
            key (str): The character's key ("#12"); a name key has no account.

        Returns:
            str or None: "account#<id>", or None when the key is not a character's or no
                account plays it now.

        """
        if not key.startswith("#") or not key[1:].isdigit():
            return None
        found = search.search_object(key)
        account = getattr(found[0], "account", None) if len(found) == 1 else None
        return f"account#{account.id}" if account is not None else None

    def entity_key(self, name: str) -> tuple[str, str]:
        """The key and name of a person: whoever is here by that name, else the one character
        in the game of that exact name, so an observation made while they are away lands in
        the same profile; else their name alone.

        Args:
            name (str): The person's name, as the model gave it.

        Returns:
            tuple: (key, name); the key is "#<id>" for a character, else "name:<name>".

        """
        try:
            obj = self._find_present(name)
        except ToolError:
            clean = name.strip().lstrip("@")
            found = [
                obj
                for obj in search.search_object(clean, exact=True)
                if isinstance(obj, DefaultCharacter) and obj.key.lower() == clean.lower()
            ]
            if len(found) == 1:
                return f"#{found[0].id}", found[0].key
            return f"name:{clean.lower()}", clean
        return f"#{obj.id}", obj.key

    def find_room(self, name: str) -> tuple[str, str]:
        """A room the character can walk to now, by name or alias (`agree_to_meet`): only
        rooms reached through exits its own rights pass, so no one can send it elsewhere.

        Args:
            name (str): The room's name or alias.

        Returns:
            tuple: `("#12", "Library")`.

        Raises:
            ToolError: No room it can reach has that name.

        """
        wanted = " ".join(name.split()).lower()
        for room in reachable_rooms(self.character):
            names = [room.key, *room.aliases.all()]
            if any(wanted == other.lower() for other in names):
                return room.dbref, room.key
        raise ToolError(f"You know no way to a place called {name[:60]!r} from here.")


def passable_exits(character, room) -> list[tuple]:
    """The exits out of a room that a character's own rights let it pass.

    Args:
        character (Object): Who walks.
        room (Object): The room.

    Returns:
        list[tuple]: `(exit, destination)` pairs.

    """
    return [
        (obj, obj.destination)
        for obj in room.exits
        if obj.destination and obj.access(character, "traverse")
    ]


def reachable_rooms(character, limit: int = 200) -> list:
    """The rooms a character can walk to from where it is, nearest first (itself included),
    through exits its rights pass, breadth first, at most `limit`.

    Args:
        character (Object): Who walks.
        limit (int, optional): The most rooms visited.

    Returns:
        list: The rooms.

    """
    start = character.location
    if start is None:
        return []
    seen, queue = [start], 0
    while queue < len(seen) and len(seen) < limit:
        for _, destination in passable_exits(character, seen[queue]):
            if destination not in seen and len(seen) < limit:
                seen.append(destination)
        queue += 1
    return seen
