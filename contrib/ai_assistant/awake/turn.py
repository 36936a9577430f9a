"""
The awake tick and its turn.

`awake_tick` decides whether the pending events need the model. When they do not (no events,
only ambient chatter, a `wait` still running, backing off after errors) it returns None and the
tick costs nothing. Otherwise it returns a turn: a generator that yields blocking model calls
(see `ai_assistant.driver`) and runs the tools between them.

A turn is one conversation in the ReAct loop (`ai_assistant.agent.react`): the new events go to the
model with the prefix and the history; tool calls run and their results go back; it ends on
`noop`, `wait` or `go_to_sleep`, on a reply without tool calls, on a refusal or a reply cut off
by the token limit, or at `max_react_iterations`. Before each request the history is compacted
if the request would not fit `max_context_tokens`.

Nothing is lost when the model fails: events leave the queue, and the turn's messages enter the
history, only once the first reply has arrived. After a failure the events stay queued and the
assistant backs off (doubling up to `error_backoff_max`) before trying again.

"""

import json
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from .. import telemetry
from ..agent.brain import Brain
from ..clock import from_iso, to_iso
from ..debt import SleepDebt, turn_id
from ..driver import CLOSING_STEP
from ..lifecycle import AWAKE
from ..memory.sleep_history import SleepHistory
from ..memory.turn_log import TurnLog
from ..context.compaction import compaction_summary, extract_then_compact, fit_to_budget
from ..events import (
    DIRECT_MESSAGE,
    ROOM,
    SCENE,
    SPEECH_TYPES,
    Event,
    said_by,
    speakers_of,
    triggers_model,
)
from ..llm.chat import CONTEXT_LENGTH, LLMError
from ..memory.audience import NOBODY, narrowest, served_by
from ..memory.recalled import render
from ..memory.working import WorkingMemory
from ..prompt import SCENE_ANSWER, events_message
from ..memory.relationships import Relationships
from ..records import TurnSummary
from ..memory.reminders import Reminders
from ..memory.plans import plan_lines
from ..agent.react import LoopResult, StopPolicy, react
from ..state import (
    ACTIVITY,
    CONSECUTIVE_ERRORS,
    CONTEXT_TOKENS,
    LAST_COMPACTION,
    LAST_TURN,
    RETRY_AFTER,
    WAIT_AUDIENCE,
    WAIT_REASON,
    WAIT_SET_AT,
    WAIT_UNTIL,
)
from ..text import for_players, redact
from ..tools.base import TURN

# a turn's details kept for the dashboard (`TurnOutcome.details`): the first this many events
# and tool calls (and of the model's own texts), each cut to this many characters; the turn log
# (`memory.turn_log`) keeps the last `state.TURN_LOG_KEPT` turns
DETAIL_ITEMS = 12
# a line too long to fit alone is cut (halving) down to no fewer characters than this
MIN_SHOWN_CHARS = 200
DETAIL_CHARS = 600


