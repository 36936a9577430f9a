"""
The game's Django settings this contrib reads, in one place.

Each is read when it is needed (`getattr(settings, "AI_ASSISTANT_X", default)`), never cached at
import, so a game can change them in its tests or between reloads.

| setting | default | meaning |
| --- | --- | --- |
| `AI_ASSISTANT_BASE_URL` | None (the SDK's `OPENAI_BASE_URL`) | OpenAI-compatible endpoint |
| `AI_ASSISTANT_API_KEY` | None (the SDK's `OPENAI_API_KEY`) | its key |
| `AI_ASSISTANT_MODEL` | None ("gpt-4o-mini") | chat model, unless an assistant sets `model` |
| `AI_ASSISTANT_REHEARSAL` | False | every assistant uses the offline rehearsal model, in process |
| `AI_ASSISTANT_EMBEDDING_MODEL` | None (lexical search only) | embeddings model |
| `AI_ASSISTANT_EMBEDDING_BASE_URL` | None (the chat endpoint) | an embeddings server of its own |
| `AI_ASSISTANT_EMBEDDING_API_KEY` | None (no key sent) | its key |
| `AI_ASSISTANT_DEFAULTS` | {} | per-assistant configuration defaults, game-wide |
| `AI_ASSISTANT_MODEL_CALLS_IN_FLIGHT` | 128 | model calls in flight at once, server-wide |
| `AI_ASSISTANT_MODEL_THREADS` | 4 | threads for model calls of clients without coroutines |
| `AI_ASSISTANT_MODEL_IO_PROCESS` | True | the OpenAI client's calls are made in a child process, off the reactor's interpreter lock (`llm/io_process.py`) |
| `AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE` | 10 | turns one player's lines (any of their account's characters) may start per minute, all assistants together; more wait their turn, in order (0: no limit) |
| `AI_ASSISTANT_PLAYER_TOKENS_PER_HOUR` | 2000000 | tokens that cost (prompt tokens not served from the provider's cache, and completion tokens; none for the rehearsal model) the turns one player (account) starts may spend per real hour, all assistants together; builders are not limited (0: no limit) |
| `AI_ASSISTANT_PLAYER_TOKENS_PER_DAY` | 10000000 | the same per game day (0: no limit) |
| `AI_ASSISTANT_SCENES_PER_HOUR` | 12 | scenes (assistants talking to each other while a player listens: `shell/scenes.py`) that may start per real hour in the whole game (0: none) |
| `AI_ASSISTANT_TYPECLASS` | "ai_assistant.characters.AssistantCharacter" | what `/create` makes |
| `AI_ASSISTANT_FREEZE_STARTUP_OBJECTS` | True | keep start-up objects out of full garbage collections (`heap.py`) |
| `AI_ASSISTANT_TELEMETRY` | True | OpenTelemetry spans and metrics, when `opentelemetry-api` is installed (`telemetry.py`) |
| `AI_ASSISTANT_SCRIPT_TYPECLASS` | "ai_assistant.scripts.AssistantScript" | the assistant's script |
| `AI_ASSISTANT_PRICES` | {} (no money shown) | {model: (input, output)}: money per million prompt and completion tokens, for the dashboard's and `/status`'s cost |
| `AI_ASSISTANT_DASHBOARD_PAGE_SIZE` | 25 | rows per page in the dashboard (read by `web/views.py`) |
| `AI_ASSISTANT_DASHBOARD_GRAPH_NODES` | 60 | the most memories the dashboard's link graph draws (read by `web/views.py`) |

"""

import os
from urllib.parse import urlsplit

from django.conf import settings

from ..driver import DEFAULT_MODEL_THREADS
from .model_queue import DEFAULT_MAX_IN_FLIGHT
from ..text import redact


def base_url() -> str | None:
    """The model endpoint's base URL (`AI_ASSISTANT_BASE_URL`).

    Returns:
        str or None: The URL, or None to use the SDK's `OPENAI_BASE_URL`.

    """
    return getattr(settings, "AI_ASSISTANT_BASE_URL", None)


def api_key() -> str | None:
    """The model endpoint's API key (`AI_ASSISTANT_API_KEY`).

    Returns:
        str or None: The key, or None to use the SDK's `OPENAI_API_KEY`.

    """
    return getattr(settings, "AI_ASSISTANT_API_KEY", None)


def chat_model() -> str | None:
    """The game's chat model (`AI_ASSISTANT_MODEL`).

    Returns:
        str or None: The model name, or None for the built-in default.

    """
    return getattr(settings, "AI_ASSISTANT_MODEL", None)


def rehearsal() -> bool:
    """Whether the game runs on the offline rehearsal model (`AI_ASSISTANT_REHEARSAL`): every
    assistant's model calls are then answered in process by its rules (`assembly.build_brain`),
    whatever endpoint and model the other settings name.

    Returns:
        bool: True in rehearsal mode.

    """
    return bool(getattr(settings, "AI_ASSISTANT_REHEARSAL", False))


