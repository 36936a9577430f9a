"""
Per-assistant usage accounting: calls, tokens, latency, errors and malformed output by kind.

Stored as a plain dict (`UsageStats.model_dump()`) on the assistant's script so builders can
inspect it, and updated on the reactor thread only.

"""

from pydantic import BaseModel, Field

from .client import ChatReply


class UsageStats(BaseModel):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    latency_ms_total: float = 0.0
    latency_ms_last: float = 0.0
    errors: dict[str, int] = Field(default_factory=dict)
    malformed: dict[str, int] = Field(default_factory=dict)

    @classmethod
    def load(cls, data: dict | None) -> "UsageStats":
        return cls.model_validate(data or {})

    def record_reply(self, reply: ChatReply) -> None:
        self.calls += 1
        self.prompt_tokens += reply.usage.prompt
        self.completion_tokens += reply.usage.completion
        self.cached_tokens += reply.usage.cached
        self.latency_ms_total += reply.latency_ms
        self.latency_ms_last = reply.latency_ms

    def record_error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def record_malformed(self, kind: str) -> None:
        self.malformed[kind] = self.malformed.get(kind, 0) + 1

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def mean_latency_ms(self) -> float:
        return self.latency_ms_total / self.calls if self.calls else 0.0

    def summary(self) -> str:
        """One line for `@assistant/status`."""
        text = (
            f"{self.calls} calls, {self.prompt_tokens} prompt + {self.completion_tokens} "
            f"completion tokens ({self.cached_tokens} cached), "
            f"mean latency {self.mean_latency_ms:.0f} ms"
        )
        return text

    def problems(self) -> str:
        parts = [f"{kind} x{count}" for kind, count in sorted(self.errors.items())]
        parts += [f"malformed {kind} x{count}" for kind, count in sorted(self.malformed.items())]
        return ", ".join(parts) or "none"