@dataclass
class TurnOutcome(LoopResult):
    """What one awake turn did, for the status, the log and the demo's transcript.

    Its conversation loop's counts, stop reason and error are the `LoopResult` fields.

    """

    events: list[Event] = field(default_factory=list)
    compaction: dict | None = None
    recalled: list[str] = field(default_factory=list)
    debt_added: int = 0
    fixed_tokens: int = 0
    audience: list[str] | None = None
    seconds: float = 0.0

    @classmethod
    def of(cls, events: list[Event], loop: LoopResult) -> "TurnOutcome":
        """Build an outcome from the turn's events and its conversation loop's result.

        Args:
            events (list): The events the turn answered.
            loop (LoopResult): What the conversation loop did.

        Returns:
            TurnOutcome: With the loop's calls, stop reason, error and token counts.

        """
        return cls(events=events, **vars(loop))

    def summary(self) -> TurnSummary:
        """A short record of the turn, for the status and the log.

        Returns:
            dict: Counts of events and model calls, tool names, stop reason, the error
                (redacted) and what was recalled.

        """
        return {
            "events": len(self.events),
            "model_calls": self.model_calls,
            "tools": [call["name"] for call in self.tool_calls],
            "stop_reason": self.stop_reason,
            "error": redact(self.error) if self.error else None,
            "recalled": list(self.recalled),
            "prompt": self.prompt_shape(),
            **self.details(),
        }

    def details(self) -> dict:
        """What the turn heard and did, for the dashboard's conversation view: bounded (at
        most `DETAIL_ITEMS` events and tool calls, each text cut to `DETAIL_CHARS`) and
        redacted, as everything kept is.

        Returns:
            dict: `heard` (type, speaker, person key, audience, text of each event), `texts`
                (the model's own text in its replies, where it wrote any), `calls`
                (name, arguments, result and whether it worked, of each tool call),
                `audience` (the turn's: None is public), `tokens` (prompt and completion)
                and `seconds` (from its start to its outcome, the model's waits included).

        """
        return {
            "heard": [
                {
                    "type": event.type,
                    "speaker": _cut(event.speaker),
                    "person": _cut(event.speaker_key),
                    "audience": _keys(event.audience),
                    "text": _cut(event.text),
                }
                for event in self.events[:DETAIL_ITEMS]
            ],
            # what the model wrote besides its tool calls (a plain text reply it spoke is
            # already a call of the speaking tool, marked `from_text`)
            "texts": [_cut(text) for text in self._unspoken()[:DETAIL_ITEMS]],
            "calls": [
                {
                    "name": _cut(call.get("name")),
                    "arguments": _cut(call.get("arguments")),
                    "result": _cut(call.get("result")),
                    "ok": bool(call.get("ok")),
                }
                for call in self.tool_calls[:DETAIL_ITEMS]
            ],
            "audience": _keys(self.audience),
            "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens},
            "seconds": round(self.seconds, 2),
        }

    def _unspoken(self) -> list[str]:
        """The model's own texts, less those spoken as a plain text reply."""
        spoken = set()
        for call in self.tool_calls:
            if call.get("from_text"):
                try:
                    spoken.add(" ".join(str(json.loads(call["arguments"])["text"]).split()))
                except (KeyError, TypeError, ValueError):
                    pass
        return [text for text in self.texts if " ".join(text.split()) not in spoken]

    def prompt_shape(self) -> dict:
        """What the turn's requests were made of, in tokens.

        Returns:
            dict: `fixed` (system prompt, core memory and tool schemas), `conversation` (history
                and the turn's new events in its first request), `last_request` (the last
                request's size, with the turn's own replies and tool results) and `recalled`
                (memories shown); zeros when no request was made.

        """
        first = self.request_tokens[0] if self.request_tokens else 0
        return {
            "fixed": self.fixed_tokens if first else 0,
            "conversation": max(0, first - self.fixed_tokens) if first else 0,
            "last_request": self.request_tokens[-1] if self.request_tokens else 0,
            "recalled": len(self.recalled),
        }


def _cut(value) -> str | None:
    """A value kept with a turn's details: text, redacted, at most `DETAIL_CHARS`."""
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    return redact(text[: DETAIL_CHARS + 200])[:DETAIL_CHARS]


def _keys(audience) -> list[str] | None:
    """An audience kept with a turn's details: None (public) or at most `DETAIL_ITEMS` keys."""
    if audience is None:
        return None
    return [_cut(key) for key in list(audience)[:DETAIL_ITEMS]]


def turn_policy(brain: Brain) -> StopPolicy:
    """How an awake turn runs: the turn's tools, the configured limits.

    Args:
        brain (Brain): The assistant.

    Returns:
        StopPolicy: The awake turn's tool scope and its iteration and tool-call limits.

    """
    config = brain.config
    return StopPolicy(
        scope=TURN,
        max_iterations=config.max_react_iterations,
        max_calls_per_reply=config.max_tool_calls_per_reply,
        max_calls_per_turn=config.max_tool_calls_per_turn,
        plain_text=config.plain_text_reply,
    )


def needs_emergency_compaction(brain: Brain) -> bool:
    """Whether the history must be compacted before the next turn.

    Args:
        brain (Brain): The assistant.

    Returns:
        bool: True when compaction is enabled, there is history, and the context is at or
            above the emergency threshold.

    """
    config = brain.config
    return (
        config.compact_enabled
        and len(brain.history) > 0
        and brain.usage_ratio() >= config.compact_emergency_threshold
    )


