"""
The one ReAct loop: every tool-using conversation the assistant has with the model.

An awake turn and the journaling that comes before compaction run here (asleep, the one-call
sleep turn that offers `wake_up` and `stay_asleep` is `sleep.triage`'s own: no history, no
loop). What differs between them is
data: the scope of tools offered (`StopPolicy`),
how many model calls it may take, a check before each request (the awake turn compacts the
history to fit its budget), and what happens on the first reply (the awake turn takes its events
off the queue only then, so nothing is lost when the model fails).

Each iteration sends the brain's prefix, its history and the conversation's uncommitted
messages, then looks at the reply and decides the next step:

- final output: a refusal, a reply cut off by the token limit, a reply without tool calls, a
  tool that ends the conversation (`noop`, `wait`, `go_to_sleep`), a model error,
  the tool-call cap of the turn, or (for scopes that say so) a call to a tool not offered;
- run again: otherwise, with the tool results sent back, up to `max_iterations` calls.

After each reply, the reply and its tool results join the history, so a request is always
exactly the brain's prefix plus its history plus what is new. Each request carries its
audience (`Brain.compose`: the narrowest of its core notes, history and new messages), and the
conversation narrows to it before sending: what the model then says, writes or adds to the
history is known only to those who may know everything it was shown. Like every turn, the loop
is a generator yielding blocking work (see `ai_assistant.driver`); between two tool calls it yields
`NEXT_STEP`, so the reactor serves players in between.

"""

import dataclasses
import json
import traceback
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from types import GeneratorType
from typing import Any

from .brain import Brain
from ..driver import CLOSING_STEP, NEXT_STEP
from ..llm.chat import CONTEXT_LENGTH, ChatReply, LLMError, ToolCall
from ..llm.replies import CONTENT_CUT
from ..events import Speaker
from ..tools.base import TOOL_EXCEPTION, TURN, ToolContext, ToolResult

TOO_MANY_TOOL_CALLS = "too_many_tool_calls"


# said to a model that answered an awake turn in text, once (`plain_text_reply` "remind")
TOOLS_REMINDER = (
    "(Reminder: you act only through your tools. To answer, call say, or whisper in a "
    "private exchange; to stay silent, call noop.)"
)
# the most of the model's own texts a conversation keeps (`LoopResult.texts`), for its record
MAX_TEXTS_KEPT = 20
# the most of a text reply spoken for the model (the say tool's own limit)
MAX_SPOKEN_CHARS = 1000


@dataclass(frozen=True)
class StopPolicy:
    """How one kind of conversation runs and ends.

    Args:
        scope (str): The tools offered and allowed (`tools.base.TURN`, `EXTRACTION`, ...).
        max_iterations (int): Most model calls.
        max_calls_per_reply (int): Tool calls run from one reply; more are answered with an
            error and not run.
        max_calls_per_turn (int): Tool calls run in the whole conversation; reaching it ends it.
        end_on_out_of_scope (bool): A reply calling a tool not offered ends the conversation and
            none of its calls run (each is answered, so the history stays valid). Otherwise such
            a call gets an error result the model can correct.
        plain_text (str): What a reply of text without tool calls does (`plain_text_reply`):
            "say" speaks it as the assistant's words, "remind" asks once more with a reminder
            to use the tools (and then speaks it), "drop" ends the conversation.

    """

    scope: str
    max_iterations: int
    max_calls_per_reply: int
    max_calls_per_turn: int
    end_on_out_of_scope: bool = False
    plain_text: str = "drop"


@dataclass
class LoopResult:
    """What one conversation did."""

    model_calls: int = 0
    tool_calls: list[dict] = field(default_factory=list)
    stop_reason: str = ""
    error: str | None = None
    error_kind: str | None = None
    request_tokens: list[int] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # what the calls cost, as the budgets count it (`budget.billed_tokens`)
    billed_tokens: int = 0
    reminded: bool = False  # told once to use its tools (`StopPolicy.plain_text` "remind")
    # a reply with nothing in it, no text and no tool call: the tool asked for once, by name
    forced_tool: str | None = None
    # the model's own text in its replies (beside its tool calls, or alone), in order
    texts: list[str] = field(default_factory=list)


