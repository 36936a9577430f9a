"""
A model endpoint's replies, read and bounded: a chat completion (`reply_from_completion`),
embeddings (`vectors_from`) and rerank scores (`rerank_scores_from`).

The endpoint is not trusted. Its reply is read here, off the reactor, and everything in it is
bounded before the game sees it: the text, the refusal, the number of tool calls, each call's
name, id and arguments, the finish reason, the model's name, the token counts, the embeddings.
What was too long is cut (or, for a tool call's arguments, replaced so the tool answers with an
error) and named in `ChatReply.malformed`; a reply of the wrong shape, or one the SDK could not
read at all (not JSON, nested too deep), is an `LLMError` of kind `invalid_response`. See
docs/security.md, "A hostile model endpoint".

"""

import math
from typing import Any

from ..text import redact
from .chat import INVALID_RESPONSE, ChatReply, LLMError, TokenUsage, ToolCall
from .model_json import MAX_TOOL_ARGUMENT_CHARS, too_large_message

# ---- the bounds of what a model endpoint may send (see `reply_from_completion`) ----------------

# a reply's text and its tool calls' arguments together: `max_tokens` tokens of real text are
# never more than CHARS_PER_TOKEN characters each (a token averages about four), so this much
# room is never short for an honest reply; MIN_REPLY_CHARS for small `max_tokens`, and
# MAX_REPLY_CHARS for the largest the configuration allows (`max_reply_tokens`, 32,000)
CHARS_PER_TOKEN = 8
MIN_REPLY_CHARS = 16_000
MAX_REPLY_CHARS = CHARS_PER_TOKEN * 32_000
MAX_REFUSAL_CHARS = 2_000

# tool calls kept from one reply; the configuration lets at most 50 of them run
MAX_TOOL_CALLS_PER_REPLY = 64
MAX_TOOL_NAME_CHARS = 64  # OpenAI's own limit on a function's name
MAX_TOOL_CALL_ID_CHARS = 128  # OpenAI's are about 30 characters, Mistral's 9
MAX_FINISH_REASON_CHARS = 32  # the longest standard one, "content_filter", is 14
MAX_MODEL_NAME_CHARS = 200  # as the configuration's `model`
MAX_SERVED_MODELS = 200  # names read from an endpoint's model list (OpenAI lists about 100)
MAX_RERANK_DOCUMENTS = 100  # documents one rerank call may score (`recall_rerank_candidates`)

# the most dimensions of an embedding (the largest embedding models have a few thousand)
MAX_EMBEDDING_DIMENSIONS = 16_384

# what was wrong with a reply that was bounded or corrected, counted as malformed output
CONTENT_CUT = "content_cut"
REFUSAL_CUT = "refusal_cut"
TOOL_CALLS_DROPPED = "tool_calls_dropped"
TOOL_NAME_CUT = "tool_name_cut"
TOOL_CALL_ID_CUT = "tool_call_id_cut"
FINISH_REASON_CUT = "finish_reason_cut"
MODEL_NAME_CUT = "model_name_cut"
INVALID_USAGE = "invalid_usage"

# what the SDK raises, besides its own errors, when it cannot read a 200 reply's body: it
# decodes it with `json.loads`, which raises `JSONDecodeError` (not JSON), `RecursionError`
# (nested deeper than Python's recursion limit) or `ValueError` (a number of more than 4,300
# digits); an embedding in base64 that does not decode raises `binascii.Error`, a `ValueError`
UNREADABLE = (ValueError, RecursionError)


