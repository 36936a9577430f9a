"""
The dashboard's template filter `clip`: every stored string a page shows is redacted and clipped.

What the dashboard shows was written by players (names, journal entries, what they told the
assistant) or by the model (tool names and arguments, stop reasons, errors, summaries), and
either can be of any size: a hostile endpoint once sent a 100,000-character tool name. Other
parts of the contrib bound what they store, but a page never relies on that: `{{ value|clip }}`
shows at most `NAME_CHARS` characters, `{{ value|clip:2000 }}` at most 2000, with an ellipsis
and the full length after a cut.

"""

import re
from datetime import datetime, timezone

from django.template import Library
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import mark_safe

from ..shell.time_display import game_zone
from ..shell.game_settings import redacted

# a name, a key, a tool name, a stop reason, a place: one line of a table
NAME_CHARS = 200
# a journal entry, an observation, a memory, an error, a summary (journal entries are refused
# past 2000 characters when written, so a well-formed one is shown whole)
TEXT_CHARS = 2000
# redaction sees this much past the cut, so a secret that straddles it is still recognised
_REDACT_MARGIN = 1000

register = Library()


def clip(value, limit: int = NAME_CHARS) -> str:
    """A stored value as text fit for a page: secrets redacted, at most `limit` characters.

    Args:
        value (object): What to show; None shows as "", anything else as its `str`.
        limit (int, optional): The most characters kept before the ellipsis.

    Returns:
        str: The text, or its first `limit` characters followed by "…" and the full length.

    """
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    limit = max(1, int(limit))
    if len(text) <= limit:
        return redacted(text)
    # redacting a huge string whole would cost for nothing: only its head is shown
    head = redacted(text[: limit + _REDACT_MARGIN])
    return f"{head[:limit]}… ({len(text):,} characters in all)"


# most names listed in an audience before "and N others"
AUDIENCE_NAMES = 5
# a memory's id as the model and the pages name it: a journal entry, a long-term memory, a digest
MEMORY_ID = re.compile(r"\b[jmd][0-9]{6}\b")


@register.filter(name="linked_ids")
def linked_ids(value, item_url: str) -> str:
    """Text with each memory id in it made a link to that memory (`{{ text|clip|linked_ids:url }}`).

    The text is escaped first; an id is letters and digits only, so a link adds nothing a
    player or the model wrote.

    Args:
        value (object): The text (already clipped).
        item_url (str): The address a memory's id is appended to.

    Returns:
        str: Safe HTML.

    """
    text = str(conditional_escape("" if value is None else value))
    url = str(conditional_escape(item_url))
    return mark_safe(
        MEMORY_ID.sub(
            lambda m: f'<a class="memory-id" href="{url}{m.group(0)}">{m.group(0)}</a>', text
        )
    )


# a person's key that is a game object's dbref
DBREF = re.compile(r"#[0-9]{1,12}")


def _name_of(key, names: dict) -> str:
    """A person's name: as the assistant knows them, else (someone it keeps no profile of, such
    as a builder who whispered to it) the game object's own name, found once and kept in
    `names` for the rest of the page; else the key."""
    name = names.get(key)
    if name is None and isinstance(key, str) and DBREF.fullmatch(key):
        from evennia.objects.models import ObjectDB

        found = ObjectDB.objects.filter(id=int(key[1:])).values_list("db_key", flat=True).first()
        name = names[key] = str(found) if found else key
    return name or str(key)


def audience_words(audience, names: dict) -> str:
    """An audience in words: "public", or "private to Bob and Cid".

    Args:
        audience (list or None): Person keys (None or empty: public).
        names (dict): Person key -> name, as the assistant knows them (a dbref it does not
            know is looked up and added).

    Returns:
        str: The words (names clipped, at most `AUDIENCE_NAMES` of them).

    """
    if not audience:
        return "public"
    keys = list(audience) if isinstance(audience, (list, tuple, set, frozenset)) else [audience]
    shown = [clip(_name_of(key, names), NAME_CHARS) for key in keys[:AUDIENCE_NAMES]]
    if len(keys) > AUDIENCE_NAMES:
        shown.append(f"{len(keys) - AUDIENCE_NAMES} others")
    words = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
    return f"private to {words}"


@register.filter(name="clip")
def clip_filter(value, limit=NAME_CHARS) -> str:
    """The template filter: `{{ value|clip }}` or `{{ value|clip:2000 }}` (see `clip`).

    Args:
        value (object): What to show.
        limit (int or str, optional): The most characters kept.

    Returns:
        str: The clipped text (escaped by the template, as any string is).

    """
    try:
        limit = int(limit)
    except (TypeError, ValueError):
        limit = NAME_CHARS
    return clip(value, limit)


def parse_time(value):
    """A stored time (an ISO string or a datetime) as an aware datetime, or None.

    Args:
        value (object): What was stored.

    Returns:
        datetime or None: Naive times are taken as UTC, as the contrib stores them.

    """
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value))
        except (TypeError, ValueError):
            return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def clock_label() -> str:
    """The line every page shows above its content, naming the clock its times are in.

    Returns:
        str: e.g. "Times are real time, UTC (the server's TIME_ZONE); game time is marked 'game'."

    """
    return (
        f"Times are real time in {game_zone()} (the game's TIME_ZONE setting), to the "
        "second; game time, where shown, is marked 'game'."
    )


def real_time(value) -> str:
    """A real time, readable: "2026-01-01 12:00:05 UTC" in the viewer's zone, no microseconds.

    Args:
        value (object): A stored time.

    Returns:
        str: The time, or the stored value clipped when it is not one.

    """
    moment = parse_time(value)
    if moment is None:
        return clip(value, 40)
    return moment.astimezone(game_zone()).strftime("%Y-%m-%d %H:%M:%S %Z")


def game_time(value) -> str:
    """A game time, readable and marked as such: "game 2026-01-03 14:00" (never a zone: the
    game's calendar has none).

    Args:
        value (object): A stored game time (ISO).

    Returns:
        str: The time, or the stored value clipped when it is not one.

    """
    try:
        moment = datetime.fromisoformat(str(value))
    except (TypeError, ValueError):
        return clip(value, 40)
    return f"game {moment.strftime('%Y-%m-%d %H:%M')}"


@register.filter(name="when")
def when_filter(value) -> str:
    """`{{ value|when }}`: a real time in the viewer's zone as a `<time>` element (its
    `datetime` the moment in ISO, to the second), or "" (see `real_time`).

    Args:
        value (object): A stored time.

    Returns:
        str: Safe markup (every part escaped), or the stored value clipped when not a time.

    """
    if value in (None, ""):
        return ""
    moment = parse_time(value)
    if moment is None:
        return clip(value, 40)
    iso = moment.replace(microsecond=0).isoformat()
    return format_html('<time datetime="{}">{}</time>', iso, real_time(moment))


@register.filter(name="gametime")
def gametime_filter(value) -> str:
    """`{{ value|gametime }}`: a game time, marked (see `game_time`)."""
    if value in (None, ""):
        return ""
    return game_time(value)
