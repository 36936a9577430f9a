"""
The model client: plain request/reply types and an OpenAI-compatible implementation.

`ChatClient` is a protocol so that the core can be driven by anything that answers a
`ChatRequest` with a `ChatReply`. `OpenAIChatClient` uses the `openai` SDK against any
OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio, OpenRouter).

Each call comes in two forms that send the same request and build the same reply: blocking
(`complete`, `embed`: tests, the headless demo, scripts) and a coroutine (`acomplete`,
`aembed`), which the server's model call queue (`ai_assistant.shell.model_queue`) runs on its own
event loop, many at once, without a thread per call. On a live server that loop has a model
I/O process (`use_io_process`, `ai_assistant.llm.io_process`): the coroutines hand their
requests to it, and it makes them with this same client in a child process. Neither form
touches the game: the shell applies the reply on the reactor thread. Every failure surfaces as
`LLMError` with a `kind` that the usage accounting counts.

The endpoint is not trusted. Its reply is read here (`reply_from_completion`, `_vectors`), off
the reactor, and everything in it is bounded before the game sees it: the text, the refusal,
the number of tool calls, each call's name, id and arguments, the finish reason, the model's
name, the token counts, the embeddings. What was too long is cut (or, for a tool call's
arguments, replaced so the tool answers with an error) and named in `ChatReply.malformed`; a
reply of the wrong shape, or one the SDK could not read at all (not JSON, nested too deep), is
an `LLMError` of kind `invalid_response`. See docs/security.md, "A hostile model endpoint".

"""

import asyncio
import base64
import json
import math
import os
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit, urlunsplit

import openai

# the SDK imports its (large) chat types lazily, on the first call; do it now, when the contrib
# loads at server start, not in the middle of play (an import holds Python's import lock)
import openai.resources.chat.completions  # noqa: E402,F401
from openai.types.chat import ChatCompletion  # noqa: E402

from ..text import redact  # noqa: E402
from .model_json import MAX_TOOL_ARGUMENT_CHARS, too_large_message  # noqa: E402

# error kinds, counted per assistant
RATE_LIMIT = "rate_limit"
SERVER_ERROR = "server_error"
TIMEOUT = "timeout"
CONNECTION = "connection"
BAD_REQUEST = "bad_request"
AUTH = "auth"
NOT_CONFIGURED = "not_configured"
NOT_FOUND = "not_found"  # no such model or route (404)
CONTEXT_LENGTH = "context_length"  # the request is larger than the server's window
INVALID_RESPONSE = "invalid_response"
CANCELLED = "cancelled"
OTHER = "other"

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
# tokens one call may report using: no model reads or writes ten million in one call, and a
# larger figure (or a negative one) is not a count to add to a budget's spend
MAX_TOKENS_PER_CALL = 10_000_000
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


