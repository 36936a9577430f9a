"""
An OpenAI-compatible chat server on 127.0.0.1, for tests, the offline demo and benchmarks.

The server speaks just enough of the API for the `openai` SDK (`POST .../chat/completions`);
what it answers is decided by a *responder*:

- `ScriptedResponder`: replies from a queue the test wrote (tool calls, text, structured JSON,
  HTTP errors, delays), recording every request so tests can assert what was sent.
- `ai_assistant.testing.rehearsal.RehearsalResponder`: deterministic rules, for the demo.

Usage reported by the server is counted with the offline tokenizer; cached tokens are the
leading messages identical to the previous request's, as a provider's prompt cache would reuse.

"""

import json
import math
import re
import socket
import threading
import time
import zlib
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from ..llm.tokens import TokenCounter


@dataclass
class Reply:
    """One scripted answer: a chat completion body, or an HTTP error, after an optional delay.

    `raw`, when set, is sent as the HTTP 200 body byte for byte instead of `body` (no usage is
    added): a hostile or broken endpoint's reply that no JSON object can express.
    """

    body: dict | None = None
    status: int = 200
    delay: float = 0.0
    error_message: str = ""
    raw: bytes | None = None


class Responder(Protocol):
    """Anything that decides the local model server's answer to a chat request."""

    def respond(self, request: dict) -> Reply:
        """Decide the answer to one chat request.

        Args:
            request (dict): The request's JSON body.

        Returns:
            Reply: The answer to send.

        """
        ...


def completion(message: dict, finish_reason: str, model: str = "local") -> dict:
    """Wrap an assistant message in a chat completion body with one choice.

    Args:
        message (dict): The assistant message.
        finish_reason (str): e.g. "stop" or "tool_calls".
        model (str): The model name to report.

    Returns:
        dict: The completion body (without usage).

    """
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }


def tool_call(name: str, arguments: Any = None, call_id: str | None = None) -> dict:
    """A tool call for `tool_reply`; `arguments` may be a dict or raw (possibly bad) JSON text.

    Args:
        name (str): The tool's name.
        arguments (dict or str, optional): Its arguments; a string is sent as it is.
        call_id (str, optional): The call's id; `tool_reply` makes one when None.

    Returns:
        dict: The tool call.

    """
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments or {})
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_reply(*calls: dict, content: str | None = None, finish_reason: str = "tool_calls"):
    """A reply in which the model calls tools.

    Args:
        *calls (dict): Tool calls made with `tool_call`; missing ids are filled in.
        content (str, optional): Text sent along with the calls.
        finish_reason (str): The finish reason to report.

    Returns:
        Reply: The scripted reply.

    """
    numbered = [
        {**call, "id": call["id"] or f"call_{index}_{time.monotonic_ns()}"}
        for index, call in enumerate(calls)
    ]
    message = {"role": "assistant", "content": content, "tool_calls": numbered}
    return Reply(body=completion(message, finish_reason))


def text_reply(text: str, finish_reason: str = "stop") -> Reply:
    """A reply in which the model answers with text.

    Args:
        text (str): The answer.
        finish_reason (str): The finish reason to report.

    Returns:
        Reply: The scripted reply.

    """
    return Reply(body=completion({"role": "assistant", "content": text}, finish_reason))


def refusal_reply(text: str) -> Reply:
    """A reply in which the model refuses (no content, a `refusal` field).

    Args:
        text (str): The refusal.

    Returns:
        Reply: The scripted reply.

    """
    message = {"role": "assistant", "content": None, "refusal": text}
    return Reply(body=completion(message, "stop"))


def raw_reply(data: bytes | str) -> Reply:
    """A reply whose HTTP 200 body is `data` exactly, sent as `application/json`.

    Args:
        data (bytes or str): The body (a str is sent as UTF-8), e.g. JSON nested deeper than any
            parser's recursion limit, or not JSON at all.

    Returns:
        Reply: The scripted reply.

    """
    return Reply(raw=data.encode() if isinstance(data, str) else data)


