"""
A hostile OpenAI-compatible endpoint: what it sends is bounded before the game handles it.

Found by probing a real server with a hostile model endpoint: tool-call arguments nested 50,000
deep raised a `RecursionError` out of tool dispatch; negative token counts drove the spend
counter below zero (turning budgets off); a 2 MB reply held players' commands for seconds; a
100,000-character tool name reached the dashboard whole. Each is checked here through the real
`openai` SDK against the scripted server, and in a game world.

"""

import asyncio
import json
import pickle
from types import SimpleNamespace

import pytest

from ai_assistant.llm import structured
from ai_assistant.llm.chat import (
    INVALID_RESPONSE,
    MAX_TOKENS_PER_CALL,
    ChatReply,
    ChatRequest,
    EndpointSettings,
    LLMError,
    TokenUsage,
    ToolCall,
)
from ai_assistant.llm.client import OpenAIChatClient, close_async_clients, use_io_process
from ai_assistant.llm.replies import (
    CONTENT_CUT,
    FINISH_REASON_CUT,
    INVALID_USAGE,
    MAX_EMBEDDING_DIMENSIONS,
    MAX_REFUSAL_CHARS,
    MAX_TOOL_CALL_ID_CHARS,
    MAX_TOOL_CALLS_PER_REPLY,
    MAX_TOOL_NAME_CHARS,
    MIN_REPLY_CHARS,
    MODEL_NAME_CUT,
    REFUSAL_CUT,
    TOOL_CALL_ID_CUT,
    TOOL_CALLS_DROPPED,
    TOOL_NAME_CUT,
    vectors_from,
)
from ai_assistant.llm.io_process import ModelIOProcess
from ai_assistant.llm.model_json import (
    INVALID_JSON,
    JSON_TOO_DEEP,
    JSON_TOO_LARGE,
    MAX_TOOL_ARGUMENT_CHARS,
    ModelJSONError,
    decode_model_json,
    nesting_depth,
)
from ai_assistant.llm.usage import UsageStats
from ai_assistant.sleep.batch import _reply_from, read_lines
from ai_assistant.state import TOKEN_SPEND
from ai_assistant.testing.server import (
    LocalModelServer,
    Reply,
    ScriptedResponder,
    completion,
    raw_reply,
    refusal_reply,
    text_reply,
    tool_call,
    tool_reply,
)
from ai_assistant.tools import default_registry
from ai_assistant.tools.base import TURN, UNKNOWN_TOOL

from .core_fakes import T0, FakeWorld, ScriptedModel, make_assistant
from .helpers import AssistantTestCase

DEEP_ARRAYS = "[" * 50_000 + "]" * 50_000
DEEP_OBJECTS = '{"a":' * 50_000 + "1" + "}" * 50_000
HUGE_NAME = "n" * 100_000
# what the scripted server would count with the tokenizer: given, so it does not tokenize 2 MB
USAGE = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}


def hostile(reply: Reply, usage: dict | None = None) -> Reply:
    reply.body["usage"] = usage or USAGE
    return reply


def client_for_server(server):
    return OpenAIChatClient(
        EndpointSettings(base_url=server.base_url, api_key="sk-test", timeout=10, max_retries=0)
    )


def request(**kwargs):
    return ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}], **kwargs)


def _ctx():
    from ai_assistant.tools.base import ToolContext

    return ToolContext(
        assistant_name="Aria",
        world=FakeWorld(),
        journal=None,
        entities=None,
        config=None,
        now=T0,
        location="Library",
        speakers={},
    )


# ---- decoding what a model wrote ---------------------------------------------------------------


def test_the_depth_scan_counts_brackets_outside_strings_only():
    assert nesting_depth('{"a": [1, {"b": "]]]{{{"}]}') == 3
    assert nesting_depth(r'{"a": "quote \" [[[[ still in the string"}') == 1
    assert nesting_depth(r'["a backslash \\", [[1]]]') == 3  # the string ends at its quote
    assert nesting_depth("12") == 0
    # a hostile text is not scanned to its end
    assert nesting_depth(DEEP_ARRAYS, stop_above=20) == 21


