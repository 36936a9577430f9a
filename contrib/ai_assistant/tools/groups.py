"""
The `share_with_group` tool: an assistant shares something it remembers with its group.

A group is the assistants that share a tag of the category the shell names
(`shell.groups.GROUP_CATEGORY`); a builder switches each group's sharing on or off. What is
shared is a memory named by its id (recalled lines end with it when sharing is on), so the code
knows where it came from: it is kept once, with the member (`memory.groups.GroupShares`), and
the other members recall it as what this member reported, with the chain of sources and a trust
that decays per hand (`memory.groups`).

What the code enforces, whatever the model asks:

- `group_sharing_enabled` must be on, and the assistant in a group whose sharing is on;
- only a memory anyone may know is shared, by the same checks as gossip's `tell`
  (`tools.gossip.checked_telling`): a whispered memory, anything drawn from one, or anything in
  a conversation that saw private words, is refused and nothing is shared;
- a memory passed through `gossip_max_hops` hands goes no further; one already shared with
  the group is not shared twice; a group holds at most `MAX_GROUP_ENTRIES`.

"""

from pydantic import Field

from ..memory.groups import MAX_GROUP_ENTRIES, MAX_GROUP_NAME, group_id
from .base import TURN, Tool, ToolArgs, ToolContext, ToolError, ToolResult
from .gossip import checked_telling


class ShareArgs(ToolArgs):
    """Arguments of `share_with_group`: which memory, and with which group."""

    memory_id: str = Field(
        min_length=1,
        max_length=40,
        description="The id of what you remember and share, as recalled: '(id j000012)'.",
    )
    group: str | None = Field(
        None,
        max_length=MAX_GROUP_NAME,
        description="Which of your groups (optional when you are in one only).",
    )


class ShareWithGroupTool(Tool):
    """Tool that shares a memory with the assistant's group: its fellow members recall it."""

    name = "share_with_group"
    description = (
        "Share something you remember (named by its id) with your group: the other members "
        "will recall that you reported it. Only what anyone may know."
    )
    Args = ShareArgs
    scopes = frozenset({TURN})
    # offered only to an assistant that takes part in its groups' knowledge, and only while it
    # is in a group whose sharing is on (`Brain.tool_settings`)
    setting = "group_sharing_enabled"

    def run(self, ctx: ToolContext, args: ShareArgs) -> ToolResult:
        """Check the memory may be shared, and keep it shared with the group.

        Args:
            ctx (ToolContext): The conversation's context.
            args (ShareArgs): The validated arguments from the model.

        Returns:
            ToolResult: What was shared with which group.

        Raises:
            ToolError: Sharing is off, no group (or not that one), no such memory, a private
                memory or conversation, one passed on too often, shared already, or the group
                full; nothing was shared.

        """
        if not ctx.config.group_sharing_enabled:
            raise ToolError("sharing with a group is off for you: nothing was shared.")
        groups = ctx.groups.sharing() if ctx.groups is not None else []
        if not groups or ctx.group_shares is None or ctx.remembered is None:
            raise ToolError("you are in no group that shares what it learns: nothing was shared.")
        group = _which(groups, args.group)
        memory, told = checked_telling(
            ctx,
            args.memory_id,
            {"name": f"the {group}", "key": None},
            # the group's members may pass it to anyone: only what anyone may know is shared
            [f"group:{group}"],
            lambda: _conversation_public(ctx),
        )
        if ctx.group_shares.holds(group, memory["id"]):
            raise ToolError(f"you shared {memory['id']} with the {group} already.")
        if ctx.groups.size(group) >= MAX_GROUP_ENTRIES:
            raise ToolError(
                f"the {group} hold {MAX_GROUP_ENTRIES} shared memories, the most a group "
                "keeps: a builder must remove some first. Nothing was shared."
            )
        share = ctx.group_shares.add(told, group)
        own_key = getattr(ctx.world, "own_key", None) or ""
        ctx.control.actions.append(
            f"shared {memory['id']} with the {group} ({group_id(own_key, share['id'])})"
        )
        return ToolResult(
            ok=True, content=f"You shared it with the {group}: they will know you reported it."
        )


def _which(groups: list[str], named: str | None) -> str:
    """The group meant: the one named (it must be one of the assistant's sharing groups), or
    the only one."""
    if named is None or not named.strip():
        if len(groups) == 1:
            return groups[0]
        raise ToolError(f"name the group: one of {', '.join(groups)}. Nothing was shared.")
    wanted = " ".join(named.split()).lower()
    if wanted not in groups:
        raise ToolError(
            f"you share with no group called '{named[:MAX_GROUP_NAME]}': yours are "
            f"{', '.join(groups)}. Nothing was shared."
        )
    return wanted


def _conversation_public(ctx: ToolContext) -> None:
    """Refuse when this conversation saw private words: what it learned is theirs alone."""
    if ctx.audience is not None:
        raise ToolError(
            "this conversation saw private words (a whisper, a page, or something drawn from "
            "one): nothing said in it goes to your group. Nothing was shared."
        )
