"""
How an assistant's brain is put together from the game: the model endpoint and its client, the
stores over the character's and the script's Attributes, the long-term store, the tools and the
world, and the game clock.

`AssistantHandler.brain` builds one with `build_brain` when none is kept or a setting it was
built from changed (`BrainKey`). The parts a game customises stay on the handler, whose
methods are called here (`make_world`, `make_registry`, `make_long_term_store`,
`system_prompt_template`), so a game's subclass of the handler is what is used. This module is
given the handler as an object and never imports it.

"""

from datetime import datetime, timezone
from functools import partial
from typing import NamedTuple

from django.db import DatabaseError

from . import game_settings
from ..agent.brain import Brain
from ..conf import AssistantConfig
from ..llm.chat import EndpointSettings
from ..llm.client import client_for
from ..memory.snapshots import RecordingStore, Snapshots
from ..offline.rehearsal import REHEARSAL_MODEL, rehearsal_client
from .storage import MEMORY_CATEGORY, AttributeStore


class EvenniaGameClock:
    """The game's own clock (`evennia.utils.gametime`), for the sleep schedule's hours."""

    @property
    def time_factor(self) -> float:
        """How many game seconds pass per real second.

        Returns:
            float: The game's time factor from its settings.

        """
        return game_settings.time_factor()

    def now(self) -> datetime:
        """The current game time.

        Returns:
            datetime: The game's absolute time, in UTC.

        """
        # imported here: the module reads the database when it is imported
        from evennia.utils import gametime

        return datetime.fromtimestamp(gametime.gametime(absolute=True), tz=timezone.utc)


def chat_model_for(config: AssistantConfig) -> str:
    """The chat model an assistant's calls name, the game's settings read now.

    Args:
        config (AssistantConfig): The configuration in force (its own `model`, if any).

    Returns:
        str: The offline rehearsal model's name when the game sets `AI_ASSISTANT_REHEARSAL`
            (every assistant then uses it, whatever it names), else its model or the game's.

    """
    if game_settings.rehearsal():
        return REHEARSAL_MODEL
    return config.effective_model(game_settings.chat_model())


def endpoint_for(config: AssistantConfig) -> EndpointSettings:
    """Where an assistant's model calls go, and how.

    Args:
        config (AssistantConfig): The configuration in force (timeout, retries).

    Returns:
        EndpointSettings: The game's endpoint and key with the config's timeout and retries.

    """
    return EndpointSettings(
        base_url=game_settings.base_url(),
        api_key=game_settings.api_key(),
        timeout=config.request_timeout,
        max_retries=config.max_retries,
    )


def embedding_endpoint_for(config: AssistantConfig) -> EndpointSettings | None:
    """Where an assistant's embeddings go when they have an endpoint of their own.

    Args:
        config (AssistantConfig): The configuration in force (timeout, retries).

    Returns:
        EndpointSettings or None: `AI_ASSISTANT_EMBEDDING_BASE_URL` with its own key (none
            set: a placeholder, never the chat endpoint's key, which is not that server's to
            see); None when embeddings go to the chat endpoint.

    """
    url = game_settings.embedding_base_url()
    if not url:
        return None
    return EndpointSettings(
        base_url=url,
        api_key=game_settings.embedding_api_key() or "not-needed",
        timeout=config.request_timeout,
        max_retries=config.max_retries,
    )


class BrainKey(NamedTuple):
    """What a brain is built from: when any of it changes, the handler builds another."""

    config: AssistantConfig
    model: str
    persona: str
    embedding_model: str | None
    endpoint: EndpointSettings
    embedding_endpoint: EndpointSettings | None = None
    # AI_ASSISTANT_REHEARSAL: the offline rehearsal model answers in process, not the endpoint
    rehearsal: bool = False


def brain_key(config: AssistantConfig, persona: str) -> BrainKey:
    """What a brain would be built from now, the game's settings read afresh.

    Args:
        config (AssistantConfig): The configuration in force.
        persona (str): The character's persona.

    Returns:
        BrainKey: The configuration, chat model, persona, embeddings model and endpoint.

    """
    rehearsal = game_settings.rehearsal()
    return BrainKey(
        config=config,
        model=chat_model_for(config),
        persona=persona,
        embedding_model=config.embedding_model or game_settings.embedding_model(),
        endpoint=endpoint_for(config),
        embedding_endpoint=None if rehearsal else embedding_endpoint_for(config),
        rehearsal=rehearsal,
    )


def build_brain(handler, key: BrainKey) -> Brain:
    """Build an assistant's brain over its character's and script's Attributes.

    Args:
        handler (AssistantHandler): The character's handler: its character (`obj`), `script`,
            `forget_brain` (after a rollback), the parts games override, `_on_transition`,
            `game_clock`, `lore` and `groups`.
        key (BrainKey): What to build it from.

    Returns:
        Brain: The brain, its location not yet set.

    """
    character = handler.obj
    state = AttributeStore(handler.script, on_rollback=handler.forget_brain)
    # wrapped here, so a game's own long-term store writes through it too
    memory_store = RecordingStore(
        AttributeStore(character, MEMORY_CATEGORY, handler.forget_brain), Snapshots(state)
    )
    registry = handler.make_registry()
    # a database error is never a tool's result: the step fails, what it heard stays queued
    registry.propagate = (DatabaseError,)
    return Brain(
        name=character.key,
        aliases=list(character.aliases.all()),
        persona=key.persona,
        prompt_template=handler.system_prompt_template(),
        config=key.config,
        model=key.model,
        state=state,
        memory_store=memory_store,
        world=handler.make_world(),
        registry=registry,
        client_factory=rehearsal_client if key.rehearsal else partial(client_for, key.endpoint),
        embedding_client_factory=(
            partial(client_for, key.embedding_endpoint) if key.embedding_endpoint else None
        ),
        embedding_model=key.embedding_model,
        on_transition=handler._on_transition,
        long_term=handler.make_long_term_store(memory_store),
        time_factor=game_settings.time_factor(),
        # read when asked: a test or a demo may set the handler's game clock later
        game_now=lambda now: (handler.game_clock or EvenniaGameClock()).now(),
        # the game's lore it may know, where it stands when it recalls (`lore_book`)
        lore=handler.lore.recall,
        # its groups and what fellow members shared (`groups`)
        groups=handler.groups,
    )
