"""
What real OpenAI-compatible servers do, reproduced by the stand-in server and answered as the
contrib should: structured outputs stepping down a ladder of formats on any refusal of one
(llama-cpp-python answers `json_schema` with a 500), remembered per client or fixed by a
setting; a reply cut off at its token limit said so and asked again once with room; the tokens
of a reply that did not fit counted all the same; `tool_choice` sent with tools (a server that
drops tools without it); embeddings of one vector per token refused with the server option that
pools them; a server whose tokenizer counts more than ours (the budget follows its count).

"""

import pytest
from pydantic import BaseModel

from ai_assistant.llm import structured
from ai_assistant.llm.chat import (
    BAD_REQUEST,
    INVALID_RESPONSE,
    SERVER_ERROR,
    ChatReply,
    ChatRequest,
    EndpointSettings,
    LLMError,
    TokenUsage,
)
from ai_assistant.llm.client import OpenAIChatClient
from ai_assistant.testing.server import error_reply, text_reply, tool_call, tool_reply
from ai_assistant.status import status_of

from .core_fakes import T0, ScriptedModel, make_assistant


class Scores(BaseModel):
    scores: list[int]


def client_for(server):
    return OpenAIChatClient(EndpointSettings(server.base_url, "sk-test", max_retries=0))


def request(**kwargs):
    return ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}], **kwargs)


def formats(server):
    return [
        (body.get("response_format") or {}).get("type", "none")
        + ("+schema" if "schema" in (body.get("response_format") or {}) else "")
        for body in server.responder.requests
    ]


# ---- the ladder of formats -------------------------------------------------------------------


def test_a_500_naming_the_format_steps_down_and_is_remembered(scripted_server):
    # llama-cpp-python 0.3.x: json_schema is a 500
    scripted_server.responder.add(
        error_reply(500, "response_format type json_schema is not supported"),
        text_reply('{"scores": [5]}'),
        text_reply('{"scores": [6]}'),
    )
    client = client_for(scripted_server)
    first, _ = structured.complete_structured(client, request(), Scores)
    second, _ = structured.complete_structured(client, request(), Scores)
    assert first.scores == [5] and second.scores == [6]
    assert formats(scripted_server) == ["json_schema", "json_object+schema", "json_object+schema"]
    sent = scripted_server.responder.requests[1]
    assert sent["response_format"]["schema"] == Scores.model_json_schema()
    assert "JSON schema" in sent["messages"][-1]["content"]


def test_the_ladder_ends_in_plain_text_json(scripted_server):
    scripted_server.responder.add(
        error_reply(400, "unknown response_format"),
        error_reply(422, "json_object: extra field 'schema' not permitted"),
        error_reply(501, "response_format not implemented"),
        text_reply('Here it is:\n{"scores": [7]}\nAnything else?'),
    )
    result, _ = structured.complete_structured(client_for(scripted_server), request(), Scores)
    assert result.scores == [7]
    assert formats(scripted_server) == ["json_schema", "json_object+schema", "json_object", "none"]


@pytest.mark.parametrize(
    "error",
    [
        LLMError(SERVER_ERROR, "InternalServerError: out of memory", 500),
        LLMError(BAD_REQUEST, "This model's maximum context length is 4096 tokens", 400),
        LLMError("timeout", "no answer"),
    ],
)
def test_other_failures_are_not_taken_for_a_refused_format(error):
    model = ScriptedModel(error)
    with pytest.raises(LLMError) as raised:
        structured.complete_structured(model, request(), Scores)
    assert raised.value is error and len(model.requests) == 1


