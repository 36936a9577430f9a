"""
Tools that act in the world as the assistant: say, emote, whisper, look, and the two that end a
turn, noop and wait. They go through the `World` adapter, which the shell implements with the
assistant character's own hooks (never by running commands).

What reaches players is cleaned first (`ai_assistant.text.for_players`): one line, no control
characters, Evennia markup shown as typed, so the model's words can never forge a system line or
someone else's speech, or clear a player's screen.

"""

from datetime import timedelta

from pydantic import Field

from ..memory.audience import within
from ..text import for_players
from .base import EXTRACTION, TURN, Tool, ToolArgs, ToolContext, ToolError, ToolResult


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " [truncated]"


def _shown(ctx: ToolContext, text: str, what: str) -> str:
    """`text` as players may see it: one line, no control characters, markup shown as typed
    (color only where the game allows it). Raises ToolError when nothing is left."""
    shown = for_players(text, ctx.config.allow_color_markup)
    if not shown:
        raise ToolError(f"the {what} is empty once line breaks and control characters are removed.")
    return shown


def _names(ctx: ToolContext, keys: list[str]) -> str:
    """The names of these people, as the conversation knows them."""
    known = {key: name for key, name in ctx.world.present_people()}
    known.update({speaker.key: speaker.name for speaker in ctx.speakers.values()})
    return ", ".join(known.get(key, key.removeprefix("name:")) for key in keys) or "no one"


def _room_may_know(ctx: ToolContext, what: str) -> None:
    """Refuse to put something before the whole room that not everyone there may know.

    What the model says in a conversation that saw private words is private to their audience
    (`ToolContext.audience`): the room may hear it only when everyone present is in that
    audience. A private exchange is answered privately: its partner must be here to hear it
    said, and a page from elsewhere is answered with `whisper` (a page back).

    Raises:
        ToolError: Naming who is in the way and what to use instead; nothing is sent.

    """
    present = ctx.world.present_people()
    keys = [key for key, _ in present]
    if ctx.reply_to is not None and ctx.reply_to not in keys:
        partner = _names(ctx, [ctx.reply_to])
        raise ToolError(
            f"{partner} is not here: answer them with whisper (it reaches them as a page); "
            f"nothing was {what}."
        )
    audience = ctx.audience
    if within(keys, audience):
        return
    if not audience:
        raise ToolError(
            f"this conversation holds what only builders may see: nothing may be {what} "
            "aloud, or whispered."
        )
    outside = [name for key, name in present if key not in audience]
    if outside:
        shown = ", ".join(outside[:5]) + (
            f" and {len(outside) - 5} more" if len(outside) > 5 else ""
        )
        raise ToolError(
            f"this conversation is private to {_names(ctx, audience)}, and {shown} would "
            f"hear it too: whisper to them instead; nothing was {what}."
        )


class SayArgs(ToolArgs):
    """Arguments of the `say` tool: the text to say aloud."""

    text: str = Field(min_length=1, max_length=1000, description="What to say aloud.")


class SayTool(Tool):
    """Tool that makes the assistant say something aloud to the whole room."""

    name = "say"
    reaches_players = True
    description = "Say something aloud to everyone in the room."
    Args = SayArgs

    def run(self, ctx: ToolContext, args: SayArgs) -> ToolResult:
        """Say the cleaned text in the room and record the action for the turn.

        Args:
            ctx (ToolContext): The conversation's context (world, config, turn control).
            args (SayArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result telling the model the room heard it.

        Raises:
            ToolError: If nothing is left of the text once it is cleaned for players.

        """
        text = _shown(ctx, args.text, "text")
        _room_may_know(ctx, "said")
        ctx.world.say(text)
        ctx.control.actions.append(f'said "{text}"')
        return ToolResult(ok=True, content="You said it; everyone in the room heard.")


class EmoteArgs(ToolArgs):
    """Arguments of the `emote` tool: an action in third person."""

    action: str = Field(
        min_length=1, max_length=500, description="An action in third person, e.g. 'smiles.'"
    )


class EmoteTool(Tool):
    """Tool that shows an action or gesture by the assistant to the room."""

    name = "emote"
    reaches_players = True
    description = "Show an action or gesture to the room, e.g. 'nods slowly.'"
    Args = EmoteArgs

    def run(self, ctx: ToolContext, args: EmoteArgs) -> ToolResult:
        """Show the cleaned action to the room and record it for the turn.

        Args:
            ctx (ToolContext): The conversation's context (world, config, turn control).
            args (EmoteArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result telling the model the room saw it.

        Raises:
            ToolError: If nothing is left of the action once it is cleaned for players.

        """
        action = _shown(ctx, args.action, "action")
        _room_may_know(ctx, "shown")
        ctx.world.emote(action)
        ctx.control.actions.append(f"emoted {action}")
        return ToolResult(ok=True, content="The room saw it.")


def _whisper_target(ctx: ToolContext, target: str) -> tuple[str, str]:
    """The key and name of whom a whisper goes to: the partner of a private exchange when
    named (they may be elsewhere, and someone here may share the start of their name), else
    whoever the world finds by that name."""
    wanted = target.strip().lstrip("@").lower()
    for speaker in ctx.speakers.values():
        if speaker.key == ctx.reply_to and speaker.name.lower() == wanted:
            return speaker.key, speaker.name
    return ctx.world.entity_key(target)


class WhisperArgs(ToolArgs):
    """Arguments of the `whisper` tool: who to whisper to, and what."""

    target: str = Field(
        min_length=1, max_length=80, description="Who, by name: someone here, or who paged you."
    )
    text: str = Field(min_length=1, max_length=1000, description="What to whisper.")


