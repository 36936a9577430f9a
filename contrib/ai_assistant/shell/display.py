"""
How `@assistant` shows things: tables, statuses, listings. Formatting only, free of side
effects: every method takes the data the command read through the assistant's handler, and
returns text.

`AssistantDisplay` is a mixin of the builder command (`commands.CmdAssistant`); a game that
wants its listings drawn otherwise subclasses the command and overrides the `format_*` method
it wants. It gathers the displays of each part, one module each: `status_display` (how
assistants are doing), `settings_display`, `memory_display` (what one remembers),
`people_display` (whom it knows) and `lore_display`. What players and the model wrote reaches a
builder's screen through `screen` (every stored string cropped and shown as typed, every list a
player can grow paged); times as `time_display` shows them.

"""

from .lore_display import LoreDisplay
from .memory_display import MemoryDisplay
from .people_display import PeopleDisplay
from .settings_display import SettingsDisplay
from .status_display import StatusDisplay


class AssistantDisplay(StatusDisplay, SettingsDisplay, MemoryDisplay, PeopleDisplay, LoreDisplay):
    """The `format_*` methods of the builder command: data in, text out."""
