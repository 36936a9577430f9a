"""
Optional OpenTelemetry (pure core): spans for turns, model calls and sleep, metrics, nothing a
player said in any attribute, and a no-op without the package or with the setting off.

The SDK's providers are installed through `telemetry.use_providers` (the global ones can be set
only once per process), with an in-memory span exporter and metric reader.

"""

import asyncio
import importlib
import json
import sys
from datetime import timedelta

import pytest
from django.test import override_settings
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from ai_assistant import telemetry
from ai_assistant.agent import model_calls
from ai_assistant.llm.chat import SERVER_ERROR, ChatReply, LLMError, TokenUsage
from ai_assistant.sleep.tick import sleep_tick
from ai_assistant.testing.scripted import ScriptedModel
from ai_assistant.testing.server import tool_call, tool_reply

from .core_fakes import T0, FakeWorld, hear, make_assistant, reply, run, run_tick
from .helpers import AssistantTestCase

SECRET = "swordfish-7731"


@pytest.fixture
def otel():
    """An SDK tracer and meter provider recording in memory; the defaults again afterwards."""
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    telemetry.use_providers(tracer_provider, MeterProvider(metric_readers=[reader]))
    telemetry.set_enabled(True)
    yield exporter, reader
    telemetry.use_providers(None, None)
    telemetry.set_enabled(telemetry.AVAILABLE)


def structured(data: dict, prompt=50, completion=20) -> ChatReply:
    return ChatReply(
        content=json.dumps(data),
        tool_calls=[],
        finish_reason="stop",
        usage=TokenUsage(prompt, completion),
        model="served-model",
    )


def spans_named(exporter, name):
    return [span for span in exporter.get_finished_spans() if span.name == name]


def metric_points(reader) -> dict:
    """Metric name -> its data points."""
    found = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found


def all_attribute_values(exporter, reader) -> list[str]:
    values = []
    for span in exporter.get_finished_spans():
        values += [str(value) for value in span.attributes.values()]
        values += [span.name, str(span.status.description)]
    for points in metric_points(reader).values():
        for point in points:
            values += [str(value) for value in point.attributes.values()]
    return values


# ---- a turn ---------------------------------------------------------------------------------


def test_a_turn_has_its_span_and_its_model_calls_as_children_with_token_counts(otel):
    exporter, reader = otel
    model = ScriptedModel(
        reply(("say", {"text": f"I will keep {SECRET} safe."}), (SECRET, {}), prompt=120),
        reply(("noop", {}), prompt=150),
    )
    assistant = make_assistant(model)
    hear(assistant, f"Aria, remember the password {SECRET}")
    outcome = run_tick(assistant)
    assert outcome.model_calls == 2
    (turn,) = spans_named(exporter, telemetry.TURN_SPAN)
    attributes = dict(turn.attributes)
    assert attributes["ai_assistant.assistant"] == "Aria"
    assert attributes["ai_assistant.turn.events"] == 1
    assert attributes["ai_assistant.turn.model_calls"] == 2
    # a tool name the model made up is its text: not an attribute
    assert attributes["ai_assistant.turn.tools"] == ("say", "unknown", "noop")
    assert attributes["ai_assistant.turn.result"] == "ok"
    assert attributes["ai_assistant.turn.stop_reason"] == outcome.stop_reason
    assert attributes["ai_assistant.turn.prompt_tokens"] == 270
    assert "ai_assistant.sleep.debt" in attributes
    calls = spans_named(exporter, telemetry.MODEL_CALL_SPAN)
    assert len(calls) == 2
    for call, prompt in zip(calls, (120, 150)):
        assert call.parent.span_id == turn.context.span_id
        assert call.context.trace_id == turn.context.trace_id
        assert call.attributes["ai_assistant.call.kind"] == "chat"
        assert call.attributes["gen_ai.request.model"] == "test-model"
        assert call.attributes["gen_ai.usage.input_tokens"] == prompt
        assert call.attributes["gen_ai.usage.output_tokens"] == 10
        assert call.attributes["ai_assistant.call.latency_ms"] >= 0
    # metrics: calls, tokens by type, latency, turns, the debt gauge
    points = metric_points(reader)
    assert sum(p.value for p in points["ai_assistant.model.calls"]) == 2
    tokens = {
        p.attributes["gen_ai.token.type"]: p.value for p in points["ai_assistant.model.tokens"]
    }
    assert tokens == {"input": 270, "output": 20}
    (latency,) = points["ai_assistant.model.latency"]
    assert latency.count == 2
    (turns,) = points["ai_assistant.turns"]
    assert turns.value == 1 and turns.attributes["ai_assistant.turn.result"] == "ok"
    (debt,) = points["ai_assistant.sleep.debt"]
    assert debt.attributes == {"ai_assistant.assistant": "Aria"}
    assert debt.value == attributes["ai_assistant.sleep.debt"] > 0
    # names, counts and kinds only: nothing a player or the model said, no prompt
    values = " ".join(all_attribute_values(exporter, reader))
    assert SECRET not in values and "librarian" not in values and "password" not in values


