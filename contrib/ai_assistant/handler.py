"""
The one door into an assistant: `AssistantHandler`, on the character as `character.assistant`.

Like Evennia's own handlers (`cooldowns`, `traits`, `buffs`), it is attached to the typeclass
with a `lazy_property` (see `AssistantCharacterMixin`) and made once per character instance.
Everything outside the core comes in through it: the character's hearing, the script's tick,
`@assistant` and the dashboard. It keeps what is the character's own, and hangs one job each
off three parts:

- its parts: `script`, `config()` and `brain` (the core's view, built again when a setting
  changes, by `ai_assistant.shell.assembly`), the clock (`now()`), `log()`;
- the tick: `tick()` queues what was heard and starts the awake turn or the sleep work that is
  due (idle and awake, maybe a scene: `ai_assistant.shell.scenes`); `tick_rate()`; a prompt
  start when a direct line is heard;
- `status()`: a snapshot, which reads and writes nothing;
- the lifecycle orders: `sleep`, `wake`, `wait`, `pause`, `resume`, `instruct`, `tick_now`,
  `clear_errors`, the settings (`options`, `set_option`);
- `hearing`: what the character is sent, turned into events (`ai_assistant.shell.hearing.Hearing`);
- `memory`: its memory, in the pure core (`memory_api.AssistantMemory` over the live brain),
  holding what builders read and correct as `memory.admin` (`memory_admin.MemoryAdmin`: the
  journal, memories, people, forget and trust, core notes, reminders, the sleep debt and
  history, snapshots), with what the game runs its own way wrapped around it
  (`live_memory.LiveMemory`: rollback, forgetting a person, export and import);
- `plans`: its routine and today's plan, walked on the tick (`ai_assistant.shell.plans`);
- `overview`: what a list and the dashboard read besides the status (`summary()` for a list,
  which builds no brain; the model in use, the last turns, the transitions, the use per hour:
  `ai_assistant.shell.overview.Overview`).

An operation validates its input and returns a result, or raises `errors.Refused` (also known
here as `AssistantError`) with a message fit for a builder; nothing changes when it raises.

Games customise an assistant by subclassing the handler and returning theirs from the mixin's
`assistant` property: `make_world` (what the tools act on), `make_registry` (the tools),
`make_long_term_store` (where long-term memories live) and `system_prompt_template` (the rules
the model is given) are the places meant for it.

"""

from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from functools import cached_property

from evennia.utils import logger

from . import telemetry
from .shell import game_settings, model_queue
from .shell.assembly import BrainKey, EvenniaGameClock, brain_key, build_brain
from .awake.turn import TurnOutcome, awake_tick, clear_model_errors
from .agent.brain import Brain
from .clock import SystemClock, to_iso
from .conf import AssistantConfig, ConfigError, config_keys, describe_key, parse_override
from .conf import resolve_config, unknown_key_message
from .driver import default_runner
from .errors import Refused
from .events import mentions, triggers_model
from .shell.game_settings import redacted
from .shell.hearing import Hearing
from .lifecycle import AWAKE, DEFAULT_HOURS, DEPTHS, LIGHT, SLEEP
from .shell.live_memory import LiveMemory
from .memory import gossip
from .shell.groups import AssistantGroups
from .shell.lore_book import AssistantLore
from .memory.semantic import EmbeddedMemoryStore, MemoryStore
from .shell.overview import Overview
from .shell.scenes import SCENES
from .shell.plans import AssistantPlans
from .prompt import SYSTEM_PROMPT
from .records import MAX_PERSONA_CHARS
from .sleep.tick import sleep_tick
from .state import (
    CONFIG_OVERRIDES,
    DEPTH,
    LAST_ERROR,
    MODE,
    PAUSED,
    RETRY_AFTER,
    TICK_ERRORS,
    TICKER_SUBSCRIPTION,
    WAIT_AUDIENCE,
    WAIT_REASON,
    WAIT_SET_AT,
    WAIT_UNTIL,
)
from .status import AssistantStatus, status_of
from .shell.storage import AttributeStore
from .tools import default_registry
from .tools.base import ToolRegistry, World
from .shell.world import CharacterWorld

