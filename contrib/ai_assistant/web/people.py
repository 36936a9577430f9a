"""
The people an assistant knows, as its memory tab and a person's page show them: how it feels
about each (`memory.relationships`: familiarity, warmth and trust, each with its latest reason,
when and by whom) and who told whom what (`memory.gossip`).

Read through the door (`character.assistant.memory`: `admin.kind("profiles")`, `relationships`,
`relationship`, `gossip`), on the reactor, writing nothing. A builder sees every reason, each
one drawn from a private exchange labelled with whom it is private to ("private to Bob"), as
the dashboard labels every private entry. Setting a dimension is confirmed first on the
confirmation page (`plan`), then done by `set_relationship` with the validation of
`@assistant/memory <name>/people=<person>/<dimension>=<value> <reason>` and recorded in the
review log, as the command records it.

"""

from ..errors import Refused
from ..memory.relationships import CHANGES_KEPT, DIMENSIONS, FAMILIARITY, describe, visible_reason
from .filters import audience_words

# the most gossip records a page lists (the log keeps at most 50)
GOSSIP_PAGE = 25
# the changes of each dimension a person's page lists, newest first (all that are kept)
CHANGES_SHOWN = CHANGES_KEPT
# a person filter as typed
MAX_PERSON_CHARS = 100


def _number(dimension: str, value: float) -> str:
    return f"{value:.2f}" if dimension == FAMILIARITY else f"{value:+.2f}"


def _change_row(change: dict, names: dict) -> dict:
    return {
        "change": f"{float(change.get('change') or 0):+.2f}",
        "value": change.get("value"),
        "reason": change.get("reason") or "",
        "at": change.get("at"),
        "by": change.get("by") or "",
        "audience": audience_words(change.get("audience"), names),
        "private": bool(change.get("audience")),
    }


def dimensions(state: dict | None, names: dict, changes: int = 0) -> list[dict]:
    """A relationship's dimensions as a page shows them.

    Args:
        state (dict or None): The relationship (`memory.relationships`); None: none yet.
        names (dict): Person key -> name, for the reasons' audiences.
        changes (int, optional): How many of each dimension's changes to list, newest first
            (a person's page lists them all; the memory tab only the latest reason).

    Returns:
        list: Per dimension `name`, `value`, `word`, `latest` (its newest change with a reason,
            for a builder who sees all) and `changes`.

    """
    rows = []
    for dimension in DIMENSIONS:
        part = (state or {}).get(dimension) or {}
        value = float(part.get("value") or 0.0)
        latest = visible_reason(part, None) if state else None
        history = list(reversed(part.get("changes") or []))[:changes] if changes else []
        rows.append(
            {
                "name": dimension,
                "value": _number(dimension, value),
                "word": describe(dimension, value),
                "latest": _change_row(latest, names) if latest else None,
                "changes": [_change_row(change, names) for change in history],
            }
        )
    return rows


def people_rows(relationships: list, page_people: list, names: dict) -> list[dict]:
    """The people on one page of the memory tab, each with how it feels about them.

    Args:
        relationships (list): Every relationship (`memory.admin.kind("relationships").all()`).
        page_people (list): (key, name) of the people on the page.
        names (dict): Person key -> name.

    Returns:
        list: `key`, `name`, `state` (bool), `interactions`, `last_met`, `dimensions`.

    """
    states = {state["key"]: state for state in relationships}
    rows = []
    for key, name in page_people:
        state = states.get(key)
        rows.append(
            {
                "key": key,
                "name": name,
                "state": state is not None,
                "interactions": int((state or {}).get("interactions") or 0),
                "last_met": (state or {}).get("last_met"),
                "dimensions": dimensions(state, names),
            }
        )
    return rows


def everyone(memory, relationships: list) -> list[tuple[str, str]]:
    """Everyone it knows, by name: those with a profile and those with only a relationship.

    Args:
        memory (AssistantMemory): `character.assistant.memory`.
        relationships (list): Every relationship (`memory.admin.kind("relationships").all()`).

    Returns:
        list: (key, name) pairs.

    """
    known = dict(memory.admin.kind("profiles").index())
    for state in relationships:
        known.setdefault(state["key"], state.get("name") or state["key"])
    return sorted(known.items(), key=lambda item: (str(item[1]).lower(), str(item[0])))


def plan(memory, person: str, dimension: str, value: str, reason: str) -> dict:
    """What setting a dimension would do, checked as `set_relationship` checks it (nothing is
    written): the confirmation page shows it, or the refusal.

    Args:
        memory (AssistantMemory): `character.assistant.memory`.
        person (str): The person's key or name.
        dimension (str): familiarity, warmth or trust.
        value (str): The value as typed.
        reason (str): Why.

    Returns:
        dict: `key`, `name`, `dimension`, `value` (as typed, stripped), `after` and `before`
            (words and numbers), `reason`.

    Raises:
        Refused: An unknown person or dimension, a value out of range, a reason too long.

    """
    # the door's own check, as the confirmed POST's `set_relationship` makes it
    key, name, dimension, number, reason, state = memory.admin.kind("relationships").check(
        person, dimension, value, reason
    )
    before = float(((state or {}).get(dimension) or {}).get("value") or 0.0)
    return {
        "key": key,
        "name": name,
        "dimension": dimension,
        "value": value.strip(),
        "before": f"{_number(dimension, before)} ({describe(dimension, before)})",
        "after": f"{_number(dimension, number)} ({describe(dimension, number)})",
        "reason": reason,
    }


def person_key(memory, typed: str) -> str | None:
    """The person key a gossip filter names: a known person's key (by name or key), else
    what was typed as a key (`#12`) or as a name known only by name (`name:bob`).

    Args:
        memory (AssistantMemory): `character.assistant.memory`.
        typed (str): What the builder typed.

    Returns:
        str or None: The key (None: no filter).

    """
    typed = typed.strip()[:MAX_PERSON_CHARS]
    if not typed:
        return None
    try:
        return memory.admin.kind("relationships").find(typed)[0]
    except Refused:
        return typed if typed.startswith(("#", "name:")) else f"name:{typed.lower()}"


def gossip_row(record: dict, names: dict) -> dict:
    """One gossip record as the memory tab lists it.

    Args:
        record (dict): A record (`memory.gossip.GossipLog`).
        names (dict): Person key -> name.

    Returns:
        dict: Its fields, the people it names in words.

    """
    people = [str(key) for key in (record.get("people") or [])[:20]]
    trust = record.get("trust")
    return {
        "at": record.get("at"),
        "direction": record.get("direction"),
        "teller": record.get("teller"),
        "to": record.get("to"),
        "chain": record.get("chain"),
        "memory_id": record.get("memory_id"),
        "text": record.get("text"),
        "trust": f"{float(trust):.2f}" if isinstance(trust, (int, float)) else "",
        "location": record.get("location"),
        "people": ", ".join(names.get(key) or key for key in people),
    }


__all__ = ["dimensions", "people_rows", "everyone", "plan", "person_key", "gossip_row"]