def error_reply(status: int, message: str = "scripted error") -> Reply:
    """A reply that is an HTTP error.

    Args:
        status (int): The HTTP status code.
        message (str): The error message.

    Returns:
        Reply: The scripted reply.

    """
    return Reply(status=status, error_message=message)


def slow(reply: Reply, seconds: float) -> Reply:
    """Make a reply wait before it is sent.

    Args:
        reply (Reply): The reply; it is changed in place.
        seconds (float): The delay.

    Returns:
        Reply: The same reply.

    """
    reply.delay = seconds
    return reply


class ScriptError(AssertionError):
    """A scripted model was used other than its script said: more calls than replies, or
    replies left over."""


@dataclass
class ScriptedResponder:
    """Answers from a queue of `Reply` objects; records each request's JSON body.

    It fails loudly: a request beyond the script is answered with HTTP 500 (so the code under
    test sees a failing provider) and remembered, and `verify()` raises `ScriptError` for it,
    as it does for replies the test scripted but nothing asked for. Call `verify()` at the end
    of a test (`AssistantTestCase` does).

    """

    replies: deque = field(default_factory=deque)
    requests: list = field(default_factory=list)
    unexpected: list = field(default_factory=list)

    def add(self, *replies: Reply) -> "ScriptedResponder":
        """Queue replies, to be sent in order.

        Args:
            *replies (Reply): The replies.

        Returns:
            ScriptedResponder: Itself, so calls can be chained.

        """
        self.replies.extend(replies)
        return self

    def respond(self, request: dict) -> Reply:
        """Record the request and answer with the next queued reply.

        Args:
            request (dict): The request's JSON body.

        Returns:
            Reply: The next reply, or an HTTP 500 error when none is left (then the request
                is also remembered as unexpected).

        """
        self.requests.append(request)
        if not self.replies:
            self.unexpected.append(request)
            return error_reply(500, "the script has no reply left for this request")
        return self.replies.popleft()

    def verify(self) -> None:
        """Raise `ScriptError` if the script and the calls made did not match."""
        problems = []
        if self.unexpected:
            last = self.unexpected[-1].get("messages", [{}])[-1].get("content")
            problems.append(
                f"{len(self.unexpected)} request(s) beyond the script; the last ended with "
                f"{str(last)[:200]!r}"
            )
        if self.replies:
            problems.append(f"{len(self.replies)} scripted reply(ies) never asked for")
        if problems:
            raise ScriptError("; ".join(problems))


EMBEDDING_DIMENSIONS = 64


def bag_of_words_embedding(text: str) -> list[float]:
    """A deterministic stand-in embedding: words hashed into 64 buckets, normalised, so texts
    sharing words are similar. Words of one or two characters are ignored.

    Args:
        text (str): The text.

    Returns:
        list: 64 floats of unit length (all zeros when no word counts).

    """
    vector = [0.0] * EMBEDDING_DIMENSIONS
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if len(word) > 2:
            vector[zlib.crc32(word.encode()) % EMBEDDING_DIMENSIONS] += 1.0
    norm = math.sqrt(sum(value * value for value in vector)) or 1.0
    return [value / norm for value in vector]


@dataclass
class BatchOutcome:
    """What the next `GET /batches/<id>` says of a batch (scripted in `batch_script`).

    Attributes:
        status (str): "validating", "in_progress", "finalizing" (unsettled), or "completed",
            "failed", "expired", "cancelled" (settled).
        answered (int or None): Settled as expired or cancelled: how many lines (the first
            ones) were answered before it stopped; None: none. Completed answers them all;
            failed none.

    """

    status: str
    answered: int | None = None


SETTLED_BATCH = ("completed", "failed", "expired", "cancelled")


