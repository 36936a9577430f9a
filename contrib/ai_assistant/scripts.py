"""
The assistant's script: its clock, its state and its connection to the model.

The tick is a `TICKER_HANDLER` subscription at the current mode's rate (awake: `tick_rate`).
The subscription's exact arguments are stored in `db.ticker_subscription`, so it is always
removed with the arguments it was added with, and re-adding after `evennia reload` replaces the
restored subscription instead of doubling it.

Evennia calls `at_start` only for scripts with a timer of their own, which this one does not
have: the subscription is made in `at_script_creation` and checked in `at_server_start`.

A tick never blocks and never returns a Deferred: it decides (pure core), and when the model is
needed it starts the turn (model calls in worker threads, tools on the reactor thread) and marks
the assistant in flight in `ndb`. A tick that finds a turn still in flight is skipped. No
exception escapes a tick; each is logged with context and counted in `db.tick_errors`.

"""

import time
from datetime import datetime, timezone
from functools import partial

from django.conf import settings
from django.db import DatabaseError, transaction
from evennia.scripts.scripts import DefaultScript
from evennia.scripts.tickerhandler import TICKER_HANDLER
from evennia.utils import gametime, logger
from twisted.internet import reactor

from .awake.events import EventQueue, HeardLine
from .awake.turn import Assistant, TurnOutcome, awake_tick
from .characters import is_assistant
from .clock import SystemClock, from_iso, to_iso
from .conf import AssistantConfig, ConfigError, resolve_config
from .llm.client import EndpointSettings, client_for
from .llm.runner import (
    DEFAULT_MODEL_THREADS,
    default_runner,
    drive,
    in_thread,
    inline,
    reactor_steps,
)
from .llm.usage import UsageStats
from .memory.journal import Journal
from .memory.semantic import EmbeddedMemoryStore
from .sleep import lifecycle as life
from .sleep.tick import sleep_tick
from .storage import MEMORY_CATEGORY, AttributeStore
from .tools import default_registry

AWAKE = life.AWAKE


class EvenniaGameClock:
    """The game's own clock (`evennia.utils.gametime`), for the sleep schedule's hours."""

    @property
    def time_factor(self) -> float:
        return float(getattr(settings, "TIME_FACTOR", 1.0))

    def now(self) -> datetime:
        return datetime.fromtimestamp(gametime.gametime(absolute=True), tz=timezone.utc)