def test_a_failed_model_call_marks_its_span_and_the_turn_with_the_error_kind(otel):
    exporter, reader = otel
    assistant = make_assistant(ScriptedModel(LLMError(SERVER_ERROR, f"upstream said {SECRET}")))
    hear(assistant, "Aria, hello")
    outcome = run_tick(assistant)
    assert outcome.error
    (turn,) = spans_named(exporter, telemetry.TURN_SPAN)
    assert turn.attributes["ai_assistant.turn.result"] == "error"
    assert turn.attributes["error.type"] == SERVER_ERROR
    (call,) = spans_named(exporter, telemetry.MODEL_CALL_SPAN)
    assert call.attributes["error.type"] == SERVER_ERROR
    assert call.status.status_code == StatusCode.ERROR
    assert "gen_ai.usage.input_tokens" not in call.attributes
    (calls,) = metric_points(reader)["ai_assistant.model.calls"]
    assert calls.attributes["error.type"] == SERVER_ERROR
    # the error's message (which may quote the provider) is not an attribute
    assert SECRET not in " ".join(all_attribute_values(exporter, reader))


def test_emergency_compaction_runs_inside_the_turn_span(otel):
    exporter, _ = otel
    model = ScriptedModel(reply(("noop", {})), structured({"summary": "They talked."}))
    assistant = make_assistant(model, max_context_tokens=4000, compact_preserve_window=4)
    for i in range(12):
        assistant.history.extend(
            [{"role": "user", "content": f"word{i} " * 60}, {"role": "assistant", "content": "ok"}]
        )
    outcome = run_tick(assistant)
    assert outcome.stop_reason == "compaction_only"
    (turn,) = spans_named(exporter, telemetry.TURN_SPAN)
    assert turn.attributes["ai_assistant.turn.compacted"] > 0
    calls = spans_named(exporter, telemetry.MODEL_CALL_SPAN)
    assert [c.attributes["ai_assistant.call.kind"] for c in calls] == ["chat", "structured"]
    assert all(c.parent.span_id == turn.context.span_id for c in calls)
    summary = calls[1]
    assert summary.attributes["ai_assistant.call.replies"] == 1
    assert summary.attributes["gen_ai.response.model"] == "served-model"
    assert summary.attributes["gen_ai.usage.input_tokens"] == 50


def test_the_coroutine_form_is_traced_too(otel):
    exporter, _ = otel
    model = ScriptedModel(reply(("noop", {}), prompt=77))
    assistant = make_assistant(model)
    work = assistant.call_model(assistant.build_request([{"role": "user", "content": "hi"}]))
    result = asyncio.run(work.coroutine())
    assert result.usage.prompt == 77
    (call,) = spans_named(exporter, telemetry.MODEL_CALL_SPAN)
    assert call.parent is None  # made outside any turn: a span of its own
    assert call.attributes["gen_ai.usage.input_tokens"] == 77


def test_embedding_calls_are_traced_with_their_kind(otel):
    exporter, _ = otel
    assistant = make_assistant(ScriptedModel(), embedding_model="embed-model")
    vectors = assistant.embed(["one", "two"])()
    assert len(vectors) == 2
    (call,) = spans_named(exporter, telemetry.MODEL_CALL_SPAN)
    assert call.attributes["ai_assistant.call.kind"] == "embedding"
    assert call.attributes["gen_ai.operation.name"] == "embeddings"
    assert call.attributes["gen_ai.request.model"] == "embed-model"
    assert call.attributes["ai_assistant.call.results"] == 2


