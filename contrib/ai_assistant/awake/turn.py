"""
The awake tick and its ReAct turn.

`awake_tick` decides whether the pending events need the model. When they do not (no events,
only ambient chatter, a `wait` still running, backing off after errors) it returns None and the
tick costs nothing. Otherwise it returns a turn: a generator that yields blocking model calls
(see `ai_assistant.driver`) and runs the tools between them.

The turn loop: send system prompt + history + the new events; run every tool call in the
reply and send the results back; stop on `noop` or `wait`, on a reply without tool calls, on a
refusal or a reply cut off by the token limit, or at `max_react_iterations`.

Nothing is lost when the model fails: events leave the queue, and the turn's messages enter the
history, only once the first reply has arrived. After a failure the events stay queued and the
assistant backs off (doubling up to `error_backoff_max`) before trying again.

"""

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from ..clock import from_iso, to_iso
from ..conf import AssistantConfig
from ..context.compaction import (
    LAST_COMPACTION,
    compaction_summary,
    extract_then_compact,
    fit_to_budget,
    usage_ratio,
)
from ..memory.history import ConversationHistory, wire_format
from ..prompt import events_message, system_prompt
from ..llm.client import ChatClient, ChatReply, ChatRequest, LLMError
from ..driver import NEXT_STEP, BlockingWork
from ..llm.structured import complete_structured
from ..llm.tokens import TokenCounter
from ..llm.usage import UsageStats
from ..memory.core import CoreMemory
from ..memory.entities import EntityMemory
from ..memory.journal import Journal
from ..memory.semantic import EmbeddedMemoryStore, MemoryStore
from ..memory.store import KeyValueStore
from ..lifecycle import ACTIVITY, Lifecycle
from ..text import redact
from ..tools.base import AWAKE, ToolContext, ToolRegistry, World
from ..events import Event, EventQueue, speakers_of, triggers_model

# state keys on the script
WAIT_UNTIL = "wait_until"
WAIT_SET_AT = "wait_set_at"
RETRY_AFTER = "retry_after"
CONSECUTIVE_ERRORS = "consecutive_errors"
CONTEXT_TOKENS = "context_tokens"
USAGE = "usage"
LAST_TURN = "last_turn"


