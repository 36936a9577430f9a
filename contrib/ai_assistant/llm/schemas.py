"""
JSON schemas as they are sent to a model: length bounds said in words, not as keywords.

A server that constrains its model's output with a grammar built from the schema (llama.cpp's
server and llama-cpp-python for tool calls and `json_object` with a schema; others the same way)
spells `maxLength: 1000` out as a thousand nested optional characters, which llama.cpp refuses
("number of rules that are going to be repeated ... exceeds sane defaults"); llama-cpp-python
then drops the connection. The bounds are never the model's to keep anyway: every tool call and
structured reply is validated against its pydantic model, which refuses an over-long value with
an error the model can correct. So the schema sent says "at most 1000 characters" in the
description, where every model reads it, and leaves the keyword out.

"""

from typing import Any

# keywords a grammar spells out item by item, and how the description says them
_BOUNDS = {"maxLength": "characters", "maxItems": "items"}


def bounds_in_words(schema: Any) -> Any:
    """A copy of a JSON schema with `maxLength` and `maxItems` said in each description.

    Args:
        schema (any): A JSON schema (or a part of one).

    Returns:
        any: The schema without those keywords; a property that had one says "(at most N
            characters)" or "(at most N items)" at the end of its description.

    """
    if isinstance(schema, list):
        return [bounds_in_words(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    said = [
        f"at most {schema[key]} {unit}"
        for key, unit in _BOUNDS.items()
        if isinstance(schema.get(key), int) and not isinstance(schema.get(key), bool)
    ]
    changed = {
        key: bounds_in_words(value)
        for key, value in schema.items()
        # (a property called "maxLength" maps to a schema, not a number: it stays)
        if not (key in _BOUNDS and isinstance(value, int))
    }
    if said:
        description = str(changed.get("description") or "").rstrip()
        changed["description"] = f"{description} ({', '.join(said)})".strip()
    return changed
