"""
In-process stand-ins for the pure-core tests: a world that records what the assistant did and a
model that answers from a script. No database, no HTTP.

"""

import json
import threading
import time
from datetime import datetime, timezone

from ai_assistant import lifecycle as life
from ai_assistant.events import EventQueue, make_event
from ai_assistant.awake.turn import awake_tick
from ai_assistant.agent.brain import Brain
from ai_assistant.conf import AssistantConfig
from ai_assistant.llm.chat import ChatReply, LLMError, TokenUsage, ToolCall
from ai_assistant.driver import drive, inline
from ai_assistant.memory.store import DictStore
from ai_assistant.tools import default_registry
from ai_assistant.testing.scripted import ScriptedModel  # noqa: F401 (tests import it here)
from ai_assistant.sleep.dreaming import Budget
from ai_assistant.tools.base import ToolError

T0 = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc)


class FakeWorld:
    def __init__(self, present=("Alice", "Bob")):
        self.people = list(present)
        self.said: list[str] = []
        self.emotes: list[str] = []
        self.whispers: list[tuple[str, str]] = []
        self.pages: list[tuple[str, str]] = []

    def say(self, text):
        self.said.append(text)

    def emote(self, action):
        self.emotes.append(action)

    def whisper(self, target, text):
        for person in self.people:
            if person.lower() == target.lower():
                self.whispers.append((person, text))
                return person
        raise ToolError(f"no one called '{target}' is here. Present: {', '.join(self.people)}.")

    def page(self, key, text):
        name = key.removeprefix("name:").capitalize()
        self.pages.append((name, text))
        return name

    def look(self, target):
        return f"A quiet room. Here: {', '.join(self.people)}."

    def present(self):
        return list(self.people)

    def present_people(self):
        return [(f"name:{person.lower()}", person) for person in self.people]

    def entity_key(self, name):
        return f"name:{name.lower()}", name


def reply(*calls, content=None, finish_reason="tool_calls", refusal=None, prompt=100):
    tool_calls = [
        ToolCall(
            id=f"c{i}", name=name, arguments=args if isinstance(args, str) else json.dumps(args)
        )
        for i, (name, args) in enumerate(calls)
    ]
    return ChatReply(
        content=content,
        tool_calls=tool_calls,
        finish_reason=finish_reason if tool_calls else (finish_reason or "stop"),
        refusal=refusal,
        usage=TokenUsage(prompt=prompt, completion=10, cached=0),
    )


def make_assistant(model=None, world=None, embedding_model=None, chat_model="test-model", **config):
    return Brain(
        name="Aria",
        persona="A librarian.",
        config=AssistantConfig(**config),
        model=chat_model,
        state=DictStore(),
        memory_store=DictStore(),
        world=world or FakeWorld(),
        registry=default_registry(),
        client_factory=model or ScriptedModel(),
        location="Library",
        embedding_model=embedding_model,
    )


def hear(assistant, text, event_type="say", speaker="Alice", now=T0, **kwargs):
    queue = EventQueue(assistant.state)
    event = make_event(
        event_id=queue.next_id(),
        event_type=event_type,
        speaker=speaker,
        text=text,
        now=now,
        assistant_names=[assistant.name],
        max_chars=assistant.config.max_event_chars,
        location=assistant.location,
        **kwargs,
    )
    queue.push(event, assistant.config.max_pending_events)
    return event


def run_tick(assistant, now=T0):
    """Run one awake tick inline; return the TurnOutcome, or None when no turn was needed."""
    turn = awake_tick(assistant, now)
    if turn is None:
        return None
    results = []
    drive(turn, inline).addBoth(results.append)
    return results[0]


def run(work, runner=inline):
    """Drive work (a turn or a sleep tick's generator) to its end; return its result, or raise
    what it raised."""
    results = []
    drive(work, runner).addBoth(results.append)
    result = results[0]
    if hasattr(result, "raiseException"):
        result.raiseException()
    return result


# ---- sleep-time helpers shared by the sleep, dreaming, digest and trust tests ----------


def json_reply(text: str):
    return ChatReply(
        content=text,
        tool_calls=[],
        finish_reason="stop",
        usage=TokenUsage(prompt=50, completion=20),
    )


def drive_inline(work):
    results = []
    drive(work, inline).addBoth(results.append)
    return results[0]


def active(assistant, activity=10):
    assistant.state.set(life.ACTIVITY, activity)
    return assistant


def scores(*pairs):
    items = ", ".join(f'{{"entry_id": "{i}", "importance": {v}}}' for i, v in pairs)
    return json_reply(f'{{"scores": [{items}]}}')


def facts(*pairs):
    items = ", ".join(
        '{"entry_id": "%s", "facts": [%s]}' % (i, ", ".join(f'"{f}"' for f in fs))
        for i, fs in pairs
    )
    return json_reply(f'{{"entries": [{items}]}}')


def structured(data: dict) -> ChatReply:
    return ChatReply(
        content=json.dumps(data), tool_calls=[], finish_reason="stop", usage=TokenUsage(50, 20)
    )


def step(function, brain, now=T0, calls=10):
    result = function(brain, now, Budget(calls))
    return result if not hasattr(result, "send") else run(result)


# ---- the model call queue's tests (and the model I/O process's) ---------------------------


class Results:
    """Collects what the queue delivers (straight from its thread: no reactor in these tests)."""

    def __init__(self):
        self.values, self.errors = {}, {}
        self.done = threading.Condition()

    def track(self, name, deferred):
        def ok(value):
            with self.done:
                self.values[name] = value
                self.done.notify_all()

        def failed(failure):
            with self.done:
                self.errors[name] = failure.value
                self.done.notify_all()

        deferred.addCallbacks(ok, failed)

    def wait(self, count, timeout=10.0):
        with self.done:
            assert self.done.wait_for(
                lambda: len(self.values) + len(self.errors) >= count, timeout
            ), f"only {self.values} and {self.errors} after {timeout} s"


def until(condition, timeout=5.0):
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.005)
