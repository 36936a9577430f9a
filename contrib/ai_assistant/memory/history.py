"""
The conversation history: the messages of past turns, exactly as they are sent to the model.

Stored in a `ChunkedList` on the script, so a turn's messages are appended without re-writing
the whole history. Messages are OpenAI wire-format dicts; an optional `metadata` key (used by
compaction markers) is kept in storage and stripped from requests.

The history keeps a running token total (in its chunk metadata, `history:meta`), updated as
messages are added or replaced, so measuring context usage costs the same at 10 or 10,000
messages.

"""

from .store import ChunkedList, KeyValueStore


def wire_format(message: dict) -> dict:
    """The message as the provider receives it (storage-only keys removed)."""
    if "metadata" not in message:
        return message
    return {key: value for key, value in message.items() if key != "metadata"}


class ConversationHistory:
    def __init__(self, store: KeyValueStore, counter, chunk_size: int = 50):
        self.store = store
        self.counter = counter
        self.messages = ChunkedList(store, "history", chunk_size)

    def __len__(self) -> int:
        return len(self.messages)

    def all(self) -> list[dict]:
        return self.messages.all()

    def _count(self, messages: list[dict]) -> int:
        return sum(self.counter.count_message(wire_format(message)) for message in messages)

    def tokens(self) -> int:
        """Tokens of all messages (framing included), without re-reading the history."""
        total = self.messages.extra.get("tokens")
        if total is None:
            total = self.messages.extra["tokens"] = self._count(self.all())
        return total

    def extend(self, messages: list[dict]) -> None:
        if not messages:
            return
        self.messages.extra["tokens"] = self.tokens() + self._count(messages)
        self.messages.extend(messages)

    def replace(self, messages: list[dict]) -> None:
        self.messages.extra["tokens"] = self._count(messages)
        self.messages.replace_all(messages)
