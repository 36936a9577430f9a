"""
AI assistant contrib: NPC assistants with an LLM brain that lives on the game's own clock.

Awake, an assistant hears what happens around it and acts through tools (it speaks, emotes,
whispers, journals what it learns). Asleep, it consolidates what it learned into long-term
memory. See `README.md` and `docs/` in the project for installation and the architecture.

The public API, importable from here:

- `AssistantCharacterMixin`, `AssistantCharacter`: the typeclass side (`ai_assistant.characters`).
- `AssistantHandler`: the one door into an assistant, `character.assistant`
  (`ai_assistant.handler`); `AssistantMemory`: its memory in plain Python, the builder's view
  and corrections held as its `admin` (`ai_assistant.memory_api`).
- `Refused` (also `AssistantError`): what every refused operation raises, its message naming
  what was wrong and what is allowed (`ai_assistant.errors`).
- `AssistantScript`: the ticker script (`ai_assistant.scripts`).
- `AssistantCmdSet`: `@assistant` and the `page` that reaches assistants
  (`ai_assistant.commands`).
- `AssistantConfig`, `ConfigError`: every tunable (`ai_assistant.conf`).
- `forget_person(who, assistants=None, by=...)`: make every assistant (or some) forget a
  person, on a player's request (`ai_assistant.assistants`).

They are imported lazily, on first use: importing `ai_assistant` touches nothing of Evennia, so
settings files and the pure core can import it before Evennia is initialised.

"""

from importlib import import_module

_PUBLIC = {
    "AssistantCharacterMixin": "characters",
    "AssistantCharacter": "characters",
    "AssistantHandler": "handler",
    "AssistantError": "handler",
    "AssistantMemory": "memory_api",
    "Refused": "errors",
    "AssistantScript": "scripts",
    "AssistantCmdSet": "commands",
    "AssistantConfig": "conf",
    "ConfigError": "conf",
    "forget_person": "assistants",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'ai_assistant' has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
