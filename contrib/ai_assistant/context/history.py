"""
The conversation history: the messages of past turns, exactly as they are sent to the model.

Stored in a `ChunkedList` on the script, so a turn's messages are appended without re-writing
the whole history. Messages are OpenAI wire-format dicts; an optional `metadata` key (used by
compaction markers) is kept in storage and stripped from requests.

"""

from ..memory.store import ChunkedList, KeyValueStore


class ConversationHistory:
    def __init__(self, store: KeyValueStore, chunk_size: int = 50):
        self.messages = ChunkedList(store, "history", chunk_size)

    def __len__(self) -> int:
        return len(self.messages)

    def all(self) -> list[dict]:
        return self.messages.all()

    def extend(self, messages: list[dict]) -> None:
        self.messages.extend(messages)

    def replace(self, messages: list[dict]) -> None:
        self.messages.replace_all(messages)


def wire_format(message: dict) -> dict:
    """The message as the provider receives it (storage-only keys removed)."""
    if "metadata" not in message:
        return message
    return {key: value for key, value in message.items() if key != "metadata"}
