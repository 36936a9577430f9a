"""
What a list, `@assistant/status` and the dashboard read of an assistant besides its status: a
line for a list of assistants, the model it calls, its last turns, its falls asleep and
wakings, its model use per hour.

`Overview` is one part of the assistant's handler (`character.assistant.overview`). It only
reads: nothing here writes, queues or starts anything. It is given the handler (the door it
hangs from) and uses only what the door offers; it imports nothing of it.

"""

import os

from . import game_settings
from .events import EventQueue
from .game_settings import redacted
from .lifecycle import AWAKE
from .state import MODE, PAUSED, RECENT_TURNS, TICK_ERRORS, TICKER_SUBSCRIPTION
from .storage import AttributeStore

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class Overview:
    """The read-only views of one assistant.

    Args:
        assistant (AssistantHandler): The assistant's handler (its script, brain,
            configuration, heard lines, and whether work is in flight).

    """

    def __init__(self, assistant):
        self.assistant = assistant

    def summary(self) -> dict:
        """A line's worth for a list of assistants, read from the script alone: it writes
        nothing, queues nothing and builds no brain.

        Returns:
            dict: "mode", "paused", "tick_rate", "errors" (tick errors), "in_flight" and
                "pending" (lines heard but not yet queued, plus the queue's length).

        """
        assistant = self.assistant
        script = assistant.script
        attributes = script.attributes
        subscription = attributes.get(TICKER_SUBSCRIPTION) or {}
        return {
            "mode": attributes.get(MODE) or AWAKE,
            "paused": bool(attributes.get(PAUSED)),
            "tick_rate": subscription.get("interval"),
            "errors": attributes.get(TICK_ERRORS) or 0,
            "in_flight": assistant.in_flight,
            "pending": len(EventQueue(AttributeStore(script))) + len(assistant.hearing),
        }

    def model_in_use(self) -> str:
        """The chat model this assistant calls, and where.

        Returns:
            str: e.g. "gpt-4o-mini at https://api.openai.com/v1", marked when it is the offline
                rehearsal model; the endpoint redacted like any text shown.

        """
        # the configuration in force, cheaply: a list of assistants builds no brain for it
        model = self.assistant._config().effective_model(game_settings.chat_model())
        endpoint = game_settings.base_url() or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        text = f"{model} at {redacted(endpoint)}"
        if game_settings.rehearsal():
            text += " (the offline REHEARSAL model: simple rules, not intelligence)"
        return text

    def recent_turns(self) -> list[dict]:
        """Summaries of the last few awake turns, newest first.

        Returns:
            list: Dicts with the turn's time, events, model calls, tools, stop reason, error
                (redacted) and the prompt's shape in tokens (see `TurnOutcome.prompt_shape`).

        """
        return list(reversed(self.assistant.brain.state.get(RECENT_TURNS) or []))

    def transitions(self, limit: int = 200) -> list[dict]:
        """The last falls asleep and wakings, oldest first (the dashboard's timeline).

        Args:
            limit (int, optional): How many at most.

        Returns:
            list: Transition records.

        """
        return self.assistant.brain.lifecycle.log().tail(limit)

    def usage_by_hour(self) -> dict[str, dict]:
        """Model calls and tokens per real hour, the last week (the dashboard's chart).

        Returns:
            dict: Hour -> counts.

        """
        return self.assistant.brain.usage_by_hour()