class LLMError(Exception):
    """A model call that did not produce a usable reply.

    Args:
        kind (str): One of the error kinds above.
        message (str): What happened (secrets redacted by whoever raises it).
        status (int, optional): The HTTP status, when there was one.
        retry_after (float, optional): Seconds the provider asked to wait (a 429's
            `retry-after`), when it said.

    """

    def __init__(
        self,
        kind: str,
        message: str,
        status: int | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the model wrote it; `arguments` is the raw JSON text.

    Attributes:
        id (str): The call's id.
        name (str): The tool's name.
        arguments (str): The arguments, JSON text (not yet decoded).
        arguments_refused (str): Why the client did not keep the arguments the model sent
            (they were too long), naming the limit; `arguments` is then "{}", and dispatch
            answers the call with this error instead of running the tool. Empty when kept.

    """

    id: str
    name: str
    arguments: str
    arguments_refused: str = ""


@dataclass(frozen=True)
class TokenUsage:
    """Token counts of one model call, as the server reported them, made safe to add up.

    Each count is an int from 0 to `MAX_TOKENS_PER_CALL`, and `cached` is at most `prompt`,
    whoever builds it: anything else (a negative or absurd figure, a string, a float) is
    clamped into that range (a non-number counts 0) and `invalid` is set, so no figure an
    endpoint reports can lower a spend counter or overflow one. The usage stats count an
    invalid one as malformed output (`INVALID_USAGE`).

    Attributes:
        prompt (int): Tokens in the request.
        completion (int): Tokens in the reply.
        cached (int): Prompt tokens served from the server's prompt cache.
        invalid (bool): A figure was not a count in range and was clamped (or the server's
            usage was not an object of counts at all).

    """

    prompt: int = 0
    completion: int = 0
    cached: int = 0
    invalid: bool = field(default=False, compare=False)

    def __post_init__(self):
        prompt, prompt_ok = _token_count(self.prompt)
        completion, completion_ok = _token_count(self.completion)
        cached, cached_ok = _token_count(self.cached)
        cached_ok = cached_ok and cached <= prompt
        if not (prompt_ok and completion_ok and cached_ok):
            # frozen: the checked figures replace what was given
            object.__setattr__(self, "prompt", prompt)
            object.__setattr__(self, "completion", completion)
            object.__setattr__(self, "cached", min(cached, prompt))
            object.__setattr__(self, "invalid", True)


def _token_count(value: Any) -> tuple[int, bool]:
    """A reported token count as an int in range, and whether it was one already."""
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value <= MAX_TOKENS_PER_CALL:
            return value, True
        return min(max(value, 0), MAX_TOKENS_PER_CALL), False
    if isinstance(value, float) and math.isfinite(value):
        return int(min(max(value, 0.0), MAX_TOKENS_PER_CALL)), False
    return 0, False


@dataclass
class ChatRequest:
    """What one model call sends. `messages` and `tools` are in OpenAI wire format."""

    model: str
    messages: list[dict]
    tools: list[dict] = field(default_factory=list)
    temperature: float = 0.7
    max_tokens: int = 800
    response_format: dict | None = None
    # sent with tools ("auto", "required", or {"type": "function", "function": {"name": ...}}
    # to ask for one tool); "omit" or None sends none
    tool_choice: str | dict | None = None


@dataclass
class ChatReply:
    """What one model call returned.

    Attributes:
        content (str or None): The text of the reply, if any.
        tool_calls (list[ToolCall]): The tool calls in the reply, in order.
        finish_reason (str or None): Why the model stopped (e.g. "stop", "tool_calls",
            "length").
        refusal (str or None): The model's refusal text, if it refused.
        usage (TokenUsage): The tokens the call used.
        latency_ms (float): How long the call took, in milliseconds.
        model (str): The model that answered, as the server named it.
        batch (bool): It came from a batch (Batch API), priced at the batch discount.
        malformed (tuple[str, ...]): What the client found too long in the reply and cut or
            dropped (`CONTENT_CUT`, `TOOL_CALLS_DROPPED`, ...), each kind once; the usage
            stats count them as malformed output.

    """

    content: str | None
    tool_calls: list[ToolCall]
    finish_reason: str | None
    refusal: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    latency_ms: float = 0.0
    model: str = ""
    batch: bool = False
    malformed: tuple[str, ...] = ()

    def as_message(self) -> dict:
        """The assistant message to append to the history (valid OpenAI wire format).

        Returns:
            dict: A message with role "assistant", the content, and the tool calls if any.

        """
        # text, even empty: llama-cpp-python refuses a null one (see `_body`)
        message: dict[str, Any] = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        return message


class ChatClient(Protocol):
    """What the assistant needs from a model endpoint: chat completions and embeddings."""

    def complete(self, request: ChatRequest) -> ChatReply:
        """Send one chat request to the model.

        Args:
            request (ChatRequest): The model, messages, tools and options to send.

        Returns:
            ChatReply: The model's reply.

        Raises:
            LLMError: If the call fails.

        """
        ...

    def embed(self, model: str, texts: list[str]) -> list[list[float]]:
        """Compute embeddings for some texts.

        A client that can send an `input_type` (`ai_assistant.llm.embedding_roles`) takes it
        as a keyword argument, `input_type`; it is passed only when one is configured. A client
        that can rerank has `rerank(model, query, documents)` (see `OpenAIChatClient.rerank`);
        it is called only when `recall_rerank_model` is set.

        Args:
            model (str): The embedding model's name.
            texts (list[str]): The texts to embed.

        Returns:
            list[list[float]]: One vector per text, in order.

        Raises:
            LLMError: If the call fails.

        """
        ...


@dataclass(frozen=True)
class EndpointSettings:
    """Where and how to reach the model. The API key never leaves this object."""

    base_url: str | None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 20.0
    max_retries: int = 1


def _aiohttp_client():
    """The SDK's aiohttp transport for the coroutine client, or None without the `aiohttp`
    extra (the SDK's default httpx transport is used then).

    aiohttp parses HTTP in C: with many calls in flight it spends less than half the CPU per
    call of the default transport, and that CPU is taken from the reactor's share of the GIL.

    Returns:
        httpx.AsyncClient or None: The transport, with the SDK's own defaults.

    """
    factory = getattr(openai, "DefaultAioHttpClient", None)
    if factory is None:
        return None
    try:
        return factory()
    except RuntimeError:  # the SDK says the aiohttp extra is not installed
        return None


# the coroutine clients opened on each event loop, closed with it (`close_async_clients`)
_opened: dict = {}
_opened_lock = threading.Lock()


def _opened_on_loop(sdk) -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    with _opened_lock:
        _opened.setdefault(loop, []).append(sdk)


async def close_async_clients() -> None:
    """Close the coroutine clients opened on the running event loop: their connection pools
    (and sockets) go with the loop instead of being left for the garbage collector."""
    with _opened_lock:
        clients = _opened.pop(asyncio.get_running_loop(), [])
    for sdk in clients:
        try:
            await asyncio.wait_for(sdk.close(), timeout=1.0)
        except Exception:  # noqa: BLE001 - closing is best effort; the loop is going anyway
            pass


# the model I/O process making the calls of each event loop's coroutine clients, when the
# loop's owner gave it one (`use_io_process`; the server's model call queue does)
_io_processes: dict = {}


def use_io_process(loop, process) -> None:
    """Have the coroutine calls made on `loop` go through `process` (or, with None, stop).

    Args:
        loop (asyncio.AbstractEventLoop): The event loop the calls are awaited on.
        process (ModelIOProcess or None): Its process (`ai_assistant.llm.io_process`).

    """
    if process is None:
        _io_processes.pop(loop, None)
    else:
        _io_processes[loop] = process


_LOCAL = object()  # what `_in_io_process` returns when the call is to be made here


async def _in_io_process(method: str, options: dict, *args):
    """Make the call in the running loop's model I/O process; `_LOCAL` when there is none."""
    process = _io_processes.get(asyncio.get_running_loop())
    if process is None or not await process.available():
        return _LOCAL
    return await process.call(method, options, *args)


# the key given for a server that needs none (`assembly.embedding_endpoint_for`)
NO_KEY = "not-needed"


def _credentials_out(base_url: str | None, api_key: str | None) -> tuple[str | None, dict]:
    """An endpoint's address without the credentials written into it, and the header that
    sends them (`https://user:password@proxy/v1`: HTTP basic authentication, which the SDK
    would otherwise drop, failing every call).

    Args:
        base_url (str or None): The address.
        api_key (str or None): The API key set for it.

    Returns:
        tuple: (the address without them, {"Authorization": "Basic ..."} or {}).

    Raises:
        LLMError: `NOT_CONFIGURED` when an API key is set as well: both would be sent in the
            one Authorization header, so one of them must go.

    """
    parts = urlsplit(base_url or "")
    if "@" not in parts.netloc:
        return base_url, {}
    userinfo, _, host = parts.netloc.rpartition("@")
    if api_key and api_key != NO_KEY:
        raise LLMError(
            NOT_CONFIGURED,
            "The endpoint's address holds a username and password and an API key is set as "
            "well; both would go in the one Authorization header. Keep the credentials in the "
            "address (a proxy with basic authentication) or the API key, not both.",
        )
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
    return urlunsplit(parts._replace(netloc=host)), {"Authorization": f"Basic {token}"}


class OpenAIChatClient:
    """`ChatClient` over the `openai` SDK. Thread-safe; one instance per endpoint.

    Args:
        endpoint (EndpointSettings): The endpoint. When both `base_url` and `api_key` are None
            the SDK reads `OPENAI_BASE_URL` / `OPENAI_API_KEY` from the environment.

    """

    def __init__(self, endpoint: EndpointSettings):
        api_key = endpoint.api_key
        if api_key is None and endpoint.base_url:
            # local servers (Ollama, vLLM, LM Studio) ignore the key but the SDK requires one
            api_key = os.environ.get("OPENAI_API_KEY") or "not-needed"
        if api_key is None:
            # as the SDK does: without a key given, the environment's
            api_key = os.environ.get("OPENAI_API_KEY")
        if not api_key:
            raise LLMError(
                NOT_CONFIGURED,
                "No model endpoint configured: set AI_ASSISTANT_API_KEY (or OPENAI_API_KEY), "
                "or AI_ASSISTANT_BASE_URL for a local server.",
            )
        # the endpoint as given (what the model I/O process makes its own client of) ...
        self._options = dict(
            api_key=api_key,
            base_url=endpoint.base_url,
            timeout=endpoint.timeout,
            max_retries=endpoint.max_retries,
        )
        # ... and as the SDK is given it: credentials in the address sent as basic auth
        base_url, headers = _credentials_out(endpoint.base_url, endpoint.api_key)
        self._sdk_options = {**self._options, "base_url": base_url, "default_headers": headers}
        # each SDK client is made on first use: a live server sends its calls with the
        # coroutine client only, made in the event loop that runs it (its connection pool
        # belongs to that loop), and the blocking one is for tests, scripts and the Batch API
        self._async_sdk = None
        self._blocking_sdk = None
        self._blocking_lock = threading.Lock()

    @property
    def _sdk(self):
        if self._blocking_sdk is None:
            with self._blocking_lock:
                if self._blocking_sdk is None:
                    self._blocking_sdk = openai.OpenAI(**self._sdk_options)
        return self._blocking_sdk

    def _secrets(self) -> list[str]:
        return [self._options["api_key"], *self._sdk_options["default_headers"].values()]

    def complete(self, request: ChatRequest) -> ChatReply:
        """Send one chat request to the model and time it.

        Args:
            request (ChatRequest): The model, messages, tools and options to send. Tools and
                `response_format` are sent only when set.

        Returns:
            ChatReply: The model's reply, with token usage and latency.

        Raises:
            LLMError: If the call fails (timeout, connection, rate limit, auth, server error,
                bad request) or the reply has no choices. The message has the API key removed.

        """
        started = time.perf_counter()
        try:
            # `client.post` (the SDK's documented way to send a body as-is) rather than
            # `chat.completions.create`: our messages are already wire format, and `create`
            # walks every message of the history through its type annotations on each call,
            # Python work that grows with the history. Retries, timeouts, errors and the typed
            # reply are the same.
            completion = self._sdk.post(
                "/chat/completions", cast_to=ChatCompletion, body=_body(request)
            )
        except openai.APIError as exc:
            raise _translate(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise _unreadable(exc, self._secrets()) from None
        return reply_from_completion(
            completion, (time.perf_counter() - started) * 1000, request.max_tokens
        )

    def _async_client(self):
        if self._async_sdk is None:
            options = dict(self._sdk_options)
            http_client = _aiohttp_client()
            if http_client is not None:
                options["http_client"] = http_client
            self._async_sdk = openai.AsyncOpenAI(**options)
            _opened_on_loop(self._async_sdk)
        return self._async_sdk

    def warm_up(self) -> None:
        """Make the coroutine client now, in the calling event loop's thread (or in the loop's
        model I/O process), so the first call does not wait for it (its TLS context and
        connection pool)."""
        try:
            process = _io_processes.get(asyncio.get_running_loop())
        except RuntimeError:  # no loop runs: the coroutine client is made here
            process = None
        if process is not None:
            process.warm_up(self._options)
        else:
            self._async_client()

    async def acomplete(self, request: ChatRequest) -> ChatReply:
        """`complete` as a coroutine, for an asyncio event loop (the model call queue's).

        Args:
            request (ChatRequest): What to send.

        Returns:
            ChatReply: The model's reply, with token usage and latency.

        Raises:
            LLMError: As `complete`.

        """
        reply = await _in_io_process("acomplete", self._options, request)
        if reply is not _LOCAL:
            return reply
        started = time.perf_counter()
        try:
            completion = await self._async_client().post(
                "/chat/completions", cast_to=ChatCompletion, body=_body(request)
            )
        except openai.APIError as exc:
            raise _translate(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise _unreadable(exc, self._secrets()) from None
        return reply_from_completion(
            completion, (time.perf_counter() - started) * 1000, request.max_tokens
        )

    def embed(
        self, model: str, texts: list[str], input_type: str | None = None
    ) -> list[list[float]]:
        """Embeddings for `texts`, in order.

        Args:
            model (str): The embedding model's name.
            texts (list[str]): The texts to embed.
            input_type (str, optional): Sent as the request's `input_type` (query or
                document, in the words the endpoint uses); None sends none.

        Returns:
            list[list[float]]: One vector per text, in the same order as `texts`.

        Raises:
            LLMError: If the call fails, or the server returns a different number of vectors,
                or vectors that are not lists of numbers of one length of at most
                `MAX_EMBEDDING_DIMENSIONS` (kind `invalid_response`).

        """
        try:
            response = self._sdk.embeddings.create(
                model=model, input=texts, extra_body=_input_type(input_type)
            )
        except openai.APIError as exc:
            raise _translate(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise _unreadable(exc, self._secrets()) from None
        return _vectors(response, texts)

    async def aembed(
        self, model: str, texts: list[str], input_type: str | None = None
    ) -> list[list[float]]:
        """`embed` as a coroutine, for an asyncio event loop (the model call queue's).

        Args:
            model (str): The embedding model's name.
            texts (list[str]): The texts to embed.
            input_type (str, optional): As `embed`.

        Returns:
            list[list[float]]: One vector per text, in the same order as `texts`.

        Raises:
            LLMError: As `embed`.

        """
        vectors = await _in_io_process("aembed", self._options, model, texts, input_type)
        if vectors is not _LOCAL:
            return vectors
        try:
            response = await self._async_client().embeddings.create(
                model=model, input=texts, extra_body=_input_type(input_type)
            )
        except openai.APIError as exc:
            raise _translate(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise _unreadable(exc, self._secrets()) from None
        return _vectors(response, texts)

    def served_models(self) -> list[str]:
        """The names of the models the endpoint lists (`GET /v1/models`), at most
        `MAX_SERVED_MODELS`, each cut to `MAX_MODEL_NAME_CHARS` characters.

        Returns:
            list: The names; empty when the endpoint lists none.

        Raises:
            LLMError: If the call fails.

        """
        names = []
        try:
            for model in self._sdk.models.list():
                names.append(str(getattr(model, "id", ""))[:MAX_MODEL_NAME_CHARS])
                if len(names) == MAX_SERVED_MODELS:
                    break
        except openai.APIError as exc:
            raise _translate(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise _unreadable(exc, self._secrets()) from None
        return names

    def rerank(self, model: str, query: str, documents: list[str]) -> list[float | None]:
        """How relevant each document is to `query`, by a reranking model (`POST /rerank`, the
        body llama.cpp's server, vLLM, Jina and Cohere's v1 share: `model`, `query`,
        `documents`; their reply: `results` of `index` and `relevance_score`).

        Args:
            model (str): The reranking model's name.
            query (str): The query.
            documents (list[str]): The documents, at most `MAX_RERANK_DOCUMENTS`.

        Returns:
            list: One score per document, in order (None for one the reply left out); only
                their order matters.

        Raises:
            LLMError: If the call fails or the reply is not a ranking of these documents.

        """
        documents = list(documents)[:MAX_RERANK_DOCUMENTS]
        body = {"model": model, "query": query, "documents": documents, "top_n": len(documents)}
        try:
            reply = self._sdk.post("/rerank", body=body, cast_to=object)
        except openai.APIError as exc:
            raise _translate(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise _unreadable(exc, self._secrets()) from None
        return _rerank_scores(reply, len(documents))

    def served_window(self, model: str) -> int | None:
        """The context window the endpoint reports for `model` in its model list (`GET
        /models`): vLLM's `max_model_len`, LM Studio's and OpenRouter's `context_length`,
        llama.cpp's `meta.n_ctx`, and the like. The entry under `model`'s name, else the only
        one listed.

        Args:
            model (str): The chat model's name.

        Returns:
            int or None: The window in tokens, when the endpoint says it.

        Raises:
            LLMError: If the call fails.

        """
        entries = []
        try:
            for entry in self._sdk.models.list():
                entries.append(entry)
                if len(entries) == MAX_SERVED_MODELS:
                    break
        except openai.APIError as exc:
            raise _translate(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise _unreadable(exc, self._secrets()) from None
        named = [entry for entry in entries if getattr(entry, "id", None) == model]
        chosen = named or (entries if len(entries) == 1 else [])
        return window_of(chosen[0]) if chosen else None

    # ---- the Batch API: sleep-time work at a discount (see ai_assistant.sleep.batch) ---------

    def submit_batch(self, lines: list[dict]) -> str:
        """Upload `lines` as a JSONL file and start a batch of chat completions over it.

        Args:
            lines (list): One request a line: `{"custom_id", "method", "url", "body"}`.

        Returns:
            str: The batch's id.

        Raises:
            LLMError: If the upload or the batch's creation fails (an endpoint without the
                Files or Batches API answers 404).

        """
        data = "\n".join(json.dumps(line, separators=(",", ":")) for line in lines).encode()
        try:
            uploaded = self._sdk.files.create(
                file=("sleep-batch.jsonl", data, "application/jsonl"), purpose="batch"
            )
            batch = self._sdk.batches.create(
                input_file_id=uploaded.id,
                endpoint="/v1/chat/completions",
                completion_window="24h",
            )
        except openai.APIError as exc:
            raise _translate(exc, self._secrets()) from None
        return batch.id

    def batch_status(self, batch_id: str) -> dict:
        """Where a batch stands.

        Args:
            batch_id (str): The batch's id.

        Returns:
            dict: "status" (validating, in_progress, finalizing, completed, failed, expired,
                cancelling, cancelled), "output_file_id" and "error_file_id" (or None).

        Raises:
            LLMError: If the call fails (an unknown batch answers 404).

        """
        try:
            batch = self._sdk.batches.retrieve(batch_id)
        except openai.APIError as exc:
            raise _translate(exc, self._secrets()) from None
        return {
            "status": batch.status,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
        }

    def file_text(self, file_id: str) -> str:
        """The content of a file (a batch's output), as text.

        Args:
            file_id (str): The file's id.

        Returns:
            str: Its content.

        Raises:
            LLMError: If the call fails.

        """
        try:
            return self._sdk.files.content(file_id).text
        except openai.APIError as exc:
            raise _translate(exc, self._secrets()) from None


def _body(request: ChatRequest) -> dict:
    # an assistant message that only called tools has no text: sent as "" rather than null,
    # which llama-cpp-python's server refuses (a 500 naming ChatCompletionRequestAssistantMessage)
    messages = [
        (
            {**message, "content": ""}
            if message.get("role") == "assistant" and message.get("content") is None
            else message
        )
        for message in request.messages
    ]
    body: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
    }
    if request.tools:
        body["tools"] = request.tools
        if request.tool_choice and request.tool_choice != "omit":
            body["tool_choice"] = request.tool_choice
    if request.response_format:
        body["response_format"] = request.response_format
    return body


def _input_type(input_type: str | None) -> dict | None:
    """The request's extra fields for an `input_type` (none without one: the OpenAI API
    refuses fields it does not know)."""
    return {"input_type": input_type} if input_type else None


def _vectors(response: Any, texts: list[str]) -> list[list[float]]:
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


def _rerank_scores(reply: Any, count: int) -> list[float | None]:
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


def _translate(exc: openai.APIError, secrets: list[str]) -> LLMError:
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


def _unreadable(exc: Exception, secrets: list[str]) -> LLMError:
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


_CLIENTS: dict[EndpointSettings, OpenAIChatClient] = {}
_CLIENTS_LOCK = threading.Lock()


def client_for(endpoint: EndpointSettings) -> OpenAIChatClient:
    """A shared client per endpoint, so connection pools are reused across assistants.

    Args:
        endpoint (EndpointSettings): Where and how to reach the model.

    Returns:
        OpenAIChatClient: The client for this endpoint, created on first use.

    Raises:
        LLMError: If no endpoint is configured (kind `NOT_CONFIGURED`).

    """
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(endpoint)
        if client is None:
            client = _CLIENTS[endpoint] = OpenAIChatClient(endpoint)
        return client
