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
    """The message as the provider receives it (storage-only keys removed).

    Args:
        message (dict): A stored message.

    Returns:
        dict: The message without its `metadata` key (the same dict when it has none).

    """
    if "metadata" not in message:
        return message
    return {key: value for key, value in message.items() if key != "metadata"}


class ConversationHistory:
    """The stored messages of past turns, with a running token total.

    Args:
        store (KeyValueStore): Where the messages are stored.
        counter (TokenCounter): Counts the tokens of a message.
        chunk_size (int): Messages per stored chunk.

    """

    def __init__(self, store: KeyValueStore, counter, chunk_size: int = 50):
        self.store = store
        self.counter = counter
        self.messages = ChunkedList(store, "history", chunk_size)

    def __len__(self) -> int:
        return len(self.messages)

    def all(self) -> list[dict]:
        """Every stored message, oldest first, `metadata` included.

        Returns:
            list: The messages.

        """
        return self.messages.all()

    def _count(self, messages: list[dict]) -> int:
        return sum(self.counter.count_message(wire_format(message)) for message in messages)

    def tokens(self) -> int:
        """Tokens of all messages (framing included), without re-reading the history.

        The total is counted once from the messages if it was never stored.

        Returns:
            int: The token total.

        """
        total = self.messages.extra.get("tokens")
        if total is None:
            total = self.messages.extra["tokens"] = self._count(self.all())
        return total

    def extend(self, messages: list[dict]) -> None:
        """Append messages and add their tokens to the running total.

        Args:
            messages (list): The messages to add; an empty list does nothing.

        """
        if not messages:
            return
        self.messages.extra["tokens"] = self.tokens() + self._count(messages)
        self.messages.extend(messages)

    def replace(self, messages: list[dict]) -> None:
        """Replace the whole history (e.g. after compaction) and recount its tokens.

        Args:
            messages (list): The new messages.

        """
        self.messages.extra["tokens"] = self._count(messages)
        self.messages.replace_all(messages)
