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

Other assistants are not heard (unless `respond_to_assistants`), but for a line of a scene both
take part in (`scenes`), marked with it; a player's say or emote ends the room's scene.

Hearing is a hot path: one `say` reaches every assistant in the room. A heard line waits here,
in memory, and is written to the event queue at the next tick (`flush`), in one write with any
others, classified and scored there (`events.HeardLine.to_event`). A line that needs an answer
at once (a whisper, a page, the assistant's name) calls `on_direct`, which queues a prompt
start.

Two game-wide limits apply to the lines of players, never to builders' instructions nor to
what a builder (the `Builder` permission, as `@assistant` is locked) says:

- a player who starts more turns a minute than the game allows (all assistants together) has
  the lines beyond it deferred (`PLAYER_TURNS`): each is queued at once, as context, and starts
  its turn when the player's minute has room again, in the order spoken; the player is told
  when (privately, once a minute). The moment is stored with the event, so a reload keeps it.
- a player (an account, whichever character speaks) whose turns spent their tokens for the hour
  or game day (`PLAYER_TOKENS`) is heard, as context, but starts no turn, and is told once.

It takes what it needs (the character, the clock, the configuration, where the queue is kept)
and never imports the handler.

"""

import time
from collections.abc import Callable
from datetime import datetime, timedelta

from evennia.utils import search

from . import game_settings
from ..budget import PlayerTokenBudget, TurnRateLimiter
from ..clock import to_iso
from ..conf import AssistantConfig
from ..events import DEFERRED_UNTIL, SCENE, EventQueue, HeardLine, classify, is_urgent
from ..events import triggers_model
from ..memory.store import KeyValueStore
from .scenes import SCENES
from .world import plain, speech_of

# one for the server: a player's turns are counted across every assistant
PLAYER_TURNS = TurnRateLimiter()
# one for the server: the tokens each player's turns spent, across every assistant
PLAYER_TOKENS = PlayerTokenBudget()
# chatter that starts a turn when an assistant responds to ambient talk (`triggers_model`)
AMBIENT_TURNS = ("say", "emote")
# the event metadata naming the account of the player who spoke (their budget's key)
ACCOUNT = "account"
ACCOUNT_NAME = "account_name"
# the event metadata marking a builder's line: the limits on players do not apply to it
BUILDER = "builder"
# who is a builder: the lock of the builders' commands (`@assistant`)
BUILDER_LOCK = "perm(Builder)"
# seconds a speaker's account and builder flag are kept once looked up (a change of puppet or
# permission takes effect within them)
ACCOUNT_SECONDS = 5.0
# when the next deferred line is due is not known yet (after loading): the queue is read once
_UNKNOWN = object()
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
        game_now (callable, optional): `game_now()` -> the game clock's time (picks the game
            day of players' token budgets); the real time when not given.

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
        game_now: Callable[[], datetime] | None = None,
    ):
        self.obj = obj
        self.now = now
        self.game_now = game_now or now
        # when the next deferred line is due (None: none is deferred); unknown after loading
        self._next_release = _UNKNOWN
        self.config = config
        self.queue_store = queue_store
        self.on_direct = on_direct
        self.heard: list[HeardLine] = []
        self._present: set | None = None
        self._names: list[str] | None = None

    # `on_overheard(text)`, for speech said aloud that does not name the assistant (the handler
    # sets it: a light sleeper may need to hear talk that names someone present at once)
    on_overheard: Callable[[str], None] | None = None

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
        options = text[1] if isinstance(text, (tuple, list)) and len(text) > 1 else {}
        msg_type = (options or {}).get("type") or kwargs.get("type")
        if from_assistant is not False and msg_type == "say" and SCENES.rooms:
            # another assistant's speech: heard in a scene both take part in (`scenes`)
            speech = speech_of(plain(text))
            scene = SCENES.heard(self.obj, speaker, speech, self.now())
            if scene is not None:
                self.note("say", speaker, speech, True, {SCENE: scene})
                return
        if from_assistant is None:
            return
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
        if SCENES.rooms and not from_assistant and event_type in _SPEECH_TYPES:
            SCENES.player_spoke(self.obj.location)  # the player has the floor
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
                if self.on_overheard is not None and event_type == "say":
                    self.on_overheard(text)  # asleep, talk among others may still need it
                return
        # the same classification the queue makes at the tick
        if is_urgent(classify(event_type, text, names), metadata or {}):
            if is_object and event_type != "instruction":
                # whose budget the turn it starts is charged to: the player, not the character
                heard[-1] = heard[-1]._replace(metadata={**(metadata or {}), **_account(speaker)})
            self.on_direct()

    # ---- to the queue ---------------------------------------------------------------------------

    def flush(self) -> int:
        """Write what was heard since the last tick to the event queue, in one write.

        Returns:
            int: How many events were queued.

        """
        heard = self.heard
        if not heard:
            self._release()
            return 0
        # read first: a bad setting raises (the tick records it) before a line leaves `heard`
        limits = _limits()
        self.heard = []
        config = self.config()
        # kept for hearing, which must not query: renewed here, at every tick that heard a line
        names = self._names = [self.obj.key, *self.obj.aliases.all()]
        queue = EventQueue(self.queue_store())
        last_id = queue.next_id() - 1
        room = config.room_speech_audience
        witnesses = [f"#{pk}" for pk in self.presence()] if room == "present" else None
        events = []
        now = self.now()
        for line in heard:
            last_id = max(time.time_ns(), last_id + 1)
            event = line.to_event(last_id, names, config.max_event_chars, witnesses, room)
            if SCENE in event.metadata:
                # a scene's line waits for the tick and wakes no one; a scene that ended
                # meanwhile (a player spoke up) leaves it as context
                event.urgent = False
                location = self.obj.location
                if not SCENES.is_live(event.metadata[SCENE], location and location.id, now):
                    del event.metadata[SCENE]
            events.append(event)
        self._limit_players(events, *limits, respond_to_ambient=config.respond_to_ambient)
        queue.push_many(events, config.max_pending_events)
        self._release(queue)
        return len(events)

    def _release(self, queue: EventQueue | None = None) -> None:
        """Let the deferred lines whose moment came start their turns (one write, only when
        one is due; the queue is read only then, or once after loading)."""
        due = self._next_release
        now = self.now()
        if due is None or (due is not _UNKNOWN and now < due):
            return
        queue = queue or EventQueue(self.queue_store())
        try:
            per_hour = game_settings.player_tokens_per_hour()
            per_day = game_settings.player_tokens_per_day()
        except ValueError:
            return  # a bad setting: `flush` reports it; the lines wait for it to be fixed
        game_now = self.game_now()

        def held(item: dict) -> str | None:
            # a line deferred before its player's tokens ran out must not start a turn now
            account = item["metadata"].get(ACCOUNT) or item.get("speaker_key")
            spent = account and PLAYER_TOKENS.exhausted(account, now, game_now, per_hour, per_day)
            if not spent:
                return None
            self._tell_spent(item.get("speaker_key"), account, spent, now, game_now)
            return f"the player's tokens for the {spent} are spent"

        self._next_release = queue.release_deferred(now, held)

    def _limit_players(
        self,
        events: list,
        per_minute: int,
        per_hour: int,
        per_day: int,
        respond_to_ambient: bool = False,
    ) -> None:
        """Apply the game-wide limits on players' lines (see the module's doc): a player whose
        tokens are spent starts no turn; one over the turns a minute waits for a moment when
        the minute has room. With `respond_to_ambient`, chatter starts turns too, so it counts
        as well; but chatter over the minute is only heard, never deferred (it was not said to
        the assistant)."""
        now = self.now()
        game_now = self.game_now()
        for event in events:
            if event.type == "instruction" or not event.speaker_key:
                continue
            chatter = not event.urgent
            if chatter and not (
                respond_to_ambient and event.type in AMBIENT_TURNS and not event.from_assistant
            ):
                continue
            if ACCOUNT not in event.metadata:
                # chatter was not looked into as it was heard (the hot path): whose it is
                event.metadata.update(_account_of_key(event.speaker_key))
            if event.metadata.get(BUILDER):
                continue  # a builder at work is not held back (their turns are still counted)
            account = event.metadata.get(ACCOUNT) or event.speaker_key
            spent = PLAYER_TOKENS.exhausted(account, now, game_now, per_hour, per_day)
            if spent:
                event.urgent = False
                event.metadata["held_back"] = f"the player's tokens for the {spent} are spent"
                self._tell_spent(event.speaker_key, account, spent, now, game_now)
                continue
            # counted per player, like the tokens: a second character of one account shares
            # its minute
            when = PLAYER_TURNS.slot(account, now, per_minute)
            if when == now:
                continue
            if chatter:
                event.metadata["held_back"] = "too many turns a minute"
                continue
            event.urgent = False
            if when is None:
                # more lines wait than `MAX_WAIT` holds: this one is heard, not answered alone
                event.metadata["held_back"] = "too many lines waiting"
                if PLAYER_TURNS.tell_once(f"{account}:refused", now):
                    self._tell(
                        event.speaker_key,
                        f"(You have said more than {self.obj.key} can answer in the next few "
                        "minutes: what you say now is heard, with the rest, but not answered "
                        "on its own.)",
                    )
                continue
            event.metadata["held_back"] = "too many turns a minute"
            event.metadata[DEFERRED_UNTIL] = to_iso(when)
            due = self._next_release
            if due is None or (due is not _UNKNOWN and when < due):
                self._next_release = when
            if PLAYER_TURNS.tell_once(account, now):
                seconds = max(1, round((when - now) / timedelta(seconds=1)))
                self._tell(
                    event.speaker_key,
                    f"({self.obj.key} will answer you in about {seconds} s: you are speaking "
                    "faster than the game's assistants can follow.)",
                )

    def _tell_spent(self, speaker_key, account: str, spent: str, now, game_now) -> None:
        """Tell a player, once for the period, that their tokens are spent."""
        if speaker_key and PLAYER_TOKENS.first_telling(account, spent, now, game_now):
            when = "hour" if spent == "hour" else "game day"
            self._tell(
                speaker_key,
                f"(You have had your share of the assistants' thought for this {when}: "
                f"they hear you, and take in what you say with what others say, but "
                f"will not answer you on their own until the next {when}.)",
            )

    @staticmethod
    def _tell(speaker_key: str, text: str) -> None:
        """Say something to one player only (the limits are theirs; no one else hears)."""
        for speaker in search.search_object(speaker_key):
            speaker.msg(text)

    def charge(self, events: list, tokens: int) -> None:
        """Charge a turn's tokens to the players whose lines started it (shared evenly; see
        `budget.PlayerTokenBudget`). Builders' instructions and other assistants pay nothing.

        Args:
            events (list): The turn's events.
            tokens (int): The tokens it spent.

        """
        players = {}
        respond_to_ambient = self.config().respond_to_ambient
        for event in events:
            if event.type == "instruction" or event.from_assistant:
                continue
            if triggers_model(event, respond_to_ambient, respond_to_assistants=False):
                if event.speaker_key:
                    account = event.metadata.get(ACCOUNT) or event.speaker_key
                    players[account] = event.metadata.get(ACCOUNT_NAME) or event.speaker
        PLAYER_TOKENS.charge(players, tokens, self.now(), self.game_now())

    def player_limits(self) -> dict:
        """The game-wide limits on players, for status: the settings, how many lines are
        deferred, and the top spenders (names and tokens, nothing said).

        Returns:
            dict: {"turns_per_minute", "tokens_per_hour", "tokens_per_day", "deferred",
                "top": {"hour": [(name, tokens)], "day": [...]}}.

        """
        now = self.now()
        try:
            per_minute, per_hour, per_day = _limits()
        except ValueError as err:
            return {"error": str(err)}
        return {
            "turns_per_minute": per_minute,
            "tokens_per_hour": per_hour,
            "tokens_per_day": per_day,
            "deferred": PLAYER_TURNS.deferred(now),
            "top": PLAYER_TOKENS.top(now, self.game_now()),
        }

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


def _account(speaker) -> dict:
    """The metadata naming the player behind a speaking character: their account (the
    character itself when no account plays it), and whether they are a builder.

    Kept on the speaker for `ACCOUNT_SECONDS`: a line in a room of a hundred assistants is
    looked into by each of them, and the lock check parses its lockstring every time (it
    was a third of the assistants' work on the reactor in benchmark 1).

    """
    holder = getattr(speaker, "ndb", None)
    now = time.monotonic()
    known = getattr(holder, "ai_assistant_account", None) if holder is not None else None
    if known is not None and known[0] > now:
        return dict(known[1])
    found = {}
    account = getattr(speaker, "account", None)
    if account is not None and getattr(account, "id", None) is not None:
        found = {ACCOUNT: f"account#{account.id}", ACCOUNT_NAME: str(account.key)[:40]}
    locks = getattr(speaker, "locks", None)
    if locks is not None and locks.check_lockstring(speaker, BUILDER_LOCK):
        found[BUILDER] = True
    if holder is not None:
        holder.ai_assistant_account = (now + ACCOUNT_SECONDS, found)
    return dict(found)


def _account_of_key(speaker_key: str) -> dict:
    """`_account` of a character known by its dbref: from the server's cache of objects when
    it is there (a database query for each assistant that heard the line, otherwise)."""
    speaker = None
    if speaker_key.startswith("#") and speaker_key[1:].isdigit():
        speaker = search.ObjectDB.get_cached_instance(int(speaker_key[1:]))
    if speaker is None:
        found = search.search_object(speaker_key)
        speaker = found[0] if found else None
    return _account(speaker) if speaker is not None else {}


def _limits() -> tuple[int, int, int]:
    """The game-wide limits on players, read now: turns a minute, tokens an hour and a day.

    Raises:
        ValueError: A setting is not allowed (naming it and what is).

    """
    return (
        game_settings.player_turns_per_minute(),
        game_settings.player_tokens_per_hour(),
        game_settings.player_tokens_per_day(),
    )