@pytest.mark.parametrize("deep", [DEEP_ARRAYS, DEEP_OBJECTS], ids=["arrays", "objects"])
def test_json_nested_50000_deep_is_refused_not_a_recursion_error(deep):
    with pytest.raises(ModelJSONError) as refused:
        decode_model_json(deep, "arguments for 'say'", max_chars=len(deep))
    assert refused.value.kind == JSON_TOO_DEEP
    assert str(refused.value) == "arguments for 'say' are nested deeper than 20 levels"


def test_json_too_large_or_not_decodable_is_refused_with_the_limit():
    with pytest.raises(ModelJSONError) as large:
        decode_model_json(
            json.dumps({"text": "x" * 123_444}), "arguments for 'say'", max_chars=20_000
        )
    assert large.value.kind == JSON_TOO_LARGE
    assert str(large.value) == "arguments for 'say' are 123,456 characters; the most is 20,000"
    # Python refuses to turn more than 4,300 digits into an int: a ValueError, not a decode error
    with pytest.raises(ModelJSONError) as digits:
        decode_model_json('{"n": ' + "9" * 5000 + "}", "arguments for 'say'", max_chars=20_000)
    assert digits.value.kind == INVALID_JSON and "not valid JSON" in str(digits.value)


def test_dispatch_answers_deep_huge_or_refused_arguments_with_an_error():
    registry = default_registry()
    unbalanced = "[" * 15_000  # within the size limit: the depth check answers
    deep = registry.dispatch(_ctx(), ToolCall("1", "say", unbalanced), TURN)
    assert (deep.ok, deep.malformed) == (False, JSON_TOO_DEEP)
    assert deep.content.startswith("Error: arguments for 'say' are nested deeper than 20 levels")
    objects = registry.dispatch(_ctx(), ToolCall("1", "say", '{"a":' * 3_000), TURN)
    assert objects.malformed == JSON_TOO_DEEP
    large = registry.dispatch(
        _ctx(), ToolCall("1", "say", json.dumps({"text": "x" * 123_444})), TURN
    )
    assert large.malformed == JSON_TOO_LARGE
    assert "arguments for 'say' are 123,456 characters; the most is 20,000" in large.content
    digits = registry.dispatch(_ctx(), ToolCall("1", "say", '{"text": ' + "9" * 5000 + "}"), TURN)
    assert digits.malformed == INVALID_JSON
    # arguments the client refused as too long: the call is answered with the client's reason
    refused = ToolCall("1", "say", "{}", "arguments for 'say' are 30,000 characters; the most")
    answered = registry.dispatch(_ctx(), refused, TURN)
    assert answered.malformed == JSON_TOO_LARGE and "30,000 characters" in answered.content


def test_a_structured_reply_nested_too_deep_is_an_invalid_response():
    from pydantic import BaseModel

    class Scores(BaseModel):
        scores: list

    deep = ChatReply(
        content='{"scores": ' + "[" * 300 + "]" * 300 + "}", tool_calls=[], finish_reason="stop"
    )
    with pytest.raises(LLMError) as refused:
        structured.parse_reply(deep, Scores)
    assert refused.value.kind == INVALID_RESPONSE
    assert "nested deeper than 20 levels" in str(refused.value)


# ---- the client's reply, through the real SDK ------------------------------------------------


def test_a_2mb_text_reply_comes_back_cut_with_a_note(scripted_server):
    scripted_server.responder.add(hostile(text_reply("x" * 2_000_000)))
    reply = client_for_server(scripted_server).complete(request())
    assert len(reply.content) == MIN_REPLY_CHARS  # max_tokens 800: the least limit
    assert reply.content.endswith("x [cut: 2,000,000 characters sent, 15,954 kept]")
    assert reply.malformed == (CONTENT_CUT,)


def test_the_text_limit_follows_max_tokens(scripted_server):
    scripted_server.responder.add(hostile(text_reply("y" * 100_000)))
    reply = client_for_server(scripted_server).complete(request(max_tokens=10_000))
    assert len(reply.content) == 80_000  # eight characters a token