# ---- sleep ----------------------------------------------------------------------------------


def test_a_compacting_tick_has_a_phase_span_with_scoring_and_facts_steps(otel):
    exporter, reader = otel
    model = ScriptedModel(
        structured({"scores": [{"entry_id": "j000000", "importance": 8}]}),
        structured({"entries": [{"entry_id": "j000000", "facts": [f"Mira's code is {SECRET}."]}]}),
    )
    assistant = make_assistant(model, scoring_batch_size=1)
    assistant.journal.add(f"Mira told me her code is {SECRET}", author="Aria", now=T0)
    assistant.state.set("activity_since_wake", 10)
    assistant.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="tool")
    report = run(sleep_tick(assistant, T0))
    assert report["consolidated"] == 1
    (phase,) = spans_named(exporter, telemetry.SLEEP_PHASE_SPAN)
    assert phase.attributes["ai_assistant.sleep.phase"] == "compacting"
    assert phase.attributes["ai_assistant.assistant"] == "Aria"
    assert phase.attributes["ai_assistant.report.scored"] == 1
    assert phase.attributes["ai_assistant.report.consolidated"] == 1
    assert phase.attributes["ai_assistant.sleep.errors"] == 0
    steps = spans_named(exporter, telemetry.SLEEP_STEP_SPAN)
    assert [s.attributes["ai_assistant.sleep.step"] for s in steps] == ["scoring", "facts"]
    assert all(s.parent.span_id == phase.context.span_id for s in steps)
    calls = spans_named(exporter, telemetry.MODEL_CALL_SPAN)
    assert [c.parent.span_id for c in calls] == [s.context.span_id for s in steps]
    assert all(c.attributes["ai_assistant.call.kind"] == "structured" for c in calls)
    assert SECRET not in " ".join(all_attribute_values(exporter, reader))


