"""
`tool_choice` "required" or a named tool, and the servers that refuse them.

A call that must end in a tool call (the sleep turn's `wake_up` or `stay_asleep`, an assistant
set to `tool_choice` "required") asks for it with "required"; a turn that owes someone an answer
names the tool that gives it. Some servers refuse the value: llama-cpp-python's
function-calling format answers "required" with a 500 (it knows "auto", "none" and a named tool
only), and without any `tool_choice` it leaves the tools out of the prompt, so "omit" is no way
out. Such a refusal (a 400, 422, 500 or 501 that is not about the context length) is answered
by sending the same request at once with "auto", which every server with tool calling takes;
the tools are still offered and the reply is read as usual.

The fallback is per endpoint (the client is shared by its assistants) and per cause: "required"
and a named tool are remembered apart, it touches `tool_choice` only, never the
structured-output ladder (`llm.structured`), and it is remembered only once "auto" has
answered, so a passing failure of both is not taken for a refusal. Later calls on that client
send "auto" from the start for what it refused.

Like the client's calls, it comes blocking (`complete_with_tools`) and as a coroutine
(`acomplete_with_tools`); both follow the same steps (`_requests`).

"""

import asyncio
import threading
import weakref
from collections.abc import Generator
from dataclasses import replace

from .chat import BAD_REQUEST, CONTEXT_LENGTH, SERVER_ERROR, ChatReply, ChatRequest, LLMError
from .server_errors import names_context_length

REQUIRED = "required"
NAMED = "named"  # a `tool_choice` naming one function
FALLBACK = "auto"

# what each client's server refused and answered with "auto" instead ({REQUIRED, NAMED}), by
# the client itself (as `llm.structured` keeps its ladder's floor)
_REFUSED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_REFUSED_KEPT: dict[int, tuple[object, frozenset]] = {}  # clients not weakly referenceable
_LOCK = threading.Lock()


def _refused(client) -> frozenset:
    with _LOCK:
        try:
            return _REFUSED.get(client, frozenset())
        except TypeError:
            return _REFUSED_KEPT.get(id(client), (None, frozenset()))[1]


def refuses_required(client) -> bool:
    """Whether this client's server was found to refuse `tool_choice` "required".

    Args:
        client: A model client.

    Returns:
        bool: True once a refused "required" was answered with "auto" on it.

    """
    return REQUIRED in _refused(client)


def _remember(client, kind: str) -> None:
    kinds = _refused(client) | {kind}
    with _LOCK:
        try:
            _REFUSED[client] = kinds
        except TypeError:
            _REFUSED_KEPT[id(client)] = (client, kinds)  # alive, so its id stays its own


def _kind(choice) -> str | None:
    if choice == REQUIRED:
        return REQUIRED
    return NAMED if isinstance(choice, dict) else None


def choice_refused(error: LLMError) -> bool:
    """Whether an error of a request sent with "required" or a named tool may be the server
    refusing it.

    Args:
        error (LLMError): The error.

    Returns:
        bool: True for a 400, 422, 500 or 501, never for a context-length refusal (a smaller
            request is the cure for that, not another `tool_choice`).

    """
    if error.kind == CONTEXT_LENGTH or names_context_length(str(error)):
        return False
    return error.kind in (BAD_REQUEST, SERVER_ERROR) or error.status in (400, 422, 500, 501)


def _requests(client, request: ChatRequest) -> Generator[ChatRequest, ChatReply, ChatReply]:
    """The steps of one call, without the I/O: yields each request to send, receives its reply
    (or has its `LLMError` thrown in), returns the reply."""
    kind = _kind(request.tool_choice)
    if kind is None or not request.tools:
        return (yield request)
    if kind in _refused(client):
        return (yield replace(request, tool_choice=FALLBACK))
    try:
        return (yield request)
    except LLMError as exc:
        if not choice_refused(exc):
            raise
        first = exc
    try:
        reply = yield replace(request, tool_choice=FALLBACK)
    except LLMError:
        raise first from None  # both failed: nothing learned, the first error stands
    _remember(client, kind)
    return reply


def advance(steps: Generator, reply: ChatReply | None = None, error: LLMError | None = None):
    """Give the steps a reply (or its error): (False, the next request) or (True, the result).
    An error the steps do not handle is raised."""
    try:
        return False, (steps.throw(error) if error is not None else steps.send(reply))
    except StopIteration as done:
        return True, done.value


def run(steps: Generator, complete):
    """Drive the steps to their result, sending each request with `complete` (blocking).

    Args:
        steps (Generator): Yields requests, is sent their replies (or thrown their errors).
        complete (callable): Sends one request, returning its reply.

    Returns:
        The steps' result.

    """
    finished, value = False, next(steps)
    while not finished:
        try:
            finished, value = advance(steps, complete(value))
        except LLMError as exc:
            finished, value = advance(steps, error=exc)
    return value


def complete_with_tools(client, request: ChatRequest) -> ChatReply:
    """`client.complete(request)`, sending "auto" where the server refuses "required" or a
    named tool.

    Args:
        client: The model client.
        request (ChatRequest): The request.

    Returns:
        ChatReply: The reply.

    Raises:
        LLMError: When the call fails (for a refused "required" whose "auto" failed too, the
            first error).

    """
    return run(_requests(client, request), client.complete)


async def acomplete_with_tools(client, request: ChatRequest) -> ChatReply:
    """`complete_with_tools` as a coroutine (`client.acomplete`, or `complete` in a thread for
    a client without coroutines).

    Args:
        client: The model client.
        request (ChatRequest): The request.

    Returns:
        ChatReply: The reply.

    Raises:
        LLMError: As `complete_with_tools`.

    """
    steps = _requests(client, request)
    finished, value = False, next(steps)
    while not finished:
        try:
            if hasattr(client, "acomplete"):
                reply = await client.acomplete(value)
            else:
                reply = await asyncio.to_thread(client.complete, value)
            finished, value = advance(steps, reply)
        except LLMError as exc:
            finished, value = advance(steps, error=exc)
    return value
