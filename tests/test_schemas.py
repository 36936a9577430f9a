"""
Schemas as sent to a model: length bounds said in words, never as keywords a grammar-constrained
server (llama.cpp, llama-cpp-python) spells out character by character and refuses; the bounds
still hold, since every call and reply is validated against its pydantic model.

"""

import json

from pydantic import BaseModel, Field

from ai_assistant.llm.schemas import bounds_in_words
from ai_assistant.llm.structured import schema_format
from ai_assistant.tools import default_registry
from ai_assistant.tools.base import TURN


def keywords(schema) -> set:
    found = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key != "properties":
                found.add(key)
            found |= keywords(value)
    elif isinstance(schema, list):
        for item in schema:
            found |= keywords(item)
    return found


def test_bounds_are_said_in_the_description_and_left_out():
    schema = {
        "type": "object",
        "properties": {
            "text": {"type": "string", "maxLength": 1000, "description": "What to say."},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 8},
            "maxLength": {"type": "integer"},
        },
    }
    sent = bounds_in_words(schema)
    assert sent["properties"]["text"] == {
        "type": "string",
        "description": "What to say. (at most 1000 characters)",
    }
    assert sent["properties"]["tags"]["description"] == "(at most 8 items)"
    assert sent["properties"]["tags"]["items"]["description"] == "(at most 20 characters)"
    assert sent["properties"]["maxLength"] == {"type": "integer"}  # a property of that name
    assert schema["properties"]["text"]["maxLength"] == 1000  # the original is unchanged


def test_no_tool_or_structured_schema_sends_a_length_bound():
    registry = default_registry()
    tools = registry.schemas(TURN)
    assert tools and not {"maxLength", "maxItems"} & keywords(tools)
    say = next(tool for tool in tools if tool["function"]["name"] == "say")
    assert "at most 1000 characters" in json.dumps(say)

    class Facts(BaseModel):
        facts: list[str] = Field(max_length=5)

    sent = schema_format(Facts)["json_schema"]["schema"]
    assert "maxItems" not in keywords(sent)
    assert "at most 5 items" in sent["properties"]["facts"]["description"]
