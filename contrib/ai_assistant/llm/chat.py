"""
What a model call is, whatever answers it: the request and reply types (`ChatRequest`,
`ChatReply`, `ToolCall`, `TokenUsage`), the error every failure surfaces as (`LLMError`, with a
`kind` that the usage accounting counts), the `ChatClient` protocol the core is driven by, and
where to reach an endpoint (`EndpointSettings`). `llm.client` answers it over the `openai` SDK;
tests and the offline demo answer it with scripted replies.

"""

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

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

# tokens one call may report using: no model reads or writes ten million in one call, and a
# larger figure (or a negative one) is not a count to add to a budget's spend
MAX_TOKENS_PER_CALL = 10_000_000


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
    invalid one as malformed output (`replies.INVALID_USAGE`).

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
            dropped (`replies.CONTENT_CUT`, ...), each kind once; the usage
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
