"""
What an assistant character hears: Evennia's messages turned into events for its queue.

`Hearing` is one part of the assistant's handler (`character.assistant.hearing`), the way
`cooldowns` or `traits` hang one job off a character. It turns what the character is sent
(`at_msg_receive`) into heard lines:

- `say` and `whisper`, typed by `at_say` (the speech is the quoted part);
- `pose` (an emote); `move`, `teleport` and `traverse` (arrivals and departures, told apart by
  who was known to be present); `page` (from the contrib's own `page`);
- an untyped notice from a character ("Bob has entered the game."): logging in or out, told
  apart by the speaker's sessions.

Hearing is a hot path: one `say` reaches every assistant in the room. A heard line waits here,
in memory, and is written to the event queue at the next tick (`flush`), in one write with any
others, classified and scored there (`events.HeardLine.to_event`). A line that needs an answer
at once (a whisper, a page, the assistant's name) calls `on_direct`, which queues a prompt
start. A player who starts more turns a minute than the game allows (all assistants together)
is heard, as context, but starts no turn (`PLAYER_TURNS`).

It takes what it needs (the character, the clock, the configuration, where the queue is kept)
and never imports the handler.

"""

import time
from collections.abc import Callable
from datetime import datetime

from evennia.utils import search

from . import game_settings
from .budget import TurnRateLimiter
from .conf import AssistantConfig
from .events import EventQueue, HeardLine, classify, is_urgent
from .memory.store import KeyValueStore
from .world import plain, speech_of

# one for the server: a player's turns are counted across every assistant
PLAYER_TURNS = TurnRateLimiter()
# lines heard between two ticks, at most (the queue keeps max_pending_events of them)
HEARD_BUFFER = 2000
_MOVE_TYPES = frozenset({"move", "teleport", "traverse"})
# heard types that are never direct (unless flagged urgent by whoever called `hear`)
_PLAIN_TYPES = frozenset({"arrive", "depart"})
# heard in the room: direct only when they name the assistant
_SPEECH_TYPES = frozenset({"say", "emote"})


