"""
The assistant character: it hears what happens around it and owns its memory.

Players reach it with Evennia's ordinary commands. `say` and `whisper` arrive through the
character's `at_msg_receive` hook, typed "say"/"whisper" by `at_say`; emotes ("pose") and
arrivals and departures ("move", "teleport", "traverse") arrive the same way; pages come through
the contrib's `page` command (stock `page` only reaches accounts). Each becomes an event on the
assistant's script.

`AssistantCharacterMixin` can be mixed into a game's own character class;
`AssistantCharacter` is the ready-made one.

"""

import re
from functools import lru_cache

from django.conf import settings
from evennia.objects.objects import DefaultCharacter
from evennia.utils import logger
from evennia.utils.ansi import strip_ansi

from .tools.base import ToolError

ASSISTANT_TAG = ("ai_assistant", "ai_assistant")
SCRIPT_KEY = "ai_assistant"
_SPEECH_RE = re.compile(r'"(?P<speech>.*)"\s*$', re.DOTALL)
_MOVE_TYPES = {"move", "teleport", "traverse"}
_DEFAULT_PERSONA = "A helpful assistant who lives in this game world."


def is_assistant(obj) -> bool:
    """Whether `obj` is an AI assistant: its typeclass has `AssistantCharacterMixin`.

    Asked of every speaker by every assistant that hears it, so it must not touch the database
    (a tag lookup for a tag an object lacks is a query each time). The `ai_assistant` tag is
    for searching.

    """
    return isinstance(obj, AssistantCharacterMixin)


def _plain(text) -> str:
    if isinstance(text, (tuple, list)):
        text = text[0] if text else ""
    return _plain_string(str(text or ""))


# a line said in a room reaches every assistant there as the same string: strip it once
@lru_cache(maxsize=512)
def _plain_string(text: str) -> str:
    return strip_ansi(text).strip()


