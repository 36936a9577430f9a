"""
The conversation history: the messages of past turns, exactly as they are sent to the model.

Stored in a `ChunkedList` on the script, so a turn's messages are appended without re-writing
the whole history. Messages are OpenAI wire-format dicts; an optional `metadata` key (used by
compaction markers) is kept in storage and stripped from requests. `visible_history` is the
history as one conversation may see it (private conversations with others left out).

The history keeps a running token total (in its chunk metadata, `history:meta`), updated as
messages are added or replaced, so measuring context usage costs the same at 10 or 10,000
messages.

"""

from .audience import Audience, message_audience, visible
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


PRIVATE_NOTE = (
    "[A private conversation with someone else took place here. What was said is not shown: "
    "it is not yours to share.]"
)


def visible_history(
    history: list[dict], served: frozenset[str] | None, turn: str | None = None
) -> tuple[list[dict], list[Audience]]:
    """The history as a conversation serving `served` may see it (wire format).

    Messages of private conversations with others are left out; one note stands for each run
    of them, so the model knows only that one took place. A turn's messages share one audience,
    so a tool call and its result are always shown or left out together.

    Args:
        history (list): The stored history messages, oldest first.
        served (frozenset or None): Who the conversation serves; None: everyone.
        turn (str, optional): The asking conversation's key: its own messages are shown
            whatever their audience (it made them; with `room_speech_audience="present"` a
            newcomer may not know what its events said, yet the turn goes on from them).

    Returns:
        tuple: The visible messages in wire format, with notes for hidden runs, and the
            audiences of the messages shown.

    """
    shown: list[dict] = []
    audiences: list[Audience] = []
    hidden = False
    for message in history:
        audience = message_audience(message)
        own = turn is not None and (message.get("metadata") or {}).get("turn") == turn
        if own or visible(audience, served):
            shown.append(wire_format(message))
            if audience is not None:
                audiences.append(audience)
            hidden = False
        elif not hidden:
            shown.append({"role": "user", "content": PRIVATE_NOTE})
            hidden = True
    return shown, audiences
