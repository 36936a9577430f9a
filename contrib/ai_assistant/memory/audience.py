"""
Who may know a memory: its audience.

Every memory (journal entry, observation, long-term memory, profile attribute, reflection) has
an audience:

- `None`: public. Said aloud in a room, observed in the open, a builder's instruction. The room
  speech keeps who was present as its *witnesses* (provenance); by default the assistant may
  repeat what was said aloud to anyone, as a person would (`room_speech_is_public`).
- a list of person keys: private to those people (and the assistant). What is heard in a
  whisper or a page is private to its speaker. A person's key is their dbref (`#12`), or
  `name:<lower-case name>` for someone known only by name.

A conversation serves some people (`served`): those present and those who spoke to the
assistant in it. A memory is visible to it when it is public, or when *everyone* served may
know it (`served` is a subset of the audience). Nobody served is not everybody: a conversation
that serves no one sees only public memories. A builder's view serves `None` and sees all.

What is derived from several memories (a profile attribute, a reflection, a fact drawn from two
entries) is known only to those who may know all of them: the intersection of their audiences
(`narrowest`). An empty intersection is a memory only builders see.

The same holds for a request to the model: its audience is the narrowest of everything in it
(the history shown, core notes, working memory, reminders, recalled memories, tool results),
and whatever the model says or writes from it keeps that audience. A message keeps its
audience in its `metadata` (never sent; `message_audience`).

"""

from collections.abc import Iterable

Audience = list[str] | None
# served by no one in particular: stands for "only what is public"
NOBODY = "<nobody>"


def person_key(speaker_key: str | None, name: str) -> str:
    """The key a person is known by: their dbref, else their lower-case name.

    Args:
        speaker_key (str, optional): Their dbref (`#12`), if known.
        name (str): Their name.

    Returns:
        str: The dbref, or `name:` followed by the name in lower case.

    """
    return speaker_key or f"name:{name.strip().lower()}"


def private_to(*keys: str) -> list[str]:
    """An audience of exactly these people.

    Args:
        *keys (str): The people's keys.

    Returns:
        list: The keys, sorted, without duplicates.

    """
    return sorted(set(keys))


def served_by(keys: Iterable[str]) -> frozenset[str]:
    """The people a conversation serves, as `visible` expects them.

    Args:
        keys (iterable): The people's keys; empty ones are skipped.

    Returns:
        frozenset: The keys, or `{NOBODY}` when there are none (only public memories show).

    """
    served = frozenset(key for key in keys if key)
    return served or frozenset({NOBODY})


def visible(audience: Audience, served: frozenset[str] | None) -> bool:
    """Whether a memory with `audience` may be shown to a conversation serving `served`.

    Args:
        audience (list or None): The memory's audience (None: public).
        served (frozenset or None): Who the conversation serves (`served_by`); None for a
            builder's view, which sees everything.

    Returns:
        bool: True when it may be shown.

    """
    if served is None or audience is None:
        return True
    return served <= set(audience)


class AudienceGroups:
    """Each audience memories have, by number (0: public), so an index can keep a number per
    memory and leave out at once those of the audiences a recall may not see (the same people
    in any order are one audience). Not for threads: recall asks on the reactor's thread."""

    # how many conversations' answers `open_to` remembers (the oldest asked is let go first)
    REMEMBERED = 256

    def __init__(self):
        self._numbers: dict[tuple[str, ...] | None, int] = {None: 0}
        self._audiences: list[Audience] = [None]
        # served -> (how many audiences were looked at, the numbers of those it may see): a
        # recall asks again for the audiences numbered since, not for all of them
        self._open: dict[frozenset[str], tuple[int, tuple[int, ...]]] = {}

    def number(self, audience: Audience) -> int:
        """The number of `audience` (a new one gets the next).

        Args:
            audience (list or None): An audience (None: public).

        Returns:
            int: Its number.

        """
        key = tuple(sorted(audience)) if audience is not None else None
        number = self._numbers.get(key)
        if number is None:
            number = self._numbers[key] = len(self._audiences)
            self._audiences.append(list(key))
        return number

    def open_to(self, served: frozenset[str] | None) -> tuple[int, ...] | None:
        """The numbers of the audiences a conversation serving `served` may see (`visible`).

        Args:
            served (frozenset or None): Who it serves; None: a builder's view.

        Returns:
            tuple or None: The numbers; None for a builder's view, which sees all.

        """
        if served is None:
            return None
        served = frozenset(served)
        known = len(self._audiences)
        seen, numbers = self._open.pop(served, (0, ()))
        if seen < known:
            numbers += tuple(
                number for number in range(seen, known) if visible(self._audiences[number], served)
            )
        self._open[served] = (known, numbers)  # now the newest asked
        if len(self._open) > self.REMEMBERED:
            del self._open[next(iter(self._open))]
        return numbers


def narrowest(audiences: Iterable[Audience]) -> Audience:
    """The audience of something drawn from memories with these audiences.

    Args:
        audiences (iterable): Their audiences.

    Returns:
        list or None: None when all are public; else the people in every private audience.

    """
    result: set[str] | None = None
    for audience in audiences:
        if audience is None:
            continue
        result = set(audience) if result is None else result & set(audience)
    return None if result is None else sorted(result)


def message_audience(message: dict) -> Audience:
    """Who may know what a chat message holds, from its storage-only `metadata`.

    Args:
        message (dict): A chat message; one without metadata is public.

    Returns:
        list or None: Its audience.

    """
    return (message.get("metadata") or {}).get("audience")


def within(people: Iterable[str], audience: Audience) -> bool:
    """Whether everyone in `people` may know what has `audience`.

    Args:
        people (iterable): Person keys (those who would see or hear something).
        audience (list or None): The audience of what they would see (None: public).

    Returns:
        bool: True when it is public, or every one of them is in the audience.

    """
    return audience is None or set(people) <= set(audience)


def label(audience: Audience, names: dict[str, str] | None = None) -> str:
    """A few words for builders: "public", "private to Bob", "builders only".

    Args:
        audience (list or None): The audience.
        names (dict, optional): Display names keyed by person key; a key without one is
            shown without its `name:` prefix.

    Returns:
        str: The label.

    """
    if audience is None:
        return "public"
    if not audience:
        return "builders only"
    names = names or {}
    people = [names.get(key, key.removeprefix("name:")) for key in audience]
    return "private to " + ", ".join(people)
