"""
Per-assistant usage accounting: calls, tokens, latency, errors and malformed output by kind.

Stored as a plain dict (`UsageStats.model_dump()`) on the assistant's script so builders can
inspect it, and updated on the reactor thread only.

"""

from pydantic import BaseModel, Field

from .chat import ChatReply
from .replies import INVALID_USAGE


class UsageStats(BaseModel):
    """Running totals of one assistant's model usage.

    Attributes:
        calls (int): Successful model calls.
        prompt_tokens (int): Prompt tokens used in all calls.
        completion_tokens (int): Completion tokens used in all calls.
        cached_tokens (int): Prompt tokens served from the provider's cache.
        latency_ms_total (float): Sum of the calls' latencies, in milliseconds.
        latency_ms_last (float): Latency of the last call, in milliseconds.
        errors (dict): Failed calls, counted by error kind.
        malformed (dict): Malformed model output (e.g. bad tool calls), counted by kind.
        batch_calls (int): Of `calls`, those answered in a batch (Batch API).
        batch_prompt_tokens (int): Of `prompt_tokens`, those of batch calls.
        batch_completion_tokens (int): Of `completion_tokens`, those of batch calls.

    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    latency_ms_total: float = 0.0
    latency_ms_last: float = 0.0
    errors: dict[str, int] = Field(default_factory=dict)
    malformed: dict[str, int] = Field(default_factory=dict)
    batch_calls: int = 0
    batch_prompt_tokens: int = 0
    batch_completion_tokens: int = 0

    @classmethod
    def load(cls, data: dict | None) -> "UsageStats":
        """Build the stats from their stored dict.

        Args:
            data (dict or None): What `model_dump()` stored; None or empty for fresh stats.

        Returns:
            UsageStats: The stats.

        """
        return cls.model_validate(data or {})

    def record_reply(self, reply: ChatReply) -> None:
        """Count one successful call: its tokens and latency, and as malformed output what the
        client found wrong with the reply (`reply.malformed`, usage figures it had to clamp).

        Args:
            reply (ChatReply): The model's reply.

        """
        for kind in reply.malformed:
            self.record_malformed(kind)
        if reply.usage.invalid:
            self.record_malformed(INVALID_USAGE)
        self.calls += 1
        self.prompt_tokens += reply.usage.prompt
        self.completion_tokens += reply.usage.completion
        self.cached_tokens += reply.usage.cached
        if reply.batch:
            # answered in a batch: no latency of its own to count
            self.batch_calls += 1
            self.batch_prompt_tokens += reply.usage.prompt
            self.batch_completion_tokens += reply.usage.completion
            return
        self.latency_ms_total += reply.latency_ms
        self.latency_ms_last = reply.latency_ms

    def record_error(self, kind: str) -> None:
        """Count one failed call.

        Args:
            kind (str): The error's kind (e.g. "timeout", "rate_limit").

        """
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def record_malformed(self, kind: str) -> None:
        """Count one piece of malformed model output.

        Args:
            kind (str): The kind of problem (e.g. "invalid_json").

        """
        self.malformed[kind] = self.malformed.get(kind, 0) + 1

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens.

        Returns:
            int: All tokens used.

        """
        return self.prompt_tokens + self.completion_tokens

    @property
    def mean_latency_ms(self) -> float:
        """Mean latency of the calls.

        Returns:
            float: Milliseconds per call (batch replies have none); 0.0 without calls.

        """
        timed = self.calls - self.batch_calls
        return self.latency_ms_total / timed if timed else 0.0

    def summary(self) -> str:
        """One line for `@assistant/status`.

        Returns:
            str: Calls, prompt, completion and cached tokens, and mean latency; the calls
                answered in batches, when there were any.

        """
        text = (
            f"{self.calls} calls, {self.prompt_tokens} prompt + {self.completion_tokens} "
            f"completion tokens ({self.cached_tokens} cached), "
            f"mean latency {self.mean_latency_ms:.0f} ms"
        )
        if self.batch_calls:
            text += (
                f"; {self.batch_calls} of the calls in batches ("
                f"{self.batch_prompt_tokens} prompt + {self.batch_completion_tokens} completion "
                "tokens, at the batch price)"
            )
        return text

    def problems(self) -> str:
        """Errors and malformed output, for a status line.

        Returns:
            str: Each kind with its count (e.g. "timeout x2, malformed invalid_json x1"), or
                "none".

        """
        parts = [f"{kind} x{count}" for kind, count in sorted(self.errors.items())]
        parts += [f"malformed {kind} x{count}" for kind, count in sorted(self.malformed.items())]
        return ", ".join(parts) or "none"
