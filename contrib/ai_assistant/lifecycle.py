"""
The awake/sleep lifecycle: going to sleep (with its three safeguards), the wake conditions,
waking (the one transition every wake goes through: the timer, an urgent word, a builder, the
assistant's own `wake_up` in a sleep turn), and scheduled sleep. No wake depends on the token
budget.

State lives in the script's store under the names in `ai_assistant.state` (`operating_mode`,
`sleep_phase`, `sleep_depth`, `scheduled_wake_time`, `sleep_cooldown_until`, `activity_since_wake`,
`consolidation_progress`, ...). What a transition does outside the state (swapping the ticker,
telling the character and the room) is the shell's `on_transition` callback.

"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from .events import Event
from .clock import from_iso, to_iso
from .conf import AssistantConfig
from .errors import Refused
from .debt import MUST_SLEEP, SleepDebt
from .memory.journal import Journal
from .memory.snapshots import Snapshots
from .memory.store import ChunkedList, KeyValueStore
from .memory.sleep_history import SleepHistory, nothing_new
from .memory.turn_log import last_turn
from .state import (
    ACTIVITY,
    BATCH_WAITING,
    COMPACTING_FAILURES,
    DREAMING_PROGRESS,
    WAKE_DEFERRED_SINCE,
    AWAKE_TICKS,
    COOLDOWN_UNTIL,
    DEPTH,
    INITIATED_BY,
    LAST_TRANSITION,
    MODE,
    MODE_LOG,
    PHASE,
    PROGRESS,
    REASON,
    SCHEDULE_SUSPENDED,
    SCHEDULE_WAS_ENABLED,
    TRANSITION_REASON,
    WAKE_DEFERRED,
    WAKE_TIME,
)

AWAKE = "awake"
SLEEP = "sleep"
COMPACTING = "compacting"
DREAMING = "dreaming"
LIGHT = "light"
DEEP = "deep"
DEPTHS = (LIGHT, DEEP)
MIN_HOURS, MAX_HOURS, DEFAULT_HOURS = 1, 24, 4


class SleepRefused(Refused):
    """A request to sleep that may not be granted now; the message says why."""


@dataclass(frozen=True)
class WakeCheck:
    """The outcome of checking whether a sleeping assistant should wake.

    Args:
        should_wake (bool): True when a wake condition holds.
        reason (str, optional): Which condition holds.
        deferred (bool): True when the wake must wait because it is still compacting.

    """

    should_wake: bool
    reason: str | None = None
    deferred: bool = False


def empty_progress() -> dict:
    """Consolidation progress before any sleep has started.

    Returns:
        dict: {"started_at": None, "total_entries": 0, "processed_entries": 0,
            "completed": False}.

    """
    return {"started_at": None, "total_entries": 0, "processed_entries": 0, "completed": False}


class Lifecycle:
    """Sleep and wake for one assistant.

    Args:
        state (KeyValueStore): The script's store.
        journal (Journal): The assistant's journal (to size the consolidation work).
        config (AssistantConfig): Its configuration.
        on_transition (callable): `on_transition(mode, reason)`, called after the state changed;
            the shell swaps the ticker and tells the character and the room.
        game_now (callable, optional): `game_now(now)` -> the game clock's time (the sleep
            history keeps game times); by default real time.
        entities (EntityMemory, optional): The people it knows (a sleep with no new
            observation and no journal entry to consolidate is a quiet one).
        budget_spent (callable, optional): `budget_spent(now)` -> why the model may not be
            called now (a token budget is spent), or None. A wake never waits on it: held back
            while compacting, which cannot go on without the model, it happens at once.

    """

    def __init__(
        self,
        state: KeyValueStore,
        journal: Journal,
        config: AssistantConfig,
        on_transition: Callable[[str, str], None] = lambda mode, reason: None,
        game_now: Callable[[datetime], datetime] = lambda now: now,
        entities=None,
        budget_spent: Callable[[datetime], str | None] = lambda now: None,
    ):
        self.state = state
        self.budget_spent = budget_spent
        self.journal = journal
        self.config = config
        self.on_transition = on_transition
        self.game_now = game_now
        self.entities = entities

    # ---- reading ------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        """The current mode.

        Returns:
            str: "awake" or "sleep" (awake when never set).

        """
        return self.state.get(MODE) or AWAKE

    @property
    def phase(self) -> str | None:
        """The sleep phase.

        Returns:
            str or None: "compacting" or "dreaming" while asleep; None when awake.

        """
        return self.state.get(PHASE)

    def cooldown_remaining(self, now: datetime) -> timedelta:
        """How long until sleep is allowed again after the last wake.

        Args:
            now (datetime): The real time.

        Returns:
            timedelta: The time left; zero when there is no cooldown.

        """
        until = from_iso(self.state.get(COOLDOWN_UNTIL))
        return max(until - now, timedelta(0)) if until else timedelta(0)

    def progress(self) -> dict:
        """The consolidation progress of the current or last sleep.

        Returns:
            dict: A copy with "started_at", "total_entries", "processed_entries", "completed".

        """
        return dict(self.state.get(PROGRESS) or empty_progress())

    # ---- going to sleep ---------------------------------------------------------------------

    def check_safeguards(self, now: datetime) -> None:
        """The three safeguards, in order: not already asleep, not too soon after waking, enough
        activity since waking.

        Args:
            now (datetime): The real time.

        Raises:
            SleepRefused: Naming the safeguard that failed.

        """
        if self.mode == SLEEP:
            raise SleepRefused("Already in sleep mode.")
        remaining = self.cooldown_remaining(now)
        if remaining > timedelta(0):
            minutes = int(-(-remaining.total_seconds() // 60))
            raise SleepRefused(
                f"Too soon after waking: sleep is allowed again in {minutes} minutes."
            )
        activity = self.state.get(ACTIVITY) or 0
        required = self.config.min_activity_before_sleep
        if activity < required:
            raise SleepRefused(
                f"Not enough activity since waking: {activity} interactions handled, "
                f"{required} required before sleeping."
            )

    @staticmethod
    def validate_request(hours, depth) -> tuple[int, str]:
        """Check hours (1-24) and depth (light|deep).

        Args:
            hours (int): How long to sleep; a whole number from 1 to 24.
            depth (str): "light" or "deep".

        Returns:
            tuple: `(hours, depth)` with hours as an int.

        Raises:
            SleepRefused: Naming the problem.

        """
        if isinstance(hours, bool) or not isinstance(hours, (int, float)) or hours != int(hours):
            raise SleepRefused(f"Hours must be a whole number from {MIN_HOURS} to {MAX_HOURS}.")
        if not MIN_HOURS <= hours <= MAX_HOURS:
            raise SleepRefused(
                f"Hours must be from {MIN_HOURS} to {MAX_HOURS}; {hours:g} is not allowed."
            )
        if depth not in DEPTHS:
            raise SleepRefused(f"Depth must be 'light' or 'deep', not '{depth}'.")
        return int(hours), depth

    def go_to_sleep(
        self,
        now: datetime,
        *,
        hours: float = DEFAULT_HOURS,
        depth: str = LIGHT,
        reason: str,
        initiated_by: str,
        enforce_safeguards: bool = True,
        wake_time: datetime | None = None,
    ) -> str:
        """Enter sleep; returns the phase it starts in. Raises SleepRefused.

        Args:
            now (datetime): The time.
            hours (int): 1-24.
            depth (str): "light" (urgent events wake it) or "deep" (only the timer, by itself;
                in either, its own `wake_up` in a sleep turn may: `sleep.triage`).
            reason (str): Why (kept for the audit trail).
            initiated_by (str): "tool", "builder", "schedule" or "debt".
            enforce_safeguards (bool): False for builders: only "already asleep" applies.
            wake_time (datetime, optional): Overrides now + hours (scheduled sleep).

        Returns:
            str: "compacting" when journal entries wait to be consolidated, else "dreaming".

        Raises:
            SleepRefused: When the request is invalid, has no reason, or a safeguard fails.

        """
        hours, depth = self.validate_request(hours, depth)
        if not reason or not reason.strip():
            raise SleepRefused("A reason is required.")
        if enforce_safeguards:
            self.check_safeguards(now)
        elif self.mode == SLEEP:
            raise SleepRefused("Already in sleep mode.")
        pending = len(self.journal.unconsolidated())
        phase = COMPACTING if pending else DREAMING
        state = self.state
        state.set(WAKE_TIME, to_iso(wake_time or now + timedelta(hours=hours)))
        state.set(DEPTH, depth)
        state.set(PHASE, phase)
        state.set(INITIATED_BY, initiated_by)
        state.set(REASON, reason.strip()[:300])
        state.set(
            PROGRESS,
            {
                "started_at": to_iso(now),
                "total_entries": pending,
                "processed_entries": 0,
                "completed": pending == 0,
            },
        )
        for key in (WAKE_DEFERRED, WAKE_DEFERRED_SINCE, DREAMING_PROGRESS, COMPACTING_FAILURES):
            state.delete(key)
        history = SleepHistory(state)
        record = history.start(
            to_iso(self.game_now(now)),
            began=initiated_by,
            depth=depth,
            debt_before=SleepDebt(state).points,
            # the first sleep has no "last one" to compare with: everything is new to it
            quiet=len(history) > 0 and nothing_new(self.journal, self.entities),
            real_now=to_iso(now),
        )
        # before anything of this sleep changes memory: its first writes keep what they replace.
        # A quiet sleep (nothing new: no model call, only housekeeping) takes none of its own
        # while one records: its few changes join that one, and naps never push a real night
        # out of the snapshots kept
        snapshots = Snapshots(state)
        if not (record["quiet"] and snapshots.open_id()):
            snapshots.open(record["id"], to_iso(now), self.config.snapshots_kept)
        if self.config.sleep_schedule_enabled and not state.get(SCHEDULE_SUSPENDED):
            # a sleep of its own suspends the schedule until it wakes
            state.set(SCHEDULE_WAS_ENABLED, True)
            state.set(SCHEDULE_SUSPENDED, True)
        self._transition(SLEEP, reason.strip(), now)
        return phase

    # ---- waking ---------------------------------------------------------------------------

    def check_wake_conditions(self, events: list[Event], now: datetime) -> WakeCheck:
        """The wake conditions, in order: the scheduled wake time, then an urgent event (light
        sleep only). A wake while compacting is marked deferred. Nothing is changed.

        Args:
            events (list): Pending events; urgent ones not from an assistant can wake it.
            now (datetime): The real time.

        Returns:
            WakeCheck: Whether to wake, why, and whether the wake is deferred.

        """
        deferred = self.phase == COMPACTING
        wake_time = from_iso(self.state.get(WAKE_TIME))
        if wake_time and now >= wake_time:
            return WakeCheck(True, "Scheduled wake time reached", deferred)
        if self.state.get(DEPTH) == LIGHT:
            for event in events:
                if event.urgent and not event.from_assistant:
                    return WakeCheck(
                        True, f"Urgent event: {event.type} from {event.speaker}", deferred
                    )
        return WakeCheck(False)

    def apply_wake_conditions(self, events: list[Event], now: datetime) -> WakeCheck:
        """After a sleep step: wake when a condition holds, or note why waking is deferred.

        A wake is held back while compacting, so consolidation is not cut short. But when the
        model keeps failing, compacting gives up after `compacting_give_up_minutes` of a held
        wake: the assistant wakes, and the entries not yet consolidated wait, untouched, for
        the next sleep. A wake never depends on the token budget: while it is spent compacting
        cannot go on, so a held wake happens at once, the entries left for the next sleep (the
        calls made awake are still counted against the budget).

        Args:
            events (list): Pending events.
            now (datetime): The real time.

        Returns:
            WakeCheck: The check; `should_wake` and not `deferred` means it woke up.

        """
        if self.mode != SLEEP:
            return WakeCheck(False)
        check = self.check_wake_conditions(events, now)
        if not check.should_wake:
            return check
        state = self.state
        if not check.deferred:
            self.wake_up(now, check.reason)
            return check
        since = from_iso(state.get(WAKE_DEFERRED_SINCE))
        if since is None:
            state.set(WAKE_DEFERRED_SINCE, to_iso(now))
            since = now
        state.set(WAKE_DEFERRED, check.reason)
        if state.get(BATCH_WAITING):
            # a batch may take hours: the wake does not wait for it, and nothing is lost (the
            # batch stays in the state, the entries unconsolidated, for the next sleep)
            reason = f"{check.reason}; the batch of sleep work under way is kept for the next sleep"
            self.wake_up(now, reason)
            return WakeCheck(True, reason, False)
        spent = self.budget_spent(now)
        if spent:
            left = len(self.journal.unconsolidated())
            reason = (
                f"{check.reason}; consolidating waits for the token budget ({spent}): "
                f"{left} entries left for the next sleep"
            )
            self.wake_up(now, reason)
            return WakeCheck(True, reason, False)
        limit = timedelta(minutes=self.config.compacting_give_up_minutes)
        if state.get(COMPACTING_FAILURES) and now - since >= limit:
            left = len(self.journal.unconsolidated())
            reason = (
                f"{check.reason}; gave up consolidating after "
                f"{self.config.compacting_give_up_minutes} minutes of model errors "
                f"({left} entries left for the next sleep)"
            )
            self.wake_up(now, reason)
            return WakeCheck(True, reason, False)
        return check

    def wake_up(self, now: datetime, reason: str) -> None:
        """Wake: cooldown, activity reset, sleep state cleared, schedule restored, awake mode.

        Args:
            now (datetime): The real time.
            reason (str): Why it wakes (logged and passed to `on_transition`).

        Raises:
            SleepRefused: When it is not asleep.

        """
        if self.mode != SLEEP:
            raise SleepRefused("Not asleep.")
        state = self.state
        progress = self.progress()
        if progress.get("completed"):
            # only a sleep that consolidated everything pays the debt; one cut short by
            # failing calls left entries for the next sleep, and the tiredness with them
            SleepDebt(state).reset(now)
        phases = [COMPACTING] if progress.get("completed") and progress.get("total_entries") else []
        phases += (state.get(DREAMING_PROGRESS) or {}).get("done", [])
        SleepHistory(state).finish(
            to_iso(self.game_now(now)),
            phases=phases,
            debt_after=SleepDebt(state).points,
            real_now=to_iso(now),
        )
        cooldown = now + timedelta(minutes=self.config.sleep_cooldown_minutes)
        state.set(COOLDOWN_UNTIL, to_iso(cooldown))
        state.set(ACTIVITY, 0)
        state.set(AWAKE_TICKS, 0)
        for key in (
            WAKE_TIME,
            DEPTH,
            PHASE,
            INITIATED_BY,
            REASON,
            WAKE_DEFERRED,
            WAKE_DEFERRED_SINCE,
            COMPACTING_FAILURES,
            BATCH_WAITING,
        ):
            state.delete(key)
        state.set(PROGRESS, empty_progress())
        if state.get(SCHEDULE_WAS_ENABLED):
            state.delete(SCHEDULE_SUSPENDED)
            state.delete(SCHEDULE_WAS_ENABLED)
        self._transition(AWAKE, reason, now)

    def rest_compacting(self, reason: str) -> None:
        """Give compacting up for this sleep (its calls keep failing) and move on to dreaming:
        the entries left wait, unconsolidated, for the next sleep, and the sleep does not count
        as complete (the debt stays).

        Args:
            reason (str): Why it rests, for status and the sleep's record.

        """
        progress = self.progress()
        progress["rested"] = reason[:300]
        self.state.set(PROGRESS, progress)
        self.state.set(PHASE, DREAMING)

    def finish_compacting(self) -> None:
        """Mark consolidation complete and move the sleep on to the dreaming phase."""
        progress = self.progress()
        progress["completed"] = True
        self.state.set(PROGRESS, progress)
        self.state.set(PHASE, DREAMING)

    # ---- scheduled sleep ------------------------------------------------------------------

    def schedule_due(self, game_now: datetime) -> tuple[bool, datetime | None]:
        """Whether scheduled sleep should start now, and when (game time) its window ends.

        Checked from the awake tick: the schedule is enabled and not suspended, enough awake
        ticks have passed, and the game clock's hour is inside the sleep window.

        Args:
            game_now (datetime): The game clock's time.

        Returns:
            tuple: `(due, window_end)`; window_end (game time) is None when not due.

        """
        config = self.config
        if not config.sleep_schedule_enabled or self.state.get(SCHEDULE_SUSPENDED):
            return False, None
        if (self.state.get(AWAKE_TICKS) or 0) < config.min_awake_ticks:
            return False, None
        start = game_now.replace(hour=config.sleep_start_hour, minute=0, second=0, microsecond=0)
        if start > game_now:
            start -= timedelta(days=1)  # a window that began yesterday evening
        end = start + timedelta(hours=config.sleep_duration_hours)
        if start <= game_now < end:
            return True, end
        return False, None

    def maybe_start_scheduled_sleep(
        self, now: datetime, game_now: datetime, time_factor: float = 1.0
    ) -> bool:
        """From the awake tick: count it, and start scheduled sleep when it is due.

        Args:
            now (datetime): Real time (timers run on it).
            game_now (datetime): The game clock's time (the schedule's hours are game hours).
            time_factor (float): Game seconds per real second.

        Returns:
            bool: True when the assistant fell asleep.

        """
        if not self.config.sleep_schedule_enabled:
            return False
        self.count_awake_tick()
        due, window_end = self.schedule_due(game_now)
        if not due:
            return False
        self.sleep_until(now, game_now, window_end, time_factor, "Scheduled sleep")
        return True

    def sleep_until(
        self,
        now: datetime,
        game_now: datetime,
        game_end: datetime,
        time_factor: float,
        why: str,
    ) -> None:
        """Start a scheduled light sleep (no safeguards) that ends at a game time: the sleep
        schedule's window, or a routine's sleep item (`ai_assistant.shell.plans`).

        Args:
            now (datetime): Real time (timers run on it).
            game_now (datetime): The game clock's time.
            game_end (datetime): The game time it wakes.
            time_factor (float): Game seconds per real second.
            why (str): The reason's start, e.g. "Scheduled sleep".

        """
        real_seconds = (game_end - game_now).total_seconds() / max(time_factor, 1e-9)
        self.go_to_sleep(
            now,
            hours=min(MAX_HOURS, max(MIN_HOURS, math.ceil(real_seconds / 3600))),
            depth=LIGHT,
            reason=f"{why} until {game_end:%H:%M} game time",
            initiated_by="schedule",
            enforce_safeguards=False,
            wake_time=now + timedelta(seconds=real_seconds),
        )

    def maybe_sleep_off_debt(self, now: datetime, pending_events: int) -> bool:
        """From the awake tick: at Must Sleep, after `auto_sleep_at_must_sleep_idle_minutes`
        without events, start sleep by itself. The safeguards still apply: a refused sleep
        is simply tried again at a later tick.

        Args:
            now (datetime): The real time.
            pending_events (int): Events waiting in the queue (any means it is not idle).

        Returns:
            bool: True when the assistant fell asleep.

        """
        minutes = self.config.auto_sleep_at_must_sleep_idle_minutes
        if not minutes or pending_events or self.mode == SLEEP:
            return False
        debt = SleepDebt(self.state)
        if debt.level != MUST_SLEEP:
            return False
        turn_at = (last_turn(self.state) or {}).get("at")
        times = [t for t in (from_iso(turn_at), from_iso(self.state.get(LAST_TRANSITION))) if t]
        if times and now - max(times) < timedelta(minutes=minutes):
            return False
        try:
            self.go_to_sleep(
                now,
                depth=LIGHT,
                reason=f"Sleep debt {debt.points} (Must Sleep) after {minutes} quiet minutes",
                initiated_by="debt",
            )
        except SleepRefused:
            return False
        return True

    def count_awake_tick(self) -> None:
        """Add one to the count of awake ticks since waking."""
        self.state.set(AWAKE_TICKS, (self.state.get(AWAKE_TICKS) or 0) + 1)

    # ---- transitions ------------------------------------------------------------------------

    def _transition(self, mode: str, reason: str, now: datetime) -> None:
        self.state.set(MODE, mode)
        self.state.set(TRANSITION_REASON, reason)
        self.state.set(LAST_TRANSITION, to_iso(now))
        self.log().append({"mode": mode, "at": to_iso(now), "reason": reason[:300]})
        self.on_transition(mode, reason)

    def log(self) -> ChunkedList:
        """Every transition, oldest first: {"mode", "at", "reason"} (a timeline of awake and
        asleep).

        Returns:
            ChunkedList: The transition log, kept in the state.

        """
        return ChunkedList(self.state, MODE_LOG, 100)
