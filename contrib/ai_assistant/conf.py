"""
Every tunable of an assistant, with its default, bounds and meaning.

Values are resolved in three layers, later layers winning:

1. the defaults declared on `AssistantConfig` below,
2. game-wide overrides from the Django setting `AI_ASSISTANT_DEFAULTS` (a dict),
3. per-assistant overrides stored on the assistant's script (set with `@assistant/set`).

A bad key or value raises `ConfigError`, whose message names the key and what is allowed;
nothing is changed when validation fails.

This module does not import Evennia: the shell passes the game-wide dict in.

"""

import threading
from collections import OrderedDict
from typing import Any, Literal

import snowballstemmer
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import Refused


class ConfigError(Refused):
    """A configuration key or value that is not allowed. The message says what is."""


def recall_stemmers() -> list[str]:
    """The stemmers `recall_stemmer` may name: Snowball's languages (`memory.lexical` uses
    them), and "none".

    Returns:
        list: Their names.

    """
    return [*snowballstemmer.algorithms(), "none"]


class AssistantConfig(BaseModel):
    """The tunables of one assistant. Field descriptions are the one-line meanings."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=True)

    # --- ticking ---
    tick_rate: int = Field(5, ge=1, le=3600, description="Seconds between awake ticks.")
    tick_rate_sleep: int = Field(60, ge=1, le=86400, description="Seconds between sleep ticks.")
    prompt_start: bool = Field(
        True,
        description="Start a turn at once (not at the next tick) for a whisper, page, "
        "instruction or speech naming the assistant.",
    )

    # --- the model ---
    model: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        description="Chat model name; None uses AI_ASSISTANT_MODEL, else 'gpt-4o-mini'.",
    )
    temperature: float = Field(0.7, ge=0.0, le=2.0, description="Sampling temperature.")
    max_reply_tokens: int = Field(
        800, ge=16, le=32000, description="Most tokens the model may write in one reply."
    )
    tool_choice: Literal["auto", "required", "omit"] = Field(
        "auto",
        description="tool_choice sent with tools: auto (some servers, llama-cpp-python among "
        "them, leave the tools out of the prompt without it), required, or omit for a server "
        "that refuses the field.",
    )
    plain_text_reply: Literal["say", "remind", "drop"] = Field(
        "say",
        description="An awake reply of text without tool calls: say (spoken as the "
        "assistant's words, whispered back in private, with the say tool's checks), remind "
        "(asked once more to use its tools, then spoken), or drop (nothing said). An empty "
        "reply is asked once more for say or whisper by name, unless drop.",
    )
    structured_output: Literal["auto", "json_schema", "json_object", "text"] = Field(
        "auto",
        description="Format of sleep's structured calls: auto steps down from json_schema to "
        "json_object to JSON in text as the server refuses each; or one of them, fixed.",
    )
    request_timeout: float = Field(
        20.0, ge=1.0, le=600.0, description="Seconds before one model request times out."
    )
    max_retries: int = Field(
        1, ge=0, le=5, description="SDK retries of a failed request (429, 5xx, timeouts)."
    )
    token_budget_per_day: int = Field(
        0,
        ge=0,
        le=10**9,
        description="Tokens it may spend a game day: uncached prompt + completion (0: no limit).",
    )
    token_budget_per_hour: int = Field(
        0,
        ge=0,
        le=10**9,
        description="Tokens it may spend a real hour: uncached prompt + completion (0: no limit).",
    )
    budget_spent_message: str | None = Field(
        "{name} rubs their eyes: they cannot think any more for now.",
        max_length=300,
        description="Said once in the room when a budget is spent ({name}); None: silent.",
    )
    error_backoff_max: int = Field(
        300, ge=1, le=86400, description="Most seconds to wait before retrying after errors."
    )

    # --- the awake loop ---
    max_react_iterations: int = Field(
        5, ge=1, le=20, description="Most model calls in one awake turn (ReAct iterations)."
    )
    respond_to_ambient: bool = Field(
        False,
        description="Call the model for speech not addressed to the assistant (costs tokens).",
    )
    respond_to_assistants: bool = Field(
        False,
        description="Hear other assistants and let them trigger model calls (loop risk).",
    )
    max_event_chars: int = Field(
        1000, ge=50, le=20000, description="Longer heard text is truncated with a note."
    )
    max_pending_events: int = Field(
        50, ge=5, le=1000, description="Queue size; on overflow the oldest ambient event goes."
    )
    max_wait_minutes: float = Field(
        120.0, ge=1.0, le=1440.0, description="Longest pause the wait tool may ask for."
    )
    max_tool_calls_per_reply: int = Field(
        8, ge=1, le=50, description="Tool calls run from one model reply; more get an error."
    )
    max_tool_calls_per_turn: int = Field(
        24, ge=1, le=200, description="Tool calls run in one awake turn; reaching it ends the turn."
    )
    allow_color_markup: bool = Field(
        False,
        description="Let the assistant's speech use Evennia color codes (never line breaks).",
    )
    max_tool_output_chars: int = Field(
        2000, ge=100, le=20000, description="Tool results longer than this are truncated."
    )
    # --- context ---
    max_context_tokens: int = Field(
        100000, ge=1000, le=2000000, description="Context budget of one model request."
    )
    compact_enabled: bool = Field(True, description="Master switch for context compaction.")
    compact_sleep_threshold: float = Field(
        0.7, gt=0.0, le=1.0, description="Context usage that triggers compaction while asleep."
    )
    compact_emergency_threshold: float = Field(
        0.8, gt=0.0, le=1.0, description="Context usage that triggers compaction while awake."
    )
    compact_preserve_window: int = Field(
        20, ge=2, le=500, description="Most recent messages kept intact by compaction."
    )
    compact_model: str | None = Field(
        None, min_length=1, max_length=200, description="Model for summaries; None = main model."
    )
    compact_prompt: str | None = Field(
        None, min_length=1, max_length=8000, description="Summary prompt; None = built-in."
    )
    pre_compact_extraction_enabled: bool = Field(
        True, description="Let the assistant journal key facts before compaction."
    )
    pre_compact_max_iterations: int = Field(
        5, ge=1, le=20, description="Most extraction loop iterations before compaction."
    )
    pre_compact_prompt: str | None = Field(
        None, min_length=1, max_length=8000, description="Extraction prompt; None = built-in."
    )
    memory_block_tokens: int = Field(
        2000,
        ge=0,
        le=50000,
        description="Token budget of the core notes one conversation sees (builders' pinned "
        "notes have a room of the same size of their own).",
    )
    core_notes_per_person: int = Field(
        5, ge=0, le=100, description="Most core notes the model may write for one person."
    )

    # --- sleep ---
    sleep_cooldown_minutes: int = Field(
        60, ge=0, le=10080, description="Minutes after waking before go_to_sleep is allowed."
    )
    min_activity_before_sleep: int = Field(
        10, ge=0, le=10000, description="Interactions handled since waking before sleep."
    )
    player_sleep_max_hours: int = Field(
        2,
        ge=1,
        le=24,
        description="Most hours go_to_sleep may choose, light only, in a turn without a "
        "builder's instruction.",
    )
    sleep_schedule_enabled: bool = Field(False, description="Enable time-based auto-sleep.")
    sleep_start_hour: int = Field(2, ge=0, le=23, description="Game-clock hour sleep starts.")
    sleep_duration_hours: int = Field(4, ge=1, le=24, description="Hours of scheduled sleep.")
    min_awake_ticks: int = Field(
        10, ge=0, le=100000, description="Awake ticks before scheduled sleep may start."
    )
    sleep_announcement: str | None = Field(
        "{name} settles down and closes their eyes.",
        max_length=300,
        description="Room line when falling asleep ({name}); None or empty turns it off.",
    )
    wake_announcement: str | None = Field(
        "{name} stirs and opens their eyes.",
        max_length=300,
        description="Room line when waking ({name}); None or empty turns it off.",
    )

    # --- sleep debt (see ai_assistant.debt) ---
    debt_memory_writes_1: int = Field(
        1, ge=1, le=1000, description="Memory writes in a turn that add 1 sleep debt."
    )
    debt_memory_writes_2: int = Field(
        4, ge=1, le=1000, description="Memory writes in a turn that add 2 sleep debt."
    )
    debt_memory_writes_3: int = Field(
        9, ge=1, le=1000, description="Memory writes in a turn that add 3 sleep debt."
    )
    debt_tool_calls_1: int = Field(
        1, ge=1, le=1000, description="Tool calls in a turn that add 1 sleep debt."
    )
    debt_tool_calls_2: int = Field(
        16, ge=1, le=1000, description="Tool calls in a turn that add 2 sleep debt."
    )
    debt_tool_calls_3: int = Field(
        41, ge=1, le=1000, description="Tool calls in a turn that add 3 sleep debt."
    )
    auto_sleep_at_must_sleep_idle_minutes: int = Field(
        0,
        ge=0,
        le=10080,
        description="At Must Sleep, quiet minutes before it sleeps by itself (0: never).",
    )

    # --- recall ---
    recall_limit: int = Field(
        8, ge=0, le=50, description="Memories recalled into each turn's message (0: none)."
    )
    max_triggers: int = Field(
        20,
        ge=0,
        le=100,
        description="Most reminders set_reminder may hold (builders' have room of their own).",
    )
    max_triggers_per_person: int = Field(
        5, ge=0, le=100, description="Most reminders set_reminder may hold for one person."
    )
    recall_budget_tokens: int = Field(
        600, ge=0, le=20000, description="Most tokens the recalled memories take in a turn."
    )
    recall_weight_relevance: float = Field(
        1.0, ge=0.0, le=10.0, description="Weight of relevance (lexical, and semantic) in recall."
    )
    recall_weight_recency: float = Field(
        0.1, ge=0.0, le=10.0, description="Weight of recency (decaying with game hours)."
    )
    recall_weight_importance: float = Field(
        0.1, ge=0.0, le=10.0, description="Weight of a memory's 1-10 importance."
    )
    recall_weight_person: float = Field(
        0.3, ge=0.0, le=10.0, description="Boost of memories about people named or present."
    )
    recall_recency_decay: float = Field(
        0.999, gt=0.0, le=1.0, description="Recency multiplier per game hour since a memory."
    )
    recall_candidates: int = Field(
        50, ge=5, le=500, description="Lexical and semantic hits weighed in each recall."
    )
    recall_stemmer: str = Field(
        "english",
        min_length=1,
        max_length=30,
        description="The game's language, for recall's words (their dictionary form and "
        "stem): a Snowball language (english, russian, german, french, spanish, ...) or none.",
    )
    recall_semantic_share: float = Field(
        0.4,
        ge=0.0,
        le=1.0,
        description="Share of relevance the embeddings give, when configured (the rest is "
        "lexical).",
    )
    recall_rerank_model: str | None = Field(
        None,
        max_length=200,
        description="Reranking model asked to order the best candidates of each recall (POST "
        "/rerank on the model endpoint, as llama.cpp's server, vLLM and Jina serve); None: off.",
    )
    recall_rerank_candidates: int = Field(
        20, ge=2, le=100, description="Best candidates of a recall the reranking model orders."
    )
    recall_link_neighbours: int = Field(
        2, ge=0, le=10, description="Linked memories each of the best hits pulls in."
    )
    recall_weight_trust: float = Field(
        0.3, ge=0.0, le=10.0, description="Weight of how far a memory's source is trusted."
    )
    room_speech_audience: Literal["public", "present"] = Field(
        "public",
        description="Who may later hear speech said aloud: anyone, or only those present.",
    )

    # --- trust: how far each kind of source is believed (0-1), shown and weighed in recall ---
    trust_instruction: float = Field(
        1.0, ge=0.0, le=1.0, description="Trust in a builder's instruction."
    )
    trust_observed: float = Field(
        0.9, ge=0.0, le=1.0, description="Trust in what the assistant saw itself."
    )
    trust_corroborated: float = Field(
        0.8, ge=0.0, le=1.0, description="Trust in a claim made by two independent people."
    )
    trust_self_claim: float = Field(
        0.6, ge=0.0, le=1.0, description="Trust in what a person says about themselves."
    )
    trust_reflection: float = Field(
        0.6, ge=0.0, le=1.0, description="Trust in an insight drawn in sleep."
    )
    trust_inferred: float = Field(
        0.5, ge=0.0, le=1.0, description="Trust in the model's own conclusions."
    )
    trust_summary: float = Field(
        0.5, ge=0.0, le=1.0, description="Trust in a summary of past conversation."
    )
    trust_claim: float = Field(
        0.4, ge=0.0, le=1.0, description="Trust in what a person says about others or the world."
    )
    trust_overheard: float = Field(
        0.3, ge=0.0, le=1.0, description="Trust in speech not addressed to the assistant."
    )

    # --- gossip: what assistants tell each other (see ai_assistant.memory.gossip) ---
    gossip_enabled: bool = Field(
        False,
        description="May tell other assistants what it knows (the tell tool) and record theirs.",
    )
    gossip_trust_decay: float = Field(
        0.7, gt=0.0, le=1.0, description="Trust kept per hand a told memory passes through."
    )
    gossip_max_hops: int = Field(
        3, ge=1, le=10, description="Most hands a memory passes through; then it goes no further."
    )
    group_sharing_enabled: bool = Field(
        False,
        description=(
            "Takes part in its groups' knowledge (tag category ai_assistant_group): may share "
            "what it knows (share_with_group) and recalls what fellow members shared."
        ),
    )

    # --- scenes: assistants who talk to each other (see ai_assistant.shell.scenes) ---
    scenes_enabled: bool = Field(
        False,
        description="May open, and answer, a short exchange with another assistant here (it "
        "too with scenes on) while a player is present to hear it; never with no player.",
    )
    scene_chance: float = Field(
        0.05,
        ge=0.0,
        le=1.0,
        description="Chance, at an idle awake tick with a partner and a player here, that it "
        "opens a scene.",
    )
    scene_gap_minutes: int = Field(
        15, ge=1, le=1440, description="Fewest real minutes between two scenes it takes part in."
    )
    scenes_per_hour: int = Field(
        2, ge=1, le=60, description="Most scenes it takes part in per real hour."
    )
    scene_max_lines: int = Field(
        6,
        ge=2,
        le=20,
        description="Most lines said in a scene it opens (the opening line included); then "
        "the others no longer hear it as a scene.",
    )

    # --- long-term memory ---
    embedding_model: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        description="Embeddings model; None uses AI_ASSISTANT_EMBEDDING_MODEL, else lexical search.",
    )
    embedding_query_prefix: str | None = Field(
        None,
        max_length=200,
        description="Text put before a query to embed; None: the model family's (e5: 'query: '); "
        "empty: none.",
    )
    embedding_document_prefix: str | None = Field(
        None,
        max_length=200,
        description="Text put before a memory to embed; None: the model family's (e5: "
        "'passage: '); empty: none.",
    )
    embedding_query_input_type: str | None = Field(
        None,
        min_length=1,
        max_length=40,
        description="input_type sent with queries to embed (Cohere: search_query; NVIDIA: "
        "query); None sends none.",
    )
    embedding_document_input_type: str | None = Field(
        None,
        min_length=1,
        max_length=40,
        description="input_type sent with memories to embed (Cohere: search_document; NVIDIA: "
        "passage); None sends none.",
    )
    embedding_batch_size: int = Field(
        32, ge=1, le=256, description="Journal entries embedded per call while asleep."
    )
    memory_search_limit: int = Field(
        5, ge=1, le=50, description="Most long-term memories a search returns."
    )

    # --- memory consolidation ---
    scoring_batch_size: int = Field(
        10, ge=1, le=100, description="Journal entries scored per LLM importance call."
    )
    min_importance_to_consolidate: int = Field(
        4, ge=1, le=10, description="Lowest importance consolidated into long-term memory."
    )
    entity_min_observations: int = Field(
        5, ge=1, le=1000, description="Observations of a person before a profile is built."
    )
    reflection_threshold: int = Field(
        150, ge=1, le=100000, description="Cumulative importance that triggers reflection."
    )
    prune_max_importance: int = Field(
        3, ge=0, le=10, description="Old entries at or below this importance may be pruned."
    )
    prune_age_days: int = Field(
        30, ge=1, le=3650, description="Age in days before low-importance entries are pruned."
    )
    trust_turn_importance: bool = Field(
        False,
        description="Keep the importance an awake turn gave an entry (no sleep-time scoring).",
    )
    compacting_give_up_minutes: int = Field(
        30,
        ge=1,
        le=10080,
        description="Minutes a due wake waits on failing consolidation before waking anyway.",
    )
    snapshots_kept: int = Field(
        3,
        ge=0,
        le=20,
        description="Memory snapshots kept, one per sleep, for @assistant/rollback (0: none).",
    )

    # --- dreaming ---
    dream_max_calls_per_tick: int = Field(
        3, ge=1, le=50, description="Model calls the dreaming steps may make per sleep tick."
    )
    link_recent_memories: int = Field(
        20, ge=1, le=500, description="Recent important memories linked in one sleep."
    )
    link_min_importance: int = Field(
        5, ge=1, le=10, description="Importance a memory needs to be linked in sleep."
    )
    link_min_strength: float = Field(0.25, ge=0.0, le=1.0, description="Weakest link kept (0-1).")
    link_max_per_memory: int = Field(
        8, ge=1, le=100, description="Links a memory keeps, the strongest."
    )
    max_observations_per_person: int = Field(
        200, ge=5, le=10000, description="Observations kept per person (the oldest go first)."
    )
    entity_batch_size: int = Field(
        5, ge=1, le=50, description="People whose observations one model call consolidates."
    )
    entity_prune_consolidated: bool = Field(
        False, description="Drop observations once consolidated into attributes."
    )
    relationships_enabled: bool = Field(
        True, description="Update familiarity, warmth and trust with people in sleep."
    )
    relationship_batch_size: int = Field(
        8, ge=1, le=50, description="People whose relationships one model call in sleep updates."
    )
    relationship_max_step: float = Field(
        0.2, ge=0.01, le=1.0, description="Most a relationship dimension moves in one sleep."
    )
    reflection_entries: int = Field(
        20, ge=3, le=200, description="Recent important entries one reflection looks at."
    )
    reflection_questions: int = Field(
        3, ge=1, le=10, description="Questions a reflection asks itself."
    )
    core_memory_max_entries: int = Field(
        20, ge=1, le=200, description="Most public core memory notes after sleep's consolidation."
    )
    core_memory_min_importance: int = Field(
        7, ge=1, le=10, description="Importance a new memory needs to be a core memory candidate."
    )
    core_memory_max_candidates: int = Field(
        30, ge=1, le=200, description="Most new memories one core memory consolidation weighs."
    )
    working_memory_stale_minutes: int = Field(
        60, ge=1, le=10080, description="Minutes before a quiet conversation leaves working memory."
    )
    triage_enabled: bool = Field(
        True,
        description="Asleep, what may need it (talk naming someone present in light sleep, a "
        "direct word in deep sleep, a reminder) is put to it in a sleep turn: one small call "
        "offering wake_up and stay_asleep.",
    )
    triage_interval_minutes: int = Field(
        10, ge=1, le=1440, description="Least minutes between two sleep turns."
    )
    digest_enabled: bool = Field(
        True,
        description="Digest each finished game day's journal in sleep (a call per day and "
        "audience).",
    )
    digest_max_days_per_sleep: int = Field(
        3, ge=1, le=60, description="Game days digested in one sleep at most (the rest wait)."
    )
    digest_max_entries: int = Field(
        80, ge=5, le=1000, description="Entries one digest reads at most (the most important)."
    )

    # --- retention (sleep's housekeeping; no model call) ---
    digest_retention_days: int = Field(
        365, ge=0, le=36500, description="Days a daily digest is kept (0: forever)."
    )
    journal_retention_days: int = Field(
        180,
        ge=0,
        le=36500,
        description="Days a consolidated, digested raw journal entry is kept (0: forever).",
    )
    compaction_archive_retention_days: int = Field(
        90,
        ge=0,
        le=36500,
        description="Days a digested context summary is kept in the journal (0: forever).",
    )
    sleep_history_retention_days: int = Field(
        90, ge=0, le=36500, description="Days a sleep's record is kept (0: forever)."
    )

    # --- batch requests (sleep-time structured work through the provider's Batch API) ---
    batch_enabled: bool = Field(
        False,
        description="Send sleep-time structured calls as one Batch API batch per tick (cheaper).",
    )
    batch_max_wait_hours: int = Field(
        24, ge=1, le=168, description="Hours a batch may stay unfinished before direct calls."
    )

    # --- routines and plans (see ai_assistant.memory.plans) ---
    planning_enabled: bool = Field(
        False,
        description=(
            "Plans its own day (one structured call a game day, in budget) and may agree to "
            "meet people (the agree_to_meet tool)."
        ),
    )

    @field_validator("recall_stemmer")
    @classmethod
    def _a_known_stemmer(cls, name: str) -> str:
        allowed = recall_stemmers()
        if name not in allowed:
            raise ValueError(f"one of {', '.join(allowed)} is needed, not '{name}'")
        return name

    @model_validator(mode="after")
    def _thresholds_in_order(self):
        if self.compact_emergency_threshold < self.compact_sleep_threshold:
            raise ValueError(
                "compact_emergency_threshold must be >= compact_sleep_threshold "
                f"({self.compact_sleep_threshold})"
            )
        for kind in ("memory_writes", "tool_calls"):
            low, mid, high = (getattr(self, f"debt_{kind}_{n}") for n in (1, 2, 3))
            if not low < mid < high:
                raise ValueError(
                    f"debt_{kind}_1 < debt_{kind}_2 < debt_{kind}_3 is required "
                    f"(now {low}, {mid}, {high})"
                )
        return self

    def debt_memory_thresholds(self) -> tuple[int, int, int]:
        """The memory writes in one turn that add 1, 2 and 3 sleep debt.

        Returns:
            tuple: Three ascending counts.

        """
        return self.debt_memory_writes_1, self.debt_memory_writes_2, self.debt_memory_writes_3

    def debt_tool_thresholds(self) -> tuple[int, int, int]:
        """The tool calls in one turn that add 1, 2 and 3 sleep debt.

        Returns:
            tuple: Three ascending counts.

        """
        return self.debt_tool_calls_1, self.debt_tool_calls_2, self.debt_tool_calls_3

    def trusts(self) -> dict[str, float]:
        """The configured trust of each source (`memory.provenance`), plus `corroborated`.

        Returns:
            dict: Trust from 0 to 1, keyed by source (the `trust_` keys without the prefix).

        """
        return {
            key.removeprefix("trust_"): getattr(self, key)
            for key in type(self).model_fields
            if key.startswith("trust_") and key != "trust_turn_importance"
        }

    def effective_model(self, game_model: str | None) -> str:
        """The chat model to use: this config's, else the game's setting, else a default.

        Args:
            game_model (str or None): The game's chat model setting.

        Returns:
            str: The model name ("gpt-4o-mini" when neither is set).

        """
        return self.model or game_model or "gpt-4o-mini"


def config_keys() -> list[str]:
    """All valid configuration keys, sorted.

    Returns:
        list: The key names.

    """
    return sorted(AssistantConfig.model_fields)


def describe_key(key: str) -> str:
    """A one-line description of what `key` allows, for error messages and help.

    Args:
        key (str): A configuration key.

    Returns:
        str: e.g. "tick_rate: integer from 1 to 3600 (default 5)".

    """
    field = AssistantConfig.model_fields[key]
    kind = _kind_of(field.annotation)
    bounds = []
    for meta in field.metadata:
        for attr, word in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            value = getattr(meta, attr, None)
            if value is not None:
                bounds.append(f"{word} {value}")
        if getattr(meta, "max_length", None) is not None:
            bounds.append(f"at most {meta.max_length} characters")
    text = f"{key}: {kind}"
    if bounds:
        text += ", " + ", ".join(bounds)
    return f"{text} (default {field.default!r})"


def _kind_of(annotation: Any) -> str:
    names = {int: "integer", float: "number", bool: "true/false", str: "text"}
    args = getattr(annotation, "__args__", None)
    if getattr(annotation, "__origin__", None) is Literal:
        # commas, not bars: a bar starts an Evennia colour code in-game ("|r" is red)
        return "one of " + ", ".join(str(arg) for arg in args)
    if args:
        parts = [names.get(arg, "none" if arg is type(None) else str(arg)) for arg in args]
        return " or ".join(parts)
    return names.get(annotation, str(annotation))


# pydantic's error types in a builder's words: "{key} must be ... (got {input})"
_PROBLEMS = {
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be more than {gt}",
    "less_than_equal": "must be at most {le}",
    "less_than": "must be less than {lt}",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "int_type": "must be a whole number",
    "float_parsing": "must be a number",
    "float_type": "must be a number",
    "bool_parsing": "must be true or false",
    "bool_type": "must be true or false",
    "literal_error": "must be one of {expected}",
    "string_too_short": "must be at least {min_length} characters",
    "string_too_long": "must be at most {max_length} characters",
    "string_type": "must be text",
}


def _problem(err: dict, key: str) -> str:
    """One pydantic error as "tick_rate must be at least 1 (got 0)"."""
    template = _PROBLEMS.get(err["type"])
    ctx = err.get("ctx") or {}
    if template is None:
        # a validator of our own says what is needed in its message ("Value error, one of ...")
        said = str(err["msg"]).removeprefix("Value error, ")
        return said if said.startswith(key) else f"{key}: {said}"
    if err["type"] == "string_too_short" and ctx.get("min_length") == 1:
        template = "must not be empty"
    got = str(err.get("input"))[:60]
    return f"{key} {template.format(**ctx)} (got {got if got.strip() else repr(got)})"


def _allowed(key: str) -> str:
    """What `key` allows, without its name: "integer, >= 1, <= 3600 (default 5)"."""
    return describe_key(key).split(": ", 1)[1]


def _first_error(exc: ValidationError, source: str) -> ConfigError:
    err = exc.errors()[0]
    key = str(err["loc"][0]) if err["loc"] else "?"
    if err["type"] == "extra_forbidden":
        return ConfigError(
            f"{source}: unknown key '{key}'. Allowed keys: {', '.join(config_keys())}."
        )
    if key not in AssistantConfig.model_fields:
        # a rule across keys (thresholds in order) names its keys in its message
        return ConfigError(f"{source}: {err['msg']}.")
    return ConfigError(f"{source}: {_problem(err, key)}. Allowed: {_allowed(key)}.")


# configs resolved before, by their layers' text: assistants share the game's defaults and
# mostly the same overrides, and each tick asks again (the config is frozen, so it is shared)
_RESOLVED: OrderedDict[str, "AssistantConfig"] = OrderedDict()
_RESOLVED_KEPT = 256
_RESOLVED_LOCK = threading.Lock()


def resolve_config(
    game_defaults: dict | None = None, overrides: dict | None = None
) -> AssistantConfig:
    """Merge the three layers into one validated config.

    Args:
        game_defaults (dict, optional): `settings.AI_ASSISTANT_DEFAULTS`.
        overrides (dict, optional): This assistant's own overrides.

    Returns:
        AssistantConfig: The validated config (the same object for the same layers).

    Raises:
        ConfigError: Naming the layer, the key and what is allowed.

    """
    key = repr((game_defaults, overrides))
    with _RESOLVED_LOCK:
        config = _RESOLVED.get(key)
    if config is not None:
        return config
    config = _resolve(game_defaults, overrides)
    with _RESOLVED_LOCK:
        _RESOLVED[key] = config
        if len(_RESOLVED) > _RESOLVED_KEPT:
            _RESOLVED.popitem(last=False)
    return config


def _resolve(game_defaults: dict | None, overrides: dict | None) -> AssistantConfig:
    merged: dict = {}
    for source, layer in (("AI_ASSISTANT_DEFAULTS", game_defaults), ("override", overrides)):
        if not layer:
            continue
        if not isinstance(layer, dict):
            raise ConfigError(f"{source} must be a dict of key: value, not {type(layer).__name__}.")
        try:
            AssistantConfig(**{**merged, **layer})
        except ValidationError as exc:
            raise _first_error(exc, source) from None
        merged.update(layer)
    return AssistantConfig(**merged)


def parse_override(key: str, raw: str, current: dict | None = None) -> Any:
    """Validate a builder's `key=value` text and return the typed value.

    Args:
        key (str): The configuration key.
        raw (str): The value as typed ("none" clears an optional value).
        current (dict, optional): Existing overrides, validated together with the new one.

    Returns:
        any: The value converted to the key's type.

    Raises:
        ConfigError: If the key is unknown or the value not allowed.

    """
    key = key.strip()
    if key not in AssistantConfig.model_fields:
        raise ConfigError(f"Unknown key '{key}'. Allowed keys: {', '.join(config_keys())}.")
    text = raw.strip()
    value: Any = text
    if text.lower() in ("none", "null"):
        value = None
    try:
        validated = AssistantConfig(**{**(current or {}), key: value})
    except ValidationError as exc:
        err = exc.errors()[0]
        bad_key = str(err["loc"][0]) if err["loc"] else key
        if bad_key not in AssistantConfig.model_fields:
            # a rule across keys (thresholds in order) names its keys in its message
            raise ConfigError(f"{str(err['msg']).removeprefix('Value error, ')}.") from None
        raise ConfigError(f"{_problem(err, bad_key)}. Allowed: {_allowed(bad_key)}.") from None
    return getattr(validated, key)


# the settings most builders change first: `@assistant/set <name>` lists them before the topics
ESSENTIAL_KEYS = (
    "model",
    "temperature",
    "tick_rate",
    "respond_to_ambient",
    "room_speech_audience",
    "sleep_schedule_enabled",
    "gossip_enabled",
    "token_budget_per_day",
)


def config_groups() -> list[tuple[str, list[str]]]:
    """The keys by topic, in the order `AssistantConfig` declares them: its `# --- topic ---`
    comments are the topics (read from its source once), so a key added under one is grouped
    with no other step.

    Returns:
        list: (topic, keys) pairs; keys declared before any topic come under "general".

    """
    global _groups
    if _groups is None:
        import inspect
        import re

        groups: dict[str, list[str]] = {}
        topic = "general"
        for line in inspect.getsource(AssistantConfig).splitlines():
            heading = re.match(r"\s+# --- (.+?) ---\s*$", line)
            if heading:
                # "sleep debt (see ai_assistant.debt)" -> "sleep debt"; "trust: how far ..."
                topic = re.split(r" \(|:", heading.group(1), maxsplit=1)[0].strip()
                continue
            field = re.match(r"    (\w+)\s*:", line)
            if field and field.group(1) in AssistantConfig.model_fields:
                groups.setdefault(topic, []).append(field.group(1))
        _groups = list(groups.items())
    return _groups


_groups: list[tuple[str, list[str]]] | None = None


def close_keys(key: str, extra: tuple[str, ...] = ("persona",)) -> list[str]:
    """The keys a mistyped `key` most likely meant.

    Args:
        key (str): What was typed.
        extra (tuple, optional): Other names that may be set besides the configuration keys.

    Returns:
        list: Up to three keys, closest first (none when nothing is close).

    """
    import difflib

    names = [*config_keys(), *extra]
    typed = (key or "").strip().lower()[:60]
    # a part of a name ("rate") finds the names that hold it, then spelling finds the rest
    holding = [name for name in names if len(typed) >= 3 and typed in name]
    spelled = difflib.get_close_matches(typed, names, n=3, cutoff=0.6)
    return list(dict.fromkeys([*spelled, *holding]))[:3]


def unknown_key_message(key: str) -> str:
    """What to tell a builder who named a key that does not exist.

    Args:
        key (str): What was typed.

    Returns:
        str: The key named, the closest keys if any, and where to see every key.

    """
    close = close_keys(key)
    hint = f" Did you mean {' or '.join(close)}?" if close else ""
    return f"Unknown key '{(key or '').strip()[:60]}'.{hint} @assistant/set <name> lists every key."


def markdown_table() -> str:
    """Every key as a Markdown table (docs/configuration.md is checked against this).

    Returns:
        str: The table: key, default, what is allowed and meaning.

    """
    rows = ["| key | default | allowed | meaning |", "| --- | --- | --- | --- |"]
    for key in config_keys():
        field = AssistantConfig.model_fields[key]
        allowed = describe_key(key).split(": ", 1)[1].rsplit(" (default", 1)[0]
        rows.append(f"| `{key}` | `{field.default!r}` | {allowed} | {field.description} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
