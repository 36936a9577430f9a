"""
Decoding JSON a model wrote: with a size limit and a depth limit, and never an exception other
than `ModelJSONError`.

Whatever a model endpoint sends is untrusted, and Python's `json` module is not built for that:
it recurses once per level of nesting, so tool-call arguments nested 50,000 deep (`[[[[...`)
raise `RecursionError` (not a `JSONDecodeError`), and a number of more than 4,300 digits raises
a plain `ValueError`. `decode_model_json` is the one way the contrib decodes JSON that came from
a model (tool-call arguments, the lines of a batch's output file): it checks the size, then the
depth with a linear scan that never recurses (`check_model_json`), and only then decodes.
Structured replies are decoded by pydantic's own parser, which validates as it decodes; it is
given only what passed `check_model_json`.

"""

import json
import re
from typing import Any

# how deep arrays and objects may nest in JSON a model wrote. Every tool's arguments and every
# structured output the contrib asks for nests three or four levels; a chat completion (a line
# of a batch's output file) about eight
MAX_JSON_DEPTH = 20
# the most characters of one tool call's arguments. The largest legitimate arguments (a journal
# entry of 2,000 characters, escaped) are a few thousand characters
MAX_TOOL_ARGUMENT_CHARS = 20_000

# kinds of JSON that was not decoded, counted as malformed output in the usage stats
JSON_TOO_LARGE = "json_too_large"
JSON_TOO_DEEP = "json_too_deep"
INVALID_JSON = "invalid_json"

# a string (to its closing quote, escapes honoured, or to the end of an unterminated one) or a
# bracket: brackets inside strings are skipped with the string, in one match
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


class ModelJSONError(ValueError):
    """JSON a model wrote that was not decoded: too large, nested too deep, or not JSON.

    Args:
        kind (str): `JSON_TOO_LARGE`, `JSON_TOO_DEEP` or `INVALID_JSON`.
        message (str): What was wrong and what is allowed, for the model and the log.

    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def too_large_message(what: str, chars: int, max_chars: int) -> str:
    """The error for JSON over its size limit.

    Args:
        what (str): What the JSON is, a plural noun phrase (e.g. "arguments for 'say'").
        chars (int): How many characters were sent.
        max_chars (int): The most allowed.

    Returns:
        str: e.g. "arguments for 'say' are 123,456 characters; the most is 20,000".

    """
    return f"{what} are {chars:,} characters; the most is {max_chars:,}"


def nesting_depth(text: str, stop_above: int | None = None) -> int:
    """How deep the arrays and objects of JSON text nest, found in one pass that never recurses.

    Brackets inside strings do not count (escaped quotes are honoured). The text need not be
    valid JSON: a closing bracket without its opening one is ignored.

    Args:
        text (str): The JSON text.
        stop_above (int, optional): Stop scanning once the depth exceeds this (the result is
            then `stop_above + 1`): a hostile text is not scanned to its end.

    Returns:
        int: The deepest level reached; 0 for a scalar, 1 for `{"a": 1}` or `[1, 2]`.

    """
    depth = deepest = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        char = text[match.start()]
        if char == "[" or char == "{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_above is not None and deepest > stop_above:
                    return deepest
        elif char == "]" or char == "}":
            depth = max(depth - 1, 0)
    return deepest


def check_model_json(
    text: str, what: str, *, max_chars: int, max_depth: int = MAX_JSON_DEPTH
) -> None:
    """Refuse JSON a model wrote that is too large or nested too deep, before it is decoded.

    It costs time linear in the text's length (and stops early on a deep text); a decoder
    given the text afterwards never meets more than `max_depth` levels.

    Args:
        text (str): The JSON text.
        what (str): What it is, a plural noun phrase, for the error messages.
        max_chars (int): The most characters allowed.
        max_depth (int): The deepest nesting of arrays and objects allowed.

    Raises:
        ModelJSONError: `JSON_TOO_LARGE` or `JSON_TOO_DEEP`.

    """
    if len(text) > max_chars:
        raise ModelJSONError(JSON_TOO_LARGE, too_large_message(what, len(text), max_chars))
    if nesting_depth(text, stop_above=max_depth) > max_depth:
        raise ModelJSONError(JSON_TOO_DEEP, f"{what} are nested deeper than {max_depth} levels")


def decode_model_json(
    text: str, what: str, *, max_chars: int, max_depth: int = MAX_JSON_DEPTH
) -> Any:
    """Decode JSON a model wrote, refusing what is too large or nested too deep.

    `check_model_json` runs first, so `json.loads` never meets more than `max_depth` levels.

    Args:
        text (str): The JSON text.
        what (str): What it is, a plural noun phrase, for the error messages (e.g.
            "arguments for 'say'", "the contents of the structured reply").
        max_chars (int): The most characters allowed.
        max_depth (int): The deepest nesting of arrays and objects allowed.

    Returns:
        Any: The decoded value.

    Raises:
        ModelJSONError: `JSON_TOO_LARGE` ("... are 123,456 characters; the most is 20,000"),
            `JSON_TOO_DEEP` ("... are nested deeper than 20 levels"), or `INVALID_JSON` (what
            the decoder said, and where).

    """
    check_model_json(text, what, max_chars=max_chars, max_depth=max_depth)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelJSONError(
            INVALID_JSON, f"{what} are not valid JSON ({exc.msg}: character {exc.pos})"
        ) from None
    except (ValueError, RecursionError) as exc:
        # a number of more than 4,300 digits (Python's limit on converting text to int); a
        # RecursionError cannot follow the depth check, but a decode must never raise one
        reason = str(exc).split(":")[0][:120]
        raise ModelJSONError(INVALID_JSON, f"{what} are not valid JSON ({reason})") from None
