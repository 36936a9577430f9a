"""
The dashboard's template filter `clip`: every stored string a page shows is redacted and clipped.

What the dashboard shows was written by players (names, journal entries, what they told the
assistant) or by the model (tool names and arguments, stop reasons, errors, summaries), and
either can be of any size: a hostile endpoint once sent a 100,000-character tool name. Other
parts of the contrib bound what they store, but a page never relies on that: `{{ value|clip }}`
shows at most `NAME_CHARS` characters, `{{ value|clip:2000 }}` at most 2000, with an ellipsis
and the full length after a cut.

"""

from django.template import Library

from ..game_settings import redacted

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