@pytest.mark.parametrize(
    "message",
    [
        "Unsupported value: 'temperature' does not support 0.0 with this model.",
        "The response was filtered due to the prompt triggering the content management policy",
        "Invalid request",
    ],
)
def test_a_400_about_something_else_does_not_move_the_ladder(message):
    # the client is shared by every assistant on the endpoint: one request's unrelated 400
    # must not send everyone's structured calls down to plain text
    model = ScriptedModel(
        LLMError(BAD_REQUEST, f"BadRequestError: {message}", 400),
        ChatReply(content='{"scores": [3]}', tool_calls=[], finish_reason="stop"),
    )
    with pytest.raises(LLMError) as raised:
        structured.complete_structured(model, request(), Scores)
    assert raised.value.kind == BAD_REQUEST and len(model.requests) == 1
    result, _ = structured.complete_structured(model, request(), Scores)
    assert result.scores == [3]
    assert [r.response_format["type"] for r in model.requests] == ["json_schema", "json_schema"]


def test_a_step_down_is_remembered_only_once_the_lower_step_was_taken():
    fits = ChatReply(content='{"scores": [4]}', tool_calls=[], finish_reason="stop")
    model = ScriptedModel(
        LLMError(SERVER_ERROR, "response_format type json_schema is not supported", 500),
        LLMError("timeout", "no answer"),
        fits,
        LLMError(SERVER_ERROR, "response_format type json_schema is not supported", 500),
        fits,
        fits,
    )
    with pytest.raises(LLMError):
        structured.complete_structured(model, request(), Scores)
    # the lower step never answered: the next call starts at the top again
    structured.complete_structured(model, request(), Scores)
    assert model.requests[2].response_format["type"] == "json_schema"
    # once it has answered, it is where later calls start
    structured.complete_structured(model, request(), Scores)
    structured.complete_structured(model, request(), Scores)
    steps = [(r.response_format or {}).get("type") for r in model.requests]
    assert steps == [
        "json_schema",
        "json_object",
        "json_schema",
        "json_schema",
        "json_object",
        "json_object",
    ]
    assert "schema" in model.requests[-1].response_format


@pytest.mark.parametrize(
    "mode, sent",
    [
        ("json_schema", "json_schema"),
        ("json_object", "json_object"),
        ("text", None),
    ],
)
def test_a_fixed_format_is_the_only_one_asked(mode, sent):
    model = ScriptedModel(LLMError(BAD_REQUEST, "response_format refused", 400))
    with pytest.raises(LLMError):
        structured.complete_structured(model, request(), Scores, mode)
    ((model_request),) = model.requests
    assert (model_request.response_format or {}).get("type") == sent


def test_the_brain_sends_its_configured_format():
    model = ScriptedModel(
        ChatReply(content='{"scores": [1]}', tool_calls=[], finish_reason="stop"),
    )
    brain = make_assistant(model, structured_output="text")
    result, _ = brain.structured(request(), Scores)()
    assert result.scores == [1] and model.requests[0].response_format is None


# ---- a reply of another shape ----------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        # the json_object reply of a small model on llama-cpp-python: no "scores" at all
        '{"e1": 7, "e2": 3}',
        '[{"entry_id": "e1", "importance": 7}, {"entry_id": "e2", "importance": 3}]',
        '{"importance_scores": [{"entry_id": "e1", "importance": 7},'
        ' {"entry_id": "e2", "importance": 3}]}',
        # an item that does not fit is left out, the others filed
        '{"scores": [{"entry_id": "e1", "importance": 7}, {"entry_id": "e2", "importance": 3},'
        ' {"entry_id": "e3", "importance": "very"}]}',
    ],
)
def test_a_batch_reply_of_another_shape_is_mended_when_its_meaning_is_plain(content):
    from ai_assistant.sleep.prompts import ImportanceScores

    model = ScriptedModel(ChatReply(content=content, tool_calls=[], finish_reason="stop"))
    result, _ = structured.complete_structured(model, request(), ImportanceScores)
    assert [(s.entry_id, s.importance) for s in result.scores] == [("e1", 7), ("e2", 3)]


@pytest.mark.parametrize(
    "content", ['{"scores": "many"}', '{"verdict": "fine"}', '{"scores": [{"entry_id": 1}]}']
)
def test_a_reply_whose_meaning_is_not_plain_is_still_refused(content):
    from ai_assistant.sleep.prompts import ImportanceScores

    model = ScriptedModel(ChatReply(content=content, tool_calls=[], finish_reason="stop"))
    with pytest.raises(LLMError) as raised:
        structured.complete_structured(model, request(), ImportanceScores)
    assert "did not match ImportanceScores" in str(raised.value)


