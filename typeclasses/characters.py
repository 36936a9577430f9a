"""
The demo game's characters. Players are ordinary characters; the assistant NPC is the
contrib's assistant character (a game may instead mix `AssistantCharacterMixin` into its own).

"""

from evennia.objects.objects import DefaultCharacter

from ai_assistant.characters import AssistantCharacterMixin


class Character(DefaultCharacter):
    """A player character."""


class Assistant(AssistantCharacterMixin, Character):
    """An AI assistant NPC of this game."""