class WhisperTool(Tool):
    """Tool that whispers privately to one person in the same room, or answers a page from
    someone elsewhere with a page back. In a conversation that saw private words it reaches
    only their audience."""

    name = "whisper"
    reaches_players = True
    description = (
        "Whisper privately to one person in the room with you; to answer a page from someone "
        "elsewhere, whisper to them and it reaches them as a page."
    )
    Args = WhisperArgs

    def run(self, ctx: ToolContext, args: WhisperArgs) -> ToolResult:
        """Whisper the cleaned text to the target and record it for the turn.

        Args:
            ctx (ToolContext): The conversation's context (world, config, turn control).
            args (WhisperArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result naming who received the whisper.

        Raises:
            ToolError: If the text is empty once cleaned, or (from the world adapter) the
                target is not here.

        """
        text = _shown(ctx, args.text, "text")
        key, name = _whisper_target(ctx, args.target)
        if ctx.audience == []:
            raise ToolError(
                "this conversation holds what only builders may see: nothing was whispered."
            )
        if ctx.audience is not None and key not in ctx.audience:
            raise ToolError(
                f"this conversation is private to {_names(ctx, ctx.audience)}: you may whisper "
                f"only to them, not to {name}; nothing was whispered."
            )
        here = {person for person, _ in ctx.world.present_people()}
        if key == ctx.reply_to and key not in here:
            # a page from elsewhere is answered the way it came: privately, as a page
            page = getattr(ctx.world, "page", None)
            if page is None:
                raise ToolError(f"{name} is not here, and pages cannot be answered here.")
            who = page(key, text)
            ctx.control.actions.append(f'paged {who}: "{text}"')
            return ToolResult(ok=True, content=f"{who} is elsewhere: you paged them.")
        who = ctx.world.whisper(args.target, text)
        ctx.control.actions.append(f'whispered to {who}: "{text}"')
        return ToolResult(ok=True, content=f"You whispered to {who}.")


class LookArgs(ToolArgs):
    """Arguments of the `look` tool: an optional target; none means the room."""

    target: str | None = Field(
        None, max_length=80, description="Someone or something here; omit for the room."
    )


class LookTool(Tool):
    """Tool that describes the room, or someone or something in it, to the model."""

    name = "look"
    description = "Look at the room, or at someone or something in it."
    Args = LookArgs

    def run(self, ctx: ToolContext, args: LookArgs) -> ToolResult:
        """Look at the target (or the room) through the world adapter.

        Args:
            ctx (ToolContext): The conversation's context (world, config, turn control).
            args (LookArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result with the description, clipped to the configured
                maximum tool output length.

        """
        text = ctx.world.look(args.target)
        ctx.witnessed = True  # what the game shows: a note may now be the assistant's own
        return ToolResult(ok=True, content=_clip(text, ctx.config.max_tool_output_chars))


class NoopArgs(ToolArgs):
    """Arguments of the `noop` tool: an optional reason for doing nothing."""

    reason: str = Field("", max_length=300, description="Why nothing needs doing (optional).")


class NoopTool(Tool):
    """Tool that ends the turn without acting.

    It is also offered when journaling before compaction (to say the journal is done). (Asleep,
    the sleep turn has its own: `stay_asleep`, `tools.sleep`.)

    """

    name = "noop"
    description = "Do nothing more this turn (nothing needs a response, or you are done)."
    Args = NoopArgs
    # also how journaling before compaction says it is done
    scopes = frozenset({TURN, EXTRACTION})

    def run(self, ctx: ToolContext, args: NoopArgs) -> ToolResult:
        """End the turn, with stop reason "noop".

        Args:
            ctx (ToolContext): The conversation's context (world, config, turn control).
            args (NoopArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result that stops the turn.

        """
        ctx.control.stop_reason = "noop"
        return ToolResult(ok=True, content="Done for now.", stop=True)


class WaitArgs(ToolArgs):
    """Arguments of the `wait` tool: how many minutes to wait, and why."""

    minutes: float = Field(gt=0, description="How long to wait before thinking again.")
    reason: str = Field("", max_length=300, description="Why (optional).")


class WaitTool(Tool):
    """Tool that pauses the assistant until a time passes or someone speaks to it directly."""

    name = "wait"
    description = (
        "Pause: make no further decisions until the time passes or someone speaks to you "
        "directly; you are told when the wait is over. Ends this turn."
    )
    Args = WaitArgs

    def run(self, ctx: ToolContext, args: WaitArgs) -> ToolResult:
        """Set the time to wait until, record the reason, and end the turn.

        Args:
            ctx (ToolContext): The conversation's context (world, config, turn control).
            args (WaitArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result that stops the turn and says how long the wait is.

        Raises:
            ToolError: If `minutes` is more than the configured `max_wait_minutes`.

        """
        limit = ctx.config.max_wait_minutes
        if args.minutes > limit:
            raise ToolError(f"minutes must be at most {limit:g}; you asked for {args.minutes:g}.")
        ctx.control.wait_until = ctx.now + timedelta(minutes=args.minutes)
        ctx.control.wait_reason = args.reason
        ctx.control.stop_reason = "wait"
        return ToolResult(
            ok=True,
            content=f"Waiting {args.minutes:g} minute{'' if args.minutes == 1 else 's'} unless "
            "someone speaks to you directly.",
            stop=True,
        )


WORLD_TOOLS = [SayTool(), EmoteTool(), WhisperTool(), LookTool(), NoopTool(), WaitTool()]
