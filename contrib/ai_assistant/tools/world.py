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
        ctx.world.emote(action)
        ctx.control.actions.append(f"emoted {action}")
        return ToolResult(ok=True, content="The room saw it.")


class WhisperArgs(ToolArgs):
    """Arguments of the `whisper` tool: who to whisper to, and what."""

    target: str = Field(min_length=1, max_length=80, description="Who, by name; must be here.")
    text: str = Field(min_length=1, max_length=1000, description="What to whisper.")


class WhisperTool(Tool):
    """Tool that whispers privately to one person in the same room."""

    name = "whisper"
    reaches_players = True
    description = "Whisper privately to one person who is in the room with you."
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
        return ToolResult(ok=True, content=_clip(text, ctx.config.max_tool_output_chars))


class NoopArgs(ToolArgs):
    """Arguments of the `noop` tool: an optional reason for doing nothing."""

    reason: str = Field("", max_length=300, description="Why nothing needs doing (optional).")


class NoopTool(Tool):
    """Tool that ends the turn without acting.

    It is also offered when journaling before compaction (to say the journal is done) and
    to a light sleeper in triage (to stay asleep).

    """

    name = "noop"
    description = "Do nothing more this turn (nothing needs a response, or you are done)."
    Args = NoopArgs
    # also how journaling before compaction says it is done, and a light sleeper stays asleep
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
            content=f"Waiting {args.minutes:g} minutes unless someone speaks to you directly.",
            stop=True,
        )


WORLD_TOOLS = [SayTool(), EmoteTool(), WhisperTool(), LookTool(), NoopTool(), WaitTool()]
