"""
The one door into an assistant: `AssistantHandler`, on the character as `character.assistant`.

Like Evennia's own handlers (`cooldowns`, `traits`, `buffs`), it is attached to the typeclass
with a `lazy_property` (see `AssistantCharacterMixin`) and made once per character instance.
Everything outside the core goes through it: the character's hearing, the script's tick,
`@assistant`, web views. It holds the resolved configuration (settings are read in one place,
`ai_assistant.game_settings`), the cached `Brain`, what was heard since the last tick, and every
builder operation. An operation validates its input and returns a result, or raises
`AssistantError` with a message fit for a builder; nothing changes when it raises.

Games customise an assistant by subclassing the handler and returning theirs from the mixin's
`assistant` property: `make_world` (what the tools act on), `make_registry` (the tools),
`make_long_term_store` (where long-term memories live) and `system_prompt_template` (the rules
the model is given) are the places meant for it.

"""

import os
import re
import time
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from functools import partial

from django.db import DatabaseError
from evennia.utils import create, logger, search

from . import game_settings, telemetry
from .awake.turn import TurnOutcome, awake_tick
from .brain import Brain
from .budget import TurnRateLimiter
from .clock import SystemClock, to_iso
from .conf import (
    AssistantConfig,
    ConfigError,
    config_keys,
    describe_key,
    parse_override,
    resolve_config,
)
from .debt import SleepDebt
from .reminders import Reminders, TriggerError
from .sleep_history import SleepHistory
from .driver import default_runner
from . import model_queue
from .events import EventQueue, HeardLine, classify, is_urgent, triggers_model
from .lifecycle import AWAKE, DEFAULT_HOURS, DEPTHS, LIGHT, SLEEP, SleepRefused
from .llm.client import EndpointSettings, client_for
from .memory.audience import label as audience_label
from .memory.core import CoreMemoryFull
from .memory.review import ReviewError, parse_trust
from .memory.semantic import EmbeddedMemoryStore, MemoryStore
from .memory.snapshots import RecordingStore, SnapshotError, Snapshots
from .prompt import SYSTEM_PROMPT
from .sleep.tick import sleep_tick
from .state import (
    CONFIG_OVERRIDES,
    CORE_CONSOLIDATION,
    CONSECUTIVE_ERRORS,
    LAST_ERROR,
    LAST_TURN,
    RECENT_TURNS,
    MODE,
    PAUSED,
    RETRY_AFTER,
    TICK_ERRORS,
    TICKER_SUBSCRIPTION,
)
from .status import AssistantStatus
from .storage import MEMORY_CATEGORY, AttributeStore, step_transaction
from .text import redact
from .tools import default_registry
from .tools.base import ToolRegistry, World
from .world import CharacterWorld, plain, speech_of

ASSISTANT_TAG = ("ai_assistant", "ai_assistant")
# one for the server: a player's turns are counted across every assistant
PLAYER_TURNS = TurnRateLimiter()
SCRIPT_KEY = "ai_assistant"
DEFAULT_PERSONA = "A helpful assistant who lives in this game world."
MAX_PERSONA_CHARS = 2000
MAX_INSTRUCTION_CHARS = 2000
MAX_QUERY_CHARS = 200
MAX_CORE_KEY_CHARS = 60
MAX_CORE_VALUE_CHARS = 1000
# lines heard between two ticks, at most (the queue keeps max_pending_events of them)
HEARD_BUFFER = 2000
_MOVE_TYPES = {"move", "teleport", "traverse"}
# heard types that are never direct (unless flagged urgent by whoever called `hear`)
_PLAIN_TYPES = frozenset({"arrive", "depart"})
# heard in the room: direct only when they name the assistant
_SPEECH_TYPES = frozenset({"say", "emote"})


class AssistantError(Exception):
    """An operation that was refused. The message says why, for a builder."""


@dataclass(frozen=True)
class TickReport:
    """What running one tick by hand did (`AssistantHandler.tick_now`)."""

    outcome: TurnOutcome | None
    in_flight: bool
    asleep: bool
    pending_events: int
    retry_after: str | None


class EvenniaGameClock:
    """The game's own clock (`evennia.utils.gametime`), for the sleep schedule's hours."""

    @property
    def time_factor(self) -> float:
        """How many game seconds pass per real second.

        Returns:
            float: The game's time factor from its settings.

        """
        return game_settings.time_factor()

    def now(self) -> datetime:
        """The current game time.

        Returns:
            datetime: The game's absolute time, in UTC.

        """
        # imported here: the module reads the database when it is imported
        from evennia.utils import gametime

        return datetime.fromtimestamp(gametime.gametime(absolute=True), tz=timezone.utc)


def redacted(text) -> str:
    """Hide secrets in a text before it is shown or logged.

    Args:
        text (object): What to clean; it is turned into a string first.

    Returns:
        str: `text` without the API keys in use or anything shaped like a key.

    """
    return redact(str(text), game_settings.secrets())


def find_assistants(name: str | None = None) -> list:
    """Every assistant in the game, or those called `name` (key, alias or dbref).

    Args:
        name (str, optional): What to match, case-insensitively.

    Returns:
        list: The matching assistant characters.

    """
    assistants = list(search.search_tag(ASSISTANT_TAG[0], category=ASSISTANT_TAG[1]))
    if name is None:
        return assistants
    wanted = name.strip().lower()
    return [
        obj
        for obj in assistants
        if obj.key.lower() == wanted or obj.dbref == name.strip() or wanted in obj.aliases.all()
    ]


