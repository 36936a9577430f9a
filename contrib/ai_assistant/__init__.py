"""
AI assistant contrib: NPC assistants with an LLM brain that lives on the game's own clock.

Awake, an assistant hears what happens around it and acts through tools (speaks, emotes,
whispers, journals what it learns). See `README.md` and `docs/` in the project for installation
and the architecture.

The core modules (configuration, events, tools, memory, context, the model client) do not import
Evennia; `characters.py`, `scripts.py`, `commands.py` and `storage.py` are the Evennia shell.

"""
