"""
Relationships: how an assistant feels about each person it knows, changing with what happens.

One small state per person, stored beside their profile under the same person key
(`relationship:<key>`, e.g. `relationship:#12`; an index `relationship:index` maps keys to
names), so forgetting a person finds it by their key. Three dimensions:

| dimension | scale | meaning | moved by |
| --- | --- | --- | --- |
| `familiarity` | 0 (a stranger) to 1 (an old friend) | how well it knows them | code: the count of interactions each sleep |
| `warmth` | -1 (cold) to 1 (very warm) | how it feels about them | sleep's model call, citing evidence; builders |
| `trust` | -1 (distrust) to 1 (full trust) | how far it relies on them | sleep's model call, citing deeds only; builders |

Each dimension keeps its value and its last few changes (`CHANGES_KEPT`), each with the change,
a reason (at most `MAX_REASON_CHARS`), the game time it changed, who changed it (`sleep` or a
builder) and the audience of its evidence. A reason drawn from a whisper is private to the
whisper's audience: shown for someone else (a prompt, a recall, a view serving other players),
that reason does not show (`visible_reason`), and neither does what the change moved: each
dimension keeps, per private audience, how far its evidence moved the value (`hidden`), and
the value shown to anyone outside that audience leaves it out (`shown_value`). Builders see
every reason and the whole value; a builder's setting is everyone's value.

The values are bounded (`RANGES`), each sleep moves a dimension by at most
`relationship_max_step` (`sleep.relationships`), and what a player says about the relationship
itself ("you trust me, right?") is never evidence (`is_relationship_claim`).

"""

import re
import unicodedata
from datetime import datetime

from ..clock import to_iso
from ..records import MAX_REASON_CHARS
from ..text import for_prompt, one_line
from .audience import Audience, narrowest, visible
from .store import KeyValueStore

PREFIX = "relationship:"
INDEX_KEY = f"{PREFIX}index"
# the journal position sleep updated relationships through (`sleep.relationships`)
CURSOR_KEY = f"{PREFIX}cursor"
FAMILIARITY, WARMTH, TRUST = "familiarity", "warmth", "trust"
DIMENSIONS = (FAMILIARITY, WARMTH, TRUST)
RANGES = {FAMILIARITY: (0.0, 1.0), WARMTH: (-1.0, 1.0), TRUST: (-1.0, 1.0)}
# changes kept per dimension (the newest last): the latest reason each audience may see
CHANGES_KEPT = 5
# the most cited ids kept with a change
MAX_CITES = 10
# the most people a turn's "How you feel about the people here" lists
MAX_FEELING_LINES = 8
# who changed a dimension in sleep
SLEEP = "sleep"
# private audiences whose share of a value is kept apart, a dimension; more are pooled into one
# share only builders see (never into what others are shown)
MAX_HIDDEN = 8

# the words that say what a value means, from the lowest band up: (upper bound, word)
_WORDS = {
    FAMILIARITY: (
        (0.15, "a stranger"),
        (0.4, "an acquaintance"),
        (0.7, "familiar"),
        (9, "an old friend"),
    ),
    WARMTH: ((-0.5, "cold"), (-0.05, "cool"), (0.05, "neutral"), (0.5, "warm"), (9, "very warm")),
    TRUST: (
        (-0.5, "distrustful"),
        (-0.05, "wary"),
        (0.05, "neutral"),
        (0.5, "trusting"),
        (9, "full trust"),
    ),
}

# words about the relationship or the assistant's feelings: said by the person, never evidence
# (a list cannot hold every way of saying it: the prompt says so too, and trust rests on deeds)
_RELATIONSHIP_WORDS = re.compile(
    r"\b(trust\w*|distrust\w*|friend\w*|pals?|mates?|buddy|buddies|ally|allies|loyal\w*|"
    r"love[sd]?|like[sd]? (me|us)|adore\w*|fond\w*|dear to|care (about|for) (me|us)|"
    r"relationship|close (friend\w*|to)|bond\w*|known each other|confidante?s?|rel(y|ies|ied|iable|"
    r"iability)|depend\w*|count on (me|us)|believe (in|me)|faith\w*|respect\w*|"
    r"deserve|safe with|on (my|your|our|the same) side|(go|goes|going) (way )?back|"
    r"we('re| are| were|'ve| have)|you and (i|me)|between us|old times|owe me|"
    r"feel\w* (about|for|towards?|with)|think (of|about) (me|us))\b",
    re.IGNORECASE,
)
# characters that hide a word from the pattern ("tr\u200bust"): zero-width, soft hyphen
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"))