class _ManyAtOnceHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server whose listening socket queues many connections at once, as a
    provider's does: the default backlog of 5 would refuse a burst of clients (each then waits
    a second for the kernel to retry), a delay no real provider adds."""

    request_queue_size = 256


class LocalModelServer:
    """A threaded HTTP server on 127.0.0.1 (a free port) answering with `responder`.

    Args:
        responder (Responder): Decides each answer.
        latency (float): Extra seconds before every answer (benchmarks).
        batches (bool): Serve the Files and Batches APIs (False: they answer 404).

    Use as a context manager, or call `start()` and `stop()`. `base_url` is what the SDK needs.

    The Batch API: `POST /files` keeps an uploaded JSONL file, `POST /batches` starts a batch
    over one, `GET /batches/<id>` tells its status and `GET /files/<id>/content` returns a
    file. What a batch's status is when asked comes from `batch_script` (a queue of
    `BatchOutcome` or status names, one taken per `GET /batches/<id>`; empty: "completed").
    When a batch settles, each line it answers is put to the responder like a direct request,
    in order: a 200 reply goes to its output file, an error reply to its error file (a batch
    that fails halfway). `batch_calls` records every Files/Batches request as (method, path).

    """

    def __init__(self, responder: Responder, latency: float = 0.0, batches: bool = True):
        self.responder = responder
        self.latency = latency
        self.serve_batches = batches
        self.counter = TokenCounter()
        self._previous: list = []
        self.embedding_requests: list = []
        self.batch_calls: list[tuple[str, str]] = []
        self.batch_script: deque = deque()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self.requests_served = 0
        self._lock = threading.Lock()
        self._connections: set = set()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The address to give the `openai` SDK; only valid after `start()`.

        Returns:
            str: `http://127.0.0.1:<port>/v1`.

        """
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "LocalModelServer":
        """Start serving on a free port in a daemon thread.

        It answers `POST .../chat/completions` with the responder and `POST .../embeddings`
        with bag-of-words embeddings; anything else gets 404.

        Returns:
            LocalModelServer: Itself.

        """
        server = self

        class Handler(BaseHTTPRequestHandler):
            # keep-alive, as real providers do: a client pays for a connection once, not per call
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self):
                with server._lock:
                    server._connections.discard(self.connection)
                super().finish()

            def do_GET(self):  # noqa: N802 (http.server's naming)
                server._count()
                if server._is_batch_path(self.path):
                    server.batch_calls.append(("GET", self.path))
                    if server.serve_batches:
                        status, body = server._batch_get(self.path)
                        if isinstance(body, bytes):
                            return self._send_bytes(status, body, "application/jsonl")
                        return self._send(status, body)
                return self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self):  # noqa: N802 (http.server's naming)
                server._count()
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if server._is_batch_path(self.path):
                    server.batch_calls.append(("POST", self.path))
                    if not server.serve_batches:
                        return self._send(404, {"error": {"message": f"no route {self.path}"}})
                    content_type = self.headers.get("Content-Type") or ""
                    return self._send(*server._batch_post(self.path, content_type, raw))
                try:
                    request = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    return self._send(400, {"error": {"message": "invalid JSON body"}})
                if self.path.rstrip("/").endswith("/embeddings"):
                    return self._send(200, server._embeddings(request))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                reply = server.responder.respond(request)
                delay = server.latency + reply.delay
                if delay:
                    time.sleep(delay)
                if reply.status != 200:
                    body = {"error": {"message": reply.error_message, "type": "scripted"}}
                    return self._send(reply.status, body)
                if reply.raw is not None:
                    return self._send_bytes(200, reply.raw, "application/json")
                body = dict(reply.body)
                body.setdefault("usage", server._usage(request, body))
                return self._send(200, body)

            def _send(self, status: int, body: dict):
                return self._send_bytes(status, json.dumps(body).encode(), "application/json")

            def _send_bytes(self, status: int, data: bytes, content_type: str):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    # the client gave up or went away (timeout tests, a stopped model process)
                    self.close_connection = True

            def log_message(self, *args):
                pass

        self._httpd = _ManyAtOnceHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut the server down and close its sockets, the clients' kept-alive connections
        included (a stopped provider answers nothing more); does nothing when it is not running.
        """
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
            with self._lock:
                connections, self._connections = self._connections, set()
            for connection in connections:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # already closed by the client

    def __enter__(self) -> "LocalModelServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- the Batch API ----------------------------------------------------------------------

    def _count(self) -> None:
        with self._lock:
            self.requests_served += 1

    @staticmethod
    def _is_batch_path(path: str) -> bool:
        parts = path.split("?")[0].strip("/").split("/")
        return len(parts) >= 2 and parts[1] in ("files", "batches")

    def _batch_post(self, path: str, content_type: str, raw: bytes) -> tuple[int, dict]:
        parts = path.split("?")[0].strip("/").split("/")[1:]
        now = int(time.time())
        if parts == ["files"]:
            data, name = _multipart_file(content_type, raw)
            if data is None:
                return 400, {"error": {"message": "no file in the upload"}}
            with self._lock:
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id] = data
            return 200, {
                "id": file_id,
                "object": "file",
                "bytes": len(data),
                "created_at": now,
                "filename": name or "upload.jsonl",
                "purpose": "batch",
                "status": "processed",
            }
        if parts == ["batches"]:
            try:
                request = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                return 400, {"error": {"message": "invalid JSON body"}}
            source = self.files.get(request.get("input_file_id"))
            if source is None:
                return 400, {"error": {"message": "unknown input_file_id"}}
            lines = [json.loads(line) for line in source.decode().splitlines() if line.strip()]
            with self._lock:
                batch_id = f"batch-{len(self.batches) + 1}"
                batch = {
                    "id": batch_id,
                    "object": "batch",
                    "endpoint": request.get("endpoint"),
                    "input_file_id": request.get("input_file_id"),
                    "completion_window": request.get("completion_window"),
                    "status": "validating",
                    "created_at": now,
                    "output_file_id": None,
                    "error_file_id": None,
                    "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                }
                self.batches[batch_id] = {"batch": batch, "lines": lines}
            return 200, batch
        return 404, {"error": {"message": f"no route {path}"}}

    def _batch_get(self, path: str) -> tuple[int, dict | bytes]:
        parts = path.split("?")[0].strip("/").split("/")[1:]
        if len(parts) == 3 and parts[0] == "files" and parts[2] == "content":
            data = self.files.get(parts[1])
            if data is None:
                return 404, {"error": {"message": f"no file {parts[1]}"}}
            return 200, data
        if len(parts) == 2 and parts[0] == "batches":
            held = self.batches.get(parts[1])
            if held is None:
                return 404, {"error": {"message": f"no batch {parts[1]}"}}
            batch = held["batch"]
            if batch["status"] not in SETTLED_BATCH:
                outcome = self.batch_script.popleft() if self.batch_script else "completed"
                if isinstance(outcome, str):
                    outcome = BatchOutcome(outcome)
                if outcome.status in SETTLED_BATCH:
                    self._settle(held, outcome)
                else:
                    batch["status"] = outcome.status
            return 200, batch
        return 404, {"error": {"message": f"no route {path}"}}

    def _settle(self, held: dict, outcome: BatchOutcome) -> None:
        batch, lines = held["batch"], held["lines"]
        if outcome.status == "completed":
            answered = len(lines)
        elif outcome.status == "failed":
            answered = 0
        else:
            answered = outcome.answered or 0
        output, errors = [], []
        for index, line in enumerate(lines):
            key = line.get("custom_id")
            if index >= answered:
                if outcome.status != "failed":
                    code = "batch_expired" if outcome.status == "expired" else "batch_cancelled"
                    errors.append(
                        {
                            "custom_id": key,
                            "response": None,
                            "error": {
                                "code": code,
                                "message": f"This request was not run: {code}.",
                            },
                        }
                    )
                continue
            request = line.get("body") or {}
            reply = self.responder.respond(request)
            if reply.status != 200:
                body = {"error": {"message": reply.error_message, "type": "scripted"}}
                response = {"status_code": reply.status, "body": body}
                errors.append({"custom_id": key, "response": response, "error": None})
                continue
            body = dict(reply.body)
            body.setdefault("usage", self._usage(request, body))
            response = {"status_code": 200, "body": body}
            output.append({"custom_id": key, "response": response, "error": None})
        with self._lock:
            for name, rows in (("output_file_id", output), ("error_file_id", errors)):
                if rows:
                    file_id = f"file-{len(self.files) + 1}"
                    self.files[file_id] = "\n".join(json.dumps(row) for row in rows).encode()
                    batch[name] = file_id
        batch["status"] = outcome.status
        batch["request_counts"] = {
            "total": len(lines),
            "completed": len(output),
            "failed": len(lines) - len(output),
        }

    def _embeddings(self, request: dict) -> dict:
        texts = request.get("input") or []
        texts = [texts] if isinstance(texts, str) else texts
        self.embedding_requests.append(texts)
        data = [
            {"object": "embedding", "index": i, "embedding": bag_of_words_embedding(str(text))}
            for i, text in enumerate(texts)
        ]
        tokens = sum(self.counter.count_text(str(text)) for text in texts)
        return {
            "object": "list",
            "data": data,
            "model": request.get("model", "local"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _usage(self, request: dict, body: dict) -> dict:
        messages = request.get("messages", [])
        tools = request.get("tools", [])
        with self._lock:
            prompt = self.counter.count_request(messages, tools)
            shared = 0
            for mine, theirs in zip(messages, self._previous):
                if mine != theirs:
                    break
                shared += 1
            cached = 0
            if shared:
                cached = self.counter.count_tools(tools) + sum(
                    self.counter.count_message(message) for message in messages[:shared]
                )
            self._previous = messages
        reply = body["choices"][0]["message"] if body.get("choices") else {}
        completion_tokens = self.counter.count_message(reply) if reply else 0
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": min(cached, prompt)},
        }


def _multipart_file(content_type: str, raw: bytes) -> tuple[bytes | None, str | None]:
    """The file part of a multipart/form-data upload: (its bytes, its file name)."""
    from email.parser import BytesParser
    from email.policy import HTTP

    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    for part in message.iter_parts() if message.is_multipart() else []:
        if part.get_param("name", header="content-disposition") == "file":
            return part.get_payload(decode=True), part.get_filename()
    return None, None


class ResponderClient:
    """A `ChatClient` that answers in process with a responder, without HTTP: the same replies
    a `LocalModelServer` would send, parsed the way the `openai` SDK's are.

    Args:
        responder (Responder): e.g. `ScriptedResponder` or `RehearsalResponder`.

    """

    def __init__(self, responder: Responder):
        self.responder = responder
        self.counter = TokenCounter()

    def __call__(self) -> "ResponderClient":
        return self  # serves as a brain's `client_factory` too

    def complete(self, request):
        """Answer a chat request in process, as the local server would.

        Args:
            request (ChatRequest): The request.

        Returns:
            ChatReply: The parsed reply, with usage counted by the offline tokenizer when the
                responder gave none.

        Raises:
            LLMError: A server error, when the responder's reply is an HTTP error.

        """
        from openai.types.chat import ChatCompletion

        from ..llm.client import SERVER_ERROR, LLMError, reply_from_completion

        body = {
            "model": request.model,
            "messages": request.messages,
            "tools": request.tools,
            "response_format": request.response_format,
        }
        reply = self.responder.respond(body)
        if reply.status != 200:
            raise LLMError(
                SERVER_ERROR, reply.error_message or f"HTTP {reply.status}", reply.status
            )
        completion = dict(reply.body)
        prompt = self.counter.count_request(request.messages, request.tools)
        message = completion["choices"][0]["message"] if completion.get("choices") else {}
        written = self.counter.count_message(message) if message else 0
        completion.setdefault(
            "usage",
            {
                "prompt_tokens": prompt,
                "completion_tokens": written,
                "total_tokens": prompt + written,
            },
        )
        return reply_from_completion(
            ChatCompletion.model_validate(completion), 0.0, request.max_tokens
        )

    def embed(self, model, texts):
        """Embed texts with `bag_of_words_embedding`.

        Args:
            model (str): Ignored.
            texts (list): The texts.

        Returns:
            list: One vector per text.

        """
        return [bag_of_words_embedding(str(text)) for text in texts]
