"""
The names of an assistant's state values, in one place.

They are stored on the assistant's script (default category), so builders can read them with
`examine` or `script.db.<name>`. The sleep/wake names follow the reference lifecycle
(`operating_mode`, `sleep_phase`, ...). Memory that belongs to the character (journal, people,
long-term memories, core memory) is not listed here: it lives on the character, in the
`ai_assistant` category, under the names its own module gives it.

"""

# operating mode and sleep (see ai_assistant.lifecycle)
MODE = "operating_mode"
PHASE = "sleep_phase"
DEPTH = "sleep_depth"
WAKE_TIME = "scheduled_wake_time"
COOLDOWN_UNTIL = "sleep_cooldown_until"
ACTIVITY = "activity_since_wake"
INITIATED_BY = "sleep_initiated_by"
REASON = "sleep_reason"
PROGRESS = "consolidation_progress"
SCHEDULE_SUSPENDED = "sleep_schedule_suspended"
SCHEDULE_WAS_ENABLED = "_schedule_was_enabled"
TRANSITION_REASON = "mode_transition_reason"
LAST_TRANSITION = "last_mode_transition"
AWAKE_TICKS = "awake_ticks"
WAKE_DEFERRED = "wake_deferred_reason"
SLEEP_ERRORS = "sleep_errors"
COMPACTING_FAILURES = "compacting_failures"
WAKE_DEFERRED_SINCE = "wake_deferred_since"
DREAMING_PROGRESS = "dreaming_progress"
# when core memory was last consolidated, and how far into long-term memory and the journal
CORE_CONSOLIDATION = "core_memory_consolidation"
LAST_TRIAGE = "last_triage"
# sleep-time batch requests (see ai_assistant.sleep.batch)
BATCHES = "batches"  # submitted batches not yet settled
BATCH_RESULTS = "batch_results"  # request key -> the reply, or why it goes direct
BATCH_UNSUPPORTED = "batch_unsupported"  # the endpoint has no Batch API: when and why
BATCH_WAITING = "batch_waiting"  # compacting waits on a batch (a wake does not)

# the awake turn
WAIT_UNTIL = "wait_until"
WAIT_SET_AT = "wait_set_at"
WAIT_REASON = "wait_reason"
# who may know why it waits (the wait's conversation's audience): a private reason is left out
# of the notice that the wait is over, which any conversation may see
WAIT_AUDIENCE = "wait_audience"
RETRY_AFTER = "retry_after"
CONSECUTIVE_ERRORS = "consecutive_errors"
# every turn's summary, oldest first (`memory.turn_log`; status shows the last, the dashboard
# pages through them): chunked, turn_log:meta, turn_log:000000, ...; the oldest chunk dropped
# once a whole chunk past the turns kept
TURN_LOG = "turn_log"
TURN_LOG_CHUNK = 10  # turns per chunk: a turn rewrites at most this many
TURN_LOG_KEPT = 500
# where earlier versions kept the last ten turns, and before that the last alone: read until
# the log's first turn moves them in
RECENT_TURNS = "recent_turns"
LAST_TURN = "last_turn"
# contextual triggers: reminders that come back when a pattern comes up (ai_assistant.memory.reminders)
TRIGGERS = "triggers"
WORKING_MEMORY = "working_memory"
# a builder's routine and today's plan (see ai_assistant.memory.plans)
ROUTINE = "routine"
PLAN = "day_plan"

# the model and the context
USAGE = "usage"
USAGE_BY_HOUR = "usage_by_hour"
MODE_LOG = "mode_log"  # chunked: mode_log:meta, mode_log:000000, ...
TOKEN_SPEND = "token_spend"
CONTEXT_TOKENS = "context_tokens"
# the chat model's context window, as the server told it: {"model", "checked", "tokens", "source"}
CONTEXT_WINDOW = "context_window"
# for a model tiktoken does not know: the server's prompt tokens per token we count,
# {"model", "ratio", "samples"} (`llm.calibration.Calibration.calibrate_tokens`)
TOKEN_SCALE = "token_scale"
LAST_COMPACTION = "last_compaction"
CONTEXT_SIGNALS = "context_signals"

# the shell's own (set by the Evennia side, read by the status)
PAUSED = "paused"
CONFIG_OVERRIDES = "config_overrides"
TICK_ERRORS = "tick_errors"
LAST_ERROR = "last_error"
TICKER_SUBSCRIPTION = "ticker_subscription"

# sleep debt (see ai_assistant.debt)
SLEEP_DEBT = "sleep_debt"
LAST_SLEEP = "last_sleep"
CURRENT_SLEEP = "current_sleep"
SLEEP_HISTORY = "sleep_history"  # chunked: sleep_history:meta, sleep_history:000000, ...
SLEEP_HISTORY_CHUNK = 50  # sleep records per chunk


# what an assistant's first turn reads or writes on its script. They are created, empty (None,
# which reads as "nothing stored"), with the script: that turn then finds them in the cache and
# updates their rows, instead of asking the database for each and creating ten Attributes (a
# query and two inserts each) on the reactor while players wait for its answer.
# "pending_events" is the event queue's (`events.EventQueue.KEY`); "history:..." are the
# conversation history's first chunk and its index (`memory.history`).
FIRST_TURN_VALUES = (
    RETRY_AFTER,
    WAIT_UNTIL,
    TRIGGERS,
    CONSECUTIVE_ERRORS,
    CONTEXT_TOKENS,
    CONTEXT_WINDOW,
    TOKEN_SCALE,
    RECENT_TURNS,
    f"{TURN_LOG}:meta",
    f"{TURN_LOG}:000000",
    SLEEP_DEBT,
    TOKEN_SPEND,
    USAGE,
    USAGE_BY_HOUR,
    WORKING_MEMORY,
    ROUTINE,
    PLAN,
    "pending_events",
    "history:meta",
    "history:000000",
)
# (the same for the memory a first turn reads on the character: `memory.kinds.FIRST_READ`)