# ---- cut off, and what a failure cost ------------------------------------------------------


def cut(text='{"scores": [1, 2'):
    return ChatReply(
        content=text, tool_calls=[], finish_reason="length", usage=TokenUsage(100, 800)
    )


def test_a_reply_cut_at_its_limit_is_asked_again_once_with_twice_the_room():
    fits = ChatReply(content='{"scores": [1, 2]}', tool_calls=[], finish_reason="stop")
    model = ScriptedModel(cut(), fits)
    result, replies = structured.complete_structured(model, request(max_tokens=400), Scores)
    assert result.scores == [1, 2] and len(replies) == 2
    assert [r.max_tokens for r in model.requests] == [400, 800]


def test_a_reply_cut_twice_says_it_was_cut_off_and_carries_its_replies():
    model = ScriptedModel(cut(), cut())
    with pytest.raises(LLMError) as raised:
        structured.complete_structured(model, request(), Scores)
    assert raised.value.kind == INVALID_RESPONSE
    assert "cut off at the reply's token limit" in str(raised.value)
    assert len(raised.value.replies) == 2


def test_the_tokens_of_a_reply_that_did_not_fit_are_counted():
    bad = ChatReply(
        content='{"scores": "many"}',
        tool_calls=[],
        finish_reason="stop",
        usage=TokenUsage(300, 40),
    )
    brain = make_assistant(ScriptedModel(bad), token_budget_per_day=10_000)
    with pytest.raises(LLMError) as raised:
        brain.structured(request(), Scores)()
    brain.record_failure(raised.value, T0)
    usage = brain.usage()
    assert usage.total_tokens == 340 and usage.errors.get(INVALID_RESPONSE) == 1
    assert brain.budget().spent(T0, brain.game_now(T0))["day"] == 340


# ---- tools and embeddings over HTTP --------------------------------------------------------


def test_tool_choice_is_sent_with_tools_as_configured(scripted_server):
    tools = [{"type": "function", "function": {"name": "noop", "parameters": {}}}]
    for _ in range(3):
        scripted_server.responder.add(tool_reply(tool_call("noop", {})))
    client = client_for(scripted_server)
    client.complete(request(tools=tools, tool_choice="auto"))
    client.complete(request(tools=tools, tool_choice="omit"))
    client.complete(request(tool_choice="auto"))
    sent = [body.get("tool_choice") for body in scripted_server.responder.requests]
    assert sent == ["auto", None, None]


def test_a_turn_sends_tool_choice_auto_by_default():
    model = ScriptedModel()
    brain = make_assistant(model)
    assert brain.compose([{"role": "user", "content": "hi"}]).request.tool_choice == "auto"
    brain = make_assistant(model, tool_choice="required")
    assert brain.compose([{"role": "user", "content": "hi"}]).request.tool_choice == "required"


def test_embeddings_of_one_vector_per_token_name_the_pooling_option(scripted_server):
    scripted_server.per_token_embeddings = True
    with pytest.raises(LLMError) as raised:
        client_for(scripted_server).embed("e5", ["one text"])
    assert raised.value.kind == INVALID_RESPONSE
    assert "--pooling mean" in str(raised.value) and "one per token" in str(raised.value)


# ---- what a failure is called, and what is said about it -------------------------------------


@pytest.mark.parametrize(
    "status, message, kind",
    [
        (404, "model 'gpt-9' not found", "not_found"),
        (
            400,
            "the request exceeds the available context size, try increasing it",
            "context_length",
        ),
        (400, "invalid value for temperature", "bad_request"),
        (400, "This model's maximum context length is 4096 tokens.", "context_length"),
        (
            400,
            "request (5000 tokens) exceeds the available context size (n_ctx 4096)",
            "context_length",
        ),
        (500, "boom", "server_error"),
    ],
)
def test_failures_are_named_by_what_went_wrong(scripted_server, status, message, kind):
    scripted_server.responder.add(error_reply(status, message))
    with pytest.raises(LLMError) as raised:
        client_for(scripted_server).complete(request())
    assert raised.value.kind == kind


