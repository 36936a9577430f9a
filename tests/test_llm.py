"""The model client over the real openai SDK and HTTP, structured outputs, and token counting."""

import pytest
from pydantic import BaseModel, Field

from ai_assistant.llm import structured
from ai_assistant.llm.chat import (
    AUTH,
    BAD_REQUEST,
    INVALID_RESPONSE,
    RATE_LIMIT,
    SERVER_ERROR,
    TIMEOUT,
    ChatRequest,
    EndpointSettings,
    LLMError,
)
from ai_assistant.llm.client import OpenAIChatClient
from ai_assistant.testing.server import (
    error_reply,
    refusal_reply,
    slow,
    text_reply,
    tool_call,
    tool_reply,
)
from ai_assistant.llm.tokens import FALLBACK_ENCODING, TokenCounter, encoding_for


def client_for_server(server, timeout=2.0, retries=0):
    return OpenAIChatClient(
        EndpointSettings(
            base_url=server.base_url, api_key="sk-test", timeout=timeout, max_retries=retries
        )
    )


def request(**kwargs):
    return ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}], **kwargs)


def test_tool_calls_and_usage_parsed(scripted_server):
    scripted_server.responder.add(
        tool_reply(tool_call("say", {"text": "hello"}), tool_call("noop", "{}"))
    )
    reply = client_for_server(scripted_server).complete(
        request(
            tools=[
                {"type": "function", "function": {"name": "say", "parameters": {"type": "object"}}}
            ]
        )
    )
    assert [call.name for call in reply.tool_calls] == ["say", "noop"]
    assert reply.tool_calls[0].arguments == '{"text": "hello"}'
    assert reply.finish_reason == "tool_calls"
    assert reply.usage.prompt > 0 and reply.usage.completion > 0
    sent = scripted_server.responder.requests[0]
    assert sent["tools"][0]["function"]["name"] == "say"
    assert sent["messages"] == [{"role": "user", "content": "hi"}]


def test_refusal_parsed(scripted_server):
    scripted_server.responder.add(refusal_reply("no"))
    assert client_for_server(scripted_server).complete(request()).refusal == "no"


@pytest.mark.parametrize(
    "status, kind",
    [(429, RATE_LIMIT), (500, SERVER_ERROR), (503, SERVER_ERROR), (401, AUTH), (400, BAD_REQUEST)],
)
def test_http_errors_become_kinds(scripted_server, status, kind):
    scripted_server.responder.add(error_reply(status, "nope"))
    with pytest.raises(LLMError) as err:
        client_for_server(scripted_server).complete(request())
    assert err.value.kind == kind and err.value.status == status
    assert "sk-test" not in str(err.value)


def test_timeout(scripted_server):
    scripted_server.responder.add(slow(text_reply("late"), 3.0))
    with pytest.raises(LLMError) as err:
        client_for_server(scripted_server, timeout=1.0).complete(request())
    assert err.value.kind == TIMEOUT


def test_sdk_retries_are_bounded_and_configurable(scripted_server):
    scripted_server.responder.add(error_reply(500), error_reply(500), text_reply("ok"))
    reply = client_for_server(scripted_server, retries=2).complete(request())
    assert reply.content == "ok"
    assert len(scripted_server.responder.requests) == 3


def test_no_endpoint_configured_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMError) as err:
        OpenAIChatClient(EndpointSettings(base_url=None, api_key=None))
    assert err.value.kind == "not_configured" and "AI_ASSISTANT_API_KEY" in str(err.value)


class Scores(BaseModel):
    scores: list[int] = Field(description="importance 1-10 per entry")


def test_structured_output_uses_json_schema(scripted_server):
    scripted_server.responder.add(text_reply('{"scores": [3, 9]}'))
    client = client_for_server(scripted_server)
    result, replies = structured.complete_structured(client, request(), Scores)
    assert result.scores == [3, 9] and len(replies) == 1
    sent = scripted_server.responder.requests[0]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "Scores"


