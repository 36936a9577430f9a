"""
The assistant character: a character whose handler (`character.assistant`) hears and acts.

Players reach it with Evennia's ordinary commands. `say` and `whisper` arrive through the
character's `at_msg_receive` hook, typed "say"/"whisper" by `at_say`; emotes ("pose") and
arrivals and departures ("move", "teleport", "traverse") arrive the same way; pages come through
the contrib's `page` command (stock `page` only reaches accounts). The handler turns each into an
event for the assistant's next tick.

`AssistantCharacterMixin` can be mixed into a game's own character class (before its base);
`AssistantCharacter` is the ready-made one.

"""

from evennia.objects.objects import DefaultCharacter
from evennia.utils import logger
from evennia.utils.utils import lazy_property

from .assistants import ASSISTANT_TAG
from .handler import DEFAULT_PERSONA, AssistantHandler
from .memory.kinds import FIRST_READ
from .shell.storage import MEMORY_CATEGORY


class AssistantCharacterMixin:
    """Makes a character an AI assistant. Mix into a character typeclass before its base.

    To customise the assistant (its tools, world, long-term store or system prompt), subclass
    `AssistantHandler` and override `assistant` to return yours.

    """

    # a class attribute, so asking "is this speaker an assistant?" never touches the database
    is_ai_assistant = True

    @lazy_property
    def assistant(self) -> AssistantHandler:
        """The way into this assistant (see `ai_assistant.handler`)."""
        return AssistantHandler(self)

    def at_object_creation(self):
        """Tag the character as an assistant, give it a persona and create its script."""
        super().at_object_creation()
        self.tags.add(ASSISTANT_TAG[0], category=ASSISTANT_TAG[1])
        for key in FIRST_READ:
            self.attributes.add(key, None, category=MEMORY_CATEGORY)
        if not self.db.persona:
            self.db.persona = DEFAULT_PERSONA
        self.assistant.script  # created with its ticker

    def at_init(self):
        """Learn who is in the room when the character is loaded."""
        super().at_init()
        self.assistant.hearing.refresh_presence()

    def at_post_move(self, source_location, move_type="move", **kwargs):
        """Learn who is in the new room after moving.

        Args:
            source_location (Object): Where the character came from.
            move_type (str, optional): How it moved.
            **kwargs: Passed on to the parent hook.

        """
        super().at_post_move(source_location, move_type=move_type, **kwargs)
        self.assistant.hearing.refresh_presence()

    def at_msg_receive(self, text=None, from_obj=None, **kwargs):
        """Hear what this character is sent. Always lets the message through.

        Args:
            text (str or tuple, optional): The message, or (message, options).
            from_obj (Object or list, optional): Who sent it.
            **kwargs: The message's other keywords, which may give its type.

        Returns:
            bool: Always True.

        """
        try:
            self.assistant.hearing.receive(text, from_obj, kwargs)
        except Exception:
            logger.log_trace(f"ai_assistant: {self.key} could not record what it heard")
        return True


class AssistantCharacter(AssistantCharacterMixin, DefaultCharacter):
    """A character driven by the AI assistant contrib."""