def vectors_from(response: Any, texts: list[str]) -> list[list[float]]:
    """The embeddings of a reply, in the order of `texts`, checked: one vector per text, each a
    list of finite numbers, all of one length from 1 to `MAX_EMBEDDING_DIMENSIONS`."""
    data = getattr(response, "data", None)
    if not isinstance(data, list):
        raise LLMError(INVALID_RESPONSE, "The embeddings reply had no list of embeddings.")
    if len(data) != len(texts):
        raise LLMError(INVALID_RESPONSE, f"{len(data)} embeddings for {len(texts)} texts.")
    indexes = [getattr(item, "index", None) for item in data]
    if not all(type(index) is int for index in indexes):
        raise LLMError(INVALID_RESPONSE, "The embeddings reply had an embedding without an index.")
    order = sorted(range(len(data)), key=indexes.__getitem__)
    vectors = [getattr(data[position], "embedding", None) for position in order]
    dimensions = len(vectors[0]) if vectors and isinstance(vectors[0], list) else 0
    for vector in vectors:
        if isinstance(vector, list) and vector and isinstance(vector[0], list):
            # llama.cpp's server without pooling answers a vector per token
            raise LLMError(
                INVALID_RESPONSE,
                f"The embeddings server sent {len(vector):,} vectors for one text (one per "
                "token): it must pool them into one. Start llama.cpp's llama-server with "
                "--pooling mean (or the pooling the model's card names); llama-cpp-python "
                "with --pooling_type 1.",
            )
        if not isinstance(vector, list) or not 1 <= len(vector) <= MAX_EMBEDDING_DIMENSIONS:
            size = f"{len(vector):,} numbers" if isinstance(vector, list) else type(vector).__name__
            raise LLMError(
                INVALID_RESPONSE,
                f"An embedding was {size}; an embedding is a list of 1 to "
                f"{MAX_EMBEDDING_DIMENSIONS:,} numbers.",
            )
        if len(vector) != dimensions:
            raise LLMError(
                INVALID_RESPONSE,
                f"The embeddings had {dimensions:,} and {len(vector):,} dimensions; all must "
                "have the same.",
            )
        if not all(type(value) in (float, int) and math.isfinite(value) for value in vector):
            raise LLMError(INVALID_RESPONSE, "An embedding held something not a finite number.")
    return vectors


def rerank_scores_from(reply: Any, count: int) -> list[float | None]:
    """The scores of a rerank reply, by document, checked: each result names a document by its
    index and gives a finite score; a document named twice, or out of range, is an error."""
    results = reply.get("results") if isinstance(reply, dict) else None
    if results is None and isinstance(reply, dict):
        results = reply.get("data")  # some servers put them under "data"
    if not isinstance(results, list) or len(results) > count:
        raise LLMError(
            INVALID_RESPONSE, f"The rerank reply had no list of at most {count} results."
        )
    scores: list[float | None] = [None] * count
    for result in results:
        index = result.get("index") if isinstance(result, dict) else None
        score = result.get("relevance_score", result.get("score")) if index is not None else None
        if type(index) is not int or not 0 <= index < count or scores[index] is not None:
            raise LLMError(
                INVALID_RESPONSE, f"A rerank result named no document of 0 to {count - 1} once."
            )
        if type(score) not in (float, int) or not math.isfinite(score):
            raise LLMError(INVALID_RESPONSE, "A rerank result's score was not a finite number.")
        scores[index] = float(score)
    return scores


def unreadable_error(exc: Exception, secrets: list[str]) -> LLMError:
    """A reply the SDK could not read at all (`UNREADABLE`), as an `LLMError`: otherwise it
    would escape the call as an exception no caller expects."""
    return LLMError(
        INVALID_RESPONSE,
        redact(f"The model's reply could not be read: {type(exc).__name__}: {exc}", secrets)[:300],
    )


