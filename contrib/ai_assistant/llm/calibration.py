"""
What the chat model's server has taught about itself: how it counts tokens and how large its
context window is (`Calibration`, one per brain, kept in the assistant's state).

tiktoken counts exactly only OpenAI's models; another model's tokenizer may count a quarter
more of the same text (Gemma's does). The server reports the prompt tokens of each request it
answers: against our count of that very request they give a factor (the token scale), which
the context budget applies. A server may also say how large its window is (its model list, or
the words of a request it refused as too long): the budget never outgrows it.

"""

import math

from ..conf import AssistantConfig
from ..state import CONTEXT_WINDOW, TOKEN_SCALE
from .chat import LLMError
from .server_errors import window_in
from .tokens import TokenCounter

# learning the server's count of tokens (`Calibration.calibrate_tokens`): the smallest request
# that tells, and the factors a tokenizer of the same text can plausibly give (Gemma's is about
# 1.25)
MIN_CALIBRATION_TOKENS = 200
MIN_TOKEN_SCALE = 0.5
MAX_TOKEN_SCALE = 3.0
# samples after which the factor is settled for the model (a tokenizer does not change): no
# more requests are counted for it, so a long history costs the reactor nothing more per call
SETTLED_SAMPLES = 30
# samples after which one that leaves the factor as it was settles it at once
SETTLE_AFTER = 3


class Calibration:
    """The server's count of tokens and its context window, as learned for one chat model.

    Args:
        state: The assistant's store (`KeyValueStore`), where what is learned is kept.
        model (str): The chat model's name: what was learned for another one does not count.
        counter (TokenCounter): How tokens are counted here (`native` for an OpenAI model).
        config (AssistantConfig): `max_context_tokens` and `max_reply_tokens`.

    """

    def __init__(self, state, model: str, counter: TokenCounter, config: AssistantConfig):
        self.state = state
        self.model = model
        self.counter = counter
        self.config = config

    # ---- the server's count of tokens ----------------------------------------------------------

    def token_scale(self) -> float:
        """The server's prompt tokens per token we count, for a model tiktoken does not know
        (1.0 for an OpenAI model, or before the server reported any usage).

        Returns:
            float: The factor `scaled` applies.

        """
        if self.counter.native:
            return 1.0
        known = self.state.get(TOKEN_SCALE) or {}
        if known.get("model") != self.model:
            return 1.0
        return float(known.get("ratio") or 1.0)

    def scaled(self, counted: int) -> int:
        """Tokens we counted, in the server's tokens (`token_scale`).

        Args:
            counted (int): Tokens counted with our encoding.

        Returns:
            int: The server's count, as far as it is known.

        """
        scale = self.token_scale()
        return counted if scale == 1.0 else math.ceil(counted * scale)

    def learning_token_scale(self) -> bool:
        """Whether the server's count is still being learned: a model tiktoken does not know,
        with fewer than `SETTLED_SAMPLES` samples.

        Returns:
            bool: True while answered requests should be counted for `calibrate_tokens`.

        """
        if self.counter.native:
            return False
        known = self.state.get(TOKEN_SCALE) or {}
        return known.get("model") != self.model or (known.get("samples") or 0) < SETTLED_SAMPLES

    def calibrate_tokens(self, counted: int, reported: int) -> None:
        """Learn how the server counts from a request it answered: the prompt tokens it
        reported against the tokens we count in that very request (`Brain.request_tokens`, not
        scaled; not the budget's bound, which holds what a private exchange leaves out).

        Only for a model tiktoken does not know (its tokenizer may count a quarter more, as
        Gemma's does), so that the budget and compaction stay true. A request too small to
        tell, or a figure implausible for the same text, is not learned from; the factor moves
        a third of the way to each new sample, so one odd request does not swing it.

        Args:
            counted (int): The tokens we count in the request sent.
            reported (int): The prompt tokens the server reported for it.

        """
        if self.counter.native or reported <= 0 or counted < MIN_CALIBRATION_TOKENS:
            return
        scale = self.token_scale()
        sample = reported / counted
        if not MIN_TOKEN_SCALE <= sample <= MAX_TOKEN_SCALE:
            return  # not the same text counted another way: a server's own bookkeeping
        known = self.state.get(TOKEN_SCALE) or {}
        samples = int(known.get("samples") or 0) if known.get("model") == self.model else 0
        ratio = sample if not samples else scale + (sample - scale) / 3
        if samples and abs(ratio - scale) < 0.005:
            # steady: once it has held for a few samples, it is settled
            ratio = scale
            if samples >= SETTLE_AFTER:
                samples = SETTLED_SAMPLES - 1
        self.state.set(
            TOKEN_SCALE,
            {"model": self.model, "ratio": round(ratio, 4), "samples": samples + 1},
        )

    # ---- the server's context window ----------------------------------------------------------

    def context_window(self) -> dict | None:
        """The chat model's context window as its server told it, if it did.

        Returns:
            dict or None: {"tokens", "source"} ("server": its model list; "refusal": a
                request it refused as too long).

        """
        known = self.state.get(CONTEXT_WINDOW) or {}
        if known.get("model") != self.model or not known.get("tokens"):
            return None
        return {"tokens": known["tokens"], "source": known.get("source")}

    def context_budget(self) -> int:
        """The most tokens a request may hold: `max_context_tokens`, and never more than the
        server's window less the room the reply needs (`max_reply_tokens`).

        Returns:
            int: The budget in tokens.

        """
        budget = self.config.max_context_tokens
        known = self.context_window()
        if known:
            budget = min(budget, known["tokens"] - self.config.max_reply_tokens)
        return max(budget, 1)

    def window_asked(self) -> bool:
        """Whether the server was asked for this chat model's window (`GET /models`, once).

        Returns:
            bool: True once `learn_context_window` kept its answer, or that it had none.

        """
        known = self.state.get(CONTEXT_WINDOW) or {}
        return known.get("model") == self.model and bool(known.get("checked"))

    def learn_context_window(self, tokens: int | None, source: str) -> None:
        """Keep the window the server told (and that it was asked).

        Args:
            tokens (int or None): The window; None when the server did not say.
            source (str): "server" or "refusal".

        """
        known = dict(self.state.get(CONTEXT_WINDOW) or {})
        if known.get("model") != self.model:
            known = {"model": self.model}
        known["checked"] = True
        if tokens:
            known.update(tokens=int(tokens), source=source)
        self.state.set(CONTEXT_WINDOW, known)

    def context_refused(self, error: LLMError, counted: int) -> int:
        """A request the server refused as larger than its window: learn the window, from the
        refusal's words or below what was sent, so the next request is compacted to fit.

        Every refusal lowers the window (by a fifth at least when the server names the same
        one again: our count of its tokens was low), so a turn never loops on it; once the
        budget cannot hold the fixed prompt, the turn stops with `context_budget` and its
        advice.

        Args:
            error (LLMError): The refusal (`CONTEXT_LENGTH`).
            counted (int): The tokens we counted in the refused request.

        Returns:
            int: The window now assumed.

        """
        tokens = window_in(str(error)) or int((counted + self.config.max_reply_tokens) * 0.8)
        known = self.context_window()
        if known and tokens >= known["tokens"]:
            tokens = int(known["tokens"] * 0.8)
        self.learn_context_window(tokens, "refusal")
        return tokens
