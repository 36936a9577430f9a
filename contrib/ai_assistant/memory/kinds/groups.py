"""What a member shared with its groups as a kind of memory (`memory.groups`): kept once, with
the member, so its memory file holds it, a status counts it and forgetting a person removes
every share about or from them, from whichever member keeps it."""

import re

from ...records import GroupShare, check_record
from .. import groups
from ..store import KeyValueStore
from .base import ChunkedSection, Kind, check_ids, next_id_given


class GroupSharesKind(Kind):
    name = "group_shares"
    label = "shared with a group"
    one = "share with a group"
    section = ChunkedSection
    keys = re.compile(rf"^{re.escape(groups.SHARED_KEY)}$")
    forgotten_label = "shares with a group"
    id_pattern = groups.SHARE_ID

    def default(self) -> ChunkedSection:
        return ChunkedSection()

    def export(self, memory: KeyValueStore, state: KeyValueStore) -> dict:
        value = memory.get(groups.SHARED_KEY) or {}
        items = list(value.get("items") or [])
        return {"state": {"next_id": value["next_id"]} if items else {}, "items": items}

    def ids(self, section: ChunkedSection, problems) -> set[str]:
        return check_ids(f"memory.{self.name}.items", section.items, self, problems)

    def check(self, section: ChunkedSection, known: dict, problems) -> None:
        if len(section.items) > groups.MAX_SHARED:
            problems.append(
                f"memory.{self.name}.items: at most {groups.MAX_SHARED} shares a member"
            )
        for number, record in enumerate(section.items):
            where = f"memory.{self.name}.items[{number}]"
            problems.extend(check_record(GroupShare, record, where, ("id", "group", "text")))
        next_id_given(self.name, section, problems)

    def write(self, section: dict, memory: KeyValueStore, state: KeyValueStore) -> None:
        if section["items"]:
            numbers = [int(item["id"][1:]) for item in section["items"]]
            next_id = section["state"].get("next_id") or max(numbers) + 1
            memory.set(groups.SHARED_KEY, {"next_id": next_id, "items": section["items"]})

    def forget_person(self, review, person, state=None) -> int:
        # by key, and by name: the chain and the words name them
        return groups.GroupShares(review.core.store).forget(person.keys, person.mentions)

    def forget_traces(self, memory: KeyValueStore, state: KeyValueStore, traces) -> int:
        shares = groups.GroupShares(memory)
        return shares.remove([s["id"] for s in shares.all() if traces.found(s)])


KIND = GroupSharesKind()
