"""
The model client: plain request/reply types and an OpenAI-compatible implementation.

`ChatClient` is a protocol so that the core can be driven by anything that answers a
`ChatRequest` with a `ChatReply`. `OpenAIChatClient` uses the `openai` SDK against any
OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio, OpenRouter).

Each call comes in two forms that send the same request and build the same reply: blocking
(`complete`, `embed`: tests, the headless demo, scripts) and a coroutine (`acomplete`,
`aembed`), which the server's model call queue (`ai_assistant.model_queue`) runs on its own
event loop, many at once, without a thread per call. On a live server that loop has a model
I/O process (`use_io_process`, `ai_assistant.llm.io_process`): the coroutines hand their
requests to it, and it makes them with this same client in a child process. Neither form
touches the game: the shell applies the reply on the reactor thread. Every failure surfaces as
`LLMError` with a `kind` that the usage accounting counts.

"""

import asyncio
import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import openai

# the SDK imports its (large) chat types lazily, on the first call; do it now, when the contrib
# loads at server start, not in the middle of play (an import holds Python's import lock)
import openai.resources.chat.completions  # noqa: E402,F401
from openai.types.chat import ChatCompletion  # noqa: E402

from ..text import redact  # noqa: E402

# error kinds, counted per assistant
RATE_LIMIT = "rate_limit"
SERVER_ERROR = "server_error"
TIMEOUT = "timeout"
CONNECTION = "connection"
BAD_REQUEST = "bad_request"
AUTH = "auth"
NOT_CONFIGURED = "not_configured"
INVALID_RESPONSE = "invalid_response"
CANCELLED = "cancelled"
OTHER = "other"


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
    """One tool call as the model wrote it; `arguments` is the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class TokenUsage:
    """Token counts of one model call, as the server reported them.

    Attributes:
        prompt (int): Tokens in the request.
        completion (int): Tokens in the reply.
        cached (int): Prompt tokens served from the server's prompt cache.

    """

    prompt: int = 0
    completion: int = 0
    cached: int = 0


@dataclass
class ChatRequest:
    """What one model call sends. `messages` and `tools` are in OpenAI wire format."""

    model: str
    messages: list[dict]
    tools: list[dict] = field(default_factory=list)
    temperature: float = 0.7
    max_tokens: int = 800
    response_format: dict | None = None


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

    """

    content: str | None
    tool_calls: list[ToolCall]
    finish_reason: str | None
    refusal: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    latency_ms: float = 0.0
    model: str = ""
    batch: bool = False

    def as_message(self) -> dict:
        """The assistant message to append to the history (valid OpenAI wire format).

        Returns:
            dict: A message with role "assistant", the content, and the tool calls if any.

        """
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
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
        self._options = dict(
            api_key=api_key,
            base_url=endpoint.base_url,
            timeout=endpoint.timeout,
            max_retries=endpoint.max_retries,
        )
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
                    self._blocking_sdk = openai.OpenAI(**self._options)
        return self._blocking_sdk

    def _secrets(self) -> list[str]:
        return [self._options["api_key"]]

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
        return _to_reply(completion, (time.perf_counter() - started) * 1000)

    def _async_client(self):
        if self._async_sdk is None:
            options = dict(self._options)
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
        return _to_reply(completion, (time.perf_counter() - started) * 1000)

    def embed(self, model: str, texts: list[str]) -> list[list[float]]:
        """Embeddings for `texts`, in order.

        Args:
            model (str): The embedding model's name.
            texts (list[str]): The texts to embed.

        Returns:
            list[list[float]]: One vector per text, in the same order as `texts`.

        Raises:
            LLMError: If the call fails, or the server returns a different number of vectors.

        """
        try:
            response = self._sdk.embeddings.create(model=model, input=texts)
        except openai.APIError as exc:
            raise _translate(exc, self._secrets()) from None
        return _vectors(response, texts)

    async def aembed(self, model: str, texts: list[str]) -> list[list[float]]:
        """`embed` as a coroutine, for an asyncio event loop (the model call queue's).

        Args:
            model (str): The embedding model's name.
            texts (list[str]): The texts to embed.

        Returns:
            list[list[float]]: One vector per text, in the same order as `texts`.

        Raises:
            LLMError: As `embed`.

        """
        vectors = await _in_io_process("aembed", self._options, model, texts)
        if vectors is not _LOCAL:
            return vectors
        try:
            response = await self._async_client().embeddings.create(model=model, input=texts)
        except openai.APIError as exc:
            raise _translate(exc, self._secrets()) from None
        return _vectors(response, texts)

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
    body: dict[str, Any] = {
        "model": request.model,
        "messages": request.messages,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
    }
    if request.tools:
        body["tools"] = request.tools
    if request.response_format:
        body["response_format"] = request.response_format
    return body


def _vectors(response: Any, texts: list[str]) -> list[list[float]]:
    vectors = [item.embedding for item in sorted(response.data, key=lambda d: d.index)]
    if len(vectors) != len(texts):
        raise LLMError(INVALID_RESPONSE, f"{len(vectors)} embeddings for {len(texts)} texts.")
    return vectors


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
    elif isinstance(exc, (openai.BadRequestError, openai.NotFoundError)) or status in (400, 422):
        kind = BAD_REQUEST
    elif isinstance(exc, openai.APIResponseValidationError):
        kind = INVALID_RESPONSE
    else:
        kind = OTHER
    # the SDK's messages carry the server's text, and some servers echo the key in it
    return LLMError(
        kind,
        redact(f"{type(exc).__name__}: {exc}", secrets)[:300],
        status,
        retry_after=_retry_after(exc) if kind == RATE_LIMIT else None,
    )


def _to_reply(completion: Any, latency_ms: float) -> ChatReply:
    if not getattr(completion, "choices", None):
        raise LLMError(INVALID_RESPONSE, "The model's reply had no choices.")
    choice = completion.choices[0]
    message = choice.message
    calls = []
    for index, call in enumerate(message.tool_calls or []):
        function = getattr(call, "function", None)
        if function is None:
            continue
        calls.append(
            ToolCall(
                id=call.id or f"call_{index}",
                name=function.name or "",
                arguments=function.arguments or "",
            )
        )
    usage = TokenUsage()
    if completion.usage:
        details = getattr(completion.usage, "prompt_tokens_details", None)
        usage = TokenUsage(
            prompt=completion.usage.prompt_tokens or 0,
            completion=completion.usage.completion_tokens or 0,
            cached=(getattr(details, "cached_tokens", None) or 0) if details else 0,
        )
    return ChatReply(
        content=message.content,
        tool_calls=calls,
        finish_reason=choice.finish_reason,
        refusal=getattr(message, "refusal", None),
        usage=usage,
        latency_ms=latency_ms,
        model=completion.model or "",
    )


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