def test_structured_output_falls_back_to_json_mode_and_remembers(scripted_server):
    scripted_server.responder.add(
        error_reply(400, "response_format json_schema not supported"),
        text_reply('```json\n{"scores": [5]}\n```'),
        text_reply('{"scores": [6]}'),
    )
    client = client_for_server(scripted_server)
    first, _ = structured.complete_structured(client, request(), Scores)
    second, _ = structured.complete_structured(client, request(), Scores)
    assert first.scores == [5] and second.scores == [6]
    formats = [r.get("response_format", {}).get("type") for r in scripted_server.responder.requests]
    assert formats == ["json_schema", "json_object", "json_object"]
    assert "JSON schema" in scripted_server.responder.requests[1]["messages"][-1]["content"]


class _RefusesSchemas:
    """A client whose server has no `json_schema`: it answers in JSON mode only."""

    def __init__(self):
        self.formats = []

    def complete(self, request):
        from ai_assistant.llm.chat import ChatReply

        self.formats.append(request.response_format["type"])
        if request.response_format["type"] == "json_schema":
            raise LLMError(BAD_REQUEST, "response_format json_schema not supported", 400)
        return ChatReply(content='{"scores": [1]}', tool_calls=[], finish_reason="stop")


class _RefusesSchemasWithoutWeakrefs(_RefusesSchemas):
    __slots__ = ("formats",)


def test_json_mode_is_remembered_for_the_client_and_forgotten_with_it():
    import gc

    first = _RefusesSchemas()
    for _ in range(2):
        structured.complete_structured(first, request(), Scores)
    assert first.formats == ["json_schema", "json_object", "json_object"]
    assert first in structured._FLOOR  # the client itself, not its reusable id
    del first
    gc.collect()
    # gone with its client: a new client (which may get the same id) is asked for a schema
    assert not any(isinstance(c, _RefusesSchemas) for c in structured._FLOOR)
    second = _RefusesSchemas()
    structured.complete_structured(second, request(), Scores)
    assert second.formats == ["json_schema", "json_object"]
    # a client that cannot be weakly referenced is remembered too (and kept, so its id is its own)
    plain = _RefusesSchemasWithoutWeakrefs()
    for _ in range(2):
        structured.complete_structured(plain, request(), Scores)
    assert plain.formats == ["json_schema", "json_object", "json_object"]


def test_the_coroutine_forms_send_the_same_and_fall_back_the_same(scripted_server):
    import asyncio

    from ai_assistant.llm.client import close_async_clients

    scripted_server.responder.add(
        text_reply("hello"),
        error_reply(400, "response_format json_schema not supported"),
        text_reply('{"scores": [4]}'),
        error_reply(429, "slow down"),
    )
    client = client_for_server(scripted_server)

    async def calls():
        reply = await client.acomplete(request())
        result, replies = await structured.acomplete_structured(client, request(), Scores)
        with pytest.raises(LLMError) as refused:
            await client.acomplete(request())
        await close_async_clients()
        return reply, result, replies, refused.value

    reply, result, replies, refused = asyncio.run(calls())
    assert reply.content == "hello" and result.scores == [4] and len(replies) == 1
    formats = [r.get("response_format", {}).get("type") for r in scripted_server.responder.requests]
    assert formats == [None, "json_schema", "json_object", None]
    assert refused.kind == "rate_limit"


def test_the_coroutine_client_goes_over_aiohttp_keeps_its_timeout_and_closes(scripted_server):
    import asyncio

    from ai_assistant.llm.client import close_async_clients

    scripted_server.responder.add(slow(text_reply("late"), 3.0), text_reply("in time"))
    client = client_for_server(scripted_server, timeout=1.0)

    async def calls():
        sdk = client._async_client()
        with pytest.raises(LLMError) as late:
            await client.acomplete(request())
        reply = await client.acomplete(request())
        await close_async_clients()
        return sdk, late.value, reply

    sdk, late, reply = asyncio.run(calls())
    # the SDK's aiohttp transport (the package declares the extra), not its default httpx one
    assert "aiohttp" in type(sdk._client).__name__.lower()
    assert late.kind == TIMEOUT and reply.content == "in time"
    assert sdk.is_closed()