SCRIPT_KEY = "ai_assistant"
DEFAULT_PERSONA = "A helpful assistant who lives in this game world."
MAX_INSTRUCTION_CHARS = 2000

# the name of a refusal that builders' code and older games know
AssistantError = Refused


@dataclass(frozen=True)
class TickReport:
    """What `tick_now` did: the turn's outcome if one finished, and the state after it."""

    outcome: TurnOutcome | None
    in_flight: bool
    asleep: bool
    pending_events: int
    retry_after: str | None


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
        self.tick_count = 0
        self.skipped_ticks = 0
        self.last_tick: str | None = None
        self.last_outcome: TurnOutcome | None = None
        self.last_sleep_report = None
        self.last_plan_report = None
        self._brain: Brain | None = None
        self._brain_key: BrainKey | None = None
        self._script = None
        self._config_error_logged: str | None = None
        # the sleep depth while asleep, None awake or not yet known (after a reload, until the
        # first tick): kept here so hearing asks no Attribute for a line among others
        self._asleep_depth: str | None = None

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

    @cached_property
    def hearing(self) -> Hearing:
        """What the character hears, until its next tick queues it (`ai_assistant.shell.hearing`)."""
        hearing = Hearing(
            self.obj,
            now=self.now,
            config=self._config,
            queue_store=lambda: AttributeStore(self.script),
            on_direct=self._direct_heard,
            game_now=lambda: (self.game_clock or EvenniaGameClock()).now(),
        )
        hearing.on_overheard = self._overheard
        return hearing

    @cached_property
    def memory(self) -> LiveMemory:
        """This assistant's memory: the pure core's (`memory_api.AssistantMemory` over the live
        brain), what builders read and correct held as its `admin`, what the game runs its own
        way wrapped around it (`live_memory.LiveMemory`: searches off the reactor, a rollback in
        one transaction)."""
        return LiveMemory(self)

    @cached_property
    def lore(self) -> AssistantLore:
        """The game's shared lore book, and what this assistant may know of it
        (`ai_assistant.shell.lore_book`): `lore.book` (every entry, for builders), `lore.known()`
        and `lore.recall(...)` (what its recall merges in)."""
        return AssistantLore(self.obj)

    @cached_property
    def groups(self) -> AssistantGroups:
        """Its groups of assistants and what their members share (`ai_assistant.shell.groups`):
        what its recall merges in and `share_with_group` writes to."""
        return AssistantGroups(self.obj)

    @cached_property
    def overview(self) -> Overview:
        """What a list, `/status` and the dashboard read besides the status: a line for a list,
        the model in use, the last turns, the transitions, the model use per hour
        (`ai_assistant.shell.overview`); it only reads."""
        return Overview(self)

    @cached_property
    def plans(self) -> AssistantPlans:
        """Its routine and today's plan, carried out on the tick with no model call
        (`ai_assistant.shell.plans`)."""
        return AssistantPlans(self)

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

    def log(self, level: str, text: str) -> None:
        """Log about this assistant, its name and dbref first, secrets redacted.

        Args:
            level (str): "info", "warn" or "err".
            text (str): What to say.

        """
        log = {"info": logger.log_info, "warn": logger.log_warn}.get(level, logger.log_err)
        log(f"ai_assistant {self.obj} (#{self.obj.id}): {redacted(text)}")

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

    def _config(self) -> AssistantConfig:
        """The configuration in force, cheaply: the brain's when it is built (hearing and the
        ticker ask often), else read and checked."""
        brain = self._brain
        return brain.config if brain is not None else self.checked_config()[0]

    @property
    def brain(self) -> Brain:
        """The core's view of this assistant, built again when its settings change
        (`ai_assistant.shell.assembly`)."""
        config, error = self.checked_config()
        if error and error != self._config_error_logged:
            # logged once per distinct error, not at every tick; /status shows it too
            self.log("err", f"{error} Using the defaults.")
        self._config_error_logged = error
        key = brain_key(config, self.persona)
        if self._brain is None or key != self._brain_key:
            self._brain = build_brain(self, key)
            self._brain_key = key
        location = self.obj.location
        self._brain.location = location.key if location else None
        return self._brain

    def forget_brain(self) -> None:
        """A step's writes were rolled back: what the brain keeps in memory (usage, indexes,
        caches of its stores) may hold values the database does not; the next use builds it
        again from what is stored."""
        self._brain = None

    # ---- prompt starts ---------------------------------------------------------------------

    def _direct_heard(self) -> None:
        """A direct line was heard: queue a prompt start, unless one is queued or a turn runs
        (then the turn's end queues it), or `prompt_start` is off."""
        if self._prompt_queued or not self._config().prompt_start:
            return  # a burst: the queued start takes every line heard before it runs
        if self.in_flight:
            self._prompt_after_turn = True
            return
        self._prompt_queued = self.script.schedule_prompt_start(self.submit)

    def _overheard(self, text: str) -> None:
        """Speech said aloud that does not name the assistant: a light sleeper considers it at
        once (a prompt start, whose sleep turn decides) when it names someone present; awake,
        or in deep sleep, it costs a comparison and waits for the tick."""
        if self._asleep_depth != LIGHT or self._prompt_queued or self._brain is None:
            return
        others = [name for _, name in self._brain.world.present_people()]
        if mentions(text, others):
            self._direct_heard()

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
                not event.from_assistant
                and triggers_model(event, respond_to_ambient=False, respond_to_assistants=False)
                for event in brain.events.peek()
            )
        if wanted and not self._prompt_queued:
            self._prompt_queued = self.script.schedule_prompt_start(self.submit)

    # ---- ticking ---------------------------------------------------------------------------

    def tick_rate(self) -> int:
        """Seconds between ticks in the current mode.

        Returns:
            int: `tick_rate` when awake, `tick_rate_sleep` when asleep.

        """
        config = self._config()
        mode = self.script.attributes.get(MODE) or AWAKE
        return config.tick_rate if mode == AWAKE else config.tick_rate_sleep

    def tick(self, prompt: bool = False) -> None:
        """One tick: queue what was heard, then start the awake turn or the sleep work that is
        due. Called by the script inside a database transaction; never blocks.

        A prompt start (a direct line was heard) is this tick without its clockwork: it passes
        the same gates (paused, a turn in flight, and in `awake_tick` the budgets, the backoff
        after errors and the per-player limit), but starts only an awake turn. Asleep, it checks
        the wake conditions at once (a light sleeper woken by a whisper answers it in the same
        start) or makes the sleep turn that is due (`sleep_tick(..., prompt=True)`); the
        phase's own work waits for the tick. Nor does it start scheduled sleep or count as a
        tick.

        Args:
            prompt (bool, optional): This is a prompt start, not a tick of the ticker.

        """
        if prompt:
            self._prompt_queued = False  # lines heard from now on ask for a start of their own
        # read each time, like every game setting: a test or a reload may change it
        telemetry.set_enabled(game_settings.telemetry())
        hearing = self.hearing
        hearing.flush()
        hearing.refresh_presence()
        if self.script.attributes.get(PAUSED):
            return
        if self.in_flight:
            if prompt:
                self._prompt_after_turn = True
            else:
                self.skipped_ticks += 1
            return
        now = self.now()
        brain = self.brain
        self._asleep_depth = brain.state.get(DEPTH) if brain.asleep else None
        if prompt:
            if brain.lifecycle.mode != AWAKE:
                # considered now, not at the next sleep tick (up to `tick_rate_sleep` away)
                brain.lifecycle.apply_wake_conditions(brain.events.peek(), now)
            if brain.lifecycle.mode == AWAKE:
                self.prompt_starts += 1
                self._start(awake_tick(brain, now), self._turn_done, opening=True)
            else:
                self._start(
                    sleep_tick(brain, now, prompt=True),
                    self._sleep_work_done,
                    on_failure=self._sleep_work_failed,
                )
            return
        # on the handler, not in Attributes: an idle tick writes nothing to the database
        self.tick_count += 1
        self.last_tick = to_iso(now)
        if brain.lifecycle.mode == AWAKE:
            game_clock = self.game_clock or EvenniaGameClock()
            if brain.lifecycle.maybe_start_scheduled_sleep(
                now, game_clock.now(), game_clock.time_factor
            ):
                return
            work = awake_tick(brain, now)
            if work is None and SCENES.open_for(self, brain, now) is not None:
                work = awake_tick(brain, now)  # the scene's opening, queued: its turn
            self._start(work, self._turn_done)
            if not self.in_flight:
                # nothing to answer: today's plan (a walk without the model, or its planning call)
                self._start(self.plans.step(now), self._plan_done)
            return
        work = sleep_tick(brain, now)
        if work is None:
            self._sleep_work_done(None)
        else:
            self._start(work, self._sleep_work_done, on_failure=self._sleep_work_failed)

    def tick_failed(self) -> None:
        """The script's frame around a tick caught an error (it records it): no work of this
        tick is in flight any more, and a wake that is due still happens."""
        self.in_flight = False
        self._wake_if_due()

    def _wake_if_due(self) -> bool:
        """Asleep, after sleep work that failed: the wake conditions all the same, so a
        failing step never keeps the assistant asleep past its wake time.

        Returns:
            bool: It woke.

        """
        try:
            brain = self.brain
            if not brain.asleep:
                return False
            brain.lifecycle.apply_wake_conditions(brain.events.peek(), self.now())
            return not brain.asleep
        except Exception as err:  # noqa: BLE001 - already failing: log, the next tick tries
            self.log("err", f"the wake conditions could not be checked: {err!r}")
            return False

    def _start(self, work, on_done, opening: bool = False, on_failure=None) -> None:
        if work is None:
            return
        self.in_flight = True
        runner = self.runner or default_runner()
        self.script.drive(work, on_done, on_failure or self._work_failed, runner, opening=opening)

    def _work_failed(self, failure) -> None:
        self.in_flight = False
        self._after_work()

    def _sleep_work_failed(self, failure) -> None:
        self.in_flight = False
        self._after_work(answered=self._wake_if_due())

    def _turn_done(self, outcome: TurnOutcome) -> None:
        self.in_flight = False
        self.last_outcome = outcome
        for call in outcome.tool_calls:
            if call.get("detail"):
                self.log("err", f"tool {call['name']} raised:\n{call['detail']}")
        if outcome.error:
            self.log("warn", f"model call failed: {outcome.error}; events stay queued")
        # the players whose lines started it pay what it cost, against their own token budgets
        self.hearing.charge(outcome.events, outcome.billed_tokens)
        if self.on_turn:
            self.on_turn(self, outcome)
        self._after_work(answered=bool(outcome.events) and not outcome.error)

    def _plan_done(self, report) -> None:
        """After the day's planning call (`awake.planning`): a line heard meanwhile is
        answered now."""
        self.in_flight = False
        self.last_plan_report = report
        self._after_work()

    def _sleep_work_done(self, report) -> None:
        """After a sleep step: the wake conditions; woken, what it heard is answered at once."""
        self.in_flight = False
        self.last_sleep_report = report
        if self.on_sleep_tick:
            self.on_sleep_tick(self, report)
        for step in _reports(report):
            if step.get("error"):
                self.log("warn", f"sleep work failed: {step['error']}; it is retried next tick")
            if step.get("detail"):
                self.log("err", f"sleep step {step.get('step')} raised:\n{step['detail']}")
        brain = self.brain
        was_asleep = brain.asleep
        brain.lifecycle.apply_wake_conditions(brain.events.peek(), self.now())
        # woken (by the timer, an urgent word or its own `wake_up`): a word that waits for an
        # answer gets one now, not at the next awake tick
        self._after_work(answered=not brain.asleep and (was_asleep or _woke(report)))

    def _on_transition(self, mode: str, reason: str) -> None:
        """After falling asleep or waking: swap the ticker, tell the character and the room."""
        character = self.obj
        brain = self._brain
        self._asleep_depth = brain.state.get(DEPTH) if brain and mode == SLEEP else None
        self.script.ensure_ticker(self.tick_rate())
        config = self._config()
        word = "sleep" if mode == SLEEP else "awake"
        character.msg(text=(f"Entering {word} mode: {reason}", {"type": "ai_assistant_mode"}))
        line = config.sleep_announcement if mode == SLEEP else config.wake_announcement
        if line and character.location:
            character.location.msg_contents(
                line.format(name=character.key), exclude=[character], from_obj=character
            )
        # the reason stays out of the server log: a sleep turn's wake reason, or a sleep the
        # model chose in a private exchange, may quote what someone whispered (builders read it
        # in @assistant/status, with its audience)
        self.log("info", word)

    # ---- status ----------------------------------------------------------------------------

    def status(self, flush: bool = False) -> AssistantStatus:
        """Everything `@assistant/status` shows, as one snapshot. Reading it changes nothing:
        the lines heard since the last tick are counted among the pending events, not queued.

        Args:
            flush (bool, optional): Queue what was heard first (a write), as a tick would.

        Returns:
            AssistantStatus: The state, usage, errors and overrides of this assistant.

        """
        config_error = self.checked_config()[1]
        unqueued = 0
        if flush:
            self.hearing.flush()
        else:
            unqueued = len(self.hearing)
        script = self.script
        subscription = script.attributes.get(TICKER_SUBSCRIPTION) or {}
        last_error = script.attributes.get(LAST_ERROR)
        brain_status = status_of(self.brain, self.now())
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
            model=self.overview.model_in_use(),
            prompt_starts=self.prompt_starts,
            model_calls=asdict(queue) if (queue := model_queue.current_stats()) else None,
            player_limits=self.hearing.player_limits(),
            cost=self.overview.cost_so_far(brain_status.usage),
        )

    # ---- lifecycle orders ------------------------------------------------------------------

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
            Refused: Naming the key and what is allowed; nothing is changed.

        """
        key = (key or "").strip()
        value = (raw or "").strip()
        if key == "persona":
            if not value or len(value) > MAX_PERSONA_CHARS:
                raise Refused(
                    f"A persona must be 1-{MAX_PERSONA_CHARS} characters; got {len(value)}."
                )
            self.obj.db.persona = value
            return value
        if key not in config_keys():
            raise Refused(unknown_key_message(key))
        overrides = self.overrides()
        if value.lower() == "default":
            overrides.pop(key, None)
        else:
            typed = parse_override(key, value, overrides)
            self.brain.check_override(key, typed)
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
            Refused: Already asleep, or hours/depth not allowed.

        """
        if depth not in DEPTHS:
            raise Refused(f"Depth must be 'light' or 'deep', not '{str(depth)[:20]}'.")
        return self.brain.lifecycle.go_to_sleep(
            self.now(),
            hours=hours,
            depth=depth,
            reason=reason or f"put to sleep by {by}",
            initiated_by="builder",
            enforce_safeguards=False,
        )

    def wake(self, reason: str = "") -> None:
        """Wake the assistant now.

        Args:
            reason (str, optional): Why it wakes (cut to 300 characters).

        Raises:
            Refused: It is not asleep.

        """
        brain = self.brain
        if not brain.asleep:
            raise Refused(f"{self.obj.key} is not asleep.")
        brain.lifecycle.wake_up(self.now(), (reason or "woken by a builder")[:300])

    def wait(self, minutes, reason: str = "", by: str = "a builder") -> datetime:
        """Hold its turns for `minutes`, as its own `wait` tool does: until the time passes or
        someone speaks to it directly (a whisper, a page, its name, an instruction); then it is
        told the wait is over (and why it waited).

        Args:
            minutes (float): More than 0, at most `max_wait_minutes`.
            reason (str, optional): Why (cut to 300 characters); who ordered it is added.
            by (str, optional): Who ordered it.

        Returns:
            datetime: When the wait ends.

        Raises:
            Refused: Minutes not a number, out of bounds, or it is asleep; nothing changes.

        """
        limit = self._config().max_wait_minutes
        allowed = f"a number of minutes more than 0 and at most {limit:g} (max_wait_minutes)"
        if isinstance(minutes, str):
            try:
                minutes = float(minutes.strip())
            except ValueError:
                raise Refused(f"'{minutes.strip()[:20]}' is not {allowed}.") from None
        if isinstance(minutes, bool) or not isinstance(minutes, (int, float)):
            raise Refused(f"Minutes must be {allowed}.")
        if not 0 < minutes <= limit or minutes != minutes:  # NaN too
            raise Refused(f"{minutes:g} minutes is not allowed: give {allowed}.")
        brain = self.brain
        if brain.asleep:
            raise Refused(f"{self.obj.key} is asleep: a wait holds awake turns. Wake it first.")
        now = self.now()
        until = now + timedelta(minutes=minutes)
        why = " ".join((reason or "").split())[:300]
        why = f"{why} (set by {by})" if why else f"told to wait by {by}"
        state = brain.state
        state.set(WAIT_UNTIL, to_iso(until))
        state.set(WAIT_SET_AT, to_iso(now))
        state.set(WAIT_REASON, why)
        # a builder's reason is no one's private word: the notice at the end may repeat it
        if state.get(WAIT_AUDIENCE) is not None:
            state.delete(WAIT_AUDIENCE)
        self.log("info", f"waits {minutes:g} minutes, until {to_iso(until)} ({why})")
        return until

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
            Refused: Empty or over `MAX_INSTRUCTION_CHARS`.

        """
        text = (text or "").strip()
        if not text:
            raise Refused("An instruction needs some text.")
        if len(text) > MAX_INSTRUCTION_CHARS:
            raise Refused(
                f"The instruction is {len(text)} characters; at most {MAX_INSTRUCTION_CHARS}."
            )
        self.hearing.note("instruction", builder, text, from_assistant=False)

    def receive_gossip(self, told: dict, addressed: bool, witnesses: list[str]) -> dict | None:
        """Another assistant here told something aloud (its `tell` tool): record it in the
        journal with its chain of sources, without a model call and without starting a turn
        (`memory.gossip.receive`).

        Args:
            told (dict): The telling (`memory.gossip.telling`).
            addressed (bool): It was told to this assistant (else overheard).
            witnesses (list): Keys of who was present.

        Returns:
            dict or None: The journal entry written; None when gossip is off or it is asleep.

        """
        return gossip.receive(
            self.brain, told, addressed=addressed, witnesses=witnesses, now=self.now()
        )

    def tick_now(self) -> TickReport:
        """Run one tick now and report what it did.

        Returns:
            TickReport: The turn's outcome (if one finished), whether work is still running,
                whether it is asleep, how many events wait, and any retry time.

        Raises:
            Refused: When the assistant is paused.

        """
        if self.paused:
            raise Refused(f"{self.obj.key} is paused; resume it first.")
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

    def clear_errors(self) -> int:
        """Reset the error counts (tick errors, model errors, malformed output), the last error
        and the back-off after model errors, e.g. after fixing the endpoint: the next tick with
        work asks the model at once. Journal entries resting from consolidation (the model
        failed on them) are tried again at the next sleep.

        Returns:
            int: How many journal entries were resting.

        """
        script = self.script
        script.attributes.add(TICK_ERRORS, 0)
        script.attributes.remove(LAST_ERROR)
        brain = self.brain
        clear_model_errors(brain)
        return brain.journal.lift_rests()


def _woke(report) -> bool:
    """Whether a sleep step's report says it woke (its sleep turn called `wake_up`)."""
    return any(step.get("woke") for step in _reports(report))


def _reports(report) -> list[dict]:
    """The step reports in what a sleep tick returned (one report, or a list of them)."""
    if isinstance(report, dict):
        return [report]
    if isinstance(report, list):
        return [item for item in report if isinstance(item, dict)]
    return []