# a check before each request: True to send it; a generator when it needs the model itself
BeforeRequest = Callable[[list[dict]], "bool | Generator[Any, Any, bool]"]


def react(
    brain: Brain,
    ctx: ToolContext,
    pending: list[dict],
    policy: StopPolicy,
    *,
    before_request: BeforeRequest | None = None,
    on_first_reply: Callable[[], None] | None = None,
    metadata: Callable[[], dict] | None = None,
) -> Generator[Any, Any, LoopResult]:
    """Run one conversation to its final output.

    Args:
        brain (Brain): Whose conversation.
        ctx (ToolContext): What its tools may use.
        pending (list): The opening messages, not yet in the history.
        policy (StopPolicy): Scope and limits.
        before_request (callable, optional): `before_request(pending)` returns False when the
            request must not be sent (it is over budget); it may be a generator yielding
            blocking work (compacting the history to make room).
        on_first_reply (callable, optional): Called once, when the first reply has arrived.
        metadata (callable, optional): Returns what is kept with every message this
            conversation adds to the history (never sent): who may see it and who spoke, so
            later requests show it only to those who may. Asked at each commit, since a recall
            can narrow the audience mid-conversation.

    Returns:
        LoopResult: Calls, tool calls, why it stopped, any error.

    """
    usage = brain.usage()
    result = LoopResult()
    tools = brain.registry.schemas(policy.scope, brain.tool_settings())
    pending = list(pending)
    answered = False
    try:
        for iteration in range(policy.max_iterations):
            if before_request is not None and not (yield from _checked(before_request, pending)):
                usage.record_error("context_budget")
                result.error_kind = "context_budget"
                result.error = "context_budget: the request cannot fit max_context_tokens"
                result.stop_reason = "over_budget"
                break
            spent = brain.budget_spent(ctx.now)
            if spent:
                result.error_kind = "budget"
                result.error = f"budget: {spent}"
                result.stop_reason = "budget_spent"
                break
            prompt = brain.compose(pending, tools, served=ctx.served, turn=ctx.turn)
            # what the model is shown, it may repeat: the conversation becomes private to the
            # narrowest audience of everything in the request, before the model sees it
            ctx.narrow([prompt.audience])
            request = prompt.request
            forced = _forced_tool(brain, ctx, policy, result, iteration, answered)
            if forced:
                choice = {"type": "function", "function": {"name": forced}}
                request = dataclasses.replace(request, tool_choice=choice)
            result.request_tokens.append(brain.pending_tokens(pending, policy.scope))
            try:
                reply: ChatReply = yield brain.call_model(request)
            except LLMError as err:
                usage.record_error(err.kind)
                result.error_kind = err.kind
                result.error = f"{err.kind}: {err}"
                result.stop_reason = "model_error" if iteration == 0 else "model_error_mid_turn"
                if err.kind == CONTEXT_LENGTH:
                    # the server's window is smaller than we knew: the next request is
                    # compacted to fit the window learned here
                    brain.calibration.context_refused(err, result.request_tokens[-1])
                break
            result.billed_tokens += brain.record_reply(reply, ctx.now)
            if brain.calibration.learning_token_scale():
                # a model tiktoken does not know: the server's count of what was sent (this
                # request, not the budget's bound) keeps the budget true; counting it costs a
                # pass over the request, so only until the factor is settled
                brain.calibration.calibrate_tokens(
                    brain.request_tokens(request), reply.usage.prompt
                )
            result.model_calls += 1
            result.prompt_tokens += reply.usage.prompt
            result.completion_tokens += reply.usage.completion
            # the reply's bookkeeping is a step of its own; the events leave the queue in the
            # next, with the tools that answer them (a reload in between answers them later)
            yield NEXT_STEP
            if iteration == 0 and on_first_reply is not None:
                on_first_reply()
            final = yield from _apply_reply(brain, ctx, reply, pending, policy, result)
            if metadata is not None:
                kept = metadata()
                pending = [_with_metadata(message, kept) for message in pending]
            brain.history.extend(pending)
            pending = []
            if final:
                break
            # what this reply did is stored: the next request is prepared in a step of its own,
            # and once the players have their answer the rest of the turn is closing work
            answered = answered or any(
                brain.registry.reaches_players(call["name"]) for call in result.tool_calls
            )
            yield CLOSING_STEP if answered else NEXT_STEP
        else:
            result.stop_reason = "iteration_limit"
    finally:
        brain.save_usage(usage)
    return result