def test_a_servers_install_paths_never_reach_the_error(scripted_server):
    scripted_server.responder.add(
        error_reply(500, "Traceback: File /home/bob/.venv/lib/python3.12/site-packages/x.py")
    )
    with pytest.raises(LLMError) as raised:
        client_for(scripted_server).complete(request())
    assert "/home/bob" not in str(raised.value) and "<path>" in str(raised.value)
    assert scripted_server.base_url.split("//")[1] not in "<path>"


def test_each_kind_of_failure_has_advice_true_for_it():
    from ai_assistant.shell.status_display import ERROR_ADVICE

    assert "request_timeout" in ERROR_ADVICE["timeout"]
    assert "max_context_tokens" in ERROR_ADVICE["context_length"]
    assert "/v1" in ERROR_ADVICE["not_found"]
    assert "structured_output" in ERROR_ADVICE["bad_request"]


# ---- a model that answers in text instead of calling a tool ---------------------------------


def test_a_text_answer_is_said_aloud_by_default():
    from .core_fakes import hear, reply, run_tick

    assistant = make_assistant(ScriptedModel(reply(content="  The library opens at nine.  ")))
    hear(assistant, "Aria, when do you open?")
    outcome = run_tick(assistant)
    assert assistant.world.said == ["The library opens at nine."]
    assert outcome.stop_reason == "plain_text_said"
    (call,) = outcome.tool_calls
    assert call["name"] == "say" and call["from_text"] and call["ok"]


def test_a_text_answer_to_a_whisper_is_whispered_back():
    from .core_fakes import hear, reply, run_tick

    assistant = make_assistant(ScriptedModel(reply(content="The code is 4-1-7.")))
    hear(assistant, "what is the code?", event_type="whisper", speaker="Bob")
    run_tick(assistant)
    assert assistant.world.said == [] and assistant.world.whispers == [
        ("Bob", "The code is 4-1-7.")
    ]


def test_a_text_answer_in_a_private_conversation_is_never_said_to_the_room():
    from .core_fakes import FakeWorld, hear, reply, run_tick

    world = FakeWorld(present=("Bob",))

    class CarolArrives(ScriptedModel):
        def complete(self, request):
            if len(self.requests) == 1:
                world.people.append("Carol")  # she walks in while the model thinks
            return super().complete(request)

    model = CarolArrives(reply(("noop", {})), reply(content="Your code 4-1-7 is safe."))
    assistant = make_assistant(model, world=world)
    hear(assistant, "my vault code is 4-1-7", event_type="whisper", speaker="Bob")
    run_tick(assistant)
    # aloud, alone with the assistant: the history holds the whisper, so the turn is Bob's
    hear(assistant, "Aria, is it safe?", speaker="Bob")
    outcome = run_tick(assistant)
    assert "4-1-7" in str(model.requests[1].messages)
    # the turn is Bob's alone: its answer is whispered to him, never said before Carol
    assert world.said == [] and outcome.stop_reason == "plain_text_said"
    assert world.whispers == [("Bob", "Your code 4-1-7 is safe.")]
    assert outcome.tool_calls[0]["name"] == "whisper" and outcome.tool_calls[0]["from_text"]


def test_remind_asks_once_more_then_says_it():
    from .core_fakes import hear, reply, run_tick

    model = ScriptedModel(reply(content="Hello there."), reply(content="Hello again."))
    assistant = make_assistant(model, plain_text_reply="remind")
    hear(assistant, "Aria?")
    run_tick(assistant)
    assert len(model.requests) == 2
    assert "act only through your tools" in model.requests[1].messages[-1]["content"]
    assert assistant.world.said == ["Hello again."]


# ---- the server's context window -------------------------------------------------------------