def is_relationship_claim(text: str, spoken: bool) -> bool:
    """Whether a memory is someone's words about the relationship or the assistant's feelings:
    never evidence for warmth or trust, however the model reads it.

    Args:
        text (str): What the entry or observation says.
        spoken (bool): It records someone's words (a claim, heard from someone). Words and
            the assistant's own notes are judged alike: a note that judges the relationship
            ("he proved a loyal friend") is no deed, whether it says it rests on words or not.

    Returns:
        bool: True for a text about friendship, trust, reliance, fondness, loyalty, respect,
            or "we" and "you and I".

    """
    text = unicodedata.normalize("NFKC", str(text or "")).translate(_INVISIBLE)
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    # a note of the assistant's own about the relationship is a judgement, not a deed: it
    # rests on what was said, whether it says so or not
    return bool(_RELATIONSHIP_WORDS.search(text))


def describe(dimension: str, value: float) -> str:
    """A word or two for a value ("warm", "an old friend").

    Args:
        dimension (str): One of `DIMENSIONS`.
        value (float): Its value.

    Returns:
        str: The band's word.

    """
    for bound, word in _WORDS[dimension]:
        if value < bound:
            return word
    return _WORDS[dimension][-1][1]


def parse_value(dimension: str, text: str) -> float:
    """A builder's value for a dimension, checked against its range.

    Args:
        dimension (str): One of `DIMENSIONS`.
        text (str): The value as typed ("0.6", "-0.3").

    Returns:
        float: The value.

    Raises:
        ValueError: An unknown dimension, not a number, or outside the dimension's range
            (the message says what is allowed).

    """
    if dimension not in RANGES:
        raise ValueError(
            f"'{one_line(dimension)[:30]}' is not a relationship dimension: use "
            f"{', '.join(DIMENSIONS)}."
        )
    low, high = RANGES[dimension]
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ValueError(
            f"{dimension} must be a number from {low:g} to {high:g}, not "
            f"'{one_line(str(text))[:30]}'."
        ) from None
    if not low <= value <= high or value != value:
        raise ValueError(f"{dimension} must be from {low:g} to {high:g}, not {value:g}.")
    return value


def _new(key: str, name: str) -> dict:
    state = {"key": key, "name": name, "interactions": 0, "last_met": None}
    for dimension in DIMENSIONS:
        state[dimension] = {"value": 0.0, "changes": []}
    return state


