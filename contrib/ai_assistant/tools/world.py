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
from .base import EXTRACTION, TRIAGE, TURN, Tool, ToolArgs, ToolContext, ToolError, ToolResult


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
    text: str = Field(min_length=1, max_length=1000, description="What to say aloud.")


class SayTool(Tool):
    name = "say"
    description = "Say something aloud to everyone in the room."
    Args = SayArgs

    def run(self, ctx: ToolContext, args: SayArgs) -> ToolResult:
        text = _shown(ctx, args.text, "text")
        ctx.world.say(text)
        ctx.control.actions.append(f'said "{text}"')
        return ToolResult(ok=True, content="You said it; everyone in the room heard.")


class EmoteArgs(ToolArgs):
    action: str = Field(
        min_length=1, max_length=500, description="An action in third person, e.g. 'smiles.'"
    )


class EmoteTool(Tool):
    name = "emote"
    description = "Show an action or gesture to the room, e.g. 'nods slowly.'"
    Args = EmoteArgs

    def run(self, ctx: ToolContext, args: EmoteArgs) -> ToolResult:
        action = _shown(ctx, args.action, "action")
        ctx.world.emote(action)
        ctx.control.actions.append(f"emoted {action}")
        return ToolResult(ok=True, content="The room saw it.")


class WhisperArgs(ToolArgs):
    target: str = Field(min_length=1, max_length=80, description="Who, by name; must be here.")
    text: str = Field(min_length=1, max_length=1000, description="What to whisper.")


class WhisperTool(Tool):
    name = "whisper"
    description = "Whisper privately to one person who is in the room with you."
    Args = WhisperArgs

    def run(self, ctx: ToolContext, args: WhisperArgs) -> ToolResult:
        text = _shown(ctx, args.text, "text")
        who = ctx.world.whisper(args.target, text)
        ctx.control.actions.append(f'whispered to {who}: "{text}"')
        return ToolResult(ok=True, content=f"You whispered to {who}.")


class LookArgs(ToolArgs):
    target: str | None = Field(
        None, max_length=80, description="Someone or something here; omit for the room."
    )


class LookTool(Tool):
    name = "look"
    description = "Look at the room, or at someone or something in it."
    Args = LookArgs

    def run(self, ctx: ToolContext, args: LookArgs) -> ToolResult:
        text = ctx.world.look(args.target)
        return ToolResult(ok=True, content=_clip(text, ctx.config.max_tool_output_chars))


class NoopArgs(ToolArgs):
    reason: str = Field("", max_length=300, description="Why nothing needs doing (optional).")


class NoopTool(Tool):
    name = "noop"
    description = "Do nothing more this turn (nothing needs a response, or you are done)."
    Args = NoopArgs
    # also how journaling before compaction says it is done, and a light sleeper stays asleep
    scopes = frozenset({TURN, EXTRACTION, TRIAGE})

    def run(self, ctx: ToolContext, args: NoopArgs) -> ToolResult:
        ctx.control.stop_reason = "noop"
        return ToolResult(ok=True, content="Done for now.", stop=True)


class WaitArgs(ToolArgs):
    minutes: float = Field(gt=0, description="How long to wait before thinking again.")
    reason: str = Field("", max_length=300, description="Why (optional).")


class WaitTool(Tool):
    name = "wait"
    description = (
        "Pause: make no further decisions until the time passes or someone speaks to you "
        "directly; you are told when the wait is over. Ends this turn."
    )
    Args = WaitArgs

    def run(self, ctx: ToolContext, args: WaitArgs) -> ToolResult:
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
