"""
An OpenAI-compatible chat server on 127.0.0.1, for tests, the offline demo and benchmarks.

The server speaks just enough of the API for the `openai` SDK (`POST .../chat/completions`);
what it answers is decided by a *responder*:

- `ScriptedResponder`: replies from a queue the test wrote (tool calls, text, structured JSON,
  HTTP errors, delays), recording every request so tests can assert what was sent.
- `ai_assistant.offline.rehearsal.RehearsalResponder`: deterministic rules, for the demo.

The replies it sends are made by `ai_assistant.offline.replies` (their helpers are importable
from here too, as tests do).

Usage reported by the server is counted with the offline tokenizer; cached tokens are the
leading messages identical to the previous request's, as a provider's prompt cache would reuse.

"""

import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ..llm.tokens import TokenCounter
from ..offline.replies import (  # noqa: F401 (the test doubles' own names, kept here too)
    EMBEDDING_DIMENSIONS,
    Reply,
    Responder,
    ResponderClient,
    bag_of_words_embedding,
    completion,
    error_reply,
    raw_reply,
    refusal_reply,
    text_reply,
    tool_call,
    tool_reply,
)


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
        # the `input_type` of each embeddings request (None when it had none)
        self.embedding_input_types: list = []
        # embeddings as llama.cpp's server sends them without pooling: a vector per token
        self.per_token_embeddings = False
        # what `GET /models` lists: names, or whole entries (a dict, e.g. with llama.cpp's
        # "meta": {"n_ctx": 4096} or vLLM's "max_model_len")
        self.served_models: list = ["local"]
        # the server's tokenizer against ours: its reported prompt tokens are ours times this
        # (Gemma's tokenizer counts about a quarter more than OpenAI's encodings)
        self.usage_scale = 1.0
        # as llama-cpp-python's function-calling format does: tools sent without `tool_choice`
        # never reach the model (the responder sees the request without them)
        self.tools_need_choice = False
        # as llama-cpp-python's function-calling format does: `tool_choice` "required" is a 500
        # (it takes "auto", "none" and a named tool); such requests never reach the responder
        # and are kept here
        self.refuses_required_choice = False
        self.refused_choices: list[dict] = []
        # `POST /rerank`: every request's body, and the reply's body (by default each document
        # scored by how many of the query's words it has; a test may set any body)
        self.rerank_requests: list[dict] = []
        self.rerank_reply: Callable[[dict], dict] = word_overlap_ranking
        self.batch_calls: list[tuple[str, str]] = []
        self.batch_script: deque = deque()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self.requests_served = 0
        # the Authorization header of every POST (how a client authenticated)
        self.authorizations: list = []
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

        It answers `POST .../chat/completions` with the responder, `POST .../embeddings`
        with bag-of-words embeddings, `POST .../rerank` with `rerank_reply` and
        `GET .../models` with `served_models`; anything else gets 404.

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
                if self.path.rstrip("/").endswith("/models"):
                    data = [
                        model if isinstance(model, dict) else {"id": model, "object": "model"}
                        for model in server.served_models
                    ]
                    return self._send(200, {"object": "list", "data": data})
                return self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self):  # noqa: N802 (http.server's naming)
                server._count()
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                server.authorizations.append(self.headers.get("Authorization"))
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
                if self.path.rstrip("/").endswith("/rerank"):
                    server.rerank_requests.append(request)
                    return self._send(200, server.rerank_reply(request))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                if server.refuses_required_choice and request.get("tool_choice") == "required":
                    server.refused_choices.append(request)
                    return self._send(500, {"error": {"message": "", "type": "AssertionError"}})
                if server.tools_need_choice and "tool_choice" not in request:
                    request = {k: v for k, v in request.items() if k != "tools"}
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
        self.embedding_input_types.append(request.get("input_type"))
        data = [
            {"object": "embedding", "index": i, "embedding": bag_of_words_embedding(str(text))}
            for i, text in enumerate(texts)
        ]
        if self.per_token_embeddings:
            for item in data:
                item["embedding"] = [item["embedding"]] * max(len(str(texts[0]).split()), 2)
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
            prompt = round(self.counter.count_request(messages, tools) * self.usage_scale)
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


def word_overlap_ranking(request: dict) -> dict:
    """A rerank reply, as llama.cpp's server and Jina give it: each document scored by how
    many of the query's words (of three letters or more) it has, best first.

    Args:
        request (dict): The request's body (`query`, `documents`).

    Returns:
        dict: `{"results": [{"index", "relevance_score"}, ...]}`.

    """
    words = {word for word in re.findall(r"[a-z0-9]+", str(request.get("query")).lower())}
    words = {word for word in words if len(word) > 2}
    results = []
    for index, document in enumerate(request.get("documents") or []):
        found = set(re.findall(r"[a-z0-9]+", str(document).lower()))
        results.append({"index": index, "relevance_score": float(len(words & found))})
    results.sort(key=lambda result: -result["relevance_score"])
    return {"results": results}


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