def test_a_dreaming_tick_has_a_span_per_step_and_records_a_failing_one(otel):
    exporter, reader = otel
    model = ScriptedModel(LLMError(SERVER_ERROR, "down"))
    # (relationships off: the one scripted answer is for the people step)
    assistant = make_assistant(model, entity_min_observations=2, relationships_enabled=False)
    assistant.lifecycle.go_to_sleep(
        T0, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    for i in range(2):
        assistant.entities.observe("name:ann", "Ann", f"Ann likes {SECRET} {i}", now=T0, author="A")
    reports = run(sleep_tick(assistant, T0))
    names = [r["step"] for r in reports]
    (phase,) = spans_named(exporter, telemetry.SLEEP_PHASE_SPAN)
    assert phase.attributes["ai_assistant.sleep.phase"] == "dreaming"
    assert phase.attributes["ai_assistant.sleep.steps"] == len(names)
    assert phase.attributes["ai_assistant.sleep.errors"] == 1
    steps = {
        s.attributes["ai_assistant.sleep.step"]: s
        for s in spans_named(exporter, telemetry.SLEEP_STEP_SPAN)
    }
    assert list(steps) == names
    assert steps["people"].attributes["error.type"] == SERVER_ERROR
    assert steps["people"].status.status_code == StatusCode.ERROR
    assert steps["links"].attributes["ai_assistant.sleep.step_done"] is True
    assert "ai_assistant.report.linked" in steps["links"].attributes
    # a report's text (why a step was skipped) is not an attribute: numbers only
    assert not any(
        isinstance(v, str)
        for k, v in steps["reflection"].attributes.items()
        if k.startswith("ai_assistant.report.")
    )
    (call,) = spans_named(exporter, telemetry.MODEL_CALL_SPAN)
    assert call.parent.span_id == steps["people"].context.span_id
    assert SECRET not in " ".join(all_attribute_values(exporter, reader))


def test_a_sleep_turn_is_a_step_of_dreaming(otel):
    exporter, _ = otel
    model = ScriptedModel(reply(("stay_asleep", {"reason": "not for me"})))
    assistant = make_assistant(model, world=FakeWorld(("Alice", "Carol")))
    assistant.lifecycle.go_to_sleep(
        T0, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    assistant.state.set(
        "dreaming_progress",
        {"done": ["links", "people", "orphans", "reflection", "pruning", "working memory"]},
    )
    hear(assistant, "Carol, the library is on fire!", speaker="Alice")
    report = run(sleep_tick(assistant, T0 + timedelta(seconds=1)))
    assert report["sleep_turn"] == 1 and report["tool"] == "stay_asleep"
    (step,) = spans_named(exporter, telemetry.SLEEP_STEP_SPAN)
    (phase,) = spans_named(exporter, telemetry.SLEEP_PHASE_SPAN)
    assert step.attributes["ai_assistant.sleep.step"] == "sleep turn"
    assert step.attributes["ai_assistant.report.sleep_turn"] == 1
    assert step.attributes["ai_assistant.report.woke"] is False
    assert step.parent.span_id == phase.context.span_id


# ---- off --------------------------------------------------------------------------------------


def test_turned_off_nothing_is_wrapped_or_recorded(otel):
    exporter, reader = otel
    telemetry.set_enabled(False)
    model = ScriptedModel(reply(("noop", {})), reply(("noop", {})))
    assistant = make_assistant(model)
    hear(assistant, "Aria, hello")
    work = assistant.call_model(assistant.build_request([]))
    assert work.blocking is model_calls.complete  # the plain call, no wrapper
    work()
    assert run_tick(assistant).model_calls == 1
    assert exporter.get_finished_spans() == ()
    assert metric_points(reader) == {}


@pytest.fixture
def without_opentelemetry(monkeypatch):
    """The telemetry module as it loads when `opentelemetry` cannot be imported."""
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    importlib.reload(telemetry)
    yield
    monkeypatch.undo()
    importlib.reload(telemetry)


def test_without_opentelemetry_everything_works_and_nothing_is_wrapped(without_opentelemetry):
    assert telemetry.AVAILABLE is False and telemetry.enabled() is False
    telemetry.set_enabled(True)  # the game setting cannot turn on what is not installed
    assert telemetry.enabled() is False

    def work():
        yield "x"

    generator = work()
    assert telemetry.traced(telemetry.TURN_SPAN, generator, {}) is generator
    assert telemetry.model_call("chat", "m", "Aria", len, abs) == (len, abs)
    telemetry.note_debt("Aria", 3)
    telemetry.count_turn("Aria", "ok")
    model = ScriptedModel(
        reply(("say", {"text": "Hello!"})),
        reply(("noop", {})),
        structured({"scores": [{"entry_id": "j000000", "importance": 8}]}),
        structured({"entries": [{"entry_id": "j000000", "facts": ["Mira came by."]}]}),
    )
    assistant = make_assistant(model, scoring_batch_size=1)
    hear(assistant, "Aria, hello")
    assert run_tick(assistant).model_calls == 2
    assistant.journal.add("Mira came by", author="Aria", now=T0)
    assistant.lifecycle.go_to_sleep(
        T0, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    report = run(sleep_tick(assistant, T0))
    assert report["scored"] == 1 and report["consolidated"] == 1


class TestTheGameSetting(AssistantTestCase):
    """`AI_ASSISTANT_TELEMETRY` is read each time the script drives work."""

    def setUp(self):
        super().setUp()
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        telemetry.use_providers(provider, MeterProvider(metric_readers=[InMemoryMetricReader()]))
        self.addCleanup(telemetry.set_enabled, telemetry.AVAILABLE)
        self.addCleanup(telemetry.use_providers, None, None)

    def turn(self):
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.char1.execute_cmd("say Aria, hello")
        self.tick()

    def test_off_then_on(self):
        with override_settings(AI_ASSISTANT_TELEMETRY=False):
            self.turn()
            assert telemetry.enabled() is False
        assert [s.name for s in self.exporter.get_finished_spans()] == []
        self.turn()  # the default: on
        assert telemetry.enabled() is True
        names = [span.name for span in self.exporter.get_finished_spans()]
        assert names == [telemetry.MODEL_CALL_SPAN, telemetry.TURN_SPAN]
