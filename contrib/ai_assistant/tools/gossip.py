"""
The `tell` tool: an assistant tells another assistant in the room something it remembers.

It is speech said aloud (players present hear it, addressed to the other assistant), and it
names the memory told by its id (recalled lines end with it when gossip is on), so the code
knows where it came from: the receiver records it with its chain of sources and a trust that
decays with each hand (`memory.gossip`). The words said are the model's; the chain travels
only with the memory named.

What the code enforces, whatever the model asks:

- gossip must be on (`gossip_enabled`), and the other must be an assistant here, awake;
- only a memory everyone present may know is told: a whispered memory, or anything drawn from
  one, is refused and nothing is said (`memory.gossip.may_tell`), and so is anything said in
  a conversation that saw private words (the room may hear only what it may know);
- a memory that passed through `gossip_max_hops` hands goes no further.

"""

from pydantic import Field

from ..errors import Refused
from ..memory.audience import visible
from ..memory.gossip import LOG_TEXT_CHARS, chain_names, check_hops, may_tell, telling
from ..memory.groups import GROUP_ID
from ..clock import to_iso
from .base import TURN, Tool, ToolArgs, ToolContext, ToolError, ToolResult
from .world import _room_may_know, _shown


class TellArgs(ToolArgs):
    """Arguments of `tell`: whom, which memory, and the words said aloud."""

    to: str = Field(min_length=1, max_length=80, description="The other assistant, here.")
    memory_id: str = Field(
        min_length=1,
        max_length=40,
        description="The id of what you remember and tell, as recalled: '(id j000012)'.",
    )
    text: str = Field(
        min_length=1, max_length=500, description="What you say aloud to them (the room hears)."
    )


class TellTool(Tool):
    """Tool that tells another assistant present something the assistant remembers, aloud."""

    name = "tell"
    reaches_players = True
    description = (
        "Tell another assistant here something you remember (named by its id), aloud: the "
        "room hears you, and they remember who told them. Only what anyone may know."
    )
    Args = TellArgs
    scopes = frozenset({TURN})
    # offered only to an assistant whose gossip is on (no tokens spent on it otherwise)
    setting = "gossip_enabled"

    def run(self, ctx: ToolContext, args: TellArgs) -> ToolResult:
        """Check the memory may travel, say the words to the other assistant, and hand them
        the memory with its chain.

        Args:
            ctx (ToolContext): The conversation's context.
            args (TellArgs): The validated arguments from the model.

        Returns:
            ToolResult: Who heard it and who recorded it.

        Raises:
            ToolError: Gossip is off, no such assistant is here, no such memory, a private
                memory, or one passed on too often; nothing was said.

        """
        config = ctx.config
        if not config.gossip_enabled:
            raise ToolError("gossip is off for you: nothing was told.")
        text = _shown(ctx, args.text, "text")
        find = getattr(ctx.world, "assistant_here", None)
        if find is None or ctx.remembered is None:
            raise ToolError("you cannot tell other assistants anything here.")
        to_key, to_name = find(args.to)
        hearers = [key for key, _ in ctx.world.present_people()]
        if to_key not in hearers:
            hearers.append(to_key)
        memory, told = checked_telling(
            ctx,
            args.memory_id,
            {"name": to_name, "key": to_key},
            hearers,
            lambda: _room_may_know(ctx, "told"),
        )
        recorded = ctx.world.tell(to_key, text, told)
        if ctx.gossip_log is not None:
            ctx.gossip_log.add(
                {
                    "at": to_iso(ctx.now),
                    "direction": "told",
                    "teller": ctx.assistant_name,
                    "to": to_name,
                    "memory_id": memory["id"],
                    "text": told["text"][:LOG_TEXT_CHARS],
                    "chain": chain_names(told),
                    "trust": told["trust"],
                    "people": told["people"],
                    "location": ctx.location,
                }
            )
        ctx.control.actions.append(f'told {to_name} ({memory["id"]}): "{text}"')
        heard = (
            "they will remember you told them"
            if to_name in recorded
            else ("they heard you, but keep no gossip")
        )
        return ToolResult(ok=True, content=f"You told {to_name} aloud; {heard}.")


def checked_telling(
    ctx: ToolContext, memory_id: str, to: dict, hearers: list[str], conversation_check
) -> tuple[dict, dict]:
    """The memory named and its telling, once every check passed: the one privacy rule of
    what assistants pass on (`tell`, and `share_with_group`: `tools.groups`).

    Refused: lore (each assistant knows what it may know of it already), an unknown id, a
    memory the conversation's people may not know or that not every hearer may know (a
    whisper, anything drawn from one: `may_tell`), what `conversation_check` refuses (what the
    conversation saw), a memory passed on `gossip_max_hops` times already, and anything not
    public (`memory.gossip.telling`).

    Args:
        ctx (ToolContext): The conversation's context (its `remembered`, `served`, config).
        memory_id (str): The memory named, as recalled.
        to (dict): `{"name", "key"}` of whom it is told to.
        hearers (list): The keys of everyone who will know it.
        conversation_check (callable): Raises ToolError when what this conversation saw may
            not go to them.

    Returns:
        tuple: (the memory, `Brain.remembered`'s; the telling).

    Raises:
        ToolError: Naming why; nothing was told.

    """
    config = ctx.config
    if memory_id.strip().lower().startswith("lore:"):
        # the game's lore is the builders' to share: each assistant knows what it may know
        raise ToolError(
            "that is lore of the world, not something you were told: those who may know it "
            "know it already. Nothing was told."
        )
    if GROUP_ID.match(memory_id.strip().lower()):
        # a fellow member's share is its member's to pass on: it keeps the chain
        raise ToolError(
            "that is what a fellow member of your group reported, not a memory of your own: "
            "it is not passed on. Nothing was told."
        )
    memory = ctx.remembered(memory_id.strip())
    if memory is None:
        raise ToolError(
            f"you remember nothing with the id '{memory_id[:40]}': use an id from "
            "what you recalled, such as (id j000012). Nothing was told."
        )
    if not visible(memory["audience"], ctx.served) or not may_tell(memory["audience"], hearers):
        raise ToolError(
            "that memory is private (a whisper, or drawn from one): it is never told to "
            "anyone outside those it was told to. Nothing was said."
        )
    conversation_check()
    teller = {"name": ctx.assistant_name, "key": getattr(ctx.world, "own_key", None)}
    try:
        check_hops(memory["provenance"], config.gossip_max_hops)
        told = telling(
            memory_id=memory["id"],
            text=memory["text"],
            record=memory["provenance"],
            audience=memory["audience"],
            trust=memory["trust"],
            importance=memory["importance"],
            about=memory["about"],
            teller=teller,
            to=to,
            location=ctx.location,
            now=ctx.now,
            trusts=config.trusts(),
        )
    except Refused as exc:
        raise ToolError(f"{exc} Nothing was told.") from exc
    return memory, told
