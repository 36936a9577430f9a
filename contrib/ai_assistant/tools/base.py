"""
The tool framework: a tool is a pydantic argument model, a description, the scopes it may be
offered in, and a `run` method. The registry turns tools into OpenAI tool schemas and dispatches the
model's tool calls, turning every kind of malformed call (unknown tool, tool not allowed now,
invalid JSON, wrong argument types) into an error result the model can read and correct.

Tools act only through the `ToolContext` they are given, which carries the assistant's own means
(its world adapter and its memory); they never run game commands.

"""

import copy
import traceback
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from ..llm.chat import ToolCall
from ..llm.schemas import bounds_in_words
from ..llm.model_json import (
    JSON_TOO_LARGE,
    MAX_TOOL_ARGUMENT_CHARS,
    ModelJSONError,
    decode_model_json,
)
from ..events import Speaker
from ..memory.audience import narrowest

# scopes: the conversations with the model a tool may be offered in (not operating modes)
TURN = "turn"  # an awake turn, answering what the assistant heard
EXTRACTION = "extraction"  # journaling what must survive before the history is compacted
# asleep, asked whether something heard needs it awake: `wake_up` or `stay_asleep`, nothing else
SLEEP_TURN = "sleep_turn"

# kinds of malformed calls, counted in the usage stats
UNKNOWN_TOOL = "unknown_tool"
NOT_ALLOWED = "tool_not_allowed"
INVALID_JSON = "invalid_json"  # also arguments that are JSON but not an object
INVALID_ARGUMENTS = "invalid_arguments"
TOOL_EXCEPTION = "tool_exception"
# and `llm.model_json.JSON_TOO_LARGE`, `JSON_TOO_DEEP`: arguments over the size or depth limit

# what the model is told to do instead, by what was wrong with its arguments
_ARGUMENTS_ADVICE = {
    INVALID_JSON: "Send a JSON object.",
    JSON_TOO_LARGE: "Send shorter arguments.",
}


def decode_tool_arguments(call: ToolCall) -> dict:
    """The arguments of a tool call, decoded from the JSON the model wrote.

    Decoded with `decode_model_json`: at most `MAX_TOOL_ARGUMENT_CHARS` characters, nested at
    most `MAX_JSON_DEPTH` levels, so no model's arguments can raise anything but the error
    below. Empty arguments are an empty object.

    Args:
        call (ToolCall): The call as the model wrote it.

    Returns:
        dict: The arguments.

    Raises:
        ModelJSONError: Arguments the client refused as too long (`arguments_refused`), too
            large, nested too deep, not JSON, or JSON that is not an object (`INVALID_JSON`).

    """
    what = f"arguments for '{call.name}'"
    if call.arguments_refused:
        raise ModelJSONError(JSON_TOO_LARGE, call.arguments_refused)
    if not call.arguments.strip():
        return {}
    raw = decode_model_json(call.arguments, what, max_chars=MAX_TOOL_ARGUMENT_CHARS)
    if not isinstance(raw, dict):
        raise ModelJSONError(
            INVALID_JSON, f"{what} must be a JSON object, not {type(raw).__name__}"
        )
    return raw


class ToolError(Exception):
    """Raised by a tool for a failure the model should hear about (e.g. no such person here)."""