@pytest.mark.parametrize(
    "message, window",
    [
        ("This model's maximum context length is 4096 tokens. However, you requested 5000", 4096),
        ("Requested tokens (4482) exceed context window of 4096", 4096),
        ("request (5000 tokens) exceeds the available context size (2048 tokens)", 2048),
        ("the request exceeds the available context size, try increasing it", None),
        ("maximum context length is 12 tokens", None),
    ],
)
def test_a_refusal_names_the_window(message, window):
    from ai_assistant.llm.server_errors import window_in

    assert window_in(message) == window


def test_the_window_the_server_lists_bounds_the_budget(scripted_server):
    from .core_fakes import hear, run_tick

    scripted_server.served_models = [
        {"id": "test-model", "object": "model", "meta": {"n_ctx": 4096, "n_vocab": 32000}}
    ]
    scripted_server.responder.add(tool_reply(tool_call("noop", {})))
    client = client_for(scripted_server)
    brain = make_assistant(lambda: client, max_context_tokens=100_000, max_reply_tokens=800)
    assert brain.calibration.context_budget() == 100_000
    hear(brain, "Aria?")
    run_tick(brain)
    assert brain.calibration.context_window() == {"tokens": 4096, "source": "server"}
    assert brain.calibration.context_budget() == 4096 - 800
    assert status_of(brain, T0).max_context_tokens == 3296
    # asked once per chat model
    assert brain.discover_context_window() is None


def test_a_context_length_refusal_teaches_the_window_and_never_loops():
    from ai_assistant.llm.chat import CONTEXT_LENGTH
    from ai_assistant.state import RETRY_AFTER

    from .core_fakes import hear, reply, run_tick

    refusal = LLMError(CONTEXT_LENGTH, "Requested tokens (4482) exceed context window of 4096")
    model = ScriptedModel(refusal, reply(("noop", {})))
    brain = make_assistant(model, max_reply_tokens=800)
    hear(brain, "Aria?")
    outcome = run_tick(brain)
    assert outcome.error_kind == CONTEXT_LENGTH
    assert brain.calibration.context_window() == {"tokens": 4096, "source": "refusal"}
    # no back-off: the events wait and the next tick answers them within the window
    assert brain.state.get(RETRY_AFTER) is None and len(brain.events) == 1
    outcome = run_tick(brain)
    assert outcome.model_calls == 1 and len(brain.events) == 0
    # the same window named again means our count was low: it shrinks, so it cannot loop
    assert brain.calibration.context_refused(refusal, 3000) == int(4096 * 0.8)
    assert brain.calibration.context_refused(refusal, 2000) == int(int(4096 * 0.8) * 0.8)


# ---- what the server counts ------------------------------------------------------------------


def test_a_server_that_drops_tools_without_tool_choice_still_gets_them(scripted_server):
    from .core_fakes import hear, run_tick

    scripted_server.tools_need_choice = True
    scripted_server.responder.add(
        tool_reply(tool_call("say", {"text": "Hello."})),
        tool_reply(tool_call("noop", {})),
        text_reply("I have no tools."),
    )
    client = client_for(scripted_server)
    brain = make_assistant(lambda: client, plain_text_reply="drop")
    hear(brain, "Aria, hello?")
    outcome = run_tick(brain)
    assert [body.get("tools") is not None for body in scripted_server.responder.requests] == [
        True,
        True,
    ]
    assert outcome.model_calls == 2 and brain.world.said == ["Hello."]
    # the same server with tool_choice left out: the model never sees its tools
    brain = make_assistant(lambda: client, tool_choice="omit", plain_text_reply="drop")
    hear(brain, "Aria, hello?")
    run_tick(brain)
    assert "tools" not in scripted_server.responder.requests[-1]