def _speak(brain: Brain, ctx: ToolContext, text: str, result: LoopResult) -> Generator:
    """Say a reply the model wrote as text instead of calling a tool, through the tool that
    would have said it (`say`, or `whisper` back in a private exchange), with every check of
    that tool: nothing reaches anyone its audience may not. No message joins the history (no
    tool was called); the turn's record shows it, marked `from_text`."""
    arguments = {"text": text[:MAX_SPOKEN_CHARS]}
    answer = _answer(ctx)
    if answer is None:
        return
    name, listener = answer
    if listener is not None:
        arguments["target"] = listener.name
    yield NEXT_STEP
    call = ToolCall(id="plain-text", name=name, arguments=json.dumps(arguments))
    outcome = brain.registry.dispatch(ctx, call, TURN)
    result.tool_calls.append(
        {
            "name": name,
            "arguments": call.arguments,
            "ok": outcome.ok,
            "writes_memory": False,
            "result": outcome.content[: brain.config.max_tool_output_chars],
            "detail": outcome.detail,
            "from_text": True,
        }
    )
    result.stop_reason = "plain_text_said" if outcome.ok else "plain_text_not_said"


def _forced_tool(
    brain: Brain,
    ctx: ToolContext,
    policy: StopPolicy,
    result: LoopResult,
    iteration: int,
    answered: bool,
) -> str | None:
    """The tool this request asks for by name, if any: the tool that answers someone who
    spoke to the assistant, (1) once after a reply with nothing in it (llama-cpp-python's
    "auto" can leave a model no way to speak), and (2) in the last call of a turn that has
    answered no one yet (a small model can spend every call on journaling and bookmarks while
    the player waits). Never for a server told to get no `tool_choice` ("omit"), nor in a turn
    nobody addressed (ambient talk, other assistants, a builder's instruction)."""
    if result.forced_tool and iteration == 1:
        return result.forced_tool
    if iteration == 0 or iteration != policy.max_iterations - 1 or answered:
        return None
    name = _answer_due(brain, ctx, policy)
    if name is not None:
        result.forced_tool = name
    return name


def _answer_due(brain: Brain, ctx: ToolContext, policy: StopPolicy) -> str | None:
    """The tool that answers, when this conversation owes someone an answer and the request
    may name it (see `_forced_tool`)."""
    if policy.plain_text == "drop" or brain.config.tool_choice == "omit":
        return None
    if not any(s.addressed and not s.instruction for s in ctx.speakers.values()):
        return None
    answer = _answer(ctx)
    if answer is None or answer[0] not in brain.registry.names(policy.scope):
        return None
    return answer[0]


def _answer(ctx: ToolContext) -> tuple[str, Speaker | None] | None:
    """How this conversation answers: `say` to the room, or `whisper` to its one listener (the
    partner of a private exchange, or the one person a conversation narrowed to private words
    may tell); None when no one tool can (a private audience of several)."""
    speakers = list(ctx.speakers.values())
    if ctx.reply_to is not None:
        partner = next((s for s in speakers if s.key == ctx.reply_to), None)
        return ("whisper", partner) if partner is not None else None
    if ctx.audience is None:
        return "say", None
    listeners = [s for s in speakers if s.key in ctx.audience]
    if len(listeners) == 1 and set(ctx.audience) == {listeners[0].key}:
        # said aloud it would be refused before anyone else present: whispered instead
        return "whisper", listeners[0]
    return None


def _with_metadata(message: dict, metadata: dict) -> dict:
    return {**message, "metadata": {**(message.get("metadata") or {}), **metadata}}


def _checked(before_request: BeforeRequest, pending: list[dict]) -> Generator[Any, Any, bool]:
    check = before_request(pending)
    if isinstance(check, GeneratorType):
        return (yield from check)
    return bool(check)