@dataclass
class Assistant:
    """One assistant's parts, as the core sees them. Built by the shell.

    Args:
        name: The character's name; aliases are other names it answers to.
        persona: Who it is, in a few sentences.
        config: Its resolved configuration.
        model: The chat model name.
        state: The script's store (events, history, counters).
        memory_store: The character's store (journal, entity profiles).
        world: The world adapter the tools act through.
        registry: Its tools.
        client_factory: Returns the model client; called in worker threads only.
        embedding_model: Embeddings model for memory search, or None (lexical search).
        on_transition: `on_transition(mode, reason)` after a sleep/wake transition (shell).
        long_term: The long-term memory store; default an `EmbeddedMemoryStore` on
            `memory_store`.

    """

    name: str
    persona: str
    config: AssistantConfig
    model: str
    state: KeyValueStore
    memory_store: KeyValueStore
    world: World
    registry: ToolRegistry
    client_factory: Callable[[], ChatClient]
    aliases: list[str] = field(default_factory=list)
    location: str | None = None
    embedding_model: str | None = None
    on_transition: Callable[[str, str], None] = lambda mode, reason: None
    long_term: MemoryStore | None = None

    def __post_init__(self):
        self.counter = TokenCounter(self.model)
        self.events = EventQueue(self.state)
        self.history = ConversationHistory(self.state, self.counter)
        self.journal = Journal(self.memory_store)
        self.entities = EntityMemory(self.memory_store)
        self.core_memory = CoreMemory(self.memory_store, self.counter)
        self._usage: UsageStats | None = None
        self._tool_tokens: int | None = None
        self.lifecycle = Lifecycle(
            self.state, self.journal, self.config, lambda *args: self.on_transition(*args)
        )
        if self.long_term is None:
            self.long_term = EmbeddedMemoryStore(self.memory_store)

    # blocking work for the runner: each runs in a worker thread and does HTTP only

    def call_model(self, request: ChatRequest) -> BlockingWork:
        return partial(_complete, self.client_factory, request)

    def structured(self, request: ChatRequest, output_model) -> BlockingWork:
        return partial(_structured, self.client_factory, request, output_model)

    def embed(self, texts: list[str]) -> BlockingWork:
        return partial(_embed, self.client_factory, self.embedding_model, texts)

    def usage(self) -> UsageStats:
        """The usage stats, one object shared by everything this assistant runs."""
        if self._usage is None:
            self._usage = UsageStats.load(self.state.get(USAGE))
        return self._usage

    def save_usage(self, usage: UsageStats | None = None) -> None:
        self._usage = usage or self.usage()
        self.state.set(USAGE, self._usage.model_dump())

    def prefix_messages(self) -> list[dict]:
        """What leads every request: the system prompt, then the core memory block."""
        messages = [system_prompt(self.name, self.persona)]
        core = self.core_memory.message()
        if core:
            messages.append(core)
        return messages

    def build_request(self, pending: list[dict], tools: list[dict] | None = None) -> ChatRequest:
        """Prefix + history + this turn's uncommitted messages, with the awake tools.

        The order keeps the prefix stable from call to call (prompt caching): system prompt,
        tool schemas, core memory, the compaction summary (the history's first message), then
        the history, newest last.

        """
        messages = self.prefix_messages()
        messages += [wire_format(message) for message in self.history.all()]
        messages += [wire_format(message) for message in pending]
        return ChatRequest(
            model=self.model,
            messages=messages,
            tools=self.registry.schemas(AWAKE) if tools is None else tools,
            temperature=self.config.temperature,
            max_tokens=self.config.max_reply_tokens,
        )

    def request_tokens(self, request: ChatRequest) -> int:
        return self.counter.count_request(request.messages, request.tools)

    def tool_context(self, now: datetime, speakers: dict[str, str]) -> ToolContext:
        """What the tools may use in one turn; `speakers` are those heard (by lower-case name)."""
        return ToolContext(
            assistant_name=self.name,
            world=self.world,
            journal=self.journal,
            entities=self.entities,
            config=self.config,
            now=now,
            location=self.location,
            speakers=speakers,
            lifecycle=self.lifecycle,
            core_memory=self.core_memory,
        )

    def fixed_tokens(self) -> int:
        """Tokens every awake request carries before any history: prompt, core memory, tools."""
        if self._tool_tokens is None:  # the schemas never change; checked every awake tick
            self._tool_tokens = self.counter.count_tools(self.registry.schemas(AWAKE))
        return self.counter.count_messages(self.prefix_messages()) + self._tool_tokens

    def context_tokens(self) -> int:
        """Tokens of the next awake request without new events (history read from its total)."""
        return self.fixed_tokens() + self.history.tokens()

    def pending_tokens(self, pending: list[dict]) -> int:
        """Tokens of `build_request(pending)`, without re-counting the history: equal to
        `request_tokens(build_request(pending))`, at a cost that does not grow with it."""
        return self.context_tokens() + sum(self.counter.count_message(m) for m in pending)


def _complete(client_factory, request):
    return client_factory().complete(request)


def _structured(client_factory, request, output_model):
    return complete_structured(client_factory(), request, output_model)


def _embed(client_factory, model, texts):
    return client_factory().embed(model, texts)


@dataclass
class TurnOutcome:
    """What one awake turn did, for the status, the log and the demo's transcript."""

    events: list[Event] = field(default_factory=list)
    model_calls: int = 0
    tool_calls: list[dict] = field(default_factory=list)
    stop_reason: str = ""
    error: str | None = None
    request_tokens: list[int] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    compaction: dict | None = None

    def summary(self) -> dict:
        return {
            "events": len(self.events),
            "model_calls": self.model_calls,
            "tools": [call["name"] for call in self.tool_calls],
            "stop_reason": self.stop_reason,
            "error": redact(self.error) if self.error else None,
        }


def needs_emergency_compaction(assistant: Assistant) -> bool:
    config = assistant.config
    return (
        config.compact_enabled
        and len(assistant.history) > 0
        and usage_ratio(assistant) >= config.compact_emergency_threshold
    )


def awake_tick(assistant: Assistant, now: datetime) -> Generator | None:
    """Decide whether this tick needs the model; return the work to drive, or None."""
    state = assistant.state
    retry_after = from_iso(state.get(RETRY_AFTER))
    if retry_after and now < retry_after:
        return None
    emergency = needs_emergency_compaction(assistant)
    turn = _plan_turn(assistant, now)
    if not emergency:
        return turn
    return _emergency_then(assistant, now, turn)