def awake_tick(brain: Brain, now: datetime) -> Generator | None:
    """Decide whether this tick needs the model.

    Args:
        brain (Brain): The assistant.
        now (datetime): The time.

    Returns:
        Generator or None: The work to drive (a turn, maybe after emergency compaction), or
            None when nothing needs the model.

    """
    retry_after = from_iso(brain.state.get(RETRY_AFTER))
    if retry_after and now < retry_after:
        return None
    if brain.budget_spent(now):
        _say_budget_spent(brain, now)
        return None  # it keeps hearing: the events wait for the next day or hour
    if brain.lifecycle.maybe_sleep_off_debt(now, len(brain.events)):
        return None
    turn = _plan_turn(brain, now)
    if needs_emergency_compaction(brain):
        turn = _emergency_then(brain, now, turn)
    return telemetry.traced(
        telemetry.TURN_SPAN,
        turn,
        {telemetry.ASSISTANT: brain.name},
        lambda outcome: _turn_attributes(brain, outcome),
    )


def _turn_attributes(brain: Brain, outcome: "TurnOutcome") -> dict:
    """What a turn's span says of it once it is over (names and counts, never words), and the
    turn and debt metrics."""
    result = "error" if outcome.error else "ok"
    known = set(brain.registry.names())
    # a name the model made up is its own text: it stays out of the attributes
    tools = [call["name"] if call["name"] in known else "unknown" for call in outcome.tool_calls]
    telemetry.count_turn(brain.name, result)
    debt = SleepDebt(brain.state).points
    telemetry.note_debt(brain.name, debt)
    attributes = {
        "ai_assistant.turn.result": result,
        "ai_assistant.turn.stop_reason": outcome.stop_reason,
        "ai_assistant.turn.events": len(outcome.events),
        "ai_assistant.turn.model_calls": outcome.model_calls,
        "ai_assistant.turn.tool_calls": len(outcome.tool_calls),
        "ai_assistant.turn.tools": tools,
        "ai_assistant.turn.prompt_tokens": outcome.prompt_tokens,
        "ai_assistant.turn.completion_tokens": outcome.completion_tokens,
        "ai_assistant.turn.debt_added": outcome.debt_added,
        "ai_assistant.sleep.debt": debt,
    }
    if outcome.error:
        attributes[telemetry.ERROR_TYPE] = outcome.error_kind or "other"
    if outcome.compaction is not None:
        compaction = outcome.compaction["compaction"]
        attributes["ai_assistant.turn.compacted"] = compaction.get("compacted", 0)
    return attributes


def _say_budget_spent(brain: Brain, now: datetime) -> None:
    """Say once, in character, that it cannot think any more for now (if configured), when
    someone is waiting for an answer."""
    config = brain.config
    waiting = any(
        triggers_model(event, config.respond_to_ambient, config.respond_to_assistants)
        for event in brain.events.peek()
    )
    line = config.budget_spent_message
    if waiting and line and brain.budget().first_telling(now, brain.game_now(now)):
        brain.world.say(for_players(line.format(name=brain.name), config.allow_color_markup))


def _emergency_then(brain: Brain, now: datetime, turn: Generator | None) -> Generator:
    """Emergency compaction first (extraction, then forced compaction), then the turn."""
    report = yield from extract_then_compact(brain, now, emergency=True)
    brain.state.set(LAST_COMPACTION, compaction_summary(report, now))
    if report["compaction"].get("error"):
        _back_off(brain, now)
    if turn is None:
        return TurnOutcome(stop_reason="compaction_only", compaction=report)
    outcome = yield from turn
    outcome.compaction = report
    return outcome


def _plan_turn(brain: Brain, now: datetime) -> Generator | None:
    """The turn this tick needs, if any: for the thread (the room, or one person's whispers
    and pages) of the oldest event that calls for the model. The other threads' events wait for
    the next turn, so private words never ride in a request that serves someone else."""
    state = brain.state
    events = brain.events.peek()
    config = brain.config
    triggering = [
        event
        for event in events
        if triggers_model(event, config.respond_to_ambient, config.respond_to_assistants)
    ]
    notice = None
    wait_until = from_iso(state.get(WAIT_UNTIL))
    if wait_until:
        if now < wait_until:
            # only something new and addressed to the assistant ends a wait early
            wait_set_at = state.get(WAIT_SET_AT) or ""
            triggering = [
                event for event in triggering if event.urgent and event.time > wait_set_at
            ]
            if not triggering:
                return None
        elif not triggering:
            # the wait is over and nothing came: the assistant gets to act, told so
            notice = _wait_over(brain, now, wait_until)
        for key in (WAIT_UNTIL, WAIT_SET_AT, WAIT_REASON, WAIT_AUDIENCE):
            state.delete(key)
    if not triggering and notice is None:
        return None
    thread = triggering[0].thread if triggering else ROOM
    turn_events = [event for event in events if event.thread == thread]
    interactions = sum(1 for event in triggering if event.thread == thread)
    if notice is not None:
        turn_events.append(notice)
    return run_turn(brain, turn_events, interactions, now)