def test_a_huge_tool_name_and_deep_arguments_come_back_bounded(scripted_server):
    scripted_server.responder.add(
        hostile(tool_reply(tool_call(HUGE_NAME, DEEP_ARRAYS), tool_call("say", "[" * 15_000)))
    )
    reply = client_for_server(scripted_server).complete(request())
    named, deep = reply.tool_calls
    assert named.name == "n" * MAX_TOOL_NAME_CHARS
    # kept, but with arguments the tool will answer with an error naming the limit
    assert named.arguments == "{}"
    assert named.arguments_refused == (
        f"arguments for '{'n' * 64}' are 100,000 characters; the most is 20,000"
    )
    assert (deep.arguments, deep.arguments_refused) == ("[" * 15_000, "")
    assert reply.malformed == (TOOL_NAME_CUT,)
    # what crosses to the reactor is small
    assert len(pickle.dumps(reply)) < 20_000


def test_arguments_share_the_replys_room_with_its_text(scripted_server):
    # max_tokens 800: 16,000 characters for the text and every call's arguments together
    scripted_server.responder.add(
        hostile(
            tool_reply(
                tool_call("say", {"text": "a" * 9_000}),
                tool_call("say", {"text": "b" * 9_000}),
                content="c" * 1_000,
            )
        )
    )
    reply = client_for_server(scripted_server).complete(request())
    first, second = reply.tool_calls
    assert first.arguments_refused == "" and second.arguments == "{}"
    assert "more than the 5,988 left of the reply's 16,000" in second.arguments_refused


def test_every_other_field_is_bounded(scripted_server):
    calls = [tool_call("noop", {}, call_id=f"{i:03d}" + "i" * 500) for i in range(100)]
    many = tool_reply(*calls, finish_reason="f" * 10_000)
    many.body["model"] = "m" * 10_000
    scripted_server.responder.add(hostile(many), hostile(refusal_reply("no" * 50_000)))
    client = client_for_server(scripted_server)
    reply = client.complete(request())
    assert len(reply.tool_calls) == MAX_TOOL_CALLS_PER_REPLY
    assert {len(call.id) for call in reply.tool_calls} == {MAX_TOOL_CALL_ID_CHARS}
    assert len(reply.finish_reason) == 32 and len(reply.model) == 200
    assert set(reply.malformed) == {
        TOOL_CALLS_DROPPED,
        TOOL_CALL_ID_CUT,
        FINISH_REASON_CUT,
        MODEL_NAME_CUT,
    }
    refused = client.complete(request())
    assert len(refused.refusal) <= MAX_REFUSAL_CHARS and refused.malformed == (REFUSAL_CUT,)


@pytest.mark.parametrize(
    "body, names",
    [
        (
            '{"choices": [{"message": {"content": "x", "extra": ' + DEEP_ARRAYS + "}}]}",
            "RecursionError",
        ),
        ("not JSON at all", "JSONDecodeError"),
        (
            '{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": 9'
            + "9" * 5000
            + "}}",
            "ValueError",
        ),
    ],
    ids=["nested 50,000 deep", "not json", "a 5,000-digit number"],
)
def test_a_body_the_sdk_cannot_read_is_an_invalid_response(scripted_server, body, names):
    scripted_server.responder.add(raw_reply(body))
    with pytest.raises(LLMError) as unread:
        client_for_server(scripted_server).complete(request())
    assert unread.value.kind == INVALID_RESPONSE and names in str(unread.value)


@pytest.mark.parametrize(
    "message, field",
    [
        ({"role": "assistant", "content": {"text": "hi"}}, "content of type dict"),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": ["say"], "arguments": "{}"},
                    }
                ],
            },
            "a tool name of type list",
        ),
    ],
)
def test_a_field_of_the_wrong_type_is_an_invalid_response(scripted_server, message, field):
    scripted_server.responder.add(Reply(body={**completion(message, "stop"), "usage": USAGE}))
    with pytest.raises(LLMError) as wrong:
        client_for_server(scripted_server).complete(request())
    assert wrong.value.kind == INVALID_RESPONSE and field in str(wrong.value)


