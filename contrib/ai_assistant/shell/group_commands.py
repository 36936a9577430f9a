"""
The `/group` switch of `@assistant`: the groups of assistants and what they share (list, one
group's shares, sharing on or off, removing a share).

`GroupSwitch` is a mixin of `commands.CmdAssistant`, whose docstring is the in-game help; the
work is `shell.groups`'.

"""

from ..errors import Refused
from ..memory.groups import check_group_name
from .screen import shown
from .groups import (
    every_group,
    group_index,
    group_shares,
    members,
    remove_share,
    set_sharing,
    sharing_on,
)


class GroupSwitch:
    """The `/group` switch of `@assistant` (a mixin of `commands.CmdAssistant`)."""

    def do_group(self):
        """The groups; one group's shares; `=on`, `=off`, `=remove <id>`."""
        words = (self.lhs or "").strip()
        try:
            if not words:
                rows = [
                    (
                        name,
                        [obj.key for obj in members(name)],
                        len(group_index(name)),
                        sharing_on(name),
                    )
                    for name in every_group()
                ]
                if not rows:
                    self.msg(
                        "No assistant is in a group. Tag assistants into one: "
                        'aria.tags.add("guards", category="ai_assistant_group").'
                    )
                    return
                self.more(self.format_groups(rows))
                return
            group = check_group_name(words)
            action = (self.rhs or "").strip()
            verb, _, rest = action.partition(" ")
            if not action:
                shares = group_shares(group)
                if not shares and not members(group):
                    raise Refused(f"No assistant is in a group called '{group}'.")
                self.more(self.format_group_shares(group, shares, sharing_on(group)))
            elif verb.lower() in ("on", "off") and not rest:
                set_sharing(group, verb.lower() == "on")
                self.msg(
                    f"The {group} share what they learn now."
                    if verb.lower() == "on"
                    else f"The {group} no longer share or recall what they shared; it is kept."
                )
            elif verb.lower() == "remove" and rest:
                share = remove_share(group, rest)
                self.msg(f"Removed {share['gid']} from the {group}: {shown(share['text'], 80)}")
            else:
                raise Refused(
                    "Usage: @assistant/group [<group>[=on||off||remove <share id>]] "
                    "(see 'help @assistant/group')."
                )
        except Refused as err:
            self.msg(f"Not changed. {err}" if self.rhs else str(err))
