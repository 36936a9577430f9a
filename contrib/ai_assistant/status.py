"""
What `@assistant/status` (and any other view) shows of one assistant, as one typed snapshot.

The core fills in what it knows (mode, sleep, queue, context, memory, usage) from a brain
(`status_of`); the Evennia shell
adds how the assistant is ticking (rate, pause, in-flight turn, tick errors) with
`dataclasses.replace`.

"""

from dataclasses import dataclass, field
from datetime import datetime

from .debt import SleepDebt
from .llm.usage import UsageStats
from .memory.kinds import sizes
from .memory.sleep_history import SleepHistory
from .memory.turn_log import last_turn
from .state import (
    ACTIVITY,
    BATCHES,
    DEPTH,
    DREAMING_PROGRESS,
    INITIATED_BY,
    LAST_COMPACTION,
    REASON,
    RETRY_AFTER,
    SCHEDULE_SUSPENDED,
    WAIT_REASON,
    WAIT_UNTIL,
    WAKE_DEFERRED,
    WAKE_TIME,
)


@dataclass(frozen=True)
class AssistantStatus:
    """One assistant's state at a moment.

    Attributes:
        mode (str): "awake" or "sleep".
        phase (str or None): While asleep, "compacting" or "dreaming".
        depth (str or None): While asleep, "light" or "deep".
        scheduled_wake_time (str or None): When it wakes by itself (ISO time).
        cooldown_minutes_left (int): Minutes before it may choose to sleep again.
        initiated_by (str or None): Who started this sleep (tool, builder, schedule).
        sleep_reason (str or None): Why.
        wake_deferred_reason (str or None): A wake held back while compacting.
        consolidation_progress (dict): Entries processed and to process while compacting.
        dreaming_progress (dict): The dreaming steps done, their reports and errors.
        schedule (str): The sleep schedule, or "off".
        pending_events (int): Heard events waiting for a turn.
        events_dropped (int): Events dropped because the queue was full.
        activity_since_wake (int): Interactions handled since it last woke.
        context_tokens (int): Tokens of the next request without new events.
        max_context_tokens (int): The context budget: `max_context_tokens`, below the
            server's window less the reply's room when the window is known.
        context_window (dict or None): The server's window, when it told it: {"tokens",
            "source"}.
        core_memory_tokens (int): Tokens of the core memory block.
        memory_block_tokens (int): Its budget.
        memory (dict): How many records of each kind it holds, by kind (`memory.kinds.sizes`:
            "journal", "long_term", "profiles" ...); `journal_size` and `long_term_memories`
            read two of them.
        journal_rested (int): Entries that rest from consolidation (the model failed on them).
        token_scale (float): The server's prompt tokens per token counted here (1.0 for an
            OpenAI model, or before the server reported usage; `Brain.calibrate_tokens`).
        usage (UsageStats): Model calls, tokens, latency, errors.
        spend (dict): Tokens spent this game day ("day") and this real hour ("hour").
        budget (dict): The budgets ("day", "hour"; 0: none) and why no call is made now
            ("spent", or None).
        last_turn (dict or None): A summary of the last awake turn.
        last_compaction (dict or None): A summary of the last context compaction.
        wait_until (str or None): The end of a wait (its `wait` tool, or `@assistant/wait`).
        retry_after (str or None): The end of a back-off after model errors.
        wait_reason (str or None): Why it waits (the builder who ordered a wait is named).
        cost (dict or None): What its model use cost by the game's price table
            (`AI_ASSISTANT_PRICES`, `Overview.cost_so_far`): "model", "price", "total",
            "today"; None when its model has no price.
        sleep_debt (int): Its sleep debt (`ai_assistant.debt`).
        debt_level (str): Alert, Drowsy, Sleepy or Must Sleep.
        last_sleep (str or None): When its last completed sleep ended (ISO time).
        turns_since_sleep (int): Turns handled since then.
        recent_sleeps (list): The last few sleep records, newest first.
        batches (list): Batches of sleep-time requests under way (`batch_enabled`): each an
            "id", its "requests" and when it was "submitted_at".
        paused (bool): Ticking is paused by a builder (shell).
        tick_rate (int or None): Seconds between ticks, None when not ticking (shell).
        in_flight (bool): A turn or sleep step is waiting on the model (shell).
        tick_count (int): Ticks since the server started (shell).
        last_tick (str or None): When it last ticked (shell).
        tick_errors (int): Ticks that raised (shell).
        last_error (str or None): The last such error, secrets redacted (shell).
        config_error (str or None): Why its configuration is invalid, if it is (shell).
        overrides (dict): Its own configuration overrides (shell).
        model (str): The chat model it calls, and where (shell: `Overview.model_in_use`).
        prompt_starts (int): Turns begun at once by a direct line since the server started
            (shell).
        model_calls (dict or None): The server's model call queue, shared by every assistant:
            in_flight, max_in_flight, queued, owners_waiting, calls, rate_limited, paused_for,
            wait_p50_ms, wait_max_ms; None before the first call (shell).
        player_limits (dict or None): The game-wide limits on players, shared by every
            assistant: turns_per_minute, tokens_per_hour, tokens_per_day, how many lines are
            "deferred", and the "top" spenders by "hour" and "day" as (name, tokens) (shell).

    """

    mode: str
    phase: str | None
    depth: str | None
    scheduled_wake_time: str | None
    cooldown_minutes_left: int
    initiated_by: str | None
    sleep_reason: str | None
    wake_deferred_reason: str | None
    consolidation_progress: dict
    dreaming_progress: dict
    schedule: str
    pending_events: int
    events_dropped: int
    activity_since_wake: int
    context_tokens: int
    max_context_tokens: int
    core_memory_tokens: int
    memory_block_tokens: int
    memory: dict
    journal_rested: int
    token_scale: float
    usage: UsageStats
    spend: dict
    budget: dict
    last_turn: dict | None
    last_compaction: dict | None
    wait_until: str | None
    retry_after: str | None
    sleep_debt: int = 0
    debt_level: str = "Alert"
    last_sleep: str | None = None
    turns_since_sleep: int = 0
    recent_sleeps: list = field(default_factory=list)
    batches: list = field(default_factory=list)
    paused: bool = False
    tick_rate: int | None = None
    in_flight: bool = False
    tick_count: int = 0
    last_tick: str | None = None
    tick_errors: int = 0
    last_error: str | None = None
    config_error: str | None = None
    overrides: dict = field(default_factory=dict)
    model: str = ""
    prompt_starts: int = 0
    model_calls: dict | None = None
    player_limits: dict | None = None
    recall: str = "words"
    context_window: dict | None = None
    wait_reason: str | None = None
    cost: dict | None = None

    @property
    def journal_size(self) -> int:
        """Journal entries."""
        return self.memory.get("journal", 0)

    @property
    def long_term_memories(self) -> int:
        """Long-term memories."""
        return self.memory.get("long_term", 0)

    @property
    def asleep(self) -> bool:
        """Whether the assistant is asleep.

        Returns:
            bool: True when its mode is "sleep".

        """
        return self.mode == "sleep"