def test_structured_output_that_does_not_fit_is_an_error(scripted_server):
    scripted_server.responder.add(text_reply('{"scores": "high"}'), refusal_reply("won't"))
    client = client_for_server(scripted_server)
    with pytest.raises(LLMError) as err:
        structured.complete_structured(client, request(), Scores)
    assert err.value.kind == INVALID_RESPONSE and "scores" in str(err.value)
    with pytest.raises(LLMError, match="refused"):
        structured.complete_structured(client, request(), Scores)


def test_token_counting_offline_and_cached():
    counter = TokenCounter("gpt-4o-mini")
    counter._cache.clear()  # shared by the process's counters: start from nothing
    assert counter.encoding_name == FALLBACK_ENCODING  # no offline o200k here: cl100k fallback
    message = {"role": "user", "content": "Hello there, how are you today?"}
    first = counter.count_message(message)
    assert 8 < first < 20
    assert counter.count_message(dict(message)) == first
    assert len(counter._cache) == 1
    history = [{"role": "user", "content": f"message {i}"} for i in range(100)]
    counter.count_messages(history)
    size = len(counter._cache)
    counter.count_messages(history + [{"role": "user", "content": "new"}])
    assert len(counter._cache) == size + 1  # only the new message was tokenized


def test_a_message_kept_with_its_metadata_is_counted_once():
    counter = TokenCounter("gpt-4o-mini")
    counter._cache.clear()  # shared by the process's counters: start from nothing
    message = {"role": "user", "content": "Bob says hello to Aria at the well."}
    first = counter.count_message(message)
    encoded = []
    original = counter.count_text
    counter.count_text = lambda text: encoded.append(text) or original(text)
    kept = {**message, "metadata": {"audience": "room", "speakers": ["#5"]}}
    assert counter.count_message(kept) == first  # metadata is never sent, never counted
    assert encoded == [] and len(counter._cache) == 1


def test_counters_of_one_encoding_share_their_counts():
    first, second = TokenCounter("gpt-4o-mini"), TokenCounter("gpt-4o-mini")
    first._cache.clear()
    tools = {"tools": [{"type": "function", "function": {"name": "say", "description": "x" * 500}}]}
    counted = first.count_message(tools)
    encoded = []
    original = second.count_text
    second.count_text = lambda text: encoded.append(text) or original(text)
    # a hundred assistants send the same tool schemas: counted once for all of them
    assert second.count_message(tools) == counted and encoded == []
    assert second.count_message({"role": "user", "content": "mine alone"}) > 0
    assert len(encoded) == 2  # what the other had not counted is counted (role, content)


def test_token_counting_never_crashes(monkeypatch):
    import tiktoken

    encoding_for.cache_clear()
    monkeypatch.setattr(tiktoken, "list_encoding_names", lambda: [])
    try:
        counter = TokenCounter("some-model")
        assert counter.count_text("abcdefgh") == 2  # four characters a token
    finally:
        encoding_for.cache_clear()


def test_the_wait_a_provider_asks_for_is_read_from_its_headers():
    from types import SimpleNamespace

    from ai_assistant.llm.server_errors import _retry_after

    def refused(headers):
        return SimpleNamespace(response=SimpleNamespace(headers=headers))

    assert _retry_after(refused({"retry-after": "2"})) == 2.0
    assert _retry_after(refused({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    assert _retry_after(refused({"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"})) is None
    assert _retry_after(refused({"retry-after": "86400"})) is None  # not believed: too long
    assert _retry_after(SimpleNamespace()) is None