def _apply_reply(
    brain: Brain,
    ctx: ToolContext,
    reply: ChatReply,
    pending: list[dict],
    policy: StopPolicy,
    result: LoopResult,
) -> Generator[Any, Any, bool]:
    """Add the reply and its tool results to `pending`; return True for a final output."""
    usage = brain.usage()
    text = (reply.refusal or reply.content or "").strip()
    if text and len(result.texts) < MAX_TEXTS_KEPT:
        result.texts.append(text[:MAX_SPOKEN_CHARS])
    if reply.refusal:
        usage.record_malformed("refusal")
        pending.append({"role": "assistant", "content": reply.refusal})
        result.stop_reason = "refusal"
        return True
    if reply.finish_reason == "length":
        # tool calls cut off mid-JSON cannot be run; keep only the text
        usage.record_malformed("length")
        pending.append({"role": "assistant", "content": reply.content or ""})
        result.stop_reason = "length"
        return True
    if not reply.tool_calls and not (reply.content or "").strip():
        name = _answer_due(brain, ctx, policy) if result.model_calls == 1 else None
        if name is not None and policy.max_iterations > 1:
            # nothing said and nothing done in answer to someone: asked once more, for the
            # tool that answers (an empty message would only be noise in the history)
            result.forced_tool = name
            return False
        result.stop_reason = "empty_reply"
        return True
    pending.append(reply.as_message())
    if not reply.tool_calls:
        text = " ".join((reply.content or "").split())
        if text and policy.plain_text == "remind" and not result.reminded:
            # once: the model is told how it acts, and answers again
            result.reminded = True
            pending.append({"role": "user", "content": TOOLS_REMINDER})
            return False
        result.stop_reason = "no_tool_call"
        # a text the client had to cut is not what the model meant: it is not spoken
        if text and policy.plain_text in ("say", "remind") and CONTENT_CUT not in reply.malformed:
            yield from _speak(brain, ctx, text, result)
        return True
    if policy.end_on_out_of_scope:
        offered = set(brain.registry.names(policy.scope))
        outside = [call.name for call in reply.tool_calls if call.name not in offered]
        if outside:
            # every call is answered (the history must stay valid), none is run
            content = f"Error: only {', '.join(sorted(offered))} may be used now."
            for call in reply.tool_calls:
                pending.append({"role": "tool", "tool_call_id": call.id, "content": content})
            result.stop_reason = f"out_of_scope: {', '.join(outside)}"
            return True
    capped = False
    limit = brain.config.max_tool_output_chars
    for index, call in enumerate(reply.tool_calls):
        if index:
            yield NEXT_STEP
        room_in_turn = policy.max_calls_per_turn - len(result.tool_calls)
        if index >= policy.max_calls_per_reply or room_in_turn <= 0:
            capped = True
            usage.record_malformed(TOO_MANY_TOOL_CALLS)
            content = (
                f"Error: not run. At most {policy.max_calls_per_reply} tool calls per reply "
                f"and {policy.max_calls_per_turn} per turn."
            )
            pending.append({"role": "tool", "tool_call_id": call.id, "content": content})
            continue
        outcome = brain.registry.dispatch(ctx, call, policy.scope)
        while outcome.pending is not None:
            # a tool that needs blocking work (an embedding): run it off the reactor
            try:
                value = yield outcome.pending
            except LLMError as err:
                value = err
            try:
                outcome = outcome.resume(value)
            except Exception:
                outcome = ToolResult.error(
                    f"'{call.name}' failed unexpectedly; try something else.",
                    TOOL_EXCEPTION,
                    detail=traceback.format_exc(),
                )
        if outcome.malformed:
            usage.record_malformed(outcome.malformed)
        content = outcome.content
        if len(content) > limit:
            content = content[:limit] + " [truncated]"
        pending.append({"role": "tool", "tool_call_id": call.id, "content": content})
        result.tool_calls.append(
            {
                "name": call.name,
                "arguments": call.arguments,
                "ok": outcome.ok,
                "writes_memory": brain.registry.writes_memory(call.name),
                "result": content,
                "detail": outcome.detail,
            }
        )
    if ctx.control.stop_reason:
        result.stop_reason = ctx.control.stop_reason
        return True
    if capped and len(result.tool_calls) >= policy.max_calls_per_turn:
        result.stop_reason = "tool_call_limit"
        return True
    return False