class Hearing:
    """What one assistant character hears, until its next tick writes it to the queue.

    Args:
        obj (Object): The assistant character.
        now (callable): `now()` -> the current real time.
        config (callable): `config()` -> the configuration in force (cheap: cached by the
            handler).
        queue_store (callable): `queue_store()` -> the store the event queue lives in (the
            script's).
        on_direct (callable): `on_direct()`, when a line that needs an answer at once was
            heard (the handler queues a prompt start).

    Attributes:
        heard (list): The `HeardLine`s not yet written to the queue, oldest first.

    """

    def __init__(
        self,
        obj,
        *,
        now: Callable[[], datetime],
        config: Callable[[], AssistantConfig],
        queue_store: Callable[[], KeyValueStore],
        on_direct: Callable[[], None],
    ):
        self.obj = obj
        self.now = now
        self.config = config
        self.queue_store = queue_store
        self.on_direct = on_direct
        self.heard: list[HeardLine] = []
        self._present: set | None = None
        self._names: list[str] | None = None

    def __len__(self) -> int:
        return len(self.heard)

    # ---- what the character is sent -----------------------------------------------------------

    def _admits(self, speaker) -> bool | None:
        """Whether what `speaker` says is heard at all: None when it is dropped, else whether
        the speaker is another assistant. The one place that asks: N assistants in a room would
        otherwise capture each other's every line (N x N work per line)."""
        from_assistant = getattr(speaker, "is_ai_assistant", False) is True
        if from_assistant and not self.config().respond_to_assistants:
            return None
        return from_assistant

    def receive(self, text, from_obj, kwargs: dict) -> None:
        """Turn what the character was sent (`at_msg_receive`) into heard lines.

        Args:
            text (str or tuple): The message, or (message, options) with a "type" option.
            from_obj (Object or list): Who sent it.
            kwargs (dict): The other keywords of the message, which may hold "type".

        """
        speaker = from_obj[0] if isinstance(from_obj, (list, tuple)) and from_obj else from_obj
        if speaker is None or speaker is self.obj or not text:
            return
        from_assistant = self._admits(speaker)
        if from_assistant is None:
            return
        options = text[1] if isinstance(text, (tuple, list)) and len(text) > 1 else {}
        msg_type = (options or {}).get("type") or kwargs.get("type")
        if msg_type in ("say", "whisper"):
            self.note(msg_type, speaker, speech_of(plain(text)), from_assistant)
        elif msg_type == "pose":
            self.note("emote", speaker, plain(text), from_assistant)
        elif msg_type in _MOVE_TYPES:
            # departures are announced before the mover leaves and arrivals after it came: both
            # find it in the room, so tell them apart by who was known to be present
            present = self.presence()
            if speaker.id in present:
                present.discard(speaker.id)
                self.note("depart", speaker, plain(text), from_assistant)
            else:
                present.add(speaker.id)
                self.note("arrive", speaker, plain(text), from_assistant)
        elif msg_type == "page":
            self.note("page", speaker, kwargs.get("ai_speech") or plain(text), from_assistant)
        elif msg_type is None and hasattr(speaker, "sessions"):
            self._presence_notice(speaker, text, from_assistant)

    def _presence_notice(self, speaker, text, from_assistant: bool) -> None:
        """An untyped notice from a character, such as "Bob has entered the game.": logging in
        and out moves no one through an exit, so it is told apart by the speaker's sessions
        (none left when logging out) and by who was known to be present."""
        present = self.presence()
        if not speaker.sessions.count():
            if speaker.id in present:
                present.discard(speaker.id)
                self.note("depart", speaker, plain(text), from_assistant)
        elif speaker.id not in present and speaker.location == self.obj.location:
            present.add(speaker.id)
            self.note("arrive", speaker, plain(text), from_assistant)

    def hear(self, event_type: str, speaker, text: str, metadata: dict | None = None) -> None:
        """Hear something by other means than a message to the character (a game's own
        system, a builder's instruction).

        Args:
            event_type (str): say, whisper, page, emote, arrive, depart or instruction.
            speaker (Object or str): Who it came from.
            text (str): What was said or done (cut to `max_event_chars` when queued).
            metadata (dict, optional): e.g. {"urgent": True} or {"priority": 9}.

        """
        from_assistant = self._admits(speaker)
        if from_assistant is not None:
            self.note(event_type, speaker, text, from_assistant, metadata)

    def note(self, event_type, speaker, text, from_assistant: bool, metadata=None) -> None:
        """Keep one heard line until the next tick (classified, scored and queued there).

        Args:
            event_type (str): What kind of line it is (see `hear`).
            speaker (Object or str): Who it came from.
            text (str): What was said or done.
            from_assistant (bool): The speaker is another assistant.
            metadata (dict, optional): e.g. {"urgent": True}.

        """
        heard = self.heard
        if len(heard) >= HEARD_BUFFER:
            # a flood between two ticks: the queue could not keep it all anyway
            del heard[: len(heard) - HEARD_BUFFER + 1]
        is_object = hasattr(speaker, "key")
        location = self.obj.location
        heard.append(
            HeardLine(
                event_type=event_type,
                speaker=speaker.key if is_object else str(speaker),
                speaker_key=f"#{speaker.id}" if is_object else None,
                text=text,
                time=self.now(),
                location=location.key if location else None,
                from_assistant=from_assistant,
                metadata=metadata,
            )
        )
        if from_assistant or (event_type in _PLAIN_TYPES and not metadata):
            # arrivals and departures are never direct: no more work on the hot path. Other
            # assistants wait for the tick, which keeps two of them talking at its pace
            return
        names = self._names
        if names is None:
            names = self._names = [self.obj.key, *self.obj.aliases.all()]
        if not metadata and event_type in _SPEECH_TYPES:
            # a line naming no one costs a substring search, nothing more (a line this misses
            # is still classified at the tick: it only waits for it)
            folded = text.lower()
            if not any(name.lower() in folded for name in names if name):
                return
        # the same classification the queue makes at the tick
        if is_urgent(classify(event_type, text, names), metadata or {}):
            self.on_direct()

    # ---- to the queue ---------------------------------------------------------------------------

    def flush(self) -> int:
        """Write what was heard since the last tick to the event queue, in one write.

        Returns:
            int: How many events were queued.

        """
        heard = self.heard
        if not heard:
            return 0
        self.heard = []
        config = self.config()
        # kept for hearing, which must not query: renewed here, at every tick that heard a line
        names = self._names = [self.obj.key, *self.obj.aliases.all()]
        queue = EventQueue(self.queue_store())
        last_id = queue.next_id() - 1
        room = config.room_speech_audience
        witnesses = [f"#{pk}" for pk in self.presence()] if room == "present" else None
        events = []
        for line in heard:
            last_id = max(time.time_ns(), last_id + 1)
            events.append(line.to_event(last_id, names, config.max_event_chars, witnesses, room))
        self._limit_players(events)
        queue.push_many(events, config.max_pending_events)
        return len(events)

    def _limit_players(self, events: list) -> None:
        """Hold back the lines of a player who starts more turns a minute than the game allows
        (across all assistants): they are heard, as context, but start no turn."""
        per_minute = game_settings.player_turns_per_minute()
        now = self.now()
        for event in events:
            if not event.urgent or event.type == "instruction" or not event.speaker_key:
                continue
            if PLAYER_TURNS.allow(event.speaker_key, now, per_minute):
                continue
            event.urgent = False
            event.metadata["held_back"] = "too many turns a minute"
            if PLAYER_TURNS.tell_once(event.speaker_key, now):
                for speaker in search.search_object(event.speaker_key):
                    speaker.msg(
                        "(You are speaking faster than the game's assistants can follow: they "
                        "hear you, and take it in with what you say next.)"
                    )

    # ---- who is present -------------------------------------------------------------------------

    def presence(self) -> set:
        """Ids of the others in the room, as the assistant last knew them.

        Returns:
            set: Object ids; the set itself, so callers may update it.

        """
        if self._present is None:
            self.refresh_presence()
        return self._present

    def refresh_presence(self) -> None:
        """Learn who is in the room now (at every tick, after moving, after loading).

        Who is present tells an arrival from a departure (both are announced while the mover
        is in the room). People also appear and vanish without a move: logging in puts a
        character back into its room directly, logging out takes it out. Re-reading the room
        at each tick keeps that knowledge from going stale.

        """
        location = self.obj.location
        contents = location.contents if location else []
        myself = self.obj
        self._present = {obj.id for obj in contents if obj is not myself}
