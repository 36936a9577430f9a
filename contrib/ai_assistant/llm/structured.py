"""
Structured outputs: a pydantic model in, a validated object out.

Servers differ in what they take, so the request steps down a ladder of formats until one is
taken:

1. `response_format: json_schema` (OpenAI, vLLM, llama.cpp's server, Ollama, LM Studio);
2. `json_object` with the schema in the prompt and as the `schema` extension (llama-cpp-python
   enforces it with a grammar);
3. plain `json_object` with the schema in the prompt;
4. no `response_format` at all: the schema in the prompt and JSON read from the text.

A step is refused when the server answers 400, 422, 500 or 501 with a message that names the
format (llama-cpp-python answers `json_schema` with a 500), and never for a context-length
refusal: a 400 about something else (an unsupported temperature, a content filter) fails that
call and moves nothing. The client is shared by every assistant on its endpoint, so a step down
is remembered only once the lower step has been taken (a 200 reply); later calls start there.
`structured_output` fixes the step by hand ("json_schema", "json_object", "text"; "auto" climbs
down the ladder).

Whatever comes back is checked with `check_model_json` (a size and a depth limit) and validated
with the pydantic model; a batch reply (one list of items) whose meaning is plain is mended
(`repair`: the list bare or under another name, one item alone, a mapping of id to value; the
items that fit kept). A reply that does not fit raises `LLMError(INVALID_RESPONSE)` carrying
the replies received (`LLMError.replies`), so their tokens are counted all the same. A reply
cut off at `max_tokens` (finish reason "length") is said to be cut off, not "invalid JSON", and
asked again once with twice the room.

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

from .chat import INVALID_RESPONSE, ChatClient, ChatReply, ChatRequest, LLMError
from .replies import CONTENT_CUT, MAX_REPLY_CHARS
from .model_json import ModelJSONError, check_model_json
from .schemas import bounds_in_words
from .tool_choice import advance, choice_refused, run

Model = TypeVar("Model", bound=BaseModel)

# the steps of the ladder, best first
JSON_SCHEMA = "json_schema"
JSON_OBJECT_SCHEMA = "json_object+schema"
JSON_OBJECT = "json_object"
TEXT = "text"
LADDER = (JSON_SCHEMA, JSON_OBJECT_SCHEMA, JSON_OBJECT, TEXT)
# `structured_output` values and the step each starts (and stays) at
MODES = {"auto": None, "json_schema": JSON_SCHEMA, "json_object": JSON_OBJECT, "text": TEXT}
# the most tokens a cut-off structured reply is asked again with
MAX_RETRY_TOKENS = 16000
# words in an error's message that say the server did not take the format (llama-cpp-python:
# "response_format ... json_schema is not supported"; vLLM: "guided decoding")
_FORMAT_WORDS = (
    "response_format",
    "response format",
    "json_schema",
    "json_object",
    "schema",
    "grammar",
    "structured output",
    "guided",
)

# the lowest step each client's server took, by the client itself: an id would be reused by
# another client once this one is gone, and that one would start low for nothing
_FLOOR: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_FLOOR_KEPT: dict[int, tuple[object, int]] = {}  # clients that cannot be weakly referenced
_LOCK = threading.Lock()


def _floor(client) -> int:
    with _LOCK:
        try:
            return _FLOOR.get(client, 0)
        except TypeError:
            return _FLOOR_KEPT.get(id(client), (None, 0))[1]


def _remember_floor(client, step: int) -> None:
    with _LOCK:
        try:
            _FLOOR[client] = max(_FLOOR.get(client, 0), step)
        except TypeError:
            _FLOOR_KEPT[id(client)] = (client, step)  # alive, so its id stays its own


def format_refused(error: LLMError) -> bool:
    """Whether an error says the server does not take the response format it was sent.

    Args:
        error (LLMError): The error of a structured call.

    Returns:
        bool: True for a 400, 422, 500 or 501 whose message names the format; never for one
            about anything else, nor for a refusal that names the context length.

    """
    message = str(error).lower()
    return choice_refused(error) and any(word in message for word in _FORMAT_WORDS)


def schema_format(output_model: type[BaseModel]) -> dict:
    """The `response_format` asking for `output_model`'s JSON schema.

    Args:
        output_model (type[BaseModel]): The pydantic model the reply must fit.

    Returns:
        dict: A `json_schema` response format, named after the model.

    """
    return {
        "type": "json_schema",
        # bounds in words: a grammar-constrained server cannot take them (`llm.schemas`)
        "json_schema": {
            "name": output_model.__name__,
            "schema": bounds_in_words(output_model.model_json_schema()),
        },
    }


def _request_for(step: str, request: ChatRequest, output_model: type[BaseModel]) -> ChatRequest:
    """`request` asking for `output_model` at one step of the ladder."""
    if step == JSON_SCHEMA:
        return replace(request, response_format=schema_format(output_model))
    schema = bounds_in_words(output_model.model_json_schema())
    instruction = {
        "role": "system",
        "content": "Reply with one JSON object only, matching this JSON schema: "
        + json.dumps(schema, separators=(",", ":")),
    }
    response_format = None
    if step == JSON_OBJECT_SCHEMA:
        response_format = {"type": "json_object", "schema": schema}
    elif step == JSON_OBJECT:
        response_format = {"type": "json_object"}
    return replace(
        request, messages=[*request.messages, instruction], response_format=response_format
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
    if reply.finish_reason == "length":
        raise LLMError(
            INVALID_RESPONSE,
            f"Structured reply for {output_model.__name__} was cut off at the reply's token "
            "limit before its JSON ended.",
        )
    if CONTENT_CUT in reply.malformed:
        # the client kept only the start of a reply too long for the request: not the JSON
        # the model meant, and the note says how long it was
        note = (reply.content or "").rpartition(" [cut: ")[2].rstrip("]")
        raise LLMError(INVALID_RESPONSE, f"Structured reply was too long and was cut ({note}).")
    text = (reply.content or "").strip()
    if text.startswith("```"):
        # some servers wrap JSON mode output in a fence
        text = text.strip("`").removeprefix("json").strip()
    elif not text.startswith(("{", "[")) and "{" in text and "}" in text:
        # JSON asked for in the text only: a small model may say something around it
        text = text[text.index("{") : text.rindex("}") + 1]
    try:
        check_model_json(text, "the contents of the structured reply", max_chars=MAX_REPLY_CHARS)
    except ModelJSONError as exc:
        raise LLMError(
            INVALID_RESPONSE, f"Structured reply for {output_model.__name__}: {exc}."
        ) from None
    try:
        return output_model.model_validate_json(text)
    except ValidationError as exc:
        try:
            repaired = repair(json.loads(text), output_model)
        except ValueError:
            repaired = None  # not JSON at all: nothing to mend
        if repaired is not None:
            return repaired
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "reply"
        raise LLMError(
            INVALID_RESPONSE,
            f"Structured reply did not match {output_model.__name__}: {where}: {first['msg']}",
        ) from None


def _list_field(output_model: type[BaseModel]) -> tuple[str, type[BaseModel]] | None:
    """(name, item model) when `output_model` is one list of objects (its other fields, if
    any, have defaults): the shape of every batch reply (scores, facts, profiles)."""
    lists, required = [], []
    for name, field in output_model.model_fields.items():
        args = getattr(field.annotation, "__args__", ())
        if getattr(field.annotation, "__origin__", None) is list and len(args) == 1:
            if isinstance(args[0], type) and issubclass(args[0], BaseModel):
                lists.append((name, args[0]))
        if field.is_required():
            required.append(name)
    if len(lists) != 1 or set(required) - {lists[0][0]}:
        return None
    return lists[0]


def _items_of(value, name: str, item_model: type[BaseModel]) -> list | None:
    """The items a reply holds, in the shapes small models write them in."""
    if isinstance(value, list):
        return value  # the list itself, without its object
    if not isinstance(value, dict):
        return None
    if isinstance(value.get(name), list):
        return value[name]
    if name in value:
        return None
    lists = [item for item in value.values() if isinstance(item, list)]
    if len(value) == 1 and lists:
        return lists[0]  # the list under another name
    fields = [n for n, f in item_model.model_fields.items() if f.is_required()]
    if set(fields) <= set(value):
        return [value]  # one item, without the list
    if len(fields) == 2 and value and all(isinstance(key, str) for key in value):
        # a mapping of each item's first field to its second: {"e1": 7, "e2": 3}
        return [{fields[0]: key, fields[1]: item} for key, item in value.items()]
    return None


def repair(value, output_model: type[Model]) -> Model | None:
    """A reply that did not fit `output_model`, mended where its meaning is plain: the batch
    replies are one list of items, and small models (and JSON mode without the schema
    enforced) write the list bare, under another name, as one item, or as a mapping of id to
    value; of the items, those that fit are kept (a sleep files what it can; an item that
    breaks a rule is left out, never stored).

    Args:
        value: The reply's JSON, decoded.
        output_model (type[BaseModel]): The pydantic model the reply was asked to fit.

    Returns:
        BaseModel or None: The mended reply, or None when its meaning is not plain (nothing
            that fits, or a model of another shape).

    """
    shape = _list_field(output_model)
    if shape is None:
        return None
    name, item_model = shape
    items = _items_of(value, name, item_model)
    if not items:
        return None
    kept = []
    for item in items:
        try:
            kept.append(item_model.model_validate(item))
        except ValidationError:
            continue
    if not kept:
        return None
    try:
        return output_model.model_validate({name: kept})
    except ValidationError:
        return None  # a rule on the whole list (its length): not mended


def _requests(
    client: ChatClient, request: ChatRequest, output_model: type[Model], mode: str = "auto"
) -> Generator[ChatRequest, ChatReply, tuple[Model, list[ChatReply]]]:
    """The steps of a structured completion, without the I/O: yields each request to send,
    receives its reply (or has its `LLMError` thrown in), returns the result."""
    fixed = MODES.get(mode)
    step = LADDER.index(fixed) if fixed else _floor(client)
    replies: list[ChatReply] = []
    retried = False
    while True:
        try:
            reply = yield _request_for(LADDER[step], request, output_model)
        except LLMError as exc:
            if fixed or step == len(LADDER) - 1 or not format_refused(exc):
                exc.replies = replies
                raise
            step += 1
            continue
        if not fixed:
            # taken: later calls start here (not before: a step nobody took proves nothing)
            _remember_floor(client, step)
        replies.append(reply)
        try:
            return parse_reply(reply, output_model), replies
        except LLMError as exc:
            if reply.finish_reason == "length" and not retried:
                # cut off: once more, with twice the room
                retried = True
                request = replace(request, max_tokens=min(request.max_tokens * 2, MAX_RETRY_TOKENS))
                continue
            exc.replies = replies
            raise


def complete_structured(
    client: ChatClient, request: ChatRequest, output_model: type[Model], mode: str = "auto"
) -> tuple[Model, list[ChatReply]]:
    """Ask for `output_model` and return it with the raw replies (for usage accounting).

    Args:
        client (ChatClient): The client to call.
        request (ChatRequest): The request, without `response_format`.
        output_model (type): The pydantic model the reply must fit.
        mode (str, optional): `structured_output`: "auto" climbs down the ladder, or the
            one format to use ("json_schema", "json_object", "text").

    Returns:
        tuple: (validated object, list of every ChatReply received).

    Raises:
        LLMError: When the call fails or the reply does not fit; its `replies` are the
            replies received before it (their tokens were spent).

    """
    return run(_requests(client, request, output_model, mode), client.complete)


async def acomplete_structured(
    client, request: ChatRequest, output_model: type[Model], mode: str = "auto"
) -> tuple[Model, list[ChatReply]]:
    """`complete_structured` as a coroutine, for a client with `acomplete`.

    Args:
        client: The client to call (it has `acomplete`).
        request (ChatRequest): The request, without `response_format`.
        output_model (type): The pydantic model the reply must fit.
        mode (str, optional): As `complete_structured`.

    Returns:
        tuple: (validated object, list of every ChatReply received).

    Raises:
        LLMError: As `complete_structured`.

    """
    steps = _requests(client, request, output_model, mode)
    finished, value = False, next(steps)
    while not finished:
        try:
            finished, value = advance(steps, await client.acomplete(value))
        except LLMError as exc:
            finished, value = advance(steps, error=exc)
    return value