def embedding_model() -> str | None:
    """The embeddings model (`AI_ASSISTANT_EMBEDDING_MODEL`).

    Returns:
        str or None: The model name, or None for lexical search only.

    """
    return getattr(settings, "AI_ASSISTANT_EMBEDDING_MODEL", None)


def embedding_base_url() -> str | None:
    """Where embeddings are asked for, when not of the chat endpoint
    (`AI_ASSISTANT_EMBEDDING_BASE_URL`): a local chat server and an embeddings server are
    often two (llama.cpp's server for chat, another for embeddings).

    Returns:
        str or None: The URL, or None to ask the chat endpoint.

    """
    return getattr(settings, "AI_ASSISTANT_EMBEDDING_BASE_URL", None)


def embedding_api_key() -> str | None:
    """The embeddings endpoint's key (`AI_ASSISTANT_EMBEDDING_API_KEY`).

    Returns:
        str or None: The key, or None to use the chat endpoint's.

    """
    return getattr(settings, "AI_ASSISTANT_EMBEDDING_API_KEY", None)


def game_defaults() -> dict | None:
    """The game-wide configuration defaults for every assistant (`AI_ASSISTANT_DEFAULTS`).

    Returns:
        dict or None: Configuration values by key, or None when not set.

    """
    return getattr(settings, "AI_ASSISTANT_DEFAULTS", None)


def model_threads() -> int:
    """How many worker threads make model calls (`AI_ASSISTANT_MODEL_THREADS`).

    Returns:
        int: The thread count.

    """
    return getattr(settings, "AI_ASSISTANT_MODEL_THREADS", DEFAULT_MODEL_THREADS)


def model_calls_in_flight() -> int:
    """How many model calls may be in flight at once, server-wide
    (`AI_ASSISTANT_MODEL_CALLS_IN_FLIGHT`; see `ai_assistant.shell.model_queue`).

    Returns:
        int: The limit, at least 1.

    Raises:
        ValueError: The setting is not a whole number of at least 1.

    """
    value = getattr(settings, "AI_ASSISTANT_MODEL_CALLS_IN_FLIGHT", DEFAULT_MAX_IN_FLIGHT)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            f"AI_ASSISTANT_MODEL_CALLS_IN_FLIGHT must be a whole number of at least 1, "
            f"not {value!r}."
        )
    return value


def model_io_process() -> bool:
    """Whether the OpenAI client's calls are made in a child process of the server
    (`AI_ASSISTANT_MODEL_IO_PROCESS`; see `ai_assistant.llm.io_process`). Read when the model
    call queue starts: a change takes a reload.

    Returns:
        bool: True (the default) for the child process, False to make them in the server.

    Raises:
        ValueError: The setting is not True or False.

    """
    value = getattr(settings, "AI_ASSISTANT_MODEL_IO_PROCESS", True)
    if not isinstance(value, bool):
        raise ValueError(f"AI_ASSISTANT_MODEL_IO_PROCESS must be True or False, not {value!r}.")
    return value


def player_turns_per_minute() -> int:
    """How many turns one player's lines may start a minute, across all assistants and all
    the characters of their account.

    Read from `AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE`.

    Returns:
        int: The limit; 0 means no limit.

    Raises:
        ValueError: The setting is not a whole number of 0 or more.

    """
    return _limit("AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE", 10, "turns")


# an hour of talk at the turns a minute allows, with a real model's prompts and the
# provider's prompt cache, stays well within them (docs/operations.md shows the arithmetic)
DEFAULT_PLAYER_TOKENS_PER_HOUR = 2_000_000
DEFAULT_PLAYER_TOKENS_PER_DAY = 10_000_000


def _limit(name: str, default: int, what: str) -> int:
    """A limit on players: a whole number of `what`, 0 or more (0: no limit)."""
    value = getattr(settings, name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            f"{name} must be a whole number of {what}, 0 or more (0: no limit), not {value!r}."
        )
    return value


def _token_count(name: str, default: int) -> int:
    return _limit(name, default, "tokens")


def player_tokens_per_hour() -> int:
    """How many tokens that cost (`budget.billed_tokens`) the turns one player's lines start may
    spend per real hour, across all assistants (`AI_ASSISTANT_PLAYER_TOKENS_PER_HOUR`; see
    `ai_assistant.budget`).

    Returns:
        int: The budget; 0 means no limit.

    Raises:
        ValueError: The setting is not a whole number of 0 or more.

    """
    return _token_count("AI_ASSISTANT_PLAYER_TOKENS_PER_HOUR", DEFAULT_PLAYER_TOKENS_PER_HOUR)