class ToolArgs(BaseModel):
    """Base for argument models: unknown arguments are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class ToolResult:
    """What a tool call did, for the model (`content`) and for the log.

    A tool that needs blocking work (an HTTP call, such as embedding a query) returns it as
    `pending` with a `resume(value)` that finishes the call; the ReAct loop runs the work off
    the reactor thread and then calls `resume` with its result (or with the exception).

    """

    ok: bool
    content: str
    stop: bool = False
    malformed: str | None = None
    detail: str | None = None  # a traceback for the log, never sent to the model
    pending: Callable[[], Any] | None = None
    resume: Callable[[Any], "ToolResult"] | None = None

    @classmethod
    def error(cls, content: str, malformed: str | None = None, detail: str | None = None):
        """Build a failed result whose content starts with "Error: ".

        Args:
            content (str): What went wrong, for the model.
            malformed (str, optional): The kind of malformed call (e.g. `UNKNOWN_TOOL`), counted
                in the usage stats.
            detail (str, optional): A traceback for the log; never sent to the model.

        Returns:
            ToolResult: A result with `ok=False`.

        """
        return cls(ok=False, content=f"Error: {content}", malformed=malformed, detail=detail)


class World(Protocol):
    """What tools may do in the game world, as the assistant itself."""

    def say(self, text: str) -> None:
        """Say `text` aloud to everyone in the room.

        Args:
            text (str): The words, already cleaned for players.

        """
        ...

    def emote(self, action: str) -> None:
        """Show an action by the assistant to the room.

        Args:
            action (str): The action in third person, already cleaned for players.

        """
        ...

    def whisper(self, target: str, text: str) -> str:
        """Whisper `text` privately to someone in the room.

        Args:
            target (str): The name of the person to whisper to.
            text (str): The words, already cleaned for players.

        Returns:
            str: The name of the person who received the whisper.

        Raises:
            ToolError: If no one by that name is here, or the name is ambiguous.

        """
        ...

    def look(self, target: str | None) -> str:
        """Describe the room, or someone or something in it.

        Args:
            target (str or None): What to look at; None for the room.

        Returns:
            str: The description as the assistant sees it, as plain text.

        Raises:
            ToolError: If there is nothing by that name here.

        """
        ...

    def present(self) -> list[str]:
        """List who and what else is in the room with the assistant.

        Returns:
            list[str]: The names of the others present.

        """
        ...

    def present_people(self) -> list[tuple[str, str]]:
        """List the people in the room with the assistant.

        Returns:
            list[tuple[str, str]]: A `(key, name)` pair per person, the key being their
                dbref (e.g. "#12").

        """
        ...

    def page(self, key: str, text: str) -> str:
        """Answer someone privately who is not in the room (a page back).

        Args:
            key (str): The person's key (their dbref, e.g. "#12").
            text (str): The words, already cleaned for players.

        Returns:
            str: The name of the person paged.

        Raises:
            ToolError: If they cannot be reached.

        """
        ...

    def account_of(self, key: str) -> str | None:
        """Who plays a character: their account, so one player speaking through two
        characters counts as one voice (`memory.provenance`). Optional: a world without it
        counts each character as its own voice.

        Args:
            key (str): The character's key ("#12").

        Returns:
            str or None: The account's key, or None when it is not known.

        """
        ...

    def find_room(self, name: str) -> tuple[str, str]:
        """A room the assistant can walk to now through exits it may pass (`agree_to_meet`).
        Optional: a world without it keeps no plan agreed in conversation.

        Args:
            name (str): The room's name.

        Returns:
            tuple[str, str]: Its `(key, name)`.

        Raises:
            ToolError: No room it can reach has that name.

        """
        ...

    def assistant_here(self, name: str) -> tuple[str, str]:
        """Another assistant in the room, awake, to tell something (`tell`, gossip).
        Optional: a world without it (and `tell`, `own_key`) has no gossip.

        Args:
            name (str): Its name.

        Returns:
            tuple[str, str]: Its `(key, name)`.

        Raises:
            ToolError: No assistant by that name is here, or it is asleep.

        """
        ...

    def tell(self, key: str, text: str, told: dict) -> list[str]:
        """Say `text` aloud to the assistant `key` (the room's players hear it), and hand the
        telling (`memory.gossip.telling`) to every assistant here, which records it in code.

        Args:
            key (str): The key of the assistant told.
            text (str): The words, already cleaned for players.
            told (dict): The telling.

        Returns:
            list[str]: The names of the assistants that recorded it.

        """
        ...

    def entity_key(self, name: str) -> tuple[str, str]:
        """Find the key and name of a person, for their memory profile.

        Whoever is here by that name comes first; else the one character in the game with that
        exact name; else the name alone.

        Args:
            name (str): The name as the model wrote it.

        Returns:
            tuple[str, str]: The person's `(key, name)`.

        """
        ...


@dataclass
class TurnControl:
    """What tools may change about the turn and the assistant's awake state."""

    wait_until: datetime | None = None
    wait_reason: str = ""
    stop_reason: str | None = None
    journal_written: int = 0
    observations_written: int = 0
    actions: list[str] = field(default_factory=list)


@dataclass
class ToolContext:
    """Everything a tool may use in one conversation. Built by the brain for each.

    Attributes:
        speakers (dict): Lower-case name -> `Speaker`, for everyone who said something.
        said (dict): Lower-case name -> what they said in this conversation (`events.said_by`):
            a note written without naming its source is compared with it (`tools.memory`).
        witnessed (bool): The conversation showed the model something the game produced (an
            arrival, a departure, a notice, what `look` returned), not only text players typed:
            only then may a note that names no source be the assistant's own observation.
        served (frozenset or None): Who the conversation serves (`memory.audience`).
        audience (list or None): The audience of what is written and said in this
            conversation: the narrowest audience of everything it has shown the model (None:
            public). Every request narrows it (`Brain.compose`), and so does a tool that shows
            the model something private (recall, listing core notes).
        reply_to (str or None): In a private exchange (a whisper or a page), the key of the
            person it answers; None in the room.
        owners (dict): Whom what the model sets here (a reminder, a core note) is for (key ->
            name): it counts against their share. Never a builder or another assistant.
        turn (str or None): This conversation's key, kept with its messages in the history.
        recall (callable): `recall(query, people, semantic, limit)` -> list of `Recalled`.
        semantic (callable): `semantic(query)` -> blocking work or None (embeddings off).
        reranker (object or None): What orders a recall's candidates again by a reranking
            model (the brain: `recall_pool(limit)`, `rerank(query, pool)` -> blocking work or
            None, `reranked(pool, scores, limit)`); None: recall's first pass alone.
        remembered (callable): `remembered(memory_id)` -> one memory by id, with its
            audience, trust and provenance (`Brain.remembered`), or None.
        gossip_log (GossipLog or None): Who told whom what (`memory.gossip`).
        groups (object or None): The assistant's groups (`Brain.groups`: `sharing()`,
            `size(group)`); None: in none.
        group_shares (GroupShares or None): What it shared with them (`memory.groups`).

    """

    assistant_name: str
    world: World
    journal: Any
    entities: Any
    config: Any
    now: datetime
    location: str | None
    speakers: dict[str, Speaker]
    control: TurnControl = field(default_factory=TurnControl)
    said: dict[str, str] = field(default_factory=dict)
    witnessed: bool = False
    lifecycle: Any = None  # ai_assistant.lifecycle.Lifecycle
    core_memory: Any = None  # ai_assistant.memory.core.CoreMemory
    reminders: Any = None  # ai_assistant.memory.reminders.Reminders
    served: frozenset | None = None
    audience: list[str] | None = None
    reply_to: str | None = None
    owners: dict[str, str] = field(default_factory=dict)
    turn: str | None = None
    recall: Callable[..., list] | None = None
    semantic: Callable[[str], Any] | None = None
    reranker: Any = None
    remembered: Callable[[str], dict | None] | None = None
    gossip_log: Any = None  # ai_assistant.memory.gossip.GossipLog
    groups: Any = None  # Brain.groups
    group_shares: Any = None  # ai_assistant.memory.groups.GroupShares

    @property
    def instructed(self) -> bool:
        """Whether a builder's instruction is among what this conversation answers: the
        builder's standing (a long or deep sleep, a critical bookmark) is then the turn's."""
        return any(s.instruction for s in self.speakers.values())

    def narrow(self, audiences) -> None:
        """Narrow the conversation's audience to include these audiences too.

        What is written from now on draws on memories with these audiences, so its audience
        becomes the narrowest of the current one and all of them.

        Args:
            audiences (iterable): Audiences (lists of names, or None for public) of memories
                the model has just been shown.

        """
        self.audience = narrowest([self.audience, *audiences])


class Tool(ABC):
    """Base class for tools. Subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[ToolArgs]] = ToolArgs
    scopes: ClassVar[frozenset[str]] = frozenset({TURN})
    # it puts something in front of players (speech, an emote): once it has run, the rest of
    # the turn is its closing work, which waits behind other assistants' answers
    reaches_players: ClassVar[bool] = False
    # it writes the assistant's memory (the journal, a profile, core notes): a turn's writes
    # add to its sleep debt (`debt.turn_debt`)
    writes_memory: ClassVar[bool] = False
    # the name of a true/false setting that must be on for the tool to be offered (`tell`:
    # `gossip_enabled`); None: always offered in its scopes
    setting: ClassVar[str | None] = None

    @abstractmethod
    def run(self, ctx: ToolContext, args: Any) -> ToolResult:
        """Act and describe the outcome for the model.

        Args:
            ctx (ToolContext): What the tool may use in this conversation.
            args (ToolArgs): The validated arguments, an instance of the tool's `Args` model.

        Returns:
            ToolResult: What the tool did, for the model and the log.

        Raises:
            ToolError: For a failure the model should hear about; the registry turns it into
                an error result.

        """

    @classmethod
    def schema(cls) -> dict:
        """The function schema sent to the model, built once per tool class (pydantic's
        schema generation is slow, and every assistant's registry asks for it).

        Returns:
            dict: An OpenAI-style function tool schema (name, description, parameters without
                titles); a fresh copy each call, so callers may change it.

        """
        cached = cls.__dict__.get("_schema_cache")
        if cached is None or cached[0] is not cls.Args:
            schema = {
                "type": "function",
                "function": {
                    "name": cls.name,
                    "description": cls.description,
                    # bounds in words: a grammar-constrained server cannot take them
                    "parameters": bounds_in_words(_without_titles(cls.Args.model_json_schema())),
                },
            }
            cached = (cls.Args, schema)
            cls._schema_cache = cached
        return copy.deepcopy(cached[1])


def _without_titles(schema: Any) -> Any:
    # titles repeat the property names: tokens in every request for nothing
    if isinstance(schema, dict):
        return {key: _without_titles(val) for key, val in schema.items() if key != "title"}
    if isinstance(schema, list):
        return [_without_titles(item) for item in schema]
    return schema


# tool schema lists by the tool classes offered, shared by every registry (see `schemas`)
_SHARED_SCHEMAS: dict[tuple, tuple[tuple, list[dict]]] = {}


class ToolRegistry:
    """The tools an assistant has, and the dispatcher for the model's calls."""

    def __init__(self, tools: list[Tool]):
        self._tools = {tool.name: tool for tool in tools}
        self._schemas: dict[str, list[dict]] = {}
        # errors no tool may turn into an error result: the shell sets the database's, since
        # a refused statement leaves the step's transaction unusable (or marked to roll back)
        # and the turn must fail visibly instead of going on over writes that will not stand
        self.propagate: tuple[type[BaseException], ...] = ()

    def names(self, scope: str | None = None) -> list[str]:
        """The names of the tools offered in `scope` (all tools when None).

        Args:
            scope (str or None): A scope such as `TURN` or `EXTRACTION`, or None.

        Returns:
            list[str]: The tool names, in the order the tools were registered.

        """
        return [name for name, tool in self._tools.items() if scope is None or scope in tool.scopes]

    def reaches_players(self, name: str) -> bool:
        """Whether the tool called `name` puts something in front of players.

        Args:
            name (str): A tool name (an unknown one reaches no one).

        Returns:
            bool: The tool's `reaches_players`.

        """
        tool = self._tools.get(name)
        return bool(tool and tool.reaches_players)

    def writes_memory(self, name: str) -> bool:
        """Whether the tool called `name` writes the assistant's memory.

        Args:
            name (str): A tool name (an unknown one writes nothing).

        Returns:
            bool: The tool's `writes_memory`.

        """
        tool = self._tools.get(name)
        return bool(tool and tool.writes_memory)

    def schemas(self, scope: str, config: Any = None) -> list[dict]:
        """Tool schemas offered in `scope`, in a stable order (prompt caching).

        The list is built once per scope and set of tool classes, and shared by every
        registry that offers the same tools.

        Args:
            scope (str): A scope such as `TURN` or `EXTRACTION`.
            config (AssistantConfig, optional): Leaves out the tools whose `setting` is off
                in it; None offers them all.

        Returns:
            list[dict]: The function schemas of the tools in `scope`, sorted by name.

        """
        names = [
            name
            for name in self.names(scope)
            if config is None
            or self._tools[name].setting is None
            or getattr(config, self._tools[name].setting, False)
        ]
        scope_key = scope if len(names) == len(self.names(scope)) else (scope, tuple(names))
        if scope_key not in self._schemas:
            tools = tuple(type(self._tools[name]) for name in sorted(names))
            # every assistant with the same tools shares one list (nobody changes it), built
            # again only if a tool's arguments model was replaced since
            arguments = tuple(tool.Args for tool in tools)
            shared = _SHARED_SCHEMAS.get(tools)
            if shared is None or shared[0] != arguments:
                shared = _SHARED_SCHEMAS[tools] = (arguments, [tool.schema() for tool in tools])
            self._schemas[scope_key] = shared[1]
        return self._schemas[scope_key]

    def dispatch(self, ctx: ToolContext, call: ToolCall, scope: str) -> ToolResult:
        """Validate and run one tool call made in `scope`; every failure becomes an error result
        (but the kinds of error in `propagate`, which are raised).

        Args:
            ctx (ToolContext): What the tools may use in this conversation.
            call (ToolCall): The call as the model wrote it.
            scope (str): The scope of the conversation (`TURN`, `EXTRACTION`).

        Returns:
            ToolResult: The tool's result, or an error the model can read and correct.

        """
        tool = self._tools.get(call.name)
        allowed = ", ".join(sorted(self.names(scope)))
        if tool is None:
            return ToolResult.error(
                f"unknown tool '{call.name[:60]}'. Available tools: {allowed}.", UNKNOWN_TOOL
            )
        if scope not in tool.scopes:
            return ToolResult.error(
                f"tool '{call.name}' is not available now. Available tools: {allowed}.",
                NOT_ALLOWED,
            )
        try:
            raw = decode_tool_arguments(call)
        except ModelJSONError as exc:
            advice = _ARGUMENTS_ADVICE.get(exc.kind, "Send a flat JSON object.")
            return ToolResult.error(f"{exc}. {advice}", exc.kind)
        try:
            args = tool.Args.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in exc.errors()[:5]
            )
            return ToolResult.error(
                f"invalid arguments for '{call.name}': {problems}.", INVALID_ARGUMENTS
            )
        try:
            return tool.run(ctx, args)
        except ToolError as exc:
            return ToolResult.error(str(exc))
        except self.propagate:
            raise
        except Exception:
            return ToolResult.error(
                f"'{call.name}' failed unexpectedly; try something else.",
                TOOL_EXCEPTION,
                detail=traceback.format_exc(),
            )