def test_the_budget_follows_the_count_of_a_server_whose_tokenizer_is_not_openais(
    scripted_server,
):
    from .core_fakes import hear, run_tick

    scripted_server.usage_scale = 1.25  # as Gemma's tokenizer counts against OpenAI's
    scripted_server.responder.add(tool_reply(tool_call("noop", {})))
    client = client_for(scripted_server)
    brain = make_assistant(lambda: client, chat_model="gemma-3-1b-it")
    counted = brain.context_tokens()
    assert brain.calibration.token_scale() == 1.0
    hear(brain, "Aria, hello?")
    run_tick(brain)
    assert brain.calibration.token_scale() == pytest.approx(1.25, abs=0.02)
    assert brain.context_tokens() >= 1.2 * (brain.fixed_tokens() + brain.history.tokens())
    assert brain.fixed_tokens() >= counted - 5  # our own count did not change
    assert status_of(brain, T0).context_tokens == brain.context_tokens()


def test_an_openai_model_is_counted_with_its_own_encoding_never_scaled(scripted_server):
    from .core_fakes import hear, run_tick

    scripted_server.usage_scale = 1.25
    scripted_server.responder.add(tool_reply(tool_call("noop", {})))
    client = client_for(scripted_server)
    brain = make_assistant(lambda: client, chat_model="gpt-4o-mini")
    hear(brain, "Aria, hello?")
    run_tick(brain)
    assert brain.calibration.token_scale() == 1.0
    assert brain.context_tokens() == brain.fixed_tokens() + brain.history.tokens()


def test_usage_that_cannot_be_the_same_text_is_not_learned_from():
    brain = make_assistant(ScriptedModel())
    brain.calibration.calibrate_tokens(
        1000, 30
    )  # a server's own bookkeeping, not a count of the text
    brain.calibration.calibrate_tokens(100, 125)  # too small a request to tell
    assert brain.calibration.token_scale() == 1.0
    brain.calibration.calibrate_tokens(1000, 1300)
    assert brain.calibration.token_scale() == 1.3
    brain.calibration.calibrate_tokens(1000, 1000)  # one odd sample moves it a third of the way
    assert brain.calibration.token_scale() == pytest.approx(1.3 + (1.0 - 1.3) / 3, abs=0.001)


# ---- a reply with nothing in it ----------------------------------------------------------------


def test_an_empty_reply_asks_once_for_the_tool_that_answers_by_name(scripted_server):
    from .core_fakes import hear, run_tick

    # llama-cpp-python's "auto" tool choice lets a small model pick "message" and then allows it
    # no words: an empty reply
    scripted_server.responder.add(
        text_reply(""),
        tool_reply(tool_call("say", {"text": "I am Aria."})),
        tool_reply(tool_call("noop", {})),
    )
    client = client_for(scripted_server)
    brain = make_assistant(lambda: client)
    hear(brain, "Aria, what is your name?")
    outcome = run_tick(brain)
    sent = [body.get("tool_choice") for body in scripted_server.responder.requests]
    assert sent == ["auto", {"type": "function", "function": {"name": "say"}}, "auto"]
    assert brain.world.said == ["I am Aria."] and outcome.model_calls == 3
    # no empty message was kept in the history
    assert all(
        message.get("content") or message.get("tool_calls") or message["role"] == "tool"
        for message in brain.history.all()
    )


def test_an_empty_reply_to_a_whisper_asks_for_whisper_and_only_once():
    from .core_fakes import hear, reply, run_tick

    model = ScriptedModel(reply(content=""), reply(content=""))
    assistant = make_assistant(model)
    hear(assistant, "what is the code?", event_type="whisper", speaker="Bob")
    outcome = run_tick(assistant)
    assert model.requests[1].tool_choice == {"type": "function", "function": {"name": "whisper"}}
    assert outcome.model_calls == 2 and outcome.stop_reason == "empty_reply"
    assert assistant.world.said == [] and assistant.world.whispers == []


def test_an_empty_reply_is_not_asked_again_when_text_replies_are_dropped():
    from .core_fakes import hear, reply, run_tick

    model = ScriptedModel(reply(content=""))
    assistant = make_assistant(model, plain_text_reply="drop")
    hear(assistant, "Aria, hello?")
    outcome = run_tick(assistant)
    assert outcome.model_calls == 1 and outcome.stop_reason == "empty_reply"