def status_of(brain, now: datetime) -> AssistantStatus:
    """What the core knows of this assistant now.

    Args:
        brain (Brain): The assistant's brain.
        now (datetime): The real time.

    Returns:
        AssistantStatus: Mode, phase, schedule, queue, context, memory and usage figures.

    """
    state = brain.state
    config = brain.config
    cooldown = brain.lifecycle.cooldown_remaining(now).total_seconds()
    if config.sleep_schedule_enabled:
        schedule = (
            f"{config.sleep_start_hour:02d}:00 game time for {config.sleep_duration_hours} h"
            + (" (suspended)" if state.get(SCHEDULE_SUSPENDED) else "")
        )
    else:
        schedule = "off"
    debt = SleepDebt(state)
    return AssistantStatus(
        mode=brain.lifecycle.mode,
        phase=brain.lifecycle.phase,
        depth=state.get(DEPTH),
        scheduled_wake_time=state.get(WAKE_TIME),
        cooldown_minutes_left=max(0, int(-(-cooldown // 60))),
        initiated_by=state.get(INITIATED_BY),
        sleep_reason=state.get(REASON),
        wake_deferred_reason=state.get(WAKE_DEFERRED),
        consolidation_progress=brain.lifecycle.progress() if brain.lifecycle.phase else {},
        dreaming_progress=dict(state.get(DREAMING_PROGRESS) or {}),
        schedule=schedule,
        pending_events=len(brain.events),
        events_dropped=brain.events.dropped(),
        activity_since_wake=state.get(ACTIVITY) or 0,
        context_tokens=brain.context_tokens(),
        max_context_tokens=brain.calibration.context_budget(),
        context_window=brain.calibration.context_window(),
        core_memory_tokens=brain.core_memory.tokens(),
        memory_block_tokens=config.memory_block_tokens,
        memory=sizes(brain),
        journal_rested=brain.journal.rested_count(),
        token_scale=brain.calibration.token_scale(),
        usage=brain.usage().model_copy(),
        spend=brain.budget().spent(now, brain.game_now(now)),
        budget={
            "day": config.token_budget_per_day,
            "hour": config.token_budget_per_hour,
            "spent": brain.budget_spent(now),
        },
        last_turn=last_turn(state),
        last_compaction=state.get(LAST_COMPACTION),
        wait_until=state.get(WAIT_UNTIL),
        wait_reason=state.get(WAIT_REASON),
        retry_after=state.get(RETRY_AFTER),
        sleep_debt=debt.points,
        debt_level=debt.level,
        last_sleep=debt.last_sleep(),
        turns_since_sleep=debt.turns_since_sleep,
        recent_sleeps=SleepHistory(state).recent(3),
        batches=[
            {"id": b["id"], "requests": len(b["keys"]), "submitted_at": b["submitted_at"]}
            for b in state.get(BATCHES) or []
        ],
        recall=recall_description(brain),
    )


def recall_description(brain) -> str:
    """How this assistant recalls, in a line for `/status`: its words' stemmer, its
    embeddings model with the marks it sends and how far the journal is embedded, its
    reranking model.

    Args:
        brain (Brain): The assistant's brain.

    Returns:
        str: The line.

    """
    config = brain.config
    parts = [f"words ({config.recall_stemmer} stemmer)"]
    if brain.embedding_model:
        roles = brain.embedding_roles.roles()
        if roles.query_input_type or roles.document_input_type:
            marks = f"input_type {roles.query_input_type} / {roles.document_input_type}"
        elif roles.query_prefix or roles.document_prefix:
            marks = f"{roles.query_prefix.strip()!r} / {roles.document_prefix.strip()!r}"
        else:
            marks = "no marks"
        through = brain.journal.embedded_through(brain.embedding_model)
        parts.append(
            f"embeddings {brain.embedding_model} ({roles.family or 'no known family'}: "
            f"{marks}; journal embedded through {through} of {len(brain.journal)})"
        )
    if config.recall_rerank_model:
        parts.append(f"reranked by {config.recall_rerank_model}")
    return "; ".join(parts)