def _emergency_then(assistant: Assistant, now: datetime, turn: Generator | None) -> Generator:
    """Emergency compaction first (seed 001: extraction, then forced compaction), then the turn."""
    report = yield from extract_then_compact(assistant, now, emergency=True)
    assistant.state.set(LAST_COMPACTION, compaction_summary(report, now))
    if report["compaction"].get("error"):
        _back_off(assistant, now)
    if turn is None:
        return TurnOutcome(stop_reason="compaction_only", compaction=report)
    outcome = yield from turn
    outcome.compaction = report
    return outcome


def _plan_turn(assistant: Assistant, now: datetime) -> Generator | None:
    state = assistant.state
    events = assistant.events.peek()
    config = assistant.config
    triggering = [
        event
        for event in events
        if triggers_model(event, config.respond_to_ambient, config.respond_to_assistants)
    ]
    wait_until = from_iso(state.get(WAIT_UNTIL))
    if wait_until:
        if now < wait_until:
            # only something new and addressed to the assistant ends a wait early
            wait_set_at = state.get(WAIT_SET_AT) or ""
            triggering = [
                event for event in triggering if event.urgent and event.time > wait_set_at
            ]
        if not triggering and now < wait_until:
            return None
        state.delete(WAIT_UNTIL)
        state.delete(WAIT_SET_AT)
    if not triggering:
        return None
    return run_turn(assistant, events, len(triggering), now)


MAX_RECALLED = 10
MAX_PRESENT_LISTED = 20


def _recall(assistant: Assistant, events: list[Event]) -> dict[str, list[str]]:
    """What the assistant knows about the people it heard this turn (not everyone present: a
    crowded room would make that a lookup per person per turn)."""
    recall: dict[str, list[str]] = {}
    for event in events:
        if event.speaker in recall or len(recall) >= MAX_RECALLED or event.from_assistant:
            continue
        key = event.speaker_key or f"name:{event.speaker.lower()}"
        notes = assistant.entities.recall(key, assistant.config.recall_observations)
        if notes:
            recall[event.speaker] = notes
    return recall


def _listed(present: list[str]) -> list[str]:
    if len(present) <= MAX_PRESENT_LISTED:
        return present
    return present[:MAX_PRESENT_LISTED] + [f"and {len(present) - MAX_PRESENT_LISTED} others"]


def _back_off(assistant: Assistant, now: datetime) -> None:
    state = assistant.state
    errors = (state.get(CONSECUTIVE_ERRORS) or 0) + 1
    state.set(CONSECUTIVE_ERRORS, errors)
    delay = min(assistant.config.tick_rate * 2 ** (errors - 1), assistant.config.error_backoff_max)
    state.set(RETRY_AFTER, to_iso(now + timedelta(seconds=delay)))