def test_an_assistant_message_that_only_called_tools_is_sent_with_empty_text(scripted_server):
    scripted_server.responder.add(text_reply("ok"))
    client_for(scripted_server).complete(
        ChatRequest(
            model="m",
            messages=[
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "noop", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            ],
        )
    )
    # llama-cpp-python refuses null text there with a 500
    assert scripted_server.responder.requests[0]["messages"][1]["content"] == ""


def test_a_score_off_the_scale_is_taken_as_its_end():
    from ai_assistant.sleep.prompts import ImportanceScores

    scores = ImportanceScores.model_validate(
        {"scores": [{"entry_id": "j1", "importance": 12}, {"entry_id": "j2", "importance": 0}]}
    )
    assert [score.importance for score in scores.scores] == [10, 1]
    with pytest.raises(ValueError):
        ImportanceScores.model_validate({"scores": [{"entry_id": "j1", "importance": "high"}]})


def test_the_last_call_of_a_turn_that_answered_no_one_asks_for_the_answer():
    from .core_fakes import hear, reply, run_tick

    busy = [reply(("add_journal_entry", {"content": f"note {n}"})) for n in range(2)]
    model = ScriptedModel(*busy, reply(("say", {"text": "Hello, Alice."})))
    assistant = make_assistant(model, max_react_iterations=3)
    hear(assistant, "Aria, hello?")
    outcome = run_tick(assistant)
    assert [request.tool_choice for request in model.requests] == [
        "auto",
        "auto",
        {"type": "function", "function": {"name": "say"}},
    ]
    assert assistant.world.said == ["Hello, Alice."] and outcome.model_calls == 3


def test_a_turn_that_answered_is_never_forced():
    from .core_fakes import hear, reply, run_tick

    model = ScriptedModel(
        reply(("say", {"text": "Hello."})),
        reply(("add_journal_entry", {"content": "greeted Alice"})),
        reply(("add_journal_entry", {"content": "more"})),
    )
    assistant = make_assistant(model, max_react_iterations=3)
    hear(assistant, "Aria, hello?")
    run_tick(assistant)
    assert [request.tool_choice for request in model.requests] == ["auto"] * 3


# ---- embeddings from a server of their own -----------------------------------------------------


def test_embeddings_go_to_their_own_endpoint_when_it_is_given(scripted_server):
    from ai_assistant.testing.server import LocalModelServer, ScriptedResponder

    with LocalModelServer(ScriptedResponder()) as embeddings:
        chat, embedder = client_for(scripted_server), client_for(embeddings)
        brain = make_assistant(lambda: chat, embedding_model="e5-small")
        brain.embedding_client_factory = lambda: embedder
        vectors = brain.embed(["the east door sticks"])()  # the worker thread's call
        assert len(vectors) == 1 and embeddings.embedding_requests
        assert scripted_server.embedding_requests == []
        # without one, the chat endpoint answers them
        brain.embedding_client_factory = None
        brain.embed(["the east door sticks"])()
        assert scripted_server.embedding_requests


def test_nobody_addressed_or_a_server_without_tool_choice_is_never_forced():
    from .core_fakes import hear, reply, run_tick

    busy = [reply(("add_journal_entry", {"content": f"note {n}"})) for n in range(3)]
    model = ScriptedModel(*busy)
    assistant = make_assistant(model, max_react_iterations=3, respond_to_ambient=True)
    hear(assistant, "Lovely weather today.", speaker="Alice")  # not said to Aria
    run_tick(assistant)
    assert [request.tool_choice for request in model.requests] == ["auto"] * 3
    model = ScriptedModel(*[reply(("add_journal_entry", {"content": "x"})) for _ in range(3)])
    assistant = make_assistant(model, max_react_iterations=3, tool_choice="omit")
    hear(assistant, "Aria, hello?")
    run_tick(assistant)
    assert [request.tool_choice for request in model.requests] == ["omit"] * 3


