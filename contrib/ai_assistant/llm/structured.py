"""
Structured outputs: a pydantic model in, a validated object out.

The request asks for `response_format: json_schema` first. A server that rejects that (HTTP 400,
as many local servers do) is asked again in JSON mode with the schema in the prompt, and that
endpoint is remembered so later calls go straight to JSON mode. Whatever comes back is checked
with `check_model_json` (a size and a depth limit) and validated with the pydantic model; a
reply that does not fit raises `LLMError(INVALID_RESPONSE)`.

Like the client's calls, it comes blocking (`complete_structured`) and as a coroutine
(`acomplete_structured`); both follow the same steps (`_requests`).

"""

import json
import threading
import weakref
from collections.abc import Generator
from dataclasses import replace
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from .client import (
    BAD_REQUEST,
    CONTENT_CUT,
    INVALID_RESPONSE,
    MAX_REPLY_CHARS,
    ChatClient,
    ChatReply,
    ChatRequest,
    LLMError,
)
from .model_json import ModelJSONError, check_model_json

Model = TypeVar("Model", bound=BaseModel)

# the clients whose server refused `json_schema`, by the client itself: an id would be reused by
# another client once this one is gone, and that one would be asked in JSON mode for nothing
_JSON_MODE_ONLY: "weakref.WeakSet" = weakref.WeakSet()
_JSON_MODE_ONLY_KEPT: dict[int, object] = {}  # clients that cannot be weakly referenced, kept
_LOCK = threading.Lock()


def _json_mode_only(client) -> bool:
    try:
        return client in _JSON_MODE_ONLY
    except TypeError:
        return id(client) in _JSON_MODE_ONLY_KEPT


def _remember_json_mode_only(client) -> None:
    try:
        _JSON_MODE_ONLY.add(client)
    except TypeError:
        _JSON_MODE_ONLY_KEPT[id(client)] = client  # alive, so its id stays its own


def schema_format(output_model: type[BaseModel]) -> dict:
    """The `response_format` asking for `output_model`'s JSON schema.

    Args:
        output_model (type[BaseModel]): The pydantic model the reply must fit.

    Returns:
        dict: A `json_schema` response format, named after the model.

    """
    return {
        "type": "json_schema",
        "json_schema": {"name": output_model.__name__, "schema": output_model.model_json_schema()},
    }


def _json_mode_request(request: ChatRequest, output_model: type[BaseModel]) -> ChatRequest:
    schema = json.dumps(output_model.model_json_schema(), separators=(",", ":"))
    instruction = {
        "role": "system",
        "content": f"Reply with one JSON object only, matching this JSON schema: {schema}",
    }
    return replace(
        request,
        messages=[*request.messages, instruction],
        response_format={"type": "json_object"},
    )


def parse_reply(reply: ChatReply, output_model: type[Model]) -> Model:
    """Validate a reply's content as `output_model`.

    A code fence around the JSON is removed first. The JSON must pass `check_model_json` (at
    most `MAX_REPLY_CHARS` characters, nested at most `MAX_JSON_DEPTH` levels) before pydantic
    decodes it.

    Args:
        reply (ChatReply): The model's reply.
        output_model (type[BaseModel]): The pydantic model the content must fit.

    Returns:
        BaseModel: The validated object, an instance of `output_model`.

    Raises:
        LLMError: `INVALID_RESPONSE`, when the model refused, the reply was cut (too long), or
            naming what did not fit.

    """
    if reply.refusal:
        raise LLMError(INVALID_RESPONSE, f"The model refused: {reply.refusal[:200]}")
    if CONTENT_CUT in reply.malformed:
        # the client kept only the start of a reply too long for the request: not the JSON
        # the model meant, and the note says how long it was
        note = (reply.content or "").rpartition(" [cut: ")[2].rstrip("]")
        raise LLMError(INVALID_RESPONSE, f"Structured reply was too long and was cut ({note}).")
    text = (reply.content or "").strip()
    if text.startswith("```"):
        # some servers wrap JSON mode output in a fence
        text = text.strip("`").removeprefix("json").strip()
    try:
        check_model_json(text, "the contents of the structured reply", max_chars=MAX_REPLY_CHARS)
    except ModelJSONError as exc:
        raise LLMError(
            INVALID_RESPONSE, f"Structured reply for {output_model.__name__}: {exc}."
        ) from None
    try:
        return output_model.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "reply"
        raise LLMError(
            INVALID_RESPONSE,
            f"Structured reply did not match {output_model.__name__}: {where}: {first['msg']}",
        ) from None


def _requests(
    client: ChatClient, request: ChatRequest, output_model: type[Model]
) -> Generator[ChatRequest, ChatReply, tuple[Model, list[ChatReply]]]:
    """The steps of a structured completion, without the I/O: yields each request to send,
    receives its reply (or has its `LLMError` thrown in), returns the result."""
    with _LOCK:
        json_mode_only = _json_mode_only(client)
    if not json_mode_only:
        try:
            reply = yield replace(request, response_format=schema_format(output_model))
            return parse_reply(reply, output_model), [reply]
        except LLMError as exc:
            if exc.kind != BAD_REQUEST:
                raise
            with _LOCK:
                _remember_json_mode_only(client)
    reply = yield _json_mode_request(request, output_model)
    return parse_reply(reply, output_model), [reply]


def _advance(steps: Generator, reply: ChatReply | None = None, error: LLMError | None = None):
    """Give the steps a reply (or its error): (False, the next request) or (True, the result).
    An error the steps do not handle is raised."""
    try:
        return False, (steps.throw(error) if error is not None else steps.send(reply))
    except StopIteration as done:
        return True, done.value


def complete_structured(
    client: ChatClient, request: ChatRequest, output_model: type[Model]
) -> tuple[Model, list[ChatReply]]:
    """Ask for `output_model` and return it with the raw replies (for usage accounting).

    Args:
        client (ChatClient): The client to call.
        request (ChatRequest): The request, without `response_format`.
        output_model (type): The pydantic model the reply must fit.

    Returns:
        tuple: (validated object, list of every ChatReply received).

    Raises:
        LLMError: When the call fails or the reply does not fit.

    """
    steps = _requests(client, request, output_model)
    finished, value = False, next(steps)
    while not finished:
        try:
            finished, value = _advance(steps, client.complete(value))
        except LLMError as exc:
            finished, value = _advance(steps, error=exc)
    return value


async def acomplete_structured(
    client, request: ChatRequest, output_model: type[Model]
) -> tuple[Model, list[ChatReply]]:
    """`complete_structured` as a coroutine, for a client with `acomplete`.

    Args:
        client: The client to call (it has `acomplete`).
        request (ChatRequest): The request, without `response_format`.
        output_model (type): The pydantic model the reply must fit.

    Returns:
        tuple: (validated object, list of every ChatReply received).

    Raises:
        LLMError: When the call fails or the reply does not fit.

    """
    steps = _requests(client, request, output_model)
    finished, value = False, next(steps)
    while not finished:
        try:
            finished, value = _advance(steps, await client.acomplete(value))
        except LLMError as exc:
            finished, value = _advance(steps, error=exc)
    return value
