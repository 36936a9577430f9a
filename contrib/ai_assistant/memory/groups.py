"""
Knowledge a group shares: what one member of a group of assistants reports to the others.

Assistants that share a group (the guards, a guild, a household: an Evennia tag the shell
reads, `shell.groups`) may share what one of them learned with the others (the
`share_with_group` tool, `tools.groups`). It is a telling (`memory.gossip.telling`) whose
hearers are the group, not the room:

- **Only what is public is shared.** The same checks as gossip's `tell`
  (`tools.gossip.checked_telling`): a whisper, anything drawn from one, a memory whose
  audience is not everyone, or anything learned in a conversation that saw private words, is
  refused and nothing is shared.
- **Stored once.** A share is kept once, with the member who shared it (`GroupShares`, in its
  memory store, bounded: `MAX_SHARED` a member, `MAX_TEXT_CHARS` a text, `MAX_GROUP_ENTRIES`
  a group), never copied to the other members; the group's shares are searched through one
  index a group (`GroupIndex`), so recall stays flat with many members.
- **The chain is kept and trust decays per hand.** A share carries the telling's origin and
  hands (the member last); recalled by another member it reads "Bruno of the guards reported
  that Bob said" (`reported_label`) and is trusted as a telling would be
  (`memory.gossip.received_trust`, with the recaller's own trust in a claim and decay).
- **It is a kind of memory** (`memory.kinds.groups`): the member's memory file holds what it
  shared, a status counts it, and forgetting a person removes every share about or from them.

"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..clock import from_iso
from ..errors import Refused
from ..records import MAX_GROUP_NAME_CHARS, MAX_SHARE_CHARS
from ..text import for_prompt
from .gossip import received_trust
from .lexical import DEFAULT_STEMMER, LexicalIndex, terms
from .provenance import CLAIM, told_label
from .recall_weights import RecallWeights
from .recalled import Recalled, trust_word
from .store import KeyValueStore

# the key of a member's shares in its memory store
SHARED_KEY = "group_shared"
# what recall calls this kind of memory (a recall's `kinds` may leave it out)
GROUP = "group"
# the most shares a member keeps (the oldest go first), a group holds, and a share's text
MAX_SHARED = 50
MAX_GROUP_ENTRIES = 200
MAX_TEXT_CHARS = MAX_SHARE_CHARS
MAX_GROUP_NAME = MAX_GROUP_NAME_CHARS
# a group's name: a tag's key, one word or a few (lower case, as Evennia keeps tags)
GROUP_NAME = re.compile(r"^[a-z0-9][a-z0-9 _'-]{0,39}$")
# a share's id in a member's store ("g3"), and in its group ("g17.3": the member's dbref, then
# the share's number)
SHARE_ID = re.compile(r"^g(\d{1,9})$")
GROUP_ID = re.compile(r"^g(\d{1,12})\.(\d{1,9})$")
# the fewest of a query's words a share must hold to be recalled (as lore's)
MIN_SHARED_WORDS = 2
# the share of a recall's results the group's knowledge may take (at least one)
GROUP_SHARE = 0.5


def check_group_name(name) -> str:
    """A group's name, checked: a tag key of 1-40 characters (letters, digits, spaces, _ ' -).

    Args:
        name: What was given.

    Returns:
        str: The name, lower case.

    Raises:
        Refused: Naming what is allowed.

    """
    text = " ".join(str(name or "").split()).lower()
    if not GROUP_NAME.match(text):
        raise Refused(
            f"'{text[:MAX_GROUP_NAME]}' is not a group's name: 1 to {MAX_GROUP_NAME} letters, "
            "digits, spaces, _ ' or -, starting with a letter or digit."
        )
    return text


def group_id(member_key: str, share_id: str) -> str:
    """A share's id in its group: "g17.3" for share "g3" of member "#17"."""
    return f"g{member_key.lstrip('#')}.{share_id[1:]}"


def split_group_id(value) -> tuple[str, str]:
    """The member's key and the share's own id of a group id ("g17.3" -> ("#17", "g3")).

    Raises:
        Refused: Not a group share's id.

    """
    text = str(value or "").strip().lower()
    match = GROUP_ID.match(text)
    if not match:
        raise Refused(f"'{text[:20]}' is not the id of a group's share: they look like g17.3.")
    return f"#{match.group(1)}", f"g{match.group(2)}"


