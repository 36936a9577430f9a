"""
Recalled: what a recall returns, and how it is shown.

A `Recalled` is one memory a recall found, with its scores and the journal entries it rests on;
`render` turns the best of them into a prompt's lines within a budget of tokens, each line its
source and trust (`trust_word`), when and where, then its text, escaped (`Recalled.line`).

One fact is recalled once: `Shown` tells a repeat among what a recall keeps (a fact and the
entry it came from, the same words twice for one audience), and `without_repeats` leaves the
repeats out of a ranked list. The same words from several people are one line that names them
all ("Ann and Bob each told you"), resting on each of their entries.

"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from ..text import for_prompt
from .audience import Audience
from .provenance import source_label


@dataclass
class Recalled:
    """One recalled memory.

    Attributes:
        id (str): `j000012` (journal entry), `m000003` (long-term memory), `#12/o3`
            (an observation of a person), `#12/a5` (an attribute of a person), `d000002`
            (a daily digest).
        kind (str): entry, reflection, summary, memory, observation, attribute or digest.
        text (str): What it says.
        score (float): Its total score.
        scores (dict): relevance, recency, importance, person (and link, for a neighbour).
        entry_ids (list): The journal entries it rests on.
        time (datetime): When it was made.
        importance (int): 1-10.
        audience (list or None): Who may know it.
        provenance (dict): source_type, heard_from, location, ...
        via (str or None): The hit whose link pulled it in.
        trust (float): How far its source is trusted, 0-1.

    """

    id: str
    kind: str
    text: str
    score: float
    scores: dict
    entry_ids: list[str]
    time: datetime
    importance: int
    audience: Audience
    provenance: dict
    via: str | None = None
    trust: float = 0.5

    def line(self, show_id: bool = False) -> str:
        """One line for a prompt: source and trust, when and where, then the text (escaped).

        Args:
            show_id (bool): End it with the memory's id, for a tool that names a memory
                (`tell`, when gossip is on).

        Returns:
            str: The line, starting with "- ".

        """
        where = self.provenance.get("location")
        when = self.time.strftime("%Y-%m-%d")
        tags = [
            source_label(self.provenance),
            f"trust {trust_word(self.trust)}",
            when + (f" in {where}" if where else ""),
        ]
        if self.kind in ("reflection", "attribute", "memory", "digest"):
            tags.append(self.kind)
        shown = f"- [{for_prompt('; '.join(tags))}] {for_prompt(self.text)}"
        return f"{shown} (id {for_prompt(self.id)})" if show_id else shown


def trust_word(trust: float) -> str:
    """How a trust is said: high, medium or low.

    Args:
        trust (float): The trust, 0-1.

    Returns:
        str: "high" from 0.75, "medium" from 0.5, else "low".

    """
    return "high" if trust >= 0.75 else "medium" if trust >= 0.5 else "low"


# what restates a journal entry: the entry itself, and a fact drawn from it
RESTATING = frozenset({"entry", "memory"})


def _restates(kind: str, entry_ids, covered: set[str]) -> bool:
    """Whether a memory only says again what recalled ones said (a fact and the entry it was
    drawn from); remembers what it covers when it does not. A reflection or a profile
    attribute draws something new from its entries: never a repeat."""
    if kind not in RESTATING or not entry_ids:
        return False
    if covered.issuperset(entry_ids):
        return True
    covered.update(entry_ids)
    return False


# the most people one line of the same words names (`Shown`)
MAX_SOURCES = 5


class Shown:
    """What a recall has kept so far, to tell a repeat: a memory that restates recalled entries
    (`_restates`), or the same words for the same audience from the same person (the same thing
    journaled twice, an attribute that says what an observation said) or, as a claim, from
    another (`CLAIMED`). The line kept then rests on the repeat's entries as well, and names its
    teller (provenance `sources`, at most `MAX_SOURCES`): that several told it is worth knowing,
    and ten copies of a greeting are not worth ten lines of a prompt."""

    def __init__(self):
        self.covered: set[str] = set()
        self.said: dict[tuple, list[Recalled]] = {}

    def repeats(self, item: Recalled) -> bool:
        """Whether `item` repeats what was kept; remembers it when it does not.

        Args:
            item (Recalled): The next memory, in rank order (a public and a private copy of
                the same words are two: their audiences differ).

        Returns:
            bool: True for a repeat (leave it out; what it adds is now on the kept line).

        """
        # the same words, whatever their case and punctuation; a line with none ("🔥", "?!")
        # is the same only as itself
        said = " ".join(re.findall(r"\w+", item.text.lower())) or " ".join(item.text.split())
        words = (said, str(item.audience))
        for kept in self.said.get(words, ()):
            # the same person again, or another who said it to the assistant: "Ann and Bob
            # each told you" is true only of claims (what was overheard, instructed or
            # passed along a chain of gossip keeps its own line and its own label)
            if _teller(kept) == _teller(item) or _told_way(kept) == _told_way(item) == CLAIMED:
                _told_also(kept, item)
                self.covered.update(item.entry_ids)
                return True
        if _restates(item.kind, item.entry_ids, self.covered):
            return True
        self.said.setdefault(words, []).append(item)
        return False


def _teller(item: Recalled) -> str:
    return str(item.provenance.get("heard_from") or "").lower()


# a claim said to the assistant, not passed along by gossip (`_told_way`)
CLAIMED = ("claim", False)


def _told_way(item: Recalled) -> tuple:
    return item.provenance.get("source_type"), bool(item.provenance.get("gossip"))


def _told_also(kept: Recalled, item: Recalled) -> None:
    """`kept` says what `item` says: it rests on `item`'s entries too, and names its tellers
    (new lists: a recalled memory shares its provenance with the index)."""
    kept.entry_ids = kept.entry_ids + [one for one in item.entry_ids if one not in kept.entry_ids]
    sources = [one for one in _tellers(kept) if one]
    known = {one.lower() for one in sources}
    for teller in _tellers(item):
        if teller and teller.lower() not in known and len(sources) < MAX_SOURCES:
            sources.append(teller)
            known.add(teller.lower())
    if len(sources) > 1:
        kept.provenance = {**kept.provenance, "sources": sources}


def _tellers(item: Recalled) -> list:
    return list(item.provenance.get("sources") or [item.provenance.get("heard_from")])


def without_repeats(items: list[Recalled], limit: int) -> list[Recalled]:
    """Best first, without memories that repeat others (see `Shown`)."""
    kept: list[Recalled] = []
    shown = Shown()
    for item in items:
        if shown.repeats(item):
            continue
        kept.append(item)
        if len(kept) == limit:
            break
    return kept


def render(
    items: list[Recalled],
    budget_tokens: int,
    count_tokens: Callable[[str], int],
    show_ids: bool = False,
) -> list[str]:
    """The prompt lines for recalled memories, best first, within `budget_tokens`.

    Lines are added in order until the next one would exceed the budget.

    Args:
        items (list): The recalled memories, best first.
        budget_tokens (int): The most tokens the lines may use together.
        count_tokens (callable): Counts the tokens of a line.
        show_ids (bool): End each line with the memory's id (`Recalled.line`).

    Returns:
        list: The lines that fit.

    """
    lines: list[str] = []
    used = 0
    for item in items:
        line = item.line(show_ids)
        cost = count_tokens(line)
        if used + cost > budget_tokens:
            break
        lines.append(line)
        used += cost
    return lines
