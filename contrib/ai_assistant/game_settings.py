"""
The game's Django settings this contrib reads, in one place.

Each is read when it is needed (`getattr(settings, "AI_ASSISTANT_X", default)`), never cached at
import, so a game can change them in its tests or between reloads.

| setting | default | meaning |
| --- | --- | --- |
| `AI_ASSISTANT_BASE_URL` | None (the SDK's `OPENAI_BASE_URL`) | OpenAI-compatible endpoint |
| `AI_ASSISTANT_API_KEY` | None (the SDK's `OPENAI_API_KEY`) | its key |
| `AI_ASSISTANT_MODEL` | None ("gpt-4o-mini") | chat model, unless an assistant sets `model` |
| `AI_ASSISTANT_EMBEDDING_MODEL` | None (lexical search only) | embeddings model |
| `AI_ASSISTANT_DEFAULTS` | {} | per-assistant configuration defaults, game-wide |
| `AI_ASSISTANT_MODEL_THREADS` | 4 | worker threads for model calls |
| `AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE` | 10 | turns one player's lines may start per minute, all assistants together (0: no limit) |
| `AI_ASSISTANT_TYPECLASS` | "ai_assistant.characters.AssistantCharacter" | what `/create` makes |
| `AI_ASSISTANT_SCRIPT_TYPECLASS` | "ai_assistant.scripts.AssistantScript" | the assistant's script |

"""

import os

from django.conf import settings

from .driver import DEFAULT_MODEL_THREADS


def base_url() -> str | None:
    return getattr(settings, "AI_ASSISTANT_BASE_URL", None)


def api_key() -> str | None:
    return getattr(settings, "AI_ASSISTANT_API_KEY", None)


def chat_model() -> str | None:
    return getattr(settings, "AI_ASSISTANT_MODEL", None)


def embedding_model() -> str | None:
    return getattr(settings, "AI_ASSISTANT_EMBEDDING_MODEL", None)


def game_defaults() -> dict | None:
    return getattr(settings, "AI_ASSISTANT_DEFAULTS", None)


def model_threads() -> int:
    return getattr(settings, "AI_ASSISTANT_MODEL_THREADS", DEFAULT_MODEL_THREADS)


def player_turns_per_minute() -> int:
    return int(getattr(settings, "AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE", 10))


def assistant_typeclass() -> str:
    return getattr(settings, "AI_ASSISTANT_TYPECLASS", "ai_assistant.characters.AssistantCharacter")


def script_typeclass() -> str:
    return getattr(
        settings, "AI_ASSISTANT_SCRIPT_TYPECLASS", "ai_assistant.scripts.AssistantScript"
    )


def time_factor() -> float:
    return float(getattr(settings, "TIME_FACTOR", 1.0))


def secrets() -> list[str]:
    """Values that must never be logged, stored or shown: the API keys in use."""
    return [key for key in (api_key(), os.environ.get("OPENAI_API_KEY")) if key]
