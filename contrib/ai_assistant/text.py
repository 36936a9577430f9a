"""
Text that crosses a trust boundary, made safe in one place.

Two directions:

- Into a prompt (`for_prompt`): what players typed, what the model wrote earlier and what any
  store holds (journal, profiles, core memory, summaries) is data. It is escaped so that it can
  never close or forge the prompt's own `<event>` tags or pose as system text, and it is kept
  on one line so that a player cannot draw a fake section of the prompt.
- Out to players (`for_players`): what the model asks a tool to say, emote or whisper. No
  control characters (raw escape codes clear screens), no line breaks (a second line could
  pose as a system message or as someone else speaking), and Evennia markup shown literally
  unless the game allows color (`|/`, `|-`, `|lc...` links are never allowed).

`redact` removes secrets (API keys, bearer tokens) from any text before it is logged, stored or
shown: some endpoints echo the key in their error messages.

"""

import re
from collections.abc import Iterable
from html import escape

# ANSI/VT escape sequences (CSI, OSC, two-character escapes), then any other control character
_ESCAPE_SEQUENCE_RE = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])|\x9b[0-?]*[ -/]*[@-~]"
)
_LINE_BREAK_RE = re.compile(r"\s*(?:\r\n|\r|\n|\x0b|\x0c|\x85|\u2028|\u2029)+\s*")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_SPACES_RE = re.compile(r"[ \t]+")
# Evennia color markup a game may allow: |r, |R, |[r, |500, |[500, |=a, |#ff0000, |n, |h, ...
_COLOR_RE = re.compile(
    r"\|\[?(?:[rgybmcwxRGYBMCWX]|[0-5]{3}|=[a-z]|#[0-9a-fA-F]{6})|\|[nhHuUiIsS*^]"
)
_SECRET_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9_\-\.=]{8,}"),
    re.compile(r"(?i)(api[_-]?key[\"'\s:=]+)[A-Za-z0-9_\-\.]{8,}"),
)
LINE_BREAK_MARK = " / "
REDACTED = "[redacted]"


def one_line(text: str, line_break: str = LINE_BREAK_MARK) -> str:
    """`text` without escape sequences or control characters, its line breaks made visible.

    Args:
        text (str): Any text.
        line_break (str): What a line break (or a run of them) becomes.

    Returns:
        str: One line, runs of spaces collapsed, ends stripped.

    """
    text = _ESCAPE_SEQUENCE_RE.sub("", str(text or ""))
    text = _LINE_BREAK_RE.sub(line_break, text)
    text = _CONTROL_RE.sub("", text).replace("\t", " ")
    return _SPACES_RE.sub(" ", text).strip()


def for_prompt(text: str, keep_lines: bool = False) -> str:
    """Text from any source, ready to sit inside a prompt as data.

    Args:
        text (str): What a player said, what a store holds, what a model wrote.
        keep_lines (bool): Keep line breaks (for multi-line text the model wrote itself, such as
            a summary, that sits in a message of its own).

    Returns:
        str: Escaped (`<`, `>`, `&` and `"`), so no tag can be closed or forged.

    """
    if keep_lines:
        lines = [one_line(line) for line in str(text or "").splitlines()]
        return "\n".join(_escaped(line) for line in lines if line)
    return _escaped(one_line(text))


def _escaped(text: str) -> str:
    # attributes in prompts are double-quoted: `"` must go, `'` may stay (and reads better)
    return escape(text, quote=False).replace('"', "&quot;")


def for_players(text: str, allow_color: bool = False) -> str:
    """What the model wrote, ready to be shown to players as one line.

    Args:
        text (str): The text of a `say`, `emote` or `whisper`.
        allow_color (bool): Keep Evennia color codes (`|r`, `|500`, `|n`, ...). Layout codes
            (`|/`, `|-`, `|_`, `|>`) and links (`|lc`) are always shown literally.

    Returns:
        str: The text with every other `|` doubled, so Evennia prints it as typed.

    """
    text = one_line(text, line_break=" ")
    if not allow_color:
        return text.replace("|", "||")
    parts = []
    position = 0
    for match in _COLOR_RE.finditer(text):
        parts.append(text[position : match.start()].replace("|", "||"))
        parts.append(match.group(0))
        position = match.end()
    parts.append(text[position:].replace("|", "||"))
    return "".join(parts)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with every known secret and anything shaped like an API key replaced.

    Args:
        text (str): An error message, a log line.
        secrets (iterable): Exact values to remove (the configured API key).

    Returns:
        str: The text with `[redacted]` in their place.

    """
    text = str(text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(
            lambda match: (match.group(1) if match.re.groups else "") + REDACTED, text
        )
    return text


# nouns whose plural is not the singular with an "s"
_PLURALS = {"person": "people", "child": "children"}


def counted(count: int, one: str, many: str | None = None) -> str:
    """A count with its noun in the right number: "1 person", "3 people", "0 entries".

    Args:
        count (int): How many.
        one (str): The noun for one ("journal entry").
        many (str, optional): The noun for several; by default the last word made plural
            ("journal entries", "people") or `one` with an "s".

    Returns:
        str: e.g. "1 journal entry".

    """
    if count == 1:
        return f"1 {one}"
    if many is None:
        head, _, last = one.rpartition(" ")
        if last in _PLURALS:
            last = _PLURALS[last]
        elif last.endswith("y") and last[-2:-1] not in "aeiou":
            last = last[:-1] + "ies"
        else:
            last += "s"
        many = f"{head} {last}" if head else last
    return f"{count} {many}"