def reported_label(share: dict) -> str:
    """How a share's source is said back: "Bruno of the guards reported that Bob said".

    Args:
        share (dict): The share (its `origin`, `tellers`, `member` and `group`).

    Returns:
        str: The words, newest hand first.

    """
    member = (share.get("member") or {}).get("name") or "someone"
    first = f"{member} of the {share.get('group') or 'group'} reported"
    return told_label(share, first=first)


def shared_record(told: dict, *, group: str, share_id: str) -> dict:
    """A telling (`memory.gossip.telling`, told to the group) as a member keeps it shared.

    Args:
        told (dict): The telling; its `teller` is the member, its text at most
            `MAX_TEXT_CHARS`.
        group (str): The group's name.
        share_id (str): Its id among the member's shares ("g3").

    Returns:
        dict: The share.

    """
    return {
        "id": share_id,
        "group": group,
        "memory_id": told["memory_id"],
        "text": told["text"][:MAX_TEXT_CHARS],
        "origin": told["origin"],
        "tellers": told["tellers"],
        "member": told["teller"],
        "trust": told["trust"],
        "origin_trust": told["origin_trust"],
        "rests_on": told["rests_on"],
        "importance": told["importance"],
        "about": told["about"],
        "people": told["people"],
        "location": told.get("location"),
        "at": told["at"],
    }


class GroupShares:
    """What one member shared with its groups, kept in its memory store: oldest first, at most
    `MAX_SHARED` (the oldest go first), with the next share's number.

    Args:
        store (KeyValueStore): The member's memory store.

    """

    def __init__(self, store: KeyValueStore):
        self.store = store

    def _value(self) -> dict:
        value = self.store.get(SHARED_KEY) or {}
        return {"next_id": int(value.get("next_id") or 1), "items": list(value.get("items") or [])}

    def all(self, group: str | None = None) -> list[dict]:
        """The shares, oldest first (only one group's when `group` is given)."""
        items = self._value()["items"]
        return [s for s in items if group is None or s.get("group") == group]

    def holds(self, group: str, memory_id: str) -> bool:
        """Whether this memory was shared with this group already."""
        return any(s.get("memory_id") == memory_id for s in self.all(group))

    def add(self, told: dict, group: str) -> dict:
        """Keep a telling shared with a group.

        Args:
            told (dict): The telling (`memory.gossip.telling`).
            group (str): The group's name.

        Returns:
            dict: The share kept.

        """
        value = self._value()
        share = shared_record(told, group=group, share_id=f"g{value['next_id']}")
        items = [*value["items"], share][-MAX_SHARED:]
        self.store.set(SHARED_KEY, {"next_id": value["next_id"] + 1, "items": items})
        return share

    def remove(self, share_ids: Iterable[str]) -> int:
        """Remove shares by their own ids ("g3"); returns how many went."""
        gone = set(share_ids)
        return self._keep(lambda share: share.get("id") not in gone)

    def forget(self, keys: Iterable[str], mentions=None) -> int:
        """Remove the shares whose chain holds, or is about, any of these people's keys, or
        (with `mentions(text) -> bool`) whose words or chain name them."""
        keys = set(keys)

        def kept(share: dict) -> bool:
            if keys & set(share.get("people") or []):
                return False
            if mentions is None:
                return True
            names = [share.get("text")]
            names += [(share.get("origin") or {}).get("name")]
            names += [hand.get("name") for hand in share.get("tellers") or []]
            return not any(mentions(name) for name in names)

        return self._keep(kept)

    def _keep(self, kept) -> int:
        value = self._value()
        items = [share for share in value["items"] if kept(share)]
        if len(items) != len(value["items"]):
            self.store.set(SHARED_KEY, {"next_id": value["next_id"], "items": items})
        return len(value["items"]) - len(items)


