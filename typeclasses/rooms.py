"""The demo game's rooms."""

from evennia.objects.objects import DefaultRoom


class Room(DefaultRoom):
    """A room."""