class Relationships:
    """The relationships of one assistant, one stored value per person.

    Args:
        store (KeyValueStore): The assistant character's store (the profiles' store).

    """

    def __init__(self, store: KeyValueStore):
        self.store = store

    def index(self) -> dict[str, str]:
        """Every relationship's person key and name.

        Returns:
            dict: Names keyed by person key.

        """
        return dict(self.store.get(INDEX_KEY) or {})

    def get(self, key: str) -> dict | None:
        """One person's relationship.

        Args:
            key (str): Their person key (`#12`, `name:bob`).

        Returns:
            dict or None: The state (`key`, `name`, `interactions`, `last_met`, and per
                dimension `value` and `changes`), None when there is none.

        """
        state = self.store.get(PREFIX + key)
        return state if isinstance(state, dict) else None

    def all(self) -> list[dict]:
        """Every relationship, by name.

        Returns:
            list: The states.

        """
        found = [state for key in self.index() if (state := self.get(key)) is not None]
        return sorted(found, key=lambda state: (str(state.get("name")).lower(), state["key"]))

    def change(
        self,
        key: str,
        name: str,
        dimension: str,
        *,
        value: float,
        reason: str,
        at: datetime,
        by: str = SLEEP,
        audience: Audience = None,
        cites: list[str] = (),
    ) -> tuple[float, float]:
        """Set one dimension (kept within its range), with why, when and by whom.

        Args:
            key (str): The person's key.
            name (str): Their name.
            dimension (str): One of `DIMENSIONS`.
            value (float): The new value (clamped to the dimension's range).
            reason (str): Why (cut to `MAX_REASON_CHARS`, on one line).
            at (datetime): The game time of the change.
            by (str): `SLEEP` or the builder who set it.
            audience (list, optional): Who may know the reason (that of its evidence).
            cites (list, optional): The ids of the memories it rests on.

        Returns:
            tuple: (the new value, the value before).

        """
        low, high = RANGES[dimension]
        state = self.get(key) or _new(key, name)
        state["name"] = name
        before = float(state[dimension]["value"])
        after = round(min(high, max(low, float(value))), 4)
        state[dimension]["value"] = after
        state[dimension]["hidden"] = _hidden(
            state[dimension].get("hidden"), audience, after - before, builder=by != SLEEP
        )
        state[dimension]["changes"] = [
            *state[dimension]["changes"][1 - CHANGES_KEPT :],
            {
                "value": after,
                "change": round(after - before, 4),
                "reason": one_line(reason)[:MAX_REASON_CHARS],
                "at": to_iso(at),
                "by": str(by)[:80],
                "audience": None if audience is None else sorted(set(audience)),
                "cites": list(cites)[:MAX_CITES],
            },
        ]
        self.save(state)
        return after, before

    def met(self, key: str, name: str, interactions: int, day: str) -> None:
        """Count interactions (they move familiarity in `sleep.relationships`).

        Args:
            key (str): The person's key.
            name (str): Their name.
            interactions (int): How many more.
            day (str): The game day they were last met (`YYYY-MM-DD`).

        """
        state = self.get(key) or _new(key, name)
        state["interactions"] = int(state.get("interactions") or 0) + interactions
        state["last_met"] = day
        self.save(state)

    def save(self, state: dict) -> None:
        """Write one relationship back, and its key to the index.

        Args:
            state (dict): The state, with its `key` and `name`.

        """
        self.store.set(PREFIX + state["key"], state)
        index = self.index()
        if index.get(state["key"]) != state["name"]:
            index[state["key"]] = state["name"]
            self.store.set(INDEX_KEY, index)

    def forget(self, key: str) -> bool:
        """Remove one person's relationship (forgetting a person).

        Args:
            key (str): Their person key.

        Returns:
            bool: True if there was one.

        """
        index = self.index()
        had = self.get(key) is not None
        if had:
            self.store.delete(PREFIX + key)
        if index.pop(key, None) is not None:
            self.store.set(INDEX_KEY, index)
        return had

    def drop_reasons(self, gone: set[str]) -> list[str]:
        """Take out the reasons of the changes that rest on forgotten memories (their values
        stay: what they were drawn from is gone, not what happened to the numbers).

        Args:
            gone (set): The ids forgotten (`j000012`, `#12/o3`: a change cites a person's
                observation by its own id, `o3`).

        Returns:
            list: `relationship:<key>` for each relationship changed.

        """
        changed = []
        for key in self.index():
            state = self.get(key)
            if state is None:
                continue
            touched = False
            for dimension in DIMENSIONS:
                for change in (state.get(dimension) or {}).get("changes") or []:
                    cites = change.get("cites") or []
                    kept = [c for c in cites if c not in gone and f"{key}/{c}" not in gone]
                    if len(kept) != len(cites):
                        change["cites"] = kept
                        change["reason"] = ""
                        touched = True
            if touched:
                self.save(state)
                changed.append(PREFIX + key)
        return changed

    def feelings(self, keys, served) -> list[tuple[str, Audience]]:
        """The lines of "How you feel about the people here" for a turn.

        Args:
            keys (iterable): The people's keys (present, speaking, recalled), in order.
            served (frozenset or None): Who the conversation serves (`memory.audience`).

        Returns:
            list: (line, its audience) for each of them with a relationship, at most
                `MAX_FEELING_LINES`; the line is escaped for the prompt and shows only the
                reasons `served` may know.

        """
        lines: list[tuple[str, Audience]] = []
        # one read of the index: a person without a relationship costs no read (a turn reads
        # only what is cached)
        known = self.index()
        seen = set()
        for key in keys:
            if key in seen or key not in known or len(lines) >= MAX_FEELING_LINES:
                continue
            seen.add(key)
            state = self.get(key)
            if state is not None:
                lines.append(prompt_line(state, served))
        return lines


