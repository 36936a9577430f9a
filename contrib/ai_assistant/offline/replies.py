"""
Model replies made in process, in the OpenAI wire format: what the offline rehearsal model
answers (`offline.rehearsal`), what the test server sends (`ai_assistant.testing.server`), and a
`ChatClient` that answers with a responder without HTTP (`ResponderClient`, which the pure-core
`AssistantMemory` uses when it is given no model).

A *responder* decides the answer to one chat request (its JSON body); `Reply` is that answer: a
completion body, or an HTTP error, after an optional delay.

"""

import json
import math
import re
import time
import zlib
from dataclasses import dataclass
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

        from ..llm.chat import SERVER_ERROR, LLMError
        from ..llm.replies import reply_from_completion

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
