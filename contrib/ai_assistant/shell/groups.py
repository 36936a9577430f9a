"""
Groups of assistants in Evennia, and the knowledge they share (`memory.groups` is the core).

- A group is the assistants tagged with its name in the category `GROUP_CATEGORY`:
  `guard.tags.add("guards", category="ai_assistant_group")`.
- Each member keeps what it shared in its own memory (`memory.groups.GroupShares`, a kind of
  memory), once; a group's shares are read from its members and searched through one index a
  group and process (`group_index`), built again only when a member's shares changed (their
  Attribute's value, compared by identity: no read of the shares themselves).
- A group's sharing is on until a builder switches it off (`set_sharing`); the groups switched
  off are kept on one global script (`ai_assistant_groups`, made by the first switch).
- `AssistantGroups` (`character.assistant.groups`): what one assistant's brain asks of its
  groups (`Brain.groups`): which share, how full one is, and what its fellow members shared,
  recalled.

"""

from evennia.utils import create, search

from ..errors import Refused
from ..memory.groups import (
    SHARED_KEY,
    GroupIndex,
    GroupShares,
    check_group_name,
    group_id,
    split_group_id,
)
from ..memory.lexical import DEFAULT_STEMMER
from .finding import ASSISTANT_TAG
from .storage import MEMORY_CATEGORY, AttributeStore

GROUP_CATEGORY = "ai_assistant_group"
SETTINGS_SCRIPT_KEY = "ai_assistant_groups"
SHARING_OFF = "sharing_off"
# each group's index, with what it was built from: group -> (members' share values, index)
_indexes: dict[str, tuple[tuple, GroupIndex]] = {}
# the settings script found last, and whether a look found none (see `_settings`)
_script = None
_none = False


def groups_of(character) -> list[str]:
    """The groups an assistant is in (its tags of `GROUP_CATEGORY`), sorted."""
    return sorted(character.tags.get(category=GROUP_CATEGORY, return_list=True) or [])


def members(group: str) -> list:
    """The assistants of a group, by dbref."""
    found = search.search_tag(group, category=GROUP_CATEGORY)
    return sorted(
        (obj for obj in found if obj.tags.has(ASSISTANT_TAG[0], category=ASSISTANT_TAG[1])),
        key=lambda obj: obj.id,
    )


def every_group() -> list[str]:
    """Every group some assistant is in, sorted."""
    names = set()
    for obj in search.search_tag(category=GROUP_CATEGORY):
        names.update(groups_of(obj))
    return sorted(names)


def _settings(make: bool):
    """The global script of the groups switched off: found once (a recall asks for it, and
    queries nothing while Evennia's object cache holds it; when there is none, it is looked
    for again only after a builder switched a group)."""
    global _script, _none
    script = _script
    if script is not None and script.pk and type(script).get_cached_instance(script.pk) is script:
        return script
    if not make and _none:
        return None
    found = search.search_script(SETTINGS_SCRIPT_KEY)
    if found or not make:
        _script, _none = (found[0], False) if found else (None, True)
        return _script
    _script, _none = (
        create.create_script(
            "evennia.scripts.scripts.DefaultScript",
            key=SETTINGS_SCRIPT_KEY,
            desc="The AI assistants' groups whose sharing builders switched off (@assistant/group).",
            persistent=True,
        ),
        False,
    )
    return _script


def sharing_on(group: str) -> bool:
    """Whether a group's members share what they learn (on unless a builder switched it off)."""
    script = _settings(make=False)
    return script is None or group not in (script.attributes.get(SHARING_OFF) or [])


def set_sharing(group: str, on: bool) -> None:
    """Switch a group's sharing on or off. Off, its members neither share nor recall what was
    shared; what it holds is kept (a builder removes it: `remove_share`)."""
    group = check_group_name(group)
    script = _settings(make=not on)
    if script is None:
        return
    off = set(script.attributes.get(SHARING_OFF) or [])
    off = off - {group} if on else off | {group}
    script.attributes.add(SHARING_OFF, sorted(off))


def _share_value(member):
    attr = member.attributes.get(SHARED_KEY, category=MEMORY_CATEGORY, return_obj=True)
    return None if attr is None or isinstance(attr, list) else attr.db_value


def group_shares(group: str, found=None) -> list[dict]:
    """A group's shares, each with its `gid` ("g17.3") and its member, oldest first by member.

    Args:
        group (str): The group's name.
        found (list, optional): Its members, when known.

    Returns:
        list: The shares.

    """
    shares = []
    for member in members(group) if found is None else found:
        for share in GroupShares(AttributeStore(member, MEMORY_CATEGORY)).all(group):
            gid = group_id(member.dbref, share["id"])
            shares.append(
                {**share, "gid": gid, "member": {"name": member.key, "key": member.dbref}}
            )
    return shares


def group_index(group: str, stemmer: str = DEFAULT_STEMMER) -> GroupIndex:
    """The group's one index, built again only when a member's shares changed.

    Args:
        group (str): The group's name.
        stemmer (str): The language of its words.

    Returns:
        GroupIndex: Its shares and their index.

    """
    found = members(group)
    basis = (stemmer, *((obj.id, _share_value(obj)) for obj in found))
    kept = _indexes.get(group)
    if kept is not None and len(kept[0]) == len(basis):
        if all(a is b or a == b for a, b in zip(kept[0], basis)):
            return kept[1]
    index = GroupIndex(group_shares(group, found), stemmer)
    _indexes[group] = (basis, index)
    return index


def remove_share(group: str, gid: str) -> dict:
    """Remove one share from a group (a builder's), from the member that keeps it.

    Args:
        group (str): The group's name.
        gid (str): The share's id in its group ("g17.3").

    Returns:
        dict: The share removed.

    Raises:
        Refused: A bad id, or no such share in this group.

    """
    group = check_group_name(group)
    member_key, share_id = split_group_id(gid)
    for member in members(group):
        if member.dbref != member_key:
            continue
        shares = GroupShares(AttributeStore(member, MEMORY_CATEGORY))
        share = next((s for s in shares.all(group) if s["id"] == share_id), None)
        if share is not None:
            shares.remove([share_id])
            return {**share, "gid": group_id(member.dbref, share_id)}
    raise Refused(f"The {group} share nothing with the id {gid.strip()[:20]}.")


class AssistantGroups:
    """What one assistant's brain asks of its groups (`Brain.groups`).

    Args:
        character (Object): The assistant.

    """

    def __init__(self, character):
        self.obj = character

    def sharing(self) -> list[str]:
        """The groups it is in whose sharing is on, sorted."""
        return [group for group in groups_of(self.obj) if sharing_on(group)]

    def size(self, group: str) -> int:
        """How many shares a group holds."""
        return len(group_index(group))

    def recall(self, query: str, limit: int, weights, config) -> list:
        """What its fellow members shared with its sharing groups, for `query`
        (`memory.groups.GroupIndex.recall`), best first.

        Args:
            query (str): What is recalled.
            limit (int): The most to return.
            weights (RecallWeights): Its recall weights.
            config (AssistantConfig): Its configuration (its trust in a claim, its decay, its
                stemmer).

        Returns:
            list: `GroupRecalled` items.

        """
        found = []
        for group in self.sharing():
            found += group_index(group, config.recall_stemmer).recall(
                query,
                recaller=self.obj.dbref,
                limit=limit,
                weights=weights,
                claim_trust=config.trusts().get("claim", 0.4),
                decay=config.gossip_trust_decay,
            )
        return sorted(found, key=lambda item: -item.score)[:limit]