def run_turn(
    assistant: Assistant, events: list[Event], interactions: int, now: datetime
) -> Generator[BlockingWork, Any, TurnOutcome]:
    """The ReAct loop for one batch of events (see module doc)."""
    state = assistant.state
    config = assistant.config
    usage = assistant.usage()
    outcome = TurnOutcome(events=events)
    present = assistant.world.present()
    speakers = speakers_of(events)
    ctx = assistant.tool_context(now, speakers)
    message = events_message(
        events,
        location=assistant.location,
        present=_listed(present),
        recall=_recall(assistant, events),
        now_text=now.strftime("%Y-%m-%d %H:%M UTC"),
    )
    # kept with the message in the history (never sent): who may later be named as a source
    message["metadata"] = {"speakers": speakers}
    pending = [message]
    try:
        for iteration in range(config.max_react_iterations):
            if not (yield from fit_to_budget(assistant, now, pending)):
                # never send a request over max_context_tokens
                usage.record_error("context_budget")
                outcome.error = "context_budget: the request cannot fit max_context_tokens"
                outcome.stop_reason = "over_budget"
                if iteration == 0:
                    _back_off(assistant, now)
                break
            request = assistant.build_request(pending)
            outcome.request_tokens.append(assistant.pending_tokens(pending))
            try:
                reply: ChatReply = yield assistant.call_model(request)
            except LLMError as err:
                usage.record_error(err.kind)
                outcome.error = f"{err.kind}: {err}"
                if iteration == 0:
                    _back_off(assistant, now)
                    outcome.stop_reason = "model_error"
                    return outcome
                outcome.stop_reason = "model_error_mid_turn"
                break
            usage.record_reply(reply)
            outcome.model_calls += 1
            outcome.prompt_tokens += reply.usage.prompt
            outcome.completion_tokens += reply.usage.completion
            if iteration == 0:
                assistant.events.remove({event.id for event in events})
                state.set(ACTIVITY, (state.get(ACTIVITY) or 0) + interactions)
                for key in (RETRY_AFTER, CONSECUTIVE_ERRORS):
                    if state.get(key) is not None:
                        state.delete(key)
            stop = yield from _apply_reply(assistant, ctx, reply, pending, usage, outcome)
            assistant.history.extend(pending)
            pending = []
            if stop:
                break
        else:
            outcome.stop_reason = "iteration_limit"
    finally:
        if ctx.control.wait_until:
            state.set(WAIT_UNTIL, to_iso(ctx.control.wait_until))
            state.set(WAIT_SET_AT, to_iso(now))
        if outcome.request_tokens:
            state.set(CONTEXT_TOKENS, outcome.request_tokens[-1])
        assistant.save_usage(usage)
        state.set(LAST_TURN, {"at": to_iso(now), **outcome.summary()})
    return outcome


TOO_MANY_TOOL_CALLS = "too_many_tool_calls"


def _apply_reply(
    assistant: Assistant,
    ctx: ToolContext,
    reply: ChatReply,
    pending: list[dict],
    usage: UsageStats,
    outcome: TurnOutcome,
) -> Generator[Any, Any, bool]:
    """Add the reply and its tool results to `pending`; return True when the turn ends.

    Tool calls are capped per reply and per turn (`max_tool_calls_per_reply`,
    `max_tool_calls_per_turn`): a reply asking for more gets an error result for each call over
    the cap (every call is answered, so the history stays valid), and reaching the turn's cap
    ends the turn. Between two tool calls the turn yields `NEXT_STEP`, so a long reply never
    holds the reactor: players' commands are served in between.

    """
    config = assistant.config
    if reply.refusal:
        usage.record_malformed("refusal")
        pending.append({"role": "assistant", "content": reply.refusal})
        outcome.stop_reason = "refusal"
        return True
    if reply.finish_reason == "length":
        # tool calls cut off mid-JSON cannot be run; keep only the text
        usage.record_malformed("length")
        pending.append({"role": "assistant", "content": reply.content or ""})
        outcome.stop_reason = "length"
        return True
    pending.append(reply.as_message())
    if not reply.tool_calls:
        outcome.stop_reason = "no_tool_call"
        return True
    capped = False
    for index, call in enumerate(reply.tool_calls):
        if index:
            yield NEXT_STEP
        room_in_turn = config.max_tool_calls_per_turn - len(outcome.tool_calls)
        if index >= config.max_tool_calls_per_reply or room_in_turn <= 0:
            capped = True
            usage.record_malformed(TOO_MANY_TOOL_CALLS)
            content = (
                f"Error: not run. At most {config.max_tool_calls_per_reply} tool calls per reply "
                f"and {config.max_tool_calls_per_turn} per turn."
            )
            pending.append({"role": "tool", "tool_call_id": call.id, "content": content})
            continue
        result = assistant.registry.dispatch(ctx, call, AWAKE)
        if result.malformed:
            usage.record_malformed(result.malformed)
        content = result.content
        if len(content) > config.max_tool_output_chars:
            content = content[: config.max_tool_output_chars] + " [truncated]"
        pending.append({"role": "tool", "tool_call_id": call.id, "content": content})
        outcome.tool_calls.append(
            {
                "name": call.name,
                "arguments": call.arguments,
                "ok": result.ok,
                "result": content,
                "detail": result.detail,
            }
        )
    if ctx.control.stop_reason:
        outcome.stop_reason = ctx.control.stop_reason
        return True
    if capped and len(outcome.tool_calls) >= config.max_tool_calls_per_turn:
        outcome.stop_reason = "tool_call_limit"
        return True
    return False