def test_the_coroutine_form_in_the_model_io_process_bounds_the_same():
    responder = ScriptedResponder().add(
        hostile(text_reply("x" * 2_000_000)),
        hostile(tool_reply(tool_call(HUGE_NAME, DEEP_ARRAYS))),
    )

    async def calls():
        process = ModelIOProcess()
        use_io_process(asyncio.get_running_loop(), process)
        try:
            with LocalModelServer(responder) as server:
                client = client_for_server(server)
                text = await client.acomplete(request())
                tools = await client.acomplete(request())
                return text, tools, process.pid
        finally:
            use_io_process(asyncio.get_running_loop(), None)
            process.close()
            await close_async_clients()

    text, tools, pid = asyncio.run(calls())
    assert pid is not None  # made in the child: the 2 MB never crossed the pipe
    assert len(text.content) <= MIN_REPLY_CHARS and text.malformed == (CONTENT_CUT,)
    (call,) = tools.tool_calls
    assert len(call.name) == MAX_TOOL_NAME_CHARS and call.arguments == "{}"
    responder.verify()


# ---- token counts ------------------------------------------------------------------------------


def test_negative_or_absurd_usage_is_clamped_and_counted(scripted_server):
    usage = {
        "prompt_tokens": -999_999_999,
        "completion_tokens": 10**15,
        "total_tokens": 0,
        "prompt_tokens_details": {"cached_tokens": 50},
    }
    scripted_server.responder.add(hostile(text_reply("hi"), usage))
    reply = client_for_server(scripted_server).complete(request())
    assert (reply.usage.prompt, reply.usage.completion, reply.usage.cached) == (
        0,
        MAX_TOKENS_PER_CALL,
        0,  # never more than the prompt
    )
    assert reply.usage.invalid
    stats = UsageStats()
    stats.record_reply(reply)
    assert stats.malformed == {INVALID_USAGE: 1} and stats.prompt_tokens == 0


@pytest.mark.parametrize(
    "figures", [(-5, 1, 0), ("lots", 1, 0), (1.5, 1, 0), (True, 1, 0), (10, 1, 11)]
)
def test_a_token_count_is_a_non_negative_int_whoever_builds_it(figures):
    usage = TokenUsage(*figures)
    assert usage.invalid
    for figure in (usage.prompt, usage.completion, usage.cached):
        assert type(figure) is int and 0 <= figure <= MAX_TOKENS_PER_CALL
    assert usage.cached <= usage.prompt
    assert not TokenUsage(10, 5, 3).invalid


def test_negative_usage_never_lowers_the_spend_or_turns_budgets_off():
    brain = make_assistant(ScriptedModel(), token_budget_per_day=1000)
    honest = ChatReply("a", [], "stop", usage=TokenUsage(900, 50))
    lying = ChatReply("b", [], "stop", usage=TokenUsage(-999_839_430, 0))
    brain.record_reply(honest, T0)
    brain.record_reply(lying, T0)
    assert brain.state.get(TOKEN_SPEND)["day_tokens"] == 950
    brain.record_reply(ChatReply("c", [], "stop", usage=TokenUsage(60, 0)), T0)
    assert brain.budget_spent(T0)  # still on: 1,010 of 1,000
    assert brain.usage().malformed == {INVALID_USAGE: 1}


# ---- batches and embeddings ------------------------------------------------------------------


def test_batch_lines_nested_too_deep_or_lying_about_usage_are_read_safely():
    body = {
        **completion({"role": "assistant", "content": '{"scores": [1]}'}, "stop"),
        "usage": {"prompt_tokens": -999_999, "completion_tokens": 3, "total_tokens": 0},
    }
    long_body = completion({"role": "assistant", "content": "z" * 300_000}, "stop")
    lines = [
        '{"custom_id": "qdeep", "response": ' + DEEP_ARRAYS + "}",
        json.dumps({"custom_id": "qlies", "response": {"status_code": 200, "body": body}}),
        json.dumps({"custom_id": "qcut", "response": {"status_code": 200, "body": long_body}}),
    ]
    read = read_lines("\n".join(lines))
    assert "qdeep" not in read  # left out: its request is called directly
    kept = _reply_from(read["qlies"])
    assert (kept.usage.prompt, kept.usage.completion, kept.usage.invalid) == (0, 3, True)
    cut = _reply_from(read["qcut"])
    assert len(cut.content) <= 256_000 and cut.malformed == (CONTENT_CUT,)
    # a reply kept by an earlier version, with the figure unchecked, is checked when read back
    old = _reply_from({"content": "{}", "usage": [-5, 1, 0]})
    assert (old.usage.prompt, old.usage.invalid) == (0, True)