@dataclass
class GroupRecalled(Recalled):
    """A share of a fellow member, recalled: shown with who reported it and its chain."""

    group: str = ""

    def line(self, show_id: bool = False) -> str:
        """One line for a prompt: `- [Bruno of the guards reported that Bob said; trust low;
        2026-11-28 in the Gate] <text>`.

        Args:
            show_id (bool): End it with the share's id, as `Recalled.line` does.

        Returns:
            str: The line, escaped.

        """
        where = self.provenance.get("location")
        tags = [
            reported_label(self.provenance),
            f"trust {trust_word(self.trust)}",
            self.time.strftime("%Y-%m-%d") + (f" in {where}" if where else ""),
        ]
        shown = f"- [{for_prompt('; '.join(tags))}] {for_prompt(self.text)}"
        return f"{shown} (id {for_prompt(self.id)})" if show_id else shown


class GroupIndex:
    """One group's shares and their one BM25 index (built once per change of the shares).

    Args:
        shares (list): The group's shares, each with its `gid` (`group_id`) and `member`.
        stemmer (str): The language of its words.

    """

    def __init__(self, shares: list[dict], stemmer: str = DEFAULT_STEMMER):
        self.stemmer = stemmer
        self.shares = {share["gid"]: share for share in shares}
        self._index = LexicalIndex(stemmer=stemmer)
        self._terms = {}
        for gid, share in self.shares.items():
            self._index.add(gid, share["text"])
            self._terms[gid] = frozenset(terms(share["text"], stemmer))

    def __len__(self) -> int:
        return len(self.shares)

    def recall(
        self,
        query: str,
        *,
        recaller: str | None,
        limit: int,
        weights: RecallWeights,
        claim_trust: float,
        decay: float,
    ) -> list[GroupRecalled]:
        """The fellow members' shares best matching `query`, scored as lore is
        (`memory.lore.LoreBook.recall`), trusted as a telling received (`received_trust`).

        Args:
            query (str): What is recalled.
            recaller (str or None): The recaller's key: its own shares are its memories
                already, and are left out.
            limit (int): The most to return.
            weights (RecallWeights): The recaller's weights.
            claim_trust (float): The recaller's trust in a claim.
            decay (float): The recaller's `gossip_trust_decay`.

        Returns:
            list: `GroupRecalled` items, best first.

        """
        if limit <= 0 or not self.shares:
            return []
        wanted = frozenset(terms(query, self.stemmer))
        enough = min(MIN_SHARED_WORDS, len(wanted))
        want = limit * 3
        while True:
            found = self._index.search(query, want)
            hits = []
            for gid, score in found:
                share = self.shares[gid]
                if (share.get("member") or {}).get("key") == recaller:
                    continue  # its own: a memory of its own already
                if enough > 1 and len(wanted & self._terms[gid]) < enough:
                    continue
                hits.append((share, score))
            # too few of the first candidates were fellow members': look at more
            if len(hits) >= limit or len(found) < want:
                break
            want *= 8
        if not hits:
            return []
        best = max(score for _, score in hits) or 1.0
        found = []
        for share, score in hits[:limit]:
            relevance = score / best
            trust = received_trust(share["trust"], share["origin_trust"], claim_trust, decay)
            importance = int(share.get("importance") or 3)
            total = weights.score(relevance, 1.0, importance, trust)
            found.append(
                GroupRecalled(
                    id=share["gid"],
                    kind=GROUP,
                    text=share["text"],
                    score=round(total, 4),
                    scores={
                        "relevance": round(relevance, 4),
                        "recency": 1.0,
                        "importance": importance / 10,
                        "person": 0.0,
                        "trust": trust,
                    },
                    entry_ids=[],
                    time=from_iso(share["at"]),
                    importance=importance,
                    audience=None,  # only what anyone may know is ever shared
                    provenance={
                        **share,
                        "source_type": CLAIM,
                        "heard_from": share["member"].get("name"),
                    },
                    trust=trust,
                    group=share["group"],
                )
            )
        return sorted(found, key=lambda item: -item.score)


def merged(found: list[Recalled], shared: list[Recalled], limit: int) -> list[Recalled]:
    """Recalled memories and a group's shares ranked together; the shares take at most
    `GROUP_SHARE` of the results (at least one), so the recaller's own memories keep their
    place."""
    if not shared or limit <= 0:
        return found[:limit] if limit > 0 else []
    cap = max(1, int(limit * GROUP_SHARE))
    return sorted(found + shared[:cap], key=lambda item: -item.score)[:limit]