def _hidden(hidden, audience: Audience, moved: float, builder: bool) -> list:
    """The private shares of a dimension after a change: what evidence only `audience` may
    know moved stays out of the value shown to others (`shown_value`).

    Args:
        hidden (list or None): `[audience, share]` pairs so far.
        audience (list or None): The change's audience (None: public).
        moved (float): How far the change moved the value.
        builder (bool): A builder set it: the value set is everyone's, nothing stays apart.

    Returns:
        list: The pairs, at most `MAX_HIDDEN` (the oldest pooled into builders' only share).

    """
    if builder and audience is None:
        return []
    pairs = [[list(members), float(share)] for members, share in hidden or []]
    if audience is None or not moved:
        return pairs
    members = sorted(set(audience))
    for pair in pairs:
        if pair[0] == members:
            pair[1] = round(pair[1] + moved, 4)
            break
    else:
        pairs.append([members, round(moved, 4)])
    while len(pairs) > MAX_HIDDEN:
        # an empty audience is no player's: pooled shares stay hidden from every player
        pooled = next((pair for pair in pairs if not pair[0]), None)
        if pooled is None:
            pooled = [[], 0.0]
            pairs.insert(0, pooled)
        oldest = next(pair for pair in pairs if pair[0])
        pairs.remove(oldest)
        pooled[1] = round(pooled[1] + oldest[1], 4)
    return pairs


def shown_value(dimension: str, part: dict, served) -> float:
    """A dimension's value as `served` may know it: without what private evidence outside
    their knowledge moved.

    Args:
        dimension (str): One of `DIMENSIONS`.
        part (dict): That dimension of a state (`value`, `hidden`).
        served (frozenset or None): Who is served (None: a builder, who sees the whole value).

    Returns:
        float: The value, within the dimension's range.

    """
    value = float(part.get("value") or 0.0)
    if served is not None:
        value -= sum(
            float(share)
            for members, share in part.get("hidden") or []
            if not visible(members, served)
        )
    low, high = RANGES[dimension]
    return round(min(high, max(low, value)), 4)


def visible_reason(part: dict, served) -> dict | None:
    """The newest change of a dimension whose reason `served` may know.

    Args:
        part (dict): A dimension of a state (`value`, `changes`).
        served (frozenset or None): Who is served (None: a builder, who sees all).

    Returns:
        dict or None: That change, None when there is none.

    """
    for change in reversed(part.get("changes") or []):
        if change.get("reason") and visible(change.get("audience"), served):
            return change
    return None


def prompt_line(state: dict, served) -> tuple[str, Audience]:
    """One person's relationship as one escaped prompt line, and its audience.

    Args:
        state (dict): The relationship.
        served (frozenset or None): Who the request serves.

    Returns:
        tuple: ("Bob: familiar (familiarity 0.45); warm (warmth +0.30: he brought tea); ...",
            the narrowest audience of the reasons and private shares shown).

    """
    parts, audiences = [], []
    for dimension in DIMENSIONS:
        part = state.get(dimension) or {}
        value = shown_value(dimension, part, served)
        number = f"{value:.2f}" if dimension == FAMILIARITY else f"{value:+.2f}"
        change = visible_reason(part, served)
        why = ""
        if change is not None:
            why = f": {change['reason']}"
            audiences.append(change.get("audience"))
        # a private share of warmth or trust the value shown holds makes the line private to
        # it, as a reason does (it says what a whisper moved); familiarity's only counts talk,
        # and narrowing for it would keep every later talk with them private for good
        if dimension != FAMILIARITY:
            audiences += [
                members
                for members, share in part.get("hidden") or []
                if share and visible(members, served)
            ]
        parts.append(f"{describe(dimension, value)} ({dimension} {number}{why})")
    line = f"{state.get('name') or state['key']}: " + "; ".join(parts)
    return for_prompt(line), narrowest(audiences)