@pytest.mark.parametrize(
    "vectors, problem",
    [
        ([[0.1] * (MAX_EMBEDDING_DIMENSIONS + 1)] * 2, "16,385 numbers"),
        ([[0.1, 0.2], [0.1]], "2 and 1 dimensions"),
        ([[0.1, "x"], [0.1, 0.2]], "not a finite number"),
        ([[0.1, float("nan")], [0.1, 0.2]], "not a finite number"),
        ([[], []], "0 numbers"),
    ],
)
def test_embeddings_of_absurd_dimensions_or_not_numbers_are_an_error(vectors, problem):
    response = SimpleNamespace(
        data=[SimpleNamespace(index=i, embedding=vector) for i, vector in enumerate(vectors)]
    )
    with pytest.raises(LLMError) as wrong:
        vectors_from(response, ["a", "b"])
    assert wrong.value.kind == INVALID_RESPONSE and problem in str(wrong.value)


# ---- in the game ---------------------------------------------------------------------------


class TestAHostileEndpointInTheWorld(AssistantTestCase):
    def test_a_hostile_turn_ends_cleanly_and_the_game_is_unharmed(self):
        lying = {
            "prompt_tokens": -999_839_430,
            "completion_tokens": 5,
            "total_tokens": 0,
        }
        self.responder.add(
            hostile(
                tool_reply(
                    tool_call(HUGE_NAME, DEEP_ARRAYS),
                    tool_call("say", "[" * 15_000),
                    tool_call("say", json.dumps({"text": "x" * 30_000})),
                ),
                lying,
            ),
            hostile(text_reply("x" * 2_000_000)),
        )
        self.char1.execute_cmd("say Aria, are you there?")
        self.tick()
        assert len(self.responder.requests) == 2
        results = self.tool_results(self.sent_messages(1))
        assert results[0].startswith(f"Error: unknown tool '{'n' * 60}'")
        assert results[1] == (
            "Error: arguments for 'say' are nested deeper than 20 levels. Send a flat JSON "
            "object."
        )
        assert results[2].startswith("Error: arguments for 'say' are 30,01")
        assert results[2].endswith("characters; the most is 20,000. Send shorter arguments.")
        # the turn ended as a text reply does, with nothing failing
        assert self.script.db.tick_errors == 0 and not self.handler.in_flight
        assert self.handler.status().pending_events == 0
        usage = self.handler.status().usage
        assert usage.malformed == {
            TOOL_NAME_CUT: 1,
            UNKNOWN_TOOL: 1,
            JSON_TOO_DEEP: 1,
            JSON_TOO_LARGE: 1,
            INVALID_USAGE: 1,
            CONTENT_CUT: 1,
        }
        assert usage.prompt_tokens >= 0
        assert self.script.attributes.get(TOKEN_SPEND)["day_tokens"] >= 0
        # nothing the endpoint sent was kept whole: not in the history, not in the database
        history = self.handler.brain.history.all()
        assert max(len(m.get("content") or "") for m in history) <= MIN_REPLY_CHARS
        for message in history:
            for call in message.get("tool_calls") or []:
                assert len(call["function"]["name"]) <= MAX_TOOL_NAME_CHARS
                assert len(call["function"]["arguments"]) <= MAX_TOOL_ARGUMENT_CHARS
        stored = sum(len(pickle.dumps(a.value)) for a in self.script.attributes.all())
        assert stored < 200_000
        turns = self.handler.overview.recent_turns()
        assert all(len(json.dumps(turn)) < 100_000 for turn in turns)
        # no player was sent anything from it
        assert not [text for text in self.received(self.char2) if text.startswith("Aria")]

        # and the next turn goes as always
        self.responder.add(
            tool_reply(tool_call("say", {"text": "Yes, here."})), tool_reply(tool_call("noop"))
        )
        self.char1.execute_cmd("say Aria, hello?")
        self.tick(advance=60)
        assert 'Aria says, "Yes, here."' in self.received(self.char2)