def create_assistant(name: str, location, persona: str = "", typeclass: str | None = None):
    """Create an assistant character in `location`.

    Args:
        name (str): Its name.
        location (Object): The room.
        persona (str, optional): Who it is; a default persona when empty.
        typeclass (str, optional): Its typeclass; default `AI_ASSISTANT_TYPECLASS`.

    Returns:
        Object: The new assistant.

    Raises:
        AssistantError: If the persona is too long or the typeclass is not an assistant.

    """
    persona = (persona or "").strip()
    if len(persona) > MAX_PERSONA_CHARS:
        raise AssistantError(
            f"The persona is {len(persona)} characters; at most {MAX_PERSONA_CHARS}."
        )
    typeclass = typeclass or game_settings.assistant_typeclass()
    assistant = create.create_object(typeclass, key=name, location=location, home=location)
    if not hasattr(assistant, "assistant") or not isinstance(assistant.assistant, AssistantHandler):
        assistant.delete()
        raise AssistantError(
            f"{typeclass} is not an assistant typeclass: mix AssistantCharacterMixin into it."
        )
    if persona:
        assistant.db.persona = persona
    return assistant


class AssistantHandler:
    """The way into one assistant character.

    Args:
        obj (Object): The assistant character.

    Attributes:
        clock: Where "now" comes from (`SystemClock`; tests and demos set a `ManualClock`).
        game_clock: The game clock for the sleep schedule (`EvenniaGameClock`).
        runner: How blocking work runs (None: worker threads on a live server, inline else).
        submit: How a prompt start is queued, `submit(func, *args)` (None: the reactor's step
            queue on a live server, no prompt start else; tests pass a stand-in).
        on_turn, on_sleep_tick: Optional callbacks after each turn or sleep step (demos).
        in_flight (bool): A turn or sleep step is waiting on the model.
        prompt_starts (int): Prompt starts run (turns begun by a direct event, not a tick).

    """

    def __init__(self, obj):
        self.obj = obj
        self.clock = None
        self.game_clock = None
        self.runner = None
        self.on_turn = None
        self.on_sleep_tick = None
        self.in_flight = False
        self.submit = None
        self.prompt_starts = 0
        # at most one prompt start queued; a direct line heard during a turn asks for one after
        self._prompt_queued = False
        self._prompt_after_turn = False
        self._names: list[str] | None = None
        self.tick_count = 0
        self.skipped_ticks = 0
        self.last_tick: str | None = None
        self.last_outcome: TurnOutcome | None = None
        self.last_sleep_report = None
        self._heard: list[HeardLine] = []
        self._present: set | None = None
        self._brain: Brain | None = None
        self._brain_key = None
        self._script = None
        self._config_error_logged: str | None = None

    # ---- what games override ---------------------------------------------------------------

    def make_world(self) -> World:
        """Build the world the tools act on. Override to give your assistants other means.

        Returns:
            World: A `CharacterWorld` for this character.

        """
        return CharacterWorld(self.obj)

    def make_registry(self) -> ToolRegistry:
        """Build the set of tools offered to the model. Override to add or remove tools.

        Returns:
            ToolRegistry: The default tool registry.

        """
        return default_registry()

    def make_long_term_store(self, memory_store) -> MemoryStore:
        """Build the store where long-term memories live.

        Override to plug in another `MemoryStore`.

        Args:
            memory_store (KeyValueStore): The character's memory Attributes (written through a
                `RecordingStore`, so a rollback covers what is written through it).

        Returns:
            MemoryStore: An `EmbeddedMemoryStore` kept in those Attributes.

        """
        return EmbeddedMemoryStore(memory_store)

    def system_prompt_template(self) -> str:
        """The rules the model is given, with `{name}` and `{persona}` to fill in.

        Returns:
            str: The system prompt template.

        """
        return SYSTEM_PROMPT

    # ---- parts -----------------------------------------------------------------------------

    @property
    def script(self):
        """The assistant's script, created if missing (kept on the handler: a lookup is a query,
        and the tick and hearing ask for it often)."""
        script = self._script
        if script is None or not script.pk:
            found = self.obj.scripts.get(SCRIPT_KEY)
            if not found:
                self.obj.scripts.add(
                    game_settings.script_typeclass(), key=SCRIPT_KEY, autostart=True
                )
                found = self.obj.scripts.get(SCRIPT_KEY)
            script = self._script = found[0] if found else None
        return script

    def now(self) -> datetime:
        """The current real time, from the handler's clock (the system clock by default).

        Returns:
            datetime: The current time.

        """
        return (self.clock or SystemClock()).now()

    @property
    def persona(self) -> str:
        """The character's persona text, or the default persona when none is set.

        Returns:
            str: The persona.

        """
        return self.obj.db.persona or DEFAULT_PERSONA

    # ---- configuration ---------------------------------------------------------------------

    def overrides(self) -> dict:
        """This assistant's own configuration overrides.

        Returns:
            dict: A copy of the overrides, keyed by configuration key.

        """
        return dict(self.script.attributes.get(CONFIG_OVERRIDES) or {})

    def config(self) -> AssistantConfig:
        """The resolved configuration: the game's defaults with this assistant's overrides.

        Returns:
            AssistantConfig: The configuration in force.

        Raises:
            ConfigError: Naming a bad key or value.

        """
        return resolve_config(game_settings.game_defaults(), self.overrides())

    def checked_config(self) -> tuple[AssistantConfig, str | None]:
        """The configuration, or the defaults and the reason when it is invalid.

        Returns:
            tuple: (AssistantConfig, error), where error is None or the reason (str) the
                configuration was rejected and the defaults used instead.

        """
        try:
            return self.config(), None
        except ConfigError as err:
            return AssistantConfig(), str(err)

    def endpoint(self, config: AssistantConfig) -> EndpointSettings:
        """Where this assistant's model calls go, and how.

        Args:
            config (AssistantConfig): The configuration in force (timeout, retries).

        Returns:
            EndpointSettings: The game's endpoint and key with the config's timeout and
                retries.

        """
        return EndpointSettings(
            base_url=game_settings.base_url(),
            api_key=game_settings.api_key(),
            timeout=config.request_timeout,
            max_retries=config.max_retries,
        )

    @property
    def brain(self) -> Brain:
        """The core's view of this assistant, rebuilt when its settings change."""
        config, error = self.checked_config()
        if error and error != self._config_error_logged:
            # logged once per distinct error, not at every tick; /status shows it too
            logger.log_err(f"ai_assistant {self.obj}: {error} Using the defaults.")
        self._config_error_logged = error
        model = config.effective_model(game_settings.chat_model())
        embedding_model = config.embedding_model or game_settings.embedding_model()
        endpoint = self.endpoint(config)
        key = (config, model, self.persona, embedding_model, endpoint)
        if self._brain is None or key != self._brain_key:
            character = self.obj
            state = AttributeStore(self.script, on_rollback=self._forget_brain)
            # wrapped here, so a game's own long-term store writes through it too
            memory_store = RecordingStore(
                AttributeStore(character, MEMORY_CATEGORY, self._forget_brain), Snapshots(state)
            )
            registry = self.make_registry()
            registry.propagate = (DatabaseError,)
            self._brain = Brain(
                name=character.key,
                aliases=list(character.aliases.all()),
                persona=self.persona,
                prompt_template=self.system_prompt_template(),
                config=config,
                model=model,
                state=state,
                memory_store=memory_store,
                world=self.make_world(),
                registry=registry,
                client_factory=partial(client_for, endpoint),
                embedding_model=embedding_model,
                on_transition=self._on_transition,
                long_term=self.make_long_term_store(memory_store),
                time_factor=game_settings.time_factor(),
                game_now=self._game_now,
            )
            self._brain_key = key
        location = self.obj.location
        self._brain.location = location.key if location else None
        return self._brain

    def _forget_brain(self) -> None:
        """A step's writes were rolled back: what the brain keeps in memory (usage, indexes,
        caches of its stores) may hold values the database does not; the next use builds it
        again from what is stored."""
        self._brain = None

    def _game_now(self, now: datetime) -> datetime:
        return (self.game_clock or EvenniaGameClock()).now()

    def _hears_assistants(self) -> bool:
        brain = self._brain
        config = brain.config if brain is not None else self.checked_config()[0]
        return config.respond_to_assistants

    # ---- hearing (a hot path: one `say` reaches every assistant in the room) ----------------

    def _admits(self, speaker) -> bool | None:
        """Whether what `speaker` says is heard at all: None when it is dropped, else whether
        the speaker is another assistant. The one place that asks: N assistants in a room would
        otherwise capture each other's every line (N x N work per line)."""
        from_assistant = getattr(speaker, "is_ai_assistant", False) is True
        if from_assistant and not self._hears_assistants():
            return None
        return from_assistant

    def receive(self, text, from_obj, kwargs: dict) -> None:
        """Turn what the character was sent (`at_msg_receive`) into heard events.

        `say` and `whisper` are typed by `at_say` (the speech is the quoted part), emotes are
        "pose", arrivals and departures "move"/"teleport"/"traverse" (told apart by who was
        known to be present), pages "page" (from the contrib's `page`). An untyped notice from
        a character is logging in or out.

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
            self._note(msg_type, speaker, speech_of(plain(text)), from_assistant)
        elif msg_type == "pose":
            self._note("emote", speaker, plain(text), from_assistant)
        elif msg_type in _MOVE_TYPES:
            # departures are announced before the mover leaves, arrivals after it came: both
            # find it in the room, so tell them apart by who was known to be present
            present = self.presence()
            if speaker.id in present:
                present.discard(speaker.id)
                self._note("depart", speaker, plain(text), from_assistant)
            else:
                present.add(speaker.id)
                self._note("arrive", speaker, plain(text), from_assistant)
        elif msg_type == "page":
            self._note("page", speaker, kwargs.get("ai_speech") or plain(text), from_assistant)
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
                self._note("depart", speaker, plain(text), from_assistant)
        elif speaker.id not in present and speaker.location == self.obj.location:
            present.add(speaker.id)
            self._note("arrive", speaker, plain(text), from_assistant)

    def hear(self, event_type: str, speaker, text: str, metadata: dict | None = None) -> None:
        """Queue something the assistant heard.

        Args:
            event_type (str): say, whisper, page, emote, arrive, depart or instruction.
            speaker (Object or str): Who it came from.
            text (str): What was said or done (cut to `max_event_chars` when queued).
            metadata (dict, optional): e.g. {"urgent": True} or {"priority": 9}.

        """
        from_assistant = self._admits(speaker)
        if from_assistant is not None:
            self._note(event_type, speaker, text, from_assistant, metadata)

    def _note(self, event_type, speaker, text, from_assistant, metadata=None) -> None:
        # only noted here; classified, scored and written to the queue at the next tick
        if len(self._heard) >= HEARD_BUFFER:
            # a flood between two ticks: the queue could not keep it all anyway
            del self._heard[: len(self._heard) - HEARD_BUFFER + 1]
        is_object = hasattr(speaker, "key")
        location = self.obj.location
        self._heard.append(
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
            self._direct_heard()

    def _direct_heard(self) -> None:
        """A direct line was heard: queue a prompt start, unless one is queued or a turn runs
        (then the turn's end queues it), or `prompt_start` is off."""
        if self._prompt_queued:
            return  # a burst: the queued start takes every line heard before it runs
        brain = self._brain
        config = brain.config if brain is not None else self.checked_config()[0]
        if not config.prompt_start:
            return
        if self.in_flight:
            self._prompt_after_turn = True
            return
        self._prompt_queued = self.script.schedule_prompt_start(self.submit)

    def _after_work(self, answered: bool = False) -> None:
        """After a turn or sleep step: queue the next prompt start at once when a direct line
        came in meanwhile, or when this turn answered its events and others still call for the
        model (another person's whispers wait for a turn of their own).

        Args:
            answered (bool, optional): The turn had a reply (its events left the queue).

        """
        wanted, self._prompt_after_turn = self._prompt_after_turn, False
        if not wanted and answered:
            # only after a turn that made progress: a turn that kept its events (an error,
            # backing off) must not start itself again and again
            brain = self.brain
            # urgent lines of people only, as in hearing: ambient speech and other assistants
            # stay on the ticker
            wanted = brain.config.prompt_start and any(
                triggers_model(event, respond_to_ambient=False, respond_to_assistants=False)
                for event in brain.events.peek()
            )
        if wanted and not self._prompt_queued:
            self._prompt_queued = self.script.schedule_prompt_start(self.submit)

    def flush_heard(self) -> int:
        """Write what was heard since the last tick to the event queue, in one write.

        Returns:
            int: How many events were queued.

        """
        heard = self._heard
        if not heard:
            return 0
        self._heard = []
        config = self.checked_config()[0]
        # kept for hearing, which must not query: renewed here, at every tick that heard a line
        names = self._names = [self.obj.key, *self.obj.aliases.all()]
        queue = EventQueue(AttributeStore(self.script))
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

    # ---- ticking ---------------------------------------------------------------------------

    def tick_rate(self) -> int:
        """Seconds between ticks in the current mode.

        Returns:
            int: `tick_rate` when awake, `tick_rate_sleep` when asleep.

        """
        config = self._brain.config if self._brain is not None else self.checked_config()[0]
        mode = self.script.attributes.get(MODE) or AWAKE
        return config.tick_rate if mode == AWAKE else config.tick_rate_sleep

    def tick(self, prompt: bool = False) -> None:
        """One tick: queue what was heard, then start the awake turn or the sleep work that is
        due. Called by the script inside a database transaction; never blocks.

        A prompt start (a direct line was heard) is this tick without its clockwork: it passes
        the same gates (paused, a turn in flight, and in `awake_tick` the budgets, the backoff
        after errors and the per-player limit), but starts only an awake turn. Asleep, it does
        nothing: the sleep tick's wake rules decide. Nor does it start scheduled sleep or count
        as a tick.

        Args:
            prompt (bool, optional): This is a prompt start, not a tick of the ticker.

        """
        if prompt:
            self._prompt_queued = False  # lines heard from now on ask for a start of their own
        # read each time, like every game setting: a test or a reload may change it
        telemetry.set_enabled(game_settings.telemetry())
        self.flush_heard()
        self.refresh_presence()
        if self.script.attributes.get(PAUSED):
            return
        if self.in_flight:
            if prompt:
                self._prompt_after_turn = True
            else:
                self.skipped_ticks += 1
            return
        now = self.now()
        if prompt:
            brain = self.brain
            if brain.lifecycle.mode == AWAKE:
                self.prompt_starts += 1
                self._start(awake_tick(brain, now), self._turn_done, opening=True)
            return
        # on the handler, not in Attributes: an idle tick writes nothing to the database
        self.tick_count += 1
        self.last_tick = to_iso(now)
        brain = self.brain
        if brain.lifecycle.mode == AWAKE:
            game_clock = self.game_clock or EvenniaGameClock()
            if brain.lifecycle.maybe_start_scheduled_sleep(
                now, game_clock.now(), game_clock.time_factor
            ):
                return
            self._start(awake_tick(brain, now), self._turn_done)
            return
        work = sleep_tick(brain, now)
        if work is None:
            self._sleep_work_done(None)
        else:
            self._start(work, self._sleep_work_done)

    def _start(self, work, on_done, opening: bool = False) -> None:
        if work is None:
            return
        self.in_flight = True
        runner = self.runner or default_runner()
        self.script.drive(work, on_done, self._work_failed, runner, opening=opening)

    def _work_failed(self, failure) -> None:
        self.in_flight = False
        self._after_work()

    def _turn_done(self, outcome: TurnOutcome) -> None:
        self.in_flight = False
        self.last_outcome = outcome
        for call in outcome.tool_calls:
            if call.get("detail"):
                logger.log_err(
                    f"ai_assistant {self.obj} (#{self.obj.id}): tool {call['name']} raised:\n"
                    f"{call['detail']}"
                )
        if outcome.error:
            logger.log_warn(
                f"ai_assistant {self.obj} (#{self.obj.id}): model call failed: "
                f"{redacted(outcome.error)}; events stay queued"
            )
        if self.on_turn:
            self.on_turn(self, outcome)
        self._after_work(answered=bool(outcome.events) and not outcome.error)

    def _sleep_work_done(self, report) -> None:
        """After a sleep step: the wake conditions."""
        self.in_flight = False
        self.last_sleep_report = report
        if self.on_sleep_tick:
            self.on_sleep_tick(self, report)
        errors = [step.get("error") for step in _reports(report) if step.get("error")]
        for error in errors:
            logger.log_warn(
                f"ai_assistant {self.obj} (#{self.obj.id}): sleep work failed: "
                f"{redacted(error)}; it is retried next tick"
            )
        brain = self.brain
        brain.lifecycle.apply_wake_conditions(brain.events.peek(), self.now())
        self._after_work()

    def _on_transition(self, mode: str, reason: str) -> None:
        """After falling asleep or waking: swap the ticker, tell the character and the room."""
        character = self.obj
        self.script.ensure_ticker(self.tick_rate())
        config = self.brain.config if self._brain is not None else self.checked_config()[0]
        word = "sleep" if mode == SLEEP else "awake"
        character.msg(text=(f"Entering {word} mode: {reason}", {"type": "ai_assistant_mode"}))
        line = config.sleep_announcement if mode == SLEEP else config.wake_announcement
        if line and character.location:
            character.location.msg_contents(
                line.format(name=character.key), exclude=[character], from_obj=character
            )
        logger.log_info(f"ai_assistant {character} (#{character.id}): {word} ({reason})")

    # ---- status ----------------------------------------------------------------------------

    def status(self, flush: bool = True) -> AssistantStatus:
        """Everything `@assistant/status` shows, as one snapshot.

        Args:
            flush (bool, optional): Queue what was heard since the last tick first (a write), as
                the command does; False reads without writing anything (the web dashboard),
                counting those lines among the pending events.

        Returns:
            AssistantStatus: The state, usage, errors and overrides of this assistant.

        """
        config_error = self.checked_config()[1]
        unqueued = 0
        if flush:
            self.flush_heard()
        else:
            unqueued = len(self._heard)
        script = self.script
        subscription = script.attributes.get(TICKER_SUBSCRIPTION) or {}
        last_error = script.attributes.get(LAST_ERROR)
        brain_status = self.brain.status(self.now())
        return replace(
            brain_status,
            pending_events=brain_status.pending_events + unqueued,
            paused=bool(script.attributes.get(PAUSED)),
            tick_rate=subscription.get("interval"),
            in_flight=self.in_flight,
            tick_count=self.tick_count,
            last_tick=self.last_tick,
            tick_errors=script.attributes.get(TICK_ERRORS) or 0,
            last_error=redacted(last_error) if last_error else None,
            config_error=config_error,
            overrides=self.overrides(),
            prompt_starts=self.prompt_starts,
            model_calls=asdict(queue) if (queue := model_queue.current_stats()) else None,
        )

    # ---- builder operations ----------------------------------------------------------------

    def options(self) -> list[tuple[str, object, str]]:
        """Every setting with its current value.

        Returns:
            list: (key, value, what is allowed) tuples, starting with the persona.

        """
        config = self.checked_config()[0]
        rows = [("persona", self.persona, f"text of 1-{MAX_PERSONA_CHARS} characters")]
        for key in config_keys():
            rows.append((key, getattr(config, key), describe_key(key).split(": ", 1)[1]))
        return rows

    def set_option(self, key: str, raw: str):
        """Change one setting of this assistant.

        Args:
            key (str): A configuration key, or "persona".
            raw (str): The value as typed; "default" drops this assistant's override.

        Returns:
            The value now in force (typed).

        Raises:
            AssistantError: Naming the key and what is allowed; nothing is changed.

        """
        key = (key or "").strip()
        value = (raw or "").strip()
        if key == "persona":
            if not value or len(value) > MAX_PERSONA_CHARS:
                raise AssistantError(
                    f"A persona must be 1-{MAX_PERSONA_CHARS} characters; got {len(value)}."
                )
            self.obj.db.persona = value
            return value
        if key not in config_keys():
            raise AssistantError(f"Unknown key '{key}'. Keys: {', '.join(config_keys())}, persona.")
        overrides = self.overrides()
        if value.lower() == "default":
            overrides.pop(key, None)
            typed = None
        else:
            try:
                typed = parse_override(key, value, overrides)
                self.brain.check_override(key, typed)
            except ConfigError as err:
                raise AssistantError(str(err)) from None
            overrides[key] = typed
        self.script.attributes.add(CONFIG_OVERRIDES, overrides)
        config = self.brain.config  # rebuilt now: hearing reads the cached configuration
        if key in ("tick_rate", "tick_rate_sleep"):
            self.script.ensure_ticker(self.tick_rate())
        return getattr(config, key)

    def sleep(
        self, hours: int = DEFAULT_HOURS, depth: str = LIGHT, reason: str = "", by: str = "builder"
    ) -> str:
        """Put the assistant to sleep now; a builder's order skips the assistant's safeguards.

        Args:
            hours (int, optional): How long to sleep, in hours.
            depth (str, optional): "light" or "deep".
            reason (str, optional): Why; the default names who ordered it.
            by (str, optional): Who ordered it.

        Returns:
            str: The phase it starts in ("compacting" or "dreaming").

        Raises:
            AssistantError: Already asleep, or hours/depth not allowed.

        """
        if depth not in DEPTHS:
            raise AssistantError(f"Depth must be 'light' or 'deep', not '{depth}'.")
        try:
            return self.brain.lifecycle.go_to_sleep(
                self.now(),
                hours=hours,
                depth=depth,
                reason=reason or f"put to sleep by {by}",
                initiated_by="builder",
                enforce_safeguards=False,
            )
        except SleepRefused as refusal:
            raise AssistantError(str(refusal)) from None

    def wake(self, reason: str = "") -> None:
        """Wake the assistant now.

        Args:
            reason (str, optional): Why it wakes (cut to 300 characters).

        Raises:
            AssistantError: It is not asleep.

        """
        try:
            self.brain.lifecycle.wake_up(self.now(), (reason or "woken by a builder")[:300])
        except SleepRefused:
            raise AssistantError(f"{self.obj.key} is not asleep.") from None

    def debt(self) -> dict:
        """The assistant's sleep debt.

        Returns:
            dict: "points", "level", "turns_since_sleep", "last_sleep" (ISO or None) and
                "last_reason" (the last builder's reason, or None).

        """
        debt = SleepDebt(self.brain.state)
        return {
            "points": debt.points,
            "level": debt.level,
            "turns_since_sleep": debt.turns_since_sleep,
            "last_sleep": debt.last_sleep(),
            "last_reason": debt.last_reason(),
        }

    def add_debt(self, points: int, reason: str) -> dict:
        """Add sleep debt by hand: a builder's account of a day the assistant did not log.

        Args:
            points (int): 1 to 3.
            reason (str): Why.

        Returns:
            dict: The debt after (as `debt()` gives it).

        Raises:
            AssistantError: Points outside 1-3 or no reason; nothing is changed.

        """
        try:
            SleepDebt(self.brain.state).add(points, reason)
        except ValueError as err:
            raise AssistantError(str(err)) from None
        return self.debt()

    def reminders(self) -> list[dict]:
        """The assistant's reminders (contextual triggers), oldest first.

        Returns:
            list: Dicts with id, pattern, reminder, max_fires, fired_count, audience, by and
                created_at (see `ai_assistant.reminders`).

        """
        return Reminders(self.brain.state).all()

    def add_reminder(self, pattern: str, reminder: str, max_fires: int, by: str) -> dict:
        """Set a reminder: when `pattern` comes up in what it hears, `reminder` rides in that
        turn's message, at most `max_fires` times. A builder's reminder is public, and has a
        room of its own (`reminders.MAX_BUILDER_TRIGGERS`): players cannot crowd it out.

        Args:
            pattern (str): A person, word or place (1-80 characters).
            reminder (str): The reminder (1-300 characters).
            max_fires (int): How many times it may fire (1-20).
            by (str): The builder's name.

        Returns:
            dict: The reminder.

        Raises:
            AssistantError: A value out of bounds, or the builders' room already full;
                nothing is changed.

        """
        brain = self.brain
        try:
            return Reminders(brain.state).add(
                pattern,
                reminder,
                now=self.now(),
                by=by,
                limit=brain.config.max_triggers,
                max_fires=max_fires,
                builder=True,
            )
        except TriggerError as err:
            raise AssistantError(str(err)) from None

    def remove_reminder(self, reminder_id: str) -> dict:
        """Remove a reminder.

        Args:
            reminder_id (str): Its id, such as "t3".

        Returns:
            dict: The reminder removed.

        Raises:
            AssistantError: No reminder has that id; nothing is changed.

        """
        try:
            return Reminders(self.brain.state).remove(reminder_id)
        except TriggerError as err:
            raise AssistantError(str(err)) from None

    def sleeps(self, limit: int = 20) -> list[dict]:
        """The assistant's last sleeps, newest first (see `ai_assistant.sleep_history`).

        Args:
            limit (int): How many at most (1-500).

        Returns:
            list: Sleep records.

        Raises:
            AssistantError: A limit outside 1-500.

        """
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 500:
            raise AssistantError(f"The limit must be a whole number from 1 to 500, not {limit!r}.")
        return SleepHistory(self.brain.state).recent(limit)

    def snapshots(self) -> list[dict]:
        """The memory snapshots kept, newest first (see `ai_assistant.memory.snapshots`).

        Returns:
            list: Dicts with "sleep_id", "started", "keys" and "complete".

        """
        return list(reversed(Snapshots(self.brain.state).kept()))

    def rollback_plan(self, sleep_id: str | None = None) -> dict:
        """What rolling back a sleep would change, without changing anything.

        Args:
            sleep_id (str, optional): The sleep, such as "s3"; by default the latest sleep
                with a snapshot.

        Returns:
            dict: "sleep_id", "sleeps" (the ids undone, newest first), "values" (stored values
                that change), "changes" (counts, see `memory.snapshots.SUMMARY_LABELS`) and
                "kept" (the builder corrections made since, which the rollback keeps: see
                `memory.review.MemoryReview.reapply`).

        Raises:
            AssistantError: It is asleep or busy, the id is malformed, or there is no
                snapshot of that sleep that can be rolled back.

        """
        brain = self.brain
        name = self.obj.key
        if brain.asleep:
            raise AssistantError(
                f"{name} is asleep: a sleep under way is still changing its memory. Wake it "
                f"first (@assistant/wake {name}), then roll back."
            )
        if self.in_flight:
            raise AssistantError(f"{name} is in the middle of a turn; try again in a moment.")
        snapshots = Snapshots(brain.state)
        if sleep_id is None or not sleep_id.strip():
            kept = snapshots.kept()
            if not kept:
                raise AssistantError(
                    f"{name} has no memory snapshot: one is taken when a sleep begins "
                    f"(snapshots_kept={brain.config.snapshots_kept})."
                )
            sleep_id = kept[-1]["sleep_id"]
        sleep_id = sleep_id.strip().lower()
        if not re.fullmatch(r"s[0-9]{1,9}", sleep_id):
            raise AssistantError(
                f"'{sleep_id}' is not a sleep id: one looks like s3 (see @assistant/sleeps "
                f"{name})."
            )
        try:
            # a game's own long-term store too: the corrections are made again through it
            plan = snapshots.preview(
                sleep_id, brain.memory_store.inner, long_term=self.make_long_term_store
            )
        except SnapshotError as err:
            raise AssistantError(str(err)) from None
        return {"sleep_id": sleep_id, **plan}

    def rollback(
        self,
        sleep_id: str | None = None,
        by: str = "builder",
        expected: list | None = None,
        expected_kept: list | None = None,
    ) -> dict:
        """Restore the assistant's memory as it was when a sleep began, undoing that sleep and
        every later one (and what it learned awake since), except the builders' corrections
        made since (forgotten memories stay forgotten, trust settings stay set; the review log
        is never rolled back); all of it, or nothing.

        Args:
            sleep_id (str, optional): The sleep, such as "s3"; by default the latest sleep
                with a snapshot.
            by (str, optional): Who ordered it (kept in the sleep history).
            expected (list, optional): The sleeps the builder was shown it would undo (as
                `rollback_plan` gave them); refused when that changed since (a sleep came and
                went while they answered).
            expected_kept (list, optional): The "seq" of each correction they were shown it
                keeps; refused when that changed since (a memory forgotten or its trust set
                while they answered: they confirm only what they were shown).

        Returns:
            dict: As `rollback_plan` gives it: what changed.

        Raises:
            AssistantError: As `rollback_plan`; nothing is changed.

        """
        plan = self.rollback_plan(sleep_id)
        if expected is not None and list(plan["sleeps"]) != list(expected):
            raise AssistantError(
                f"the sleeps it would undo changed since you were asked "
                f"({', '.join(expected)} -> {', '.join(plan['sleeps'])}); ask again."
            )
        kept = [correction["seq"] for correction in plan["kept"]]
        if expected_kept is not None and kept != list(expected_kept):
            raise AssistantError(
                "the builders' corrections it would keep changed since you were asked (a "
                "memory was forgotten or its trust set); ask again."
            )
        brain = self.brain
        try:
            with step_transaction():  # all of it or nothing
                summary = Snapshots(brain.state).rollback(
                    plan["sleep_id"], brain.memory_store.inner, long_term=self.make_long_term_store
                )
                history = SleepHistory(brain.state)
                for undone in summary["sleeps"]:
                    if not history.mark(undone, rolled_back={"at": to_iso(self.now()), "by": by}):
                        logger.log_warn(
                            f"ai_assistant {self.obj} (#{self.obj.id}): sleep {undone} was "
                            "rolled back but has no record left to note it in"
                        )
                # core memory's consolidation marks how far it read the memories, which may
                # now be fewer: it weighs them afresh at the next sleep
                brain.state.delete(CORE_CONSOLIDATION)
        except SnapshotError as err:
            raise AssistantError(str(err)) from None
        # every cache of memory (journal, long-term, links, the recall index) is rebuilt from
        # the restored store at the next use
        self._brain = None
        return {"sleep_id": plan["sleep_id"], **summary}

    def pause(self) -> None:
        """Stop acting: it keeps hearing, and its events wait in the queue."""
        self.script.attributes.add(PAUSED, True)

    def resume(self) -> None:
        """Start acting again after a pause, and make sure the ticker runs."""
        self.script.attributes.add(PAUSED, False)
        self.script.ensure_ticker(self.tick_rate())

    @property
    def paused(self) -> bool:
        """Whether the assistant is paused.

        Returns:
            bool: True when paused.

        """
        return bool(self.script.attributes.get(PAUSED))

    def instruct(self, builder, text: str) -> None:
        """A builder's instruction, heard as a direct message with builder authority.

        Args:
            builder (Object): The builder giving it.
            text (str): The instruction.

        Raises:
            AssistantError: Empty or over `MAX_INSTRUCTION_CHARS`.

        """
        text = (text or "").strip()
        if not text:
            raise AssistantError("An instruction needs some text.")
        if len(text) > MAX_INSTRUCTION_CHARS:
            raise AssistantError(
                f"The instruction is {len(text)} characters; at most {MAX_INSTRUCTION_CHARS}."
            )
        self._note("instruction", builder, text, from_assistant=False)

    def tick_now(self) -> TickReport:
        """Run one tick now and report what it did.

        Returns:
            TickReport: The turn's outcome (if one finished), whether work is still running,
                whether it is asleep, how many events wait, and any retry time.

        Raises:
            AssistantError: When the assistant is paused.

        """
        if self.paused:
            raise AssistantError(f"{self.obj.key} is paused; resume it first.")
        self.last_outcome = None
        self.script.run_tick()
        brain = self.brain
        retry_after = brain.state.get(RETRY_AFTER)
        return TickReport(
            outcome=self.last_outcome,
            in_flight=self.in_flight,
            asleep=brain.asleep,
            pending_events=len(brain.events),
            retry_after=retry_after if retry_after and retry_after > to_iso(self.now()) else None,
        )

    def clear_errors(self) -> None:
        """Reset the error counts (tick errors, model errors, malformed output), the last error
        and the back-off after model errors, e.g. after fixing the endpoint: the next tick with
        work asks the model at once."""
        script = self.script
        script.attributes.add(TICK_ERRORS, 0)
        script.attributes.remove(LAST_ERROR)
        brain = self.brain
        usage = brain.usage()
        usage.errors.clear()
        usage.malformed.clear()
        brain.save_usage(usage)
        # the turns stay on record, their errors are cleared
        recent = brain.state.get(RECENT_TURNS)
        if recent:
            brain.state.set(RECENT_TURNS, [{**turn, "error": None} for turn in recent])
        for key in (LAST_TURN, RETRY_AFTER, CONSECUTIVE_ERRORS):
            if brain.state.get(key) is not None:
                brain.state.delete(key)

    def model_in_use(self) -> str:
        """The chat model this assistant calls, and where.

        Returns:
            str: e.g. "gpt-4o-mini at https://api.openai.com/v1", marked when it is the offline
                rehearsal model; the endpoint redacted like any text shown.

        """
        model = self.checked_config()[0].effective_model(game_settings.chat_model())
        endpoint = (
            game_settings.base_url()
            or os.environ.get("OPENAI_BASE_URL")
            or "https://api.openai.com/v1"
        )
        text = f"{model} at {redacted(endpoint)}"
        if game_settings.rehearsal():
            text += " (the offline REHEARSAL model: simple rules, not intelligence)"
        return text

    def recent_turns(self) -> list[dict]:
        """Summaries of the last few awake turns, newest first.

        Returns:
            list: Dicts with the turn's time, events, model calls, tools, stop reason, error
                (redacted) and the prompt's shape in tokens (see `TurnOutcome.prompt_shape`).

        """
        return list(reversed(self.brain.state.get(RECENT_TURNS) or []))

    def journal(self) -> list[dict]:
        """Every journal entry, oldest first.

        Returns:
            list: The entries, as dicts.

        """
        return self.brain.journal.all()

    def recent_memories(self, limit: int = 50) -> list[dict]:
        """The newest long-term memories, newest first.

        Args:
            limit (int, optional): How many at most.

        Returns:
            list: The memories, as dicts.

        """
        return self.brain.long_term.recent(limit)

    def search_memory(self, query: str):
        """Everything the assistant remembers for `query`, ranked as recall ranks it, from all
        audiences (a builder sees everything).

        Args:
            query (str): What to look for.

        Returns:
            Deferred: Fires with `Recalled` items, best first (the query's embedding, when an
                embeddings model is configured, is computed off the reactor thread).

        Raises:
            AssistantError: An empty or oversized query.

        """
        from twisted.internet import defer

        query = (query or "").strip()
        if not query or len(query) > MAX_QUERY_CHARS:
            raise AssistantError(
                f"A query is 1 to at most {MAX_QUERY_CHARS} characters; this one has {len(query)}."
            )
        brain = self.brain
        limit = brain.config.memory_search_limit
        now = self.now()

        def ranked(semantic=None) -> list:
            return brain.recall(query, now=now, served=None, limit=limit, semantic=semantic)

        work = brain.semantic_search(query)
        if work is None:
            return defer.succeed(ranked())
        return (self.runner or default_runner())(work).addCallback(ranked)

    def memory_links(self, limit: int = 50) -> list[tuple[str, str, float, str, str]]:
        """The strongest links between memories.

        Args:
            limit (int, optional): How many at most.

        Returns:
            list: (id, id, strength, text, text) tuples; a missing memory's text is "?".

        """
        brain = self.brain
        rows = []
        for one, other, strength in brain.links.all()[:limit]:
            first, second = brain.index.doc(one), brain.index.doc(other)
            rows.append(
                (one, other, strength, first.text if first else "?", second.text if second else "?")
            )
        return rows

    def people(self, name: str | None = None) -> list[dict]:
        """Profiles (observations and attributes), or those whose name matches `name`.

        Args:
            name (str, optional): A name or key to match, case-insensitively; all when empty.

        Returns:
            list: The profiles, as dicts.

        Raises:
            AssistantError: Nobody of that name is known.

        """
        profiles = self.brain.entities.profiles()
        if not name:
            return profiles
        wanted = name.strip().lower()
        found = [p for p in profiles if p["name"].lower() == wanted or p["key"].lower() == wanted]
        if not found:
            known = ", ".join(sorted(p["name"] for p in profiles)) or "nobody yet"
            raise AssistantError(f"{self.obj.key} knows no one called '{name}'. Known: {known}.")
        return found

    def forget(self, memory_id: str, by: str, reason: str = "") -> list[str]:
        """Forget a memory (a builder's correction, recorded).

        Args:
            memory_id (str): The memory's id, e.g. j000012 or m000003.
            by (str): Who decided.
            reason (str, optional): Why.

        Returns:
            list: The ids of what was forgotten.

        Raises:
            AssistantError: No memory has that id.

        """
        try:
            return self.brain.review.forget(memory_id, self.now(), by, reason)
        except ReviewError as err:
            raise AssistantError(str(err)) from None

    def set_trust(self, memory_id: str, level: str, by: str) -> tuple[float, float | None]:
        """Set how far a memory is trusted (recorded): (the new trust, the one it had set).

        Args:
            memory_id (str): j000012, m000003, #12/o3 ...
            level (str): low, medium, high or a number from 0 to 1.
            by (str): Who decided.

        Returns:
            tuple: (the new trust, the trust that was set before or None).

        Raises:
            AssistantError: A bad id or level.

        """
        try:
            trust = parse_trust(level)
            return trust, self.brain.review.set_trust(memory_id, trust, self.now(), by)
        except ReviewError as err:
            raise AssistantError(str(err)) from None

    def reviews(self, limit: int = 50) -> list[dict]:
        """The latest recorded corrections (forgotten memories, trust settings), newest first.

        Args:
            limit (int, optional): How many at most.

        Returns:
            list: The corrections, as dicts.

        """
        return self.brain.review.history(limit)

    def reflections(self) -> list[dict]:
        """The reflections in the journal, newest first.

        Returns:
            list: The reflection entries, as dicts.

        """
        journal = self.brain.journal
        return [e for e in reversed(journal.all()) if journal.is_reflection(e)]

    def core_memory(self) -> tuple[dict, int, int]:
        """The core memory and its size.

        Returns:
            tuple: (items, tokens, token budget); items is a dict of notes by key, tokens
                those of the largest block of the model's notes one conversation sees (each
                conversation's room is the budget; builders' pinned notes have their own).

        """
        brain = self.brain
        core = brain.core_memory
        model_notes = {k: n for k, n in core.largest_view().items() if not n.get("pinned")}
        return (core.items(), core.tokens_of(model_notes), brain.config.memory_block_tokens)

    def pinned_core_tokens(self) -> int:
        """Tokens of the builders' pinned core notes (their own room of `memory_block_tokens`).

        Returns:
            int: The token count.

        """
        return self.brain.core_memory.pinned_tokens()

    def set_core_memory(self, key: str, value: str, by: str | None = None) -> int:
        """Set one core memory note: a builder's, pinned (the model may read it, not change
        it), in a room of its own.

        Args:
            key (str): The note's name.
            value (str): The note's text.
            by (str, optional): The builder's name, kept with the note.

        Returns:
            int: The tokens the builders' pinned notes now use.

        Raises:
            AssistantError: A bad key or value, or the block would exceed its budget.

        """
        key = (key or "").strip()
        value = (value or "").strip()
        if not key or len(key) > MAX_CORE_KEY_CHARS:
            raise AssistantError(
                f"A key is 1 to at most {MAX_CORE_KEY_CHARS} characters; this one has {len(key)}."
            )
        if not value or len(value) > MAX_CORE_VALUE_CHARS:
            raise AssistantError(
                f"A value is 1 to at most {MAX_CORE_VALUE_CHARS} characters; "
                f"this one has {len(value)}."
            )
        brain = self.brain
        try:
            # a builder's note is pinned: sleep's consolidation leaves it as it is
            return brain.core_memory.set(
                key, value, self.now(), brain.config.memory_block_tokens, pinned=True, by=by
            )
        except CoreMemoryFull as full:
            raise AssistantError(str(full)) from None

    def remove_core_memory(self, key: str) -> None:
        """Remove one core memory note.

        Args:
            key (str): The note's name, as `core_memory()` lists it.

        Raises:
            AssistantError: There is no such note.

        """
        if not self.brain.core_memory.remove((key or "").strip()):
            raise AssistantError(f"No core memory '{key}' to remove.")


def _reports(report) -> list[dict]:
    """The step reports in what a sleep tick returned (one report, or a list of them)."""
    if isinstance(report, dict):
        return [report]
    if isinstance(report, list):
        return [item for item in report if isinstance(item, dict)]
    return []