def reply_from_completion(
    completion: Any, latency_ms: float, max_tokens: int | None = None
) -> ChatReply:
    """The `ChatReply` of a chat completion the SDK read, every part bounded.

    It runs where the reply arrives (the model I/O process, the model call queue's thread, a
    worker thread), never on the reactor, so the reactor only meets what fits the bounds:

    - the text and the tool calls' arguments together: at most `reply_char_limit(max_tokens)`
      characters. The text is cut first, with a note of how much was sent (`CONTENT_CUT`);
    - a tool call's arguments over `MAX_TOOL_ARGUMENT_CHARS`, or over what is left of the
      reply's characters: the call is kept, its arguments become "{}" and
      `ToolCall.arguments_refused` says why, so the tool answers with that error;
    - the refusal: `MAX_REFUSAL_CHARS`, cut with a note (`REFUSAL_CUT`);
    - tool calls: the first `MAX_TOOL_CALLS_PER_REPLY` (`TOOL_CALLS_DROPPED`);
    - a tool's name, a call's id, the finish reason, the model's name: cut at
      `MAX_TOOL_NAME_CHARS`, `MAX_TOOL_CALL_ID_CHARS`, `MAX_FINISH_REASON_CHARS`,
      `MAX_MODEL_NAME_CHARS`;
    - token counts: see `TokenUsage` (`INVALID_USAGE`).

    The SDK does not check the types of what it read, so a field of the wrong type (text that
    is an object, a name that is a number) is an error.

    Args:
        completion: The SDK's `ChatCompletion` (read without validation, so any shape).
        latency_ms (float): How long the call took.
        max_tokens (int, optional): The request's `max_tokens`; None when it is not known (a
            batch's output), which allows `MAX_REPLY_CHARS`.

    Returns:
        ChatReply: The bounded reply; `malformed` names what was cut or dropped.

    Raises:
        LLMError: `INVALID_RESPONSE`, for a reply without choices or with a field of the wrong
            type, naming it.

    """
    try:
        return _bounded_reply(completion, latency_ms, max_tokens)
    except LLMError:
        raise
    except Exception as exc:  # noqa: BLE001 - a shape no chat completion has
        raise LLMError(
            INVALID_RESPONSE, f"The model's reply could not be read ({type(exc).__name__})."
        ) from None


def reply_char_limit(max_tokens: int | None) -> int:
    """The most characters a reply's text and tool calls' arguments may have together.

    Args:
        max_tokens (int or None): The request's `max_tokens`, or None when not known.

    Returns:
        int: `CHARS_PER_TOKEN` per token, at least `MIN_REPLY_CHARS` and at most
            `MAX_REPLY_CHARS` (which is also the limit when `max_tokens` is not known).

    """
    if not max_tokens or max_tokens < 0:
        return MAX_REPLY_CHARS
    return min(MAX_REPLY_CHARS, max(MIN_REPLY_CHARS, CHARS_PER_TOKEN * max_tokens))


