"""
The model client: `OpenAIChatClient`, a `chat.ChatClient` over the `openai` SDK against any
OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio, OpenRouter).

Each call comes in two forms that send the same request and build the same reply: blocking
(`complete`, `embed`: tests, the headless demo, scripts) and a coroutine (`acomplete`,
`aembed`), which the server's model call queue (`ai_assistant.shell.model_queue`) runs on its own
event loop, many at once, without a thread per call. On a live server that loop has a model
I/O process (`use_io_process`, `ai_assistant.llm.io_process`): the coroutines hand their
requests to it, and it makes them with this same client in a child process. Neither form
touches the game: the shell applies the reply on the reactor thread. Every failure surfaces as
`LLMError` (`server_errors` says what a server's error means); every reply is read, and
bounded, by `replies`.

"""

import asyncio
import base64
import json
import os
import threading
import time
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import openai

# the SDK imports its (large) chat types lazily, on the first call; do it now, when the contrib
# loads at server start, not in the middle of play (an import holds Python's import lock)
import openai.resources.chat.completions  # noqa: E402,F401
from openai.types.chat import ChatCompletion  # noqa: E402

from .chat import (  # noqa: E402
    NOT_CONFIGURED,
    ChatReply,
    ChatRequest,
    EndpointSettings,
    LLMError,
)
from .replies import (  # noqa: E402
    MAX_MODEL_NAME_CHARS,
    MAX_RERANK_DOCUMENTS,
    MAX_SERVED_MODELS,
    UNREADABLE,
    reply_from_completion,
    rerank_scores_from,
    unreadable_error,
    vectors_from,
)
from .server_errors import translated_error, window_of  # noqa: E402


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
            raise translated_error(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise unreadable_error(exc, self._secrets()) from None
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
            raise translated_error(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise unreadable_error(exc, self._secrets()) from None
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
            raise translated_error(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise unreadable_error(exc, self._secrets()) from None
        return vectors_from(response, texts)

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
            raise translated_error(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise unreadable_error(exc, self._secrets()) from None
        return vectors_from(response, texts)

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
            raise translated_error(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise unreadable_error(exc, self._secrets()) from None
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
            raise translated_error(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise unreadable_error(exc, self._secrets()) from None
        return rerank_scores_from(reply, len(documents))

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
            raise translated_error(exc, self._secrets()) from None
        except UNREADABLE as exc:
            raise unreadable_error(exc, self._secrets()) from None
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
            raise translated_error(exc, self._secrets()) from None
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
            raise translated_error(exc, self._secrets()) from None
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
            raise translated_error(exc, self._secrets()) from None


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