class AssistantScript(DefaultScript):
    """Drives one assistant character. Created by `AssistantCharacterMixin`."""

    def at_script_creation(self):
        self.key = "ai_assistant"
        self.desc = "AI assistant brain (ticks via TICKER_HANDLER)"
        self.persistent = True
        self.db.operating_mode = AWAKE
        self.db.activity_since_wake = 0
        self.db.config_overrides = {}
        self.db.paused = False
        self.db.tick_errors = 0
        self.ensure_ticker()

    # ---- ticker ---------------------------------------------------------------------------

    @property
    def ticker_idstring(self) -> str:
        return f"ai_assistant_{self.id}"

    def desired_tick_rate(self, config: AssistantConfig | None = None) -> int:
        config = config or self.safe_config()
        return config.tick_rate if self.db.operating_mode == AWAKE else config.tick_rate_sleep

    def at_server_start(self):
        # after a start or reload: the ticker store restored our subscription; re-adding it
        # with the same arguments replaces it, and a changed rate is corrected here
        self.ensure_ticker()

    def at_script_delete(self):
        self.remove_ticker()
        return True

    def ensure_ticker(self, rate: int | None = None) -> None:
        """Subscribe at `rate` (default: the current mode's), replacing any other rate."""
        rate = rate or self.desired_tick_rate()
        current = self.db.ticker_subscription
        if current and current["interval"] != rate:
            self.remove_ticker()
        subscription = {"interval": rate, "idstring": self.ticker_idstring, "persistent": True}
        TICKER_HANDLER.add(callback=self.at_assistant_tick, **subscription)
        self.db.ticker_subscription = subscription
        self._tick_offset = None

    def remove_ticker(self) -> None:
        current = self.db.ticker_subscription
        if not current:
            return
        try:
            TICKER_HANDLER.remove(callback=self.at_assistant_tick, **dict(current))
        except KeyError:
            pass  # already gone (e.g. the ticker store was reset)
        self.db.ticker_subscription = None
        self._tick_offset = None

    # ---- configuration and parts ----------------------------------------------------------

    def config(self) -> AssistantConfig:
        """The resolved config. Raises ConfigError naming a bad key."""
        return resolve_config(
            getattr(settings, "AI_ASSISTANT_DEFAULTS", None), dict(self.db.config_overrides or {})
        )

    def cached_config(self) -> AssistantConfig:
        """The config of the cached core assistant (cheap), else a fresh one."""
        cached = self.ndb.assistant
        return cached.config if cached is not None else self.safe_config()

    def hears_assistants(self) -> bool:
        return self.cached_config().respond_to_assistants

    def safe_config(self) -> AssistantConfig:
        try:
            return self.config()
        except ConfigError as err:
            logger.log_err(f"ai_assistant {self.obj}: {err} Using defaults.")
            return AssistantConfig()

    @property
    def clock(self):
        return self.ndb.clock or SystemClock()

    @property
    def game_clock(self):
        return self.ndb.game_clock or EvenniaGameClock()

    def endpoint(self, config: AssistantConfig) -> EndpointSettings:
        return EndpointSettings(
            base_url=getattr(settings, "AI_ASSISTANT_BASE_URL", None),
            api_key=getattr(settings, "AI_ASSISTANT_API_KEY", None),
            timeout=config.request_timeout,
            max_retries=config.max_retries,
        )

    def assistant(self) -> Assistant:
        """The core's view of this assistant, cached in ndb while its settings hold."""
        character = self.obj
        config = self.config()
        model = config.effective_model(getattr(settings, "AI_ASSISTANT_MODEL", None))
        embedding_model = config.embedding_model or getattr(
            settings, "AI_ASSISTANT_EMBEDDING_MODEL", None
        )
        persona = character.db.persona or ""
        endpoint = self.endpoint(config)
        cached = self.ndb.assistant
        if (
            cached is None
            or cached.config != config
            or cached.model != model
            or cached.persona != persona
            or cached.embedding_model != embedding_model
            or self.ndb.endpoint != endpoint
        ):
            cached = Assistant(
                name=character.key,
                aliases=list(character.aliases.all()),
                persona=persona,
                config=config,
                model=model,
                state=AttributeStore(self),
                memory_store=AttributeStore(character, MEMORY_CATEGORY),
                world=character.assistant_world,
                registry=default_registry(),
                client_factory=partial(client_for, endpoint),
                embedding_model=embedding_model,
                on_transition=self._on_transition,
                long_term=self.long_term_store(),
            )
            self.ndb.assistant = cached
            self.ndb.endpoint = endpoint
        cached.location = character.location.key if character.location else None
        return cached

    # ---- hearing --------------------------------------------------------------------------

    def enqueue_event(self, event_type: str, speaker, text: str, metadata: dict | None = None):
        """Record something the character heard (see `AssistantCharacterMixin.hear`).

        Hearing is the hot path: one `say` reaches every assistant in the room, inside the
        speaker's command. So hearing only notes the line in memory (a `HeardLine`); the events
        are classified, scored and written to the queue Attribute at the assistant's next tick,
        in one write (and on reload and shutdown).

        """
        is_object = hasattr(speaker, "key")
        from_assistant = is_object and is_assistant(speaker)
        if from_assistant and not self.hears_assistants():
            # N assistants in a room would otherwise capture each other's every line (N x N)
            return
        location = self.obj.location
        line = HeardLine(
            event_type=event_type,
            speaker=speaker.key if is_object else str(speaker),
            speaker_key=f"#{speaker.id}" if is_object else None,
            text=text,
            time=self.clock.now(),
            location=location.key if location else None,
            from_assistant=from_assistant,
            metadata=metadata,
        )
        heard = self.ndb.heard
        if heard is None:
            self.ndb.heard = [line]
        else:
            heard.append(line)

    def flush_heard(self) -> int:
        """Turn the lines heard since the last tick into queued events; returns how many."""
        heard = self.ndb.heard
        if not heard:
            return 0
        self.ndb.heard = []
        config = self.safe_config()
        character = self.obj
        names = [character.key, *character.aliases.all()]
        queue = EventQueue(AttributeStore(self))
        last_id = queue.next_id() - 1
        events = []
        for line in heard:
            last_id = max(time.time_ns(), last_id + 1)
            events.append(line.to_event(last_id, names, config.max_event_chars))
        queue.push_many(events, config.max_pending_events)
        return len(events)

    def at_server_reload(self):
        self.flush_heard()

    def at_server_shutdown(self):
        self.flush_heard()

    # ---- the tick -------------------------------------------------------------------------

    def at_assistant_tick(self, *args, **kwargs):
        """The ticker's callback. Returns None always (a Deferred would stall the ticker).

        Every assistant on the same tick rate shares one ticker, which calls all of them in one
        go: this must stay tiny (no Attribute read). On a live server each assistant runs its
        work at its own offset within the interval, so a hundred assistants do not all take the
        reactor in the same instant.

        """
        offset = self.tick_offset()
        if offset:
            reactor.callLater(offset, reactor_steps.submit, self.run_tick)
        else:
            self.run_tick()
        return None

    def tick_offset(self) -> float:
        """Seconds to wait before this tick's work: a fixed share of the interval (live only).

        Remembered on the script instance, not read from Attributes or `ndb` (each such read
        goes through a handler, and an Attribute unpickles its value): the ticker calls every
        assistant on a rate in one reactor step. `ensure_ticker` and `remove_ticker` reset it.

        """
        if not reactor.running:
            return 0.0  # tests and headless runs drive ticks themselves
        offset = getattr(self, "_tick_offset", None)
        if offset is None:
            if self.ndb.runner is not None:
                return 0.0  # a test drives this assistant's ticks
            rate = (self.db.ticker_subscription or {}).get("interval") or 5
            offset = self._tick_offset = ((self.id or 0) * 0.6180339887 % 1.0) * rate
        return offset

    def run_tick(self) -> None:
        """One tick's work, now. Never raises.

        The tick's writes (the heard events, the start of a turn) commit together: each
        commit is a wait on the database, and this runs on the reactor thread.

        """
        error = None
        with transaction.atomic():
            # caught inside the transaction, so what was written before an error is kept
            try:
                self.flush_heard()
                if self.db.paused:
                    return
                self._tick()
            except Exception as err:
                error = err
                if isinstance(err, DatabaseError):
                    # the database refused a statement: PostgreSQL has aborted the transaction
                    # (Django marks it so on SQLite too), so nothing more can be written in it
                    transaction.set_rollback(True)
        if error is not None:
            self.ndb.in_flight = False
            self._record_error("tick", error)

    def _tick(self) -> None:
        if self.ndb.in_flight:
            self.ndb.skipped_ticks = (self.ndb.skipped_ticks or 0) + 1
            return
        now = self.clock.now()
        # in ndb: an idle tick must not write to the database
        self.ndb.tick_count = (self.ndb.tick_count or 0) + 1
        self.ndb.last_tick = to_iso(now)
        assistant = self.assistant()
        if self.db.operating_mode == AWAKE:
            game_clock = self.game_clock
            if assistant.lifecycle.maybe_start_scheduled_sleep(
                now, game_clock.now(), game_clock.time_factor
            ):
                return
            self._run(awake_tick(assistant, now), self._turn_done)
        else:
            work = sleep_tick(assistant, now)
            if work is None:
                self._after_sleep_tick(None)
            else:
                self._run(work, self._after_sleep_tick)

    def _run(self, work, on_done) -> None:
        if work is None:
            return
        self.ndb.in_flight = True
        runner = self.ndb.runner or default_runner()
        if runner is in_thread:
            size = getattr(settings, "AI_ASSISTANT_MODEL_THREADS", DEFAULT_MODEL_THREADS)
            runner = partial(in_thread, threads_count=size)
        # each stretch of the turn on the reactor commits its writes once, not per Attribute;
        # live, turns resume one step per reactor iteration (players' commands come between)
        schedule = reactor_steps.submit if runner is not inline and reactor.running else None
        drive(work, runner, step=transaction.atomic, schedule=schedule).addCallbacks(
            on_done, self._turn_failed
        )

    def _after_sleep_tick(self, report) -> None:
        """After the phase's work: the seed's wake conditions."""
        self.ndb.in_flight = False
        self.ndb.last_sleep_report = report
        if self.ndb.on_sleep_tick:
            self.ndb.on_sleep_tick(self, report)
        if report and report.get("error"):
            logger.log_warn(
                f"ai_assistant {self.obj} (#{self.obj.id}): sleep work failed: "
                f"{report['error']}; it is retried next tick"
            )
        assistant = self.assistant()
        now = self.clock.now()
        check = assistant.lifecycle.check_wake_conditions(assistant.events.peek(), now)
        if not check.should_wake:
            return
        if check.deferred:
            self.db.wake_deferred_reason = check.reason
            return
        assistant.lifecycle.wake_up(now, check.reason)

    def _on_transition(self, mode: str, reason: str) -> None:
        """After a sleep/wake transition: swap the ticker, tell the character and the room."""
        self.ensure_ticker()
        character = self.obj
        config = self.safe_config()
        word = "sleep" if mode == life.SLEEP else "awake"
        character.msg(text=(f"Entering {word} mode: {reason}", {"type": "ai_assistant_mode"}))
        line = config.sleep_announcement if mode == life.SLEEP else config.wake_announcement
        if line and character.location:
            character.location.msg_contents(
                line.format(name=character.key), exclude=[character], from_obj=character
            )
        logger.log_info(f"ai_assistant {character} (#{character.id}): {word} ({reason})")

    def long_term_store(self):
        """The long-term memory store. Override to plug in another `MemoryStore`."""
        return EmbeddedMemoryStore(AttributeStore(self.obj, MEMORY_CATEGORY))

    def _turn_done(self, outcome: TurnOutcome) -> None:
        self.ndb.in_flight = False
        self.ndb.last_outcome = outcome
        for call in outcome.tool_calls:
            if call.get("detail"):
                logger.log_err(
                    f"ai_assistant {self.obj} (#{self.obj.id}): tool {call['name']} raised:\n"
                    f"{call['detail']}"
                )
        if outcome.error:
            logger.log_warn(
                f"ai_assistant {self.obj} (#{self.obj.id}): model call failed: "
                f"{outcome.error}; events stay queued"
            )
        callback = self.ndb.on_turn
        if callback:
            callback(self, outcome)

    def _turn_failed(self, failure) -> None:
        self.ndb.in_flight = False
        self._record_error("turn", failure.value)

    def _record_error(self, where: str, err: BaseException) -> None:
        self.db.tick_errors = (self.db.tick_errors or 0) + 1
        self.db.last_error = f"{where}: {type(err).__name__}: {str(err)[:300]}"
        logger.log_err(
            f"ai_assistant {self.obj} (#{getattr(self.obj, 'id', '?')}) {where} "
            f"failed: {type(err).__name__}: {err}"
        )

    # ---- status ---------------------------------------------------------------------------

    def status(self) -> dict:
        """What `@assistant/status` shows, as plain data."""
        try:
            config = self.config()
            config_error = None
            core = self.assistant()
            context_tokens = core.context_tokens()
            core_tokens = core.core_memory.tokens()
        except ConfigError as err:
            config, config_error = AssistantConfig(), str(err)
            context_tokens = self.db.context_tokens or 0
            core_tokens = 0
        self.flush_heard()
        queue = EventQueue(AttributeStore(self))
        journal = Journal(AttributeStore(self.obj, MEMORY_CATEGORY))
        now = self.clock.now()
        cooldown_until = from_iso(self.db.sleep_cooldown_until)
        cooldown = (cooldown_until - now).total_seconds() if cooldown_until else 0
        return {
            "mode": self.db.operating_mode,
            "phase": self.db.sleep_phase,
            "depth": self.db.sleep_depth,
            "scheduled_wake_time": self.db.scheduled_wake_time,
            "cooldown_minutes_left": max(0, int(-(-cooldown // 60))),
            "initiated_by": self.db.sleep_initiated_by,
            "sleep_reason": self.db.sleep_reason,
            "wake_deferred_reason": self.db.wake_deferred_reason,
            "consolidation_progress": dict(self.db.consolidation_progress or {}),
            "long_term_memories": self.long_term_store().count(),
            "core_memory_tokens": core_tokens,
            "memory_block_tokens": config.memory_block_tokens,
            "last_compaction": self.db.last_compaction,
            "schedule": (
                f"{config.sleep_start_hour:02d}:00 game time for {config.sleep_duration_hours} h"
                + (" (suspended)" if self.db.sleep_schedule_suspended else "")
                if config.sleep_schedule_enabled
                else "off"
            ),
            "paused": bool(self.db.paused),
            "tick_rate": (self.db.ticker_subscription or {}).get("interval"),
            "pending_events": len(queue),
            "events_dropped": queue.dropped(),
            "last_tick": self.ndb.last_tick,
            "tick_count": self.ndb.tick_count or 0,
            "in_flight": bool(self.ndb.in_flight),
            "activity_since_wake": self.db.activity_since_wake or 0,
            "context_tokens": context_tokens,
            "max_context_tokens": config.max_context_tokens,
            "journal_size": len(journal),
            "usage": UsageStats.load(self.db.usage),
            "last_turn": self.db.last_turn,
            "wait_until": self.db.wait_until,
            "retry_after": self.db.retry_after,
            "tick_errors": self.db.tick_errors or 0,
            "last_error": self.db.last_error,
            "config_error": config_error,
            "overrides": dict(self.db.config_overrides or {}),
        }