def _wait_over(brain: Brain, now: datetime, wait_until: datetime) -> Event:
    set_at = from_iso(brain.state.get(WAIT_SET_AT)) or wait_until
    minutes = max(1, round((wait_until - set_at).total_seconds() / 60))
    reason = brain.state.get(WAIT_REASON) or ""
    if brain.state.get(WAIT_AUDIENCE) is not None:
        # the wait was chosen in a conversation that saw private words: the notice, which any
        # conversation may see, does not repeat why
        reason = ""
    text = f"Your wait of {minutes} minutes is over." + (f" You waited: {reason}" if reason else "")
    return Event(
        id=0,
        type="notice",
        speaker="the game",
        text=text,
        time=to_iso(now),
        location=brain.location,
        classification=DIRECT_MESSAGE,
        urgent=True,
    )


MAX_PRESENT_LISTED = 20


def owners_of(events: list[Event]) -> dict[str, str]:
    """Whom what the model sets in a turn is for (a reminder, a core note): the people who
    addressed the assistant in it, else everyone heard in it (an emote too), else no one in
    particular (a notice: one shared share). Builders and other assistants own nothing.

    Args:
        events (list): The turn's events.

    Returns:
        dict: Person key -> name.

    """
    heard = [e for e in events if not e.from_assistant and e.type not in ("instruction", "notice")]
    addressed = [e for e in heard if e.urgent] or heard
    owners = {event.person: event.speaker for event in addressed}
    if not owners and not any(event.type == "instruction" for event in events):
        owners = {NOBODY: "no one in particular"}
    return owners


def _listed(present: list[str]) -> list[str]:
    if len(present) <= MAX_PRESENT_LISTED:
        return present
    return present[:MAX_PRESENT_LISTED] + [f"and {len(present) - MAX_PRESENT_LISTED} others"]


def clear_model_errors(brain: Brain) -> None:
    """Forget the model's errors and the back-off after them (a builder fixed the endpoint):
    the error counts and malformed output in the usage, the errors of the turn log's turns (the
    turns stay on record) and the retry time, so the next tick with work asks at once.

    Args:
        brain (Brain): The assistant.

    """
    usage = brain.usage()
    usage.errors.clear()
    usage.malformed.clear()
    brain.save_usage(usage)
    state = brain.state
    TurnLog(state).rewrite(lambda turn: {**turn, "error": None} if turn.get("error") else turn)
    for key in (LAST_TURN, RETRY_AFTER, CONSECUTIVE_ERRORS):
        if state.get(key) is not None:
            state.delete(key)