def cut_text(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, ending with a note of how much was sent.

    Args:
        text (str): The text, longer than `limit`.
        limit (int): The most characters of the result, the note included.

    Returns:
        str: The start of the text and, e.g., " [cut: 2,000,000 characters sent, 15,947 kept]".

    """
    note = f" [cut: {len(text):,} characters sent, {limit:,} kept]"
    kept = max(limit - len(note), 0)
    note = f" [cut: {len(text):,} characters sent, {kept:,} kept]"
    return text[:kept] + note


def _text_field(value: Any, what: str, default: str | None) -> str | None:
    """A text field of the reply: the default when absent, else a str, else an error."""
    if value is None:
        return default
    if not isinstance(value, str):
        raise LLMError(
            INVALID_RESPONSE,
            f"The model's reply had {what} of type {type(value).__name__}; it must be text.",
        )
    return value


def _bounded_reply(completion: Any, latency_ms: float, max_tokens: int | None) -> ChatReply:
    malformed: list[str] = []

    def note(kind: str) -> None:
        if kind not in malformed:
            malformed.append(kind)

    def bounded(value: Any, what: str, limit: int, kind: str, default: str | None) -> str | None:
        text = _text_field(value, what, default)
        if text is not None and len(text) > limit:
            note(kind)
            return text[:limit]
        return text

    choices = getattr(completion, "choices", None)
    if not choices or not isinstance(choices, list):
        raise LLMError(INVALID_RESPONSE, "The model's reply had no choices.")
    choice = choices[0]
    message = getattr(choice, "message", None)
    if message is None or isinstance(message, (str, int, float, list, dict)):
        raise LLMError(INVALID_RESPONSE, "The model's reply had no message.")

    room = reply_char_limit(max_tokens)
    content = _text_field(getattr(message, "content", None), "content", None)
    if content is not None and len(content) > room:
        note(CONTENT_CUT)
        content = cut_text(content, room)
    room -= len(content or "")
    refusal = _text_field(getattr(message, "refusal", None), "a refusal", None)
    if refusal is not None and len(refusal) > MAX_REFUSAL_CHARS:
        note(REFUSAL_CUT)
        refusal = cut_text(refusal, MAX_REFUSAL_CHARS)

    sent_calls = getattr(message, "tool_calls", None) or []
    if not isinstance(sent_calls, list):
        raise LLMError(INVALID_RESPONSE, "The model's reply had tool calls that were not a list.")
    if len(sent_calls) > MAX_TOOL_CALLS_PER_REPLY:
        note(TOOL_CALLS_DROPPED)
        sent_calls = sent_calls[:MAX_TOOL_CALLS_PER_REPLY]
    calls = []
    for index, call in enumerate(sent_calls):
        function = getattr(call, "function", None)
        if function is None:
            continue  # not a function call: nothing to run
        name = bounded(
            getattr(function, "name", None), "a tool name", MAX_TOOL_NAME_CHARS, TOOL_NAME_CUT, ""
        )
        call_id = bounded(
            getattr(call, "id", None) or None,
            "a tool call id",
            MAX_TOOL_CALL_ID_CHARS,
            TOOL_CALL_ID_CUT,
            f"call_{index}",
        )
        arguments = _text_field(getattr(function, "arguments", None), "tool arguments", "")
        refused = ""
        if len(arguments) > MAX_TOOL_ARGUMENT_CHARS:
            what = f"arguments for '{name}'"
            refused = too_large_message(what, len(arguments), MAX_TOOL_ARGUMENT_CHARS)
        elif len(arguments) > room:
            refused = (
                f"arguments for '{name}' are {len(arguments):,} characters, more than the "
                f"{room:,} left of the reply's {reply_char_limit(max_tokens):,} (its text and "
                "all its calls' arguments together)"
            )
        if refused:
            arguments = "{}"
        room = max(room - len(arguments), 0)
        calls.append(ToolCall(call_id, name, arguments, refused))

    finish_reason = bounded(
        getattr(choice, "finish_reason", None),
        "a finish reason",
        MAX_FINISH_REASON_CHARS,
        FINISH_REASON_CUT,
        None,
    )
    model = bounded(
        getattr(completion, "model", None), "a model name", MAX_MODEL_NAME_CHARS, MODEL_NAME_CUT, ""
    )
    return ChatReply(
        content=content,
        tool_calls=calls,
        finish_reason=finish_reason,
        refusal=refusal,
        usage=_usage_of(completion),
        latency_ms=latency_ms,
        model=model,
        malformed=tuple(malformed),
    )


def _usage_of(completion: Any) -> TokenUsage:
    """The token counts the server reported; none reported counts 0 (local servers omit them).
    `TokenUsage` checks each figure."""
    reported = getattr(completion, "usage", None)
    if reported is None:
        return TokenUsage()
    if isinstance(reported, (str, int, float, list, dict)):
        return TokenUsage(invalid=True)  # not an object of counts
    details = getattr(reported, "prompt_tokens_details", None)
    figures = (
        getattr(reported, "prompt_tokens", None),
        getattr(reported, "completion_tokens", None),
        getattr(details, "cached_tokens", None) if details is not None else None,
    )
    return TokenUsage(*(0 if figure is None else figure for figure in figures))