@lru_cache(maxsize=512)
def _speech(plain: str) -> str:
    """The quoted words of a say or whisper line, else the whole line."""
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
        return [
            obj
            for obj in location.contents
            if obj != self.character and isinstance(obj, DefaultCharacter)
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
        self.character.at_say(text)

    def emote(self, action: str) -> None:
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
        receiver = self._find_present(target)
        self.character.at_say(text, whisper=True, receivers=[receiver])
        return receiver.key

    def look(self, target: str | None) -> str:
        location = self.character.location
        if not location:
            return "You are nowhere."
        obj = location
        if target:
            matches = self.character.search(target, location=location, quiet=True)
            if not matches:
                raise ToolError(f"you see no '{target}' here.")
            obj = matches[0]
        return _plain(self.character.at_look(obj))

    def present(self) -> list[str]:
        return [obj.key for obj in self._others()]

    def entity_key(self, name: str) -> tuple[str, str]:
        try:
            obj = self._find_present(name)
        except ToolError:
            clean = name.strip().lstrip("@")
            return f"name:{clean.lower()}", clean
        return f"#{obj.id}", obj.key


class AssistantCharacterMixin:
    """Makes a character an AI assistant. Mix into a character typeclass before its base."""

    def at_object_creation(self):
        super().at_object_creation()
        self.tags.add(ASSISTANT_TAG[0], category=ASSISTANT_TAG[1])
        if not self.db.persona:
            self.db.persona = _DEFAULT_PERSONA
        self.ensure_assistant_script()

    def at_init(self):
        super().at_init()
        self.ndb.present_ids = None
        self._presence()

    def at_post_move(self, source_location, move_type="move", **kwargs):
        super().at_post_move(source_location, move_type=move_type, **kwargs)
        self.ndb.present_ids = None
        self._presence()

    def _presence(self) -> set:
        """Ids of the others in the room, as this character last knew them."""
        if self.ndb.present_ids is None:
            self.refresh_presence()
        return self.ndb.present_ids

    def refresh_presence(self) -> None:
        """Learn who is in the room now (called at every tick as well as after moving).

        Who is present tells an arrival from a departure (both are announced while the mover
        is in the room). People can also appear or vanish without a move: logging in puts a
        character back into its room directly, logging out takes it out. Re-reading the room
        at each tick keeps that knowledge from going stale.

        """
        contents = self.location.contents if self.location else []
        self.ndb.present_ids = {obj.id for obj in contents if obj != self}

    def ensure_assistant_script(self):
        """The assistant's script, created if missing."""
        script = self.assistant_script
        if script is None:
            typeclass = getattr(
                settings, "AI_ASSISTANT_SCRIPT_TYPECLASS", "ai_assistant.scripts.AssistantScript"
            )
            self.scripts.add(typeclass, key=SCRIPT_KEY, autostart=True)
            script = self.assistant_script
        return script

    @property
    def assistant_script(self):
        """The assistant's script, remembered on this instance: looking it up is a query, and
        hearing asks for it once per listening assistant per line (a plain attribute, not
        `ndb`, whose handler costs more than the rest of hearing a line from an assistant)."""
        script = getattr(self, "_assistant_script", None)
        if script is None or not script.pk:
            scripts = self.scripts.get(SCRIPT_KEY)
            script = self._assistant_script = scripts[0] if scripts else None
        return script

    @property
    def assistant_world(self) -> CharacterWorld:
        return CharacterWorld(self)

    def at_msg_receive(self, text=None, from_obj=None, **kwargs):
        """Turn what this character is sent into events. Always lets the message through."""
        try:
            self._hear(text, from_obj, kwargs)
        except Exception:
            logger.log_trace(f"ai_assistant: {self.key} could not record what it heard")
        return True

    def _hear(self, text, from_obj, kwargs) -> None:
        # runs inside the speaker's command, once per assistant in the room: keep it cheap
        speaker = from_obj[0] if isinstance(from_obj, (list, tuple)) and from_obj else from_obj
        if speaker is None or speaker is self or not text:
            return
        script = self.assistant_script
        if script is None:
            return
        if is_assistant(speaker) and not script.hears_assistants():
            return  # before any other work: N assistants would otherwise do N x N
        options = text[1] if isinstance(text, (tuple, list)) and len(text) > 1 else {}
        msg_type = (options or {}).get("type") or kwargs.get("type")
        if msg_type in ("say", "whisper"):
            script.enqueue_event(msg_type, speaker, _speech(_plain(text)))
        elif msg_type == "pose":
            script.enqueue_event("emote", speaker, _plain(text))
        elif msg_type in _MOVE_TYPES:
            # departures are announced before the mover leaves, arrivals after it came: both
            # find it in the room, so tell them apart by who was known to be present
            present = self._presence()
            if speaker.id in present:
                present.discard(speaker.id)
                script.enqueue_event("depart", speaker, _plain(text))
            else:
                present.add(speaker.id)
                script.enqueue_event("arrive", speaker, _plain(text))
        elif msg_type == "page":
            script.enqueue_event("page", speaker, kwargs.get("ai_speech") or _plain(text))
        elif msg_type is None and hasattr(speaker, "sessions"):
            self._hear_presence_notice(script, speaker, text)

    def _hear_presence_notice(self, script, speaker, text) -> None:
        """An untyped notice from a character, such as "Bob has entered the game.": logging in
        and out moves no one through an exit, so it is told apart by the speaker's sessions
        (none left when logging out) and by who was known to be present."""
        present = self._presence()
        if not speaker.sessions.count():
            if speaker.id in present:
                present.discard(speaker.id)
                script.enqueue_event("depart", speaker, _plain(text))
        elif speaker.id not in present and speaker.location == self.location:
            present.add(speaker.id)
            script.enqueue_event("arrive", speaker, _plain(text))

    def hear(self, event_type: str, speaker, text: str, metadata: dict | None = None) -> None:
        """Queue an event on the assistant's script.

        Args:
            event_type (str): say, whisper, page, emote, arrive, depart or instruction.
            speaker (Object or str): Who it came from.
            text (str): What was said or done (truncated by the script if too long).
            metadata (dict, optional): e.g. {"urgent": True} or {"priority": 9}.

        """
        script = self.assistant_script
        if script is None:
            return
        script.enqueue_event(event_type, speaker, text, metadata=metadata)


class AssistantCharacter(AssistantCharacterMixin, DefaultCharacter):
    """A character driven by the AI assistant contrib."""
