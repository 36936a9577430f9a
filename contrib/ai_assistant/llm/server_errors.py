"""
What a model server's errors say: an SDK error as an `LLMError` of one kind, secrets and paths
redacted, with the wait a 429 asked for (`translated_error`); and the context window a server
names, in its model list or in a refusal (`window_of`, `window_in`, `names_context_length`).

"""

import re
from typing import Any

import openai

from ..text import redact
from .chat import (
    AUTH,
    BAD_REQUEST,
    CONNECTION,
    CONTEXT_LENGTH,
    INVALID_RESPONSE,
    NOT_FOUND,
    OTHER,
    RATE_LIMIT,
    SERVER_ERROR,
    TIMEOUT,
    LLMError,
)


def _retry_after(exc: openai.APIError) -> float | None:
    """The wait a provider asked for, in seconds (`retry-after-ms` or `retry-after`)."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except (TypeError, ValueError):
            continue  # an HTTP date: rare from model providers; the caller's backoff applies
        if 0 <= seconds <= 3600:
            return seconds
    return None


def translated_error(exc: openai.APIError, secrets: list[str]) -> LLMError:
    status = getattr(exc, "status_code", None)
    if isinstance(exc, openai.APITimeoutError):
        kind = TIMEOUT
    elif isinstance(exc, openai.APIConnectionError):
        kind = CONNECTION
    elif isinstance(exc, openai.RateLimitError):
        kind = RATE_LIMIT
    elif isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        kind = AUTH
    elif isinstance(exc, openai.InternalServerError) or (status and status >= 500):
        kind = SERVER_ERROR
    elif isinstance(exc, openai.NotFoundError) or status == 404:
        kind = NOT_FOUND
    elif isinstance(exc, openai.BadRequestError) or status in (400, 413, 422):
        kind = CONTEXT_LENGTH if names_context_length(str(exc)) else BAD_REQUEST
    elif isinstance(exc, openai.APIResponseValidationError):
        kind = INVALID_RESPONSE
    else:
        kind = OTHER
    # the SDK's messages carry the server's text: some servers echo the key in it, others
    # the paths of their installation
    return LLMError(
        kind,
        _PATH_RE.sub("<path>", redact(f"{type(exc).__name__}: {exc}", secrets))[:300],
        status,
        retry_after=_retry_after(exc) if kind == RATE_LIMIT else None,
    )


# a file system path in a server's error text (not the path of a URL: that follows a host)
_PATH_RE = re.compile(r"(?<![\w:/.])(?:/[\w.\-]+){2,}/?|\b[A-Za-z]:\\[^\s'\"]+")

# words servers use when a request is larger than their context window (OpenAI, vLLM,
# llama.cpp's server, llama-cpp-python, Ollama)
_CONTEXT_WORDS = (
    "context length",
    "context_length",
    "context window",
    "maximum context",
    "exceeds the available context",
    "n_ctx",
    "too many tokens",
)


def names_context_length(message: str) -> bool:
    """Whether a server's error text says the request is larger than its context window.

    Args:
        message (str): The error's text.

    Returns:
        bool: True when it names the context window.

    """
    lowered = message.lower()
    return any(words in lowered for words in _CONTEXT_WORDS)


# where servers say a model's context window in their model list
_WINDOW_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length", "n_ctx")

# a window no server has (a figure larger is not a window)
MAX_CONTEXT_WINDOW = 10_000_000

# where servers say it in a context-length refusal (OpenAI and vLLM, llama-cpp-python,
# llama.cpp's server, Ollama)
_WINDOW_IN_MESSAGE = (
    re.compile(r"maximum context length is (\d+)"),
    re.compile(r"context window of (\d+)"),
    re.compile(r"available context size \((\d+)"),
    re.compile(r"n_ctx[^0-9]{0,12}(\d+)"),
    re.compile(r"context length of (\d+)"),
)


def window_of(entry: Any) -> int | None:
    """The context window a model list's entry reports, if any (checked: a whole number of
    tokens, from 256 to `MAX_CONTEXT_WINDOW`).

    Args:
        entry: An entry of `GET /models` as the SDK read it (its extra fields kept).

    Returns:
        int or None: The window.

    """
    fields = dict(getattr(entry, "model_extra", None) or {})
    meta = fields.get("meta")
    places = [fields, meta if isinstance(meta, dict) else {}]
    for place in places:
        for key in _WINDOW_KEYS:
            value = place.get(key)
            if type(value) is int and 256 <= value <= MAX_CONTEXT_WINDOW:
                return value
    return None


def window_in(message: str) -> int | None:
    """The context window a context-length refusal names, if it names one.

    Args:
        message (str): The refusal's text.

    Returns:
        int or None: The window in tokens.

    """
    for pattern in _WINDOW_IN_MESSAGE:
        found = pattern.search(message.lower())
        if found and 256 <= int(found.group(1)) <= MAX_CONTEXT_WINDOW:
            return int(found.group(1))
    return None