def _narrowed(
    brain: Brain, events: list[Event], shown: list[Event], pending: list[dict], build
) -> bool:
    """Make the turn's message fit the context budget by showing fewer events: the oldest
    first (the newer stay queued for the next turn, which the model is told), and a single
    line too long even alone cut, saying so. `shown` and `pending` are changed in place.

    Args:
        brain (Brain): The assistant.
        events (list): The turn's events, oldest first.
        shown (list): The events the message shows (changed in place).
        pending (list): The request's new messages, the turn's message first (changed).
        build (callable): Makes the message showing a list of events.

    Returns:
        bool: True when it fits now; False when not even a cut line does (the prompt, tools
            and core memory alone fill the budget).

    """
    budget = brain.calibration.context_budget()
    count = len(shown)
    while count > 1:
        count -= max(1, count // 4)
        shown[:] = events[:count]
        pending[0] = build(shown)
        if brain.pending_tokens(pending) <= budget:
            return True
    line = shown[0]
    limit = len(line.text)
    while limit > MIN_SHOWN_CHARS:
        limit //= 2
        cut = f"{line.text[:limit]} [cut: {len(line.text) - limit} more characters]"
        pending[0] = build([line.model_copy(update={"text": cut})])
        if brain.pending_tokens(pending) <= budget:
            return True
    return False


def _back_off(brain: Brain, now: datetime) -> None:
    state = brain.state
    errors = (state.get(CONSECUTIVE_ERRORS) or 0) + 1
    state.set(CONSECUTIVE_ERRORS, errors)
    delay = min(brain.config.tick_rate * 2 ** (errors - 1), brain.config.error_backoff_max)
    state.set(RETRY_AFTER, to_iso(now + timedelta(seconds=delay)))


def run_turn(
    brain: Brain, events: list[Event], interactions: int, now: datetime
) -> Generator[Any, Any, TurnOutcome]:
    """One awake turn over the events of one thread (see the module's doc).

    Args:
        brain (Brain): The assistant.
        events (list): The events to answer, all of one thread.
        interactions (int): How many of them count as interactions handled.
        now (datetime): The time.

    Returns:
        TurnOutcome: What the turn did.

    """
    started = time.monotonic()
    state = brain.state
    config = brain.config
    thread = events[0].thread if events else ROOM
    private = thread.startswith("private:")
    present = brain.world.present_people()
    speakers = speakers_of(events)
    if private:
        partner = events[0]
        served = served_by([partner.person])
    else:
        served = served_by([key for key, _ in present] + [s.key for s in speakers.values()])
    # what the model is shown: recalled memories for these events, who it is talking with
    # a scene's opening names the partner: what it remembers of them is a subject
    query = " ".join(
        event.text for event in events if event.type != "notice" or SCENE in event.metadata
    )
    people = [name for _, name in present[:MAX_PRESENT_LISTED]]
    people += [s.name for s in speakers.values()] + [s.key for s in speakers.values()]
    semantic = None
    search = brain.semantic_search(query) if config.recall_limit else None
    if search is not None:
        try:
            semantic = yield search
        except LLMError as err:
            brain.usage().record_error(err.kind)  # lexical recall still answers
    pool = brain.recall(
        query,
        now=now,
        served=served,
        people=people,
        semantic=semantic,
        limit=brain.recall_pool(config.recall_limit),
    )
    scores = None
    rerank = brain.rerank(query, pool)
    if rerank is not None:
        try:
            scores = yield rerank
        except LLMError as err:
            brain.usage().record_error(err.kind)  # the first pass's order still answers
    recalled = brain.reranked(pool, scores)
    # with gossip or group sharing on, each line ends with its id: what `tell` and
    # `share_with_group` name
    show_ids = config.gossip_enabled or config.group_sharing_enabled
    recalled_lines = render(
        recalled, config.recall_budget_tokens, brain.counter.count_text, show_ids
    )
    shown = recalled[: len(recalled_lines)]
    working = WorkingMemory(state)
    talking_with = working.shown(served, now, config.working_memory_stale_minutes)
    # how it feels about the people here, and those recall brought up (their profiles)
    feelings = Relationships(brain.entities.store).feelings(
        [key for key, _ in present]
        + [s.key for s in speakers.values()]
        + [item.id.split("/")[0] for item in shown if item.kind in ("observation", "attribute")],
        served,
    )
    reminders = Reminders(state)
    # reminders these events bring back; counted as fired once the turn is handled
    reminded = reminders.matching(
        [f"{event.speaker}\n{event.text}\n{event.location or ''}" for event in events], served
    )
    # today's plan, the items these people may know of (none without a routine or plan)
    plan = plan_lines(state, brain.game_now(now), served)
    # everything the message shows carries its audience, and the message the narrowest of
    # them: the ReAct loop narrows the turn to it (and to the history and notes it sends)
    audience = narrowest(
        [event.audience for event in events]
        + [item.audience for item in shown]
        + [line_audience for _, line_audience in talking_with]
        + [match.audience for match in reminded]
        + [line_audience for _, line_audience in feelings]
        + [line_audience for _, line_audience in plan]
    )
    ctx = brain.tool_context(
        now, speakers, served=served, audience=audience, owners=owners_of(events)
    )
    ctx.reply_to = events[0].person if private else None
    ctx.said = said_by(events)
    # something the game produced (an arrival, a departure, a notice), not players' text
    ctx.witnessed = any(event.type not in SPEECH_TYPES for event in events)
    advisory = SleepDebt(state).advisory(brain.journal.critical_bookmark_pending())

    def build(lines: list[Event]) -> dict:
        message = events_message(
            lines,
            location=brain.location,
            present=_listed([name for _, name in present]),
            now_text=now.strftime("%Y-%m-%d %H:%M UTC"),
            recalled=recalled_lines,
            talking_with=[line for line, _ in talking_with],
            private_with=events[0].speaker if private else None,
            reminders=[match.line for match in reminded],
            advisory=advisory,
            feelings=[line for line, _ in feelings],
            plan=[line for line, _ in plan],
        )
        waiting = len(events) - len(lines)
        if waiting:
            message["content"] += f"\n({waiting} later lines wait for your next turn.)"
        if any(event.from_assistant and SCENE in event.metadata for event in lines):
            message["content"] += f"\n{SCENE_ANSWER}"
        message["metadata"] = {"audience": audience}
        return message

    # the events this turn shows: all of them, unless they cannot fit (`_narrowed`)
    told = list(events)
    message = build(told)

    def before_request(pending: list[dict]) -> Generator:
        fits = yield from fit_to_budget(brain, now, pending)
        if fits or not pending:
            return fits
        # what waits cannot fit even with the history compacted: never mute, the oldest
        # lines are answered now and the newer stay queued for the next turn
        return _narrowed(brain, events, told, pending, build)

    def metadata() -> dict:
        # kept with the turn's messages in the history (never sent): who may see them later,
        # and who spoke (the only people a later note may name as a source)
        return {
            "audience": ctx.audience,
            "speakers": {name: s.as_dict() for name, s in speakers.items()},
            "turn": ctx.turn,
        }

    def commit_events() -> None:
        # only now, with a reply in hand, do the events leave the queue
        brain.events.remove({event.id for event in told})
        reminders.fired([match.id for match in reminded], ctx.audience)
        state.set(ACTIVITY, (state.get(ACTIVITY) or 0) + interactions)
        for key in (RETRY_AFTER, CONSECUTIVE_ERRORS):
            if state.get(key) is not None:
                state.delete(key)
        working.note(
            [
                (event.person, event.speaker, event.text, event.audience)
                for event in events
                if event.type in SPEECH_TYPES and not event.from_assistant
            ],
            now,
        )

    loop = LoopResult()
    try:
        loop = yield from react(
            brain,
            ctx,
            [message],
            turn_policy(brain),
            before_request=before_request,
            on_first_reply=commit_events,
            metadata=metadata,
        )
        if loop.model_calls == 0 and loop.error and loop.error_kind != CONTEXT_LENGTH:
            # (a context-length refusal taught the window: the next tick compacts to fit it,
            # and every refusal lowers it, so that never loops)
            _back_off(brain, now)
    finally:
        if ctx.control.wait_until:
            state.set(WAIT_UNTIL, to_iso(ctx.control.wait_until))
            state.set(WAIT_SET_AT, to_iso(now))
            state.set(WAIT_REASON, ctx.control.wait_reason)
            if ctx.audience is not None:
                state.set(WAIT_AUDIENCE, ctx.audience)
            elif state.get(WAIT_AUDIENCE) is not None:
                state.delete(WAIT_AUDIENCE)
        if loop.request_tokens:
            state.set(CONTEXT_TOKENS, loop.request_tokens[-1])
    outcome = TurnOutcome.of(told, loop)
    outcome.recalled = [item.id for item in shown]
    outcome.fixed_tokens = brain.fixed_tokens(TURN)
    outcome.audience = ctx.audience
    outcome.seconds = time.monotonic() - started
    if loop.model_calls:
        # handled once a reply came; a retry after a failed first call answers the same
        # events, so the same id, and is not counted again
        # the game's notices all have id 0: a turn of only a notice is keyed by its time
        ids = [event.id for event in told if event.id]
        outcome.debt_added = SleepDebt(state).add_turn(
            loop.tool_calls, config, turn_id(ids) if ids else f"notice@{to_iso(now)}"
        )
        if outcome.debt_added and brain.lifecycle.mode != AWAKE:
            # the turn that put it to sleep: its debt is part of what this sleep pays off
            SleepHistory(state).add_debt_before(outcome.debt_added)
    summary = {"at": to_iso(now), **outcome.summary()}
    TurnLog(state).add(summary)
    discovery = brain.discover_context_window() if loop.model_calls else None
    if discovery is not None:
        # once per chat model, after the players have their answer: the window the server
        # reports, so that no later request outgrows it
        yield CLOSING_STEP
        try:
            window = yield discovery
        except LLMError:
            window = None  # a server without a model list: a refusal will teach it
        brain.calibration.learn_context_window(window, "server")
    return outcome
