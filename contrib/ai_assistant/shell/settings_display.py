"""
How `@assistant/set` shows an assistant's settings: every key by topic, one line each, or one key
in full with its meaning.

"""

import re
import textwrap

from evennia.utils.utils import fill

from ..conf import ESSENTIAL_KEYS, AssistantConfig, config_groups
from .screen import TEXT_CHARS, WIDTH, shown

# the settings overview: a key and its value take this many columns, what is allowed the rest
OPTION_COLUMN = 40


def _grouped_keys() -> set:
    return {key for _, keys in config_groups() for key in keys}


def key_meaning(key: str) -> str:
    """A configuration key's one-line meaning ("" for a key that is not one, e.g. persona)."""
    field = AssistantConfig.model_fields.get(key)
    return (field.description or "") if field else ""


def _compact_allowed(allowed: str) -> str:
    """What a key allows, in fewer characters: "integer, >= 1, <= 3600 (default 5)" is
    "integer, 1 to 3600" (the default is shown by the value's own line)."""
    allowed = re.sub(r" \(default .*\)$", "", allowed)
    return re.sub(r">= (\S+), <= (\S+?)(,|$)", r"\1 to \2\3", allowed)


def _option_line(key: str, value, allowed: str, own: bool) -> str:
    """One key of the settings overview: `  key = value` and what is allowed, wrapped."""
    left = f" {'*' if own else ' '}{key} = "
    # a long value is cropped to its column (`/set <name>/<key>` shows it whole)
    left += shown(repr(value), max(12, OPTION_COLUMN - 2 - len(left)))
    allowed = _compact_allowed(allowed)
    if len(left) > OPTION_COLUMN - 2:
        # a long key or value: what is allowed goes on the lines below, indented
        return left + "\n" + fill(allowed, WIDTH, indent=OPTION_COLUMN)
    wrapped = fill(allowed, WIDTH - OPTION_COLUMN).splitlines() or [""]
    pad = " " * OPTION_COLUMN
    return left.ljust(OPTION_COLUMN) + f"\n{pad}".join(wrapped)


class SettingsDisplay:
    """The `format_*` methods of the settings: data in, text out."""

    def format_options(self, assistant, rows: list, own=()) -> str:
        """Render an assistant's settings by topic, one line a key (its allowed values wrapped
        onto the next lines, never cut).

        Args:
            assistant (Object): The assistant character.
            rows (list): (key, value, what is allowed) tuples, as `options()` returns them.
            own (iterable, optional): The keys this assistant has its own value for (marked).

        Returns:
            str: A title, the keys under their topics, and how to see one key in full.

        """
        by_key = {row[0]: row for row in rows}
        own = set(own)
        lines = [
            f"|w{assistant.key}'s settings|n, the most changed first, then by topic",
            "key = value, what is allowed (* marks its own value, not the default)",
        ]
        groups = [
            ("persona", [key for key in by_key if key not in _grouped_keys()]),
            ("most changed", list(ESSENTIAL_KEYS)),
        ]
        for topic, keys in (*groups, *config_groups()):
            if topic != "most changed":
                keys = [key for key in keys if key not in ESSENTIAL_KEYS]
            present = [by_key[key] for key in keys if key in by_key]
            if not present:
                continue
            lines.append(f"|w{topic}|n")
            lines.extend(
                _option_line(key, value, allowed, key in own) for key, value, allowed in present
            )
        lines.append(f"One key in full, with its meaning: @assistant/set {assistant.key}/<key>")
        lines.append(
            f"Change one: @assistant/set {assistant.key}/<key>=<value> (=default drops its own)"
        )
        return "\n".join(lines)

    def format_option(self, assistant, row: tuple, default, source: str) -> str:
        """Render one setting in full: its value, default, allowed values and meaning.

        Args:
            assistant (Object): The assistant character.
            row (tuple): (key, value, what is allowed), as `options()` gives it.
            default (object): Its default (the game's, if the game sets one).
            source (str): Where the value comes from, in words.

        Returns:
            str: A few lines.

        """
        key, value, allowed = row
        meaning = key_meaning(key)
        lines = [
            f"{key} = {shown(repr(value), TEXT_CHARS)}",
            f"  from: {source}",
            f"  default: {shown(repr(default), TEXT_CHARS)}",
            f"  allowed: {_compact_allowed(allowed)}",
        ]
        if meaning:
            lines.append(f"  meaning: {meaning}")
        lines.append(f"  change: @assistant/set {assistant.key}/{key}=<value>")
        return "\n".join(textwrap.fill(line, WIDTH, subsequent_indent="    ") for line in lines)
