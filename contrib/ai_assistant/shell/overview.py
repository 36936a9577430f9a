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
from .assembly import EvenniaGameClock
from .assembly import chat_model_for
from ..events import EventQueue
from .game_settings import redacted
from ..lifecycle import AWAKE
from ..memory.turn_log import NewestFirst, TurnLog
from ..state import MODE, PAUSED, TICK_ERRORS, TICKER_SUBSCRIPTION
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
        model = chat_model_for(self.assistant._config())
        if game_settings.rehearsal():
            # AI_ASSISTANT_REHEARSAL: no endpoint is called, whatever the settings name
            return (
                f"{model}, in process (the offline REHEARSAL model: simple rules, not intelligence)"
            )
        endpoint = game_settings.base_url() or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        return f"{model} at {redacted(endpoint)}"

    def recent_turns(self) -> NewestFirst:
        """The turn log's turns (the last `state.TURN_LOG_KEPT` at least), newest first.

        Returns:
            NewestFirst: A sequence (length, index, slice: a page reads only its chunks) of
                dicts with the turn's time, events, model calls, tools, stop reason, error
                (redacted), what it heard and did, the model's own texts and the prompt's
                shape in tokens (see `TurnOutcome.summary`).

        """
        return TurnLog(self.assistant.brain.state).newest_first()

    def transitions(self, limit: int = 200) -> list[dict]:
        """The last falls asleep and wakings, oldest first (the dashboard's timeline).

        Args:
            limit (int, optional): How many at most.

        Returns:
            list: Transition records.

        """
        return self.assistant.brain.lifecycle.log().tail(limit)

    def next_request(self, recall_limit: int | None = None) -> dict:
        """The next request laid open in its parts, as a builder sees it (every audience, as
        `served=None` composes it): read only, nothing is queued, sent or stored.

        Args:
            recall_limit (int, optional): How many memories to recall for the waiting events
                (by default the assistant's `recall_limit`).

        Returns:
            dict: "system" (the system prompt's message), "core" (the core memory message or
                None), "tools" (tool schemas), "history" (messages), "events" (the queued
                events, oldest first), "unqueued" (lines heard since the last tick),
                "recalled" (`Recalled` items for the events' text, lexical pass), "query",
                "tokens" (per part: system, core, tools, history, events, total), "budget"
                (`llm.calibration.Calibration.context_budget`) and "model".

        """
        assistant = self.assistant
        brain = assistant.brain
        counter = brain.counter
        request = brain.build_request([])
        messages = list(request.messages)
        system = messages[0] if messages else None
        core_notes = brain.core_memory.items(None)
        core = messages[1] if core_notes and len(messages) > 1 else None
        history = messages[2 if core is not None else 1 :]
        events = brain.events.peek()
        query = " ".join(event.text for event in events if event.type != "notice")
        limit = brain.config.recall_limit if recall_limit is None else recall_limit
        recalled = []
        if query.strip() and limit:
            recalled = assistant.memory.admin.search(
                assistant.memory.admin.search_query(query[:500]), None, limit=limit
            )
        tokens = {
            "system": counter.count_messages([system]) if system else 0,
            "core": counter.count_messages([core]) if core else 0,
            "tools": counter.count_tools(request.tools or []),
            "history": counter.count_messages(history) if history else 0,
            "events": sum(counter.count_text(f"{e.speaker}: {e.text}") for e in events),
            "recalled": sum(counter.count_text(item.text) for item in recalled),
        }
        tokens["total"] = sum(tokens.values())
        return {
            "system": system,
            "core": core,
            "tools": list(request.tools or []),
            "history": history,
            "events": events,
            "unqueued": len(assistant.hearing),
            "recalled": recalled,
            "query": query,
            "tokens": tokens,
            "budget": brain.calibration.context_budget(),
            "model": brain.model,
        }

    def game_now(self):
        """The game's time now, as the sleep schedule reads it (the handler's game clock).

        Returns:
            datetime: The game time.

        """
        return (self.assistant.game_clock or EvenniaGameClock()).now()

    def memory_item(self, memory_id: str) -> dict | None:
        """One memory of any kind (journal entry, long-term memory, observation, attribute,
        digest) as recall sees it, for a builder about to correct it.

        Args:
            memory_id (str): Its id (`j000012`, `m000003`, `#12/o3`, ...).

        Returns:
            dict or None: "id", "kind", "text", "time", "importance", "audience", "trust",
                "entry_ids"; None when recall knows no such memory.

        """
        doc = self.assistant.brain.index.doc(str(memory_id))
        if doc is None:
            return None
        return {
            "id": doc.id,
            "kind": doc.kind,
            "text": doc.text,
            "time": doc.time,
            "importance": doc.importance,
            "audience": doc.audience,
            "trust": doc.trust,
            "entry_ids": list(doc.entry_ids),
        }

    def costs(self) -> dict:
        """What the model use cost, per hour and per day, by the game's price table
        (`AI_ASSISTANT_PRICES`, see `game_settings.prices`).

        Returns:
            dict: "price" ((input, output) per million tokens, or None when the model has no
                price), "model", "hours" (hour -> money), "days" (day -> money), "total".

        """
        brain = self.assistant.brain
        price = game_settings.price_of(brain.model)
        hours, days = {}, {}
        if price is not None:
            for hour, counts in sorted(self.usage_by_hour().items()):
                money = (
                    counts.get("prompt", 0) * price[0] + counts.get("completion", 0) * price[1]
                ) / 1_000_000
                hours[hour] = money
                days[hour[:10]] = days.get(hour[:10], 0.0) + money
        return {
            "price": price,
            "model": brain.model,
            "hours": hours,
            "days": days,
            "total": sum(hours.values()),
        }

    def cost_so_far(self, usage) -> dict | None:
        """What the model use cost in all and on this real day, by the game's price table
        (`@assistant/status`'s line; the dashboard shows it per hour and per day).

        Args:
            usage (UsageStats): The assistant's usage (its prompt and completion tokens).

        Returns:
            dict or None: "model", "price" (per million prompt and completion tokens),
                "total" (all the tokens counted) and "today" (this UTC day's, from the use
                per hour); None when the model has no price.

        """
        model = self.assistant.brain.model
        price = game_settings.price_of(model)
        if price is None:
            return None
        today = self.assistant.now().strftime("%Y-%m-%d")
        total = (usage.prompt_tokens * price[0] + usage.completion_tokens * price[1]) / 1_000_000
        return {
            "model": model,
            "price": price,
            "total": total,
            "today": self.costs()["days"].get(today, 0.0),
        }

    def usage_by_hour(self) -> dict[str, dict]:
        """Model calls and tokens per real hour, the last week (the dashboard's chart).

        Returns:
            dict: Hour -> counts.

        """
        return self.assistant.brain.usage_by_hour()