def player_tokens_per_day() -> int:
    """How many tokens the turns one player's lines start may spend per game day, across all
    assistants (`AI_ASSISTANT_PLAYER_TOKENS_PER_DAY`; see `ai_assistant.budget`).

    Returns:
        int: The budget; 0 means no limit.

    Raises:
        ValueError: The setting is not a whole number of 0 or more.

    """
    return _token_count("AI_ASSISTANT_PLAYER_TOKENS_PER_DAY", DEFAULT_PLAYER_TOKENS_PER_DAY)


# a quiet hour in a busy game: a scene every few minutes somewhere, never a din
DEFAULT_SCENES_PER_HOUR = 12


def scenes_per_hour() -> int:
    """How many scenes (assistants who talk to each other while a player listens) may start
    per real hour in the whole game (`AI_ASSISTANT_SCENES_PER_HOUR`; see
    `ai_assistant.shell.scenes`). Each assistant's own caps come on top of it.

    Returns:
        int: The cap; 0 means no scene starts anywhere.

    Raises:
        ValueError: The setting is not a whole number of 0 or more.

    """
    value = getattr(settings, "AI_ASSISTANT_SCENES_PER_HOUR", DEFAULT_SCENES_PER_HOUR)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            "AI_ASSISTANT_SCENES_PER_HOUR must be a whole number of scenes, 0 or more "
            f"(0: none), not {value!r}."
        )
    return value


def freeze_startup_objects() -> bool:
    """Whether to keep the process's start-up objects out of full garbage collections
    (`AI_ASSISTANT_FREEZE_STARTUP_OBJECTS`; see `ai_assistant.shell.heap`).

    Returns:
        bool: True to freeze them once, when the first assistant script starts.

    """
    return bool(getattr(settings, "AI_ASSISTANT_FREEZE_STARTUP_OBJECTS", True))


def assistant_typeclass() -> str:
    """The typeclass `@assistant/create` makes (`AI_ASSISTANT_TYPECLASS`).

    Returns:
        str: The typeclass path.

    """
    return getattr(settings, "AI_ASSISTANT_TYPECLASS", "ai_assistant.characters.AssistantCharacter")


def script_typeclass() -> str:
    """The typeclass of each assistant's script (`AI_ASSISTANT_SCRIPT_TYPECLASS`).

    Returns:
        str: The typeclass path.

    """
    return getattr(
        settings, "AI_ASSISTANT_SCRIPT_TYPECLASS", "ai_assistant.scripts.AssistantScript"
    )


def prices() -> dict:
    """The price table (`AI_ASSISTANT_PRICES`): model name -> (money per million prompt
    tokens, money per million completion tokens), in whatever currency the game counts.

    Returns:
        dict: The table; entries that are not two numbers of at least 0 are left out.

    """
    table = getattr(settings, "AI_ASSISTANT_PRICES", None) or {}
    kept = {}
    for model, price in table.items() if isinstance(table, dict) else ():
        try:
            pair = (float(price[0]), float(price[1]))
        except (TypeError, ValueError, IndexError, KeyError):
            continue
        if pair[0] >= 0 and pair[1] >= 0:
            kept[str(model)] = pair
    return kept


def price_of(model: str) -> tuple[float, float] | None:
    """What a model's tokens cost, per million (`AI_ASSISTANT_PRICES`).

    Args:
        model (str): The chat model's name.

    Returns:
        tuple or None: (prompt, completion) per million tokens; None when not priced.

    """
    return prices().get(model)


def telemetry() -> bool:
    """Whether to report OpenTelemetry spans and metrics (`AI_ASSISTANT_TELEMETRY`), when the
    `opentelemetry-api` package is installed; without it there is nothing to report.

    Returns:
        bool: True unless the game turned it off.

    """
    return bool(getattr(settings, "AI_ASSISTANT_TELEMETRY", True))


def time_factor() -> float:
    """How many game seconds pass per real second (Evennia's `TIME_FACTOR`).

    Returns:
        float: The time factor (1.0 when not set).

    """
    return float(getattr(settings, "TIME_FACTOR", 1.0))


def secrets() -> list[str]:
    """Values that must never be logged, stored or shown: the API keys in use.

    Returns:
        list: The keys that are set (`AI_ASSISTANT_API_KEY`, `AI_ASSISTANT_EMBEDDING_API_KEY`
            and `OPENAI_API_KEY`), and the credentials written into an endpoint's address.

    """
    keys = [api_key(), embedding_api_key(), os.environ.get("OPENAI_API_KEY")]
    # credentials written into an endpoint's address (https://user:password@proxy/v1)
    for url in (base_url(), embedding_base_url(), os.environ.get("OPENAI_BASE_URL")):
        userinfo = urlsplit(str(url or "")).netloc.rpartition("@")[0]
        if userinfo:
            keys += [userinfo, userinfo.partition(":")[2]]
    return [key for key in keys if key]


def redacted(text) -> str:
    """Hide secrets in a text before it is shown or logged.

    Args:
        text (object): What to clean; it is turned into a string first.

    Returns:
        str: `text` without the API keys in use or anything shaped like a key.

    """
    return redact(str(text), secrets())