def test_calibration_counts_the_request_sent_not_the_budgets_bound(scripted_server):
    from .core_fakes import hear, run_tick

    # the server counts exactly as we do: whatever private talk the budget's bound holds and
    # a request leaves out, the factor stays 1
    for _ in range(2):
        scripted_server.responder.add(
            tool_reply(tool_call("whisper", {"target": "Bob", "text": "Safe with me."})),
            tool_reply(tool_call("noop", {})),
        )
    scripted_server.responder.add(
        tool_reply(tool_call("say", {"text": "Hello, Alice."})), tool_reply(tool_call("noop", {}))
    )
    client = client_for(scripted_server)
    brain = make_assistant(lambda: client, chat_model="gemma-3-1b-it")
    hear(brain, "my vault code is 4-1-7 " * 40, event_type="whisper", speaker="Bob")
    run_tick(brain)
    hear(brain, "and the back door is 9-9-2 " * 40, event_type="whisper", speaker="Bob")
    run_tick(brain)
    hear(brain, "Aria, hello?", speaker="Alice")
    run_tick(brain)
    assert "4-1-7" not in str(scripted_server.responder.requests[-2]["messages"])
    assert brain.calibration.token_scale() == pytest.approx(1.0, abs=0.01)


def test_a_steady_factor_settles_and_requests_are_no_longer_counted_for_it():
    brain = make_assistant(ScriptedModel(), chat_model="gemma-3-1b-it")
    assert brain.calibration.learning_token_scale()
    for _ in range(4):
        brain.calibration.calibrate_tokens(1000, 1250)
    assert brain.calibration.token_scale() == 1.25 and not brain.calibration.learning_token_scale()
    # a noisy server settles after thirty samples at most
    brain = make_assistant(ScriptedModel(), chat_model="gemma-3-1b-it")
    for n in range(30):
        brain.calibration.calibrate_tokens(1000, 1100 if n % 2 else 1400)
    assert not brain.calibration.learning_token_scale()
    assert not make_assistant(
        ScriptedModel(), chat_model="gpt-4o-mini"
    ).calibration.learning_token_scale()


# ---- the real-server harness, against the stand-in -----------------------------------------


def test_the_real_server_harness_drives_a_sleep_turn_and_a_wake(scripted_server):
    from .real_servers import check_sleep_turn

    # as llama-cpp-python: "required" is a 500, tools without tool_choice never reach the model
    scripted_server.refuses_required_choice = True
    scripted_server.tools_need_choice = True
    scripted_server.responder.add(
        tool_reply(tool_call("stay_asleep", {"reason": "Carol can manage"})),
        tool_reply(tool_call("say", {"text": "Fire? I am coming!"})),
        tool_reply(tool_call("noop", {})),
    )
    rows = check_sleep_turn(scripted_server.base_url)
    assert [name for name, _, _ in rows] == [
        "sleep turn",
        "wake",
        "after the wake, the line that waited",
    ]
    assert all(ok for _, _, ok in rows), rows
    assert "tool_choice auto (the server refused required); tool stay_asleep" in rows[0][1]
    assert "at its wake time" in rows[1][1]
    assert "Fire? I am coming!" in rows[2][1]
    assert len(scripted_server.refused_choices) == 1


def test_a_refused_named_tool_gets_auto_remembered_apart_from_required():
    from ai_assistant.llm.tool_choice import complete_with_tools, refuses_required

    tools = [{"type": "function", "function": {"name": "say", "parameters": {}}}]
    named = {"type": "function", "function": {"name": "say"}}
    said = ChatReply(content=None, tool_calls=[], finish_reason="stop")
    model = ScriptedModel(
        LLMError(BAD_REQUEST, "BadRequestError: tool_choice of type object is not supported", 400),
        said,
        said,
        said,
    )
    complete_with_tools(model, request(tools=tools, tool_choice=named))
    complete_with_tools(model, request(tools=tools, tool_choice=named))
    complete_with_tools(model, request(tools=tools, tool_choice="required"))
    assert [r.tool_choice for r in model.requests] == [named, "auto", "auto", "required"]
    assert not refuses_required(model)
