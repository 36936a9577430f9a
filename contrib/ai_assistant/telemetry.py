"""
Optional OpenTelemetry: spans and metrics for turns, model calls and sleep.

When the `opentelemetry-api` package is installed (the `telemetry` extra), the contrib reports
to whatever tracer and meter providers the game configured (an SDK with an exporter: OTLP, the
console, ...). The API's default providers do nothing, so with the API installed and no SDK
configured the cost is a few no-op calls per turn. Without the package, every function here
returns at once and nothing is wrapped (`AVAILABLE` is False). `set_enabled(False)` (the shell
applies the game setting `AI_ASSISTANT_TELEMETRY`) turns it off while installed.

Spans (`docs/operations.md` lists every attribute):

- `ai_assistant.turn`: one awake turn (emergency compaction included), from its first stretch
  to its outcome;
- `ai_assistant.model_call`: one model call (chat, structured, embedding), in the worker thread
  or the event loop that runs it, a child of the turn or sleep step that asked for it;
- `ai_assistant.sleep.phase`: one sleep tick's work (compacting or dreaming);
- `ai_assistant.sleep.step`: one step within it (scoring, facts, a dreaming step, a wake
  decision).

Metrics: `ai_assistant.model.calls`, `ai_assistant.model.tokens`, `ai_assistant.model.latency`
(milliseconds), `ai_assistant.turns` and `ai_assistant.sleep.debt` (an observable gauge).

Attributes carry names, counts and kinds only: never what players said, prompts, replies or
secrets.

A turn is a generator resumed across reactor steps, and model calls run on other threads, so no
span is ever left "current" across a yield: `traced` starts its span explicitly and makes it
current only for each stretch of the generator (attached before, detached after, on the same
thread), and a model call's span names its parent explicitly (the context current when the call
was made).

"""

import logging
import threading
import time
from collections.abc import Callable, Generator
from functools import partial
from typing import Any

try:
    from opentelemetry import context as otel_context
    from opentelemetry import metrics, trace
    from opentelemetry.trace import SpanKind, Status, StatusCode
except ImportError:  # the telemetry extra is not installed: everything below is a no-op
    AVAILABLE = False
else:
    AVAILABLE = True

SCOPE = "ai_assistant"
TURN_SPAN = "ai_assistant.turn"
MODEL_CALL_SPAN = "ai_assistant.model_call"
SLEEP_PHASE_SPAN = "ai_assistant.sleep.phase"
SLEEP_STEP_SPAN = "ai_assistant.sleep.step"

ASSISTANT = "ai_assistant.assistant"
SLEEP_STEP = "ai_assistant.sleep.step"
REPORT = "ai_assistant.report"
ERROR_TYPE = "error.type"

# kinds of model call
CHAT = "chat"
STRUCTURED = "structured"
EMBEDDING = "embedding"
RERANK = "rerank"

# the OpenTelemetry GenAI operation of each kind (others are "chat")
_OPERATIONS = {EMBEDDING: "embeddings", RERANK: "rerank"}

log = logging.getLogger(__name__)

_enabled = AVAILABLE
_lock = threading.Lock()
_tracer_provider = None
_meter_provider = None
_tracer = None
_instruments = None
# the sleep debt last seen of each assistant, read by the gauge's callback
_debts: dict[str, int] = {}


def enabled() -> bool:
    """Whether spans and metrics are recorded.

    Returns:
        bool: True when the OpenTelemetry API is installed and telemetry is not turned off.

    """
    return _enabled


def set_enabled(on: bool) -> None:
    """Turn telemetry on or off (it is on by default when the API is installed).

    Args:
        on (bool): Whether to record; ignored (off) when the API is not installed.

    """
    global _enabled
    _enabled = bool(on) and AVAILABLE


def use_providers(tracer_provider=None, meter_provider=None) -> None:
    """Report to these providers instead of the global ones (tests; an app that keeps its own).

    OpenTelemetry's global providers can be set only once per process; tests install an SDK
    provider with an in-memory exporter here instead.

    Args:
        tracer_provider (TracerProvider, optional): None: the global one.
        meter_provider (MeterProvider, optional): None: the global one.

    """
    global _tracer_provider, _meter_provider, _tracer, _instruments
    with _lock:
        _tracer_provider, _meter_provider = tracer_provider, meter_provider
        _tracer = _instruments = None
        _debts.clear()


def _get_tracer():
    global _tracer
    if _tracer is None:
        with _lock:
            if _tracer is None:
                _tracer = trace.get_tracer(SCOPE, tracer_provider=_tracer_provider)
    return _tracer


class _Instruments:
    """The metric instruments, made once per meter provider."""

    def __init__(self, meter_provider):
        meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self.calls = meter.create_counter(
            "ai_assistant.model.calls", unit="{call}", description="Model calls made."
        )
        self.tokens = meter.create_counter(
            "ai_assistant.model.tokens",
            unit="{token}",
            description="Tokens used by model calls (gen_ai.token.type: input or output).",
        )
        self.latency = meter.create_histogram(
            "ai_assistant.model.latency", unit="ms", description="How long a model call took."
        )
        self.turns = meter.create_counter(
            "ai_assistant.turns", unit="{turn}", description="Awake turns run."
        )
        meter.create_observable_gauge(
            "ai_assistant.sleep.debt",
            callbacks=[_observe_debts],
            unit="{point}",
            description="Each assistant's sleep debt, as last seen.",
        )


def _get_instruments() -> _Instruments:
    global _instruments
    if _instruments is None:
        with _lock:
            if _instruments is None:
                _instruments = _Instruments(_meter_provider)
    return _instruments


def _observe_debts(options=None):
    return [metrics.Observation(points, {ASSISTANT: name}) for name, points in list(_debts.items())]


def note_debt(assistant: str, points: int) -> None:
    """Remember an assistant's sleep debt for the `ai_assistant.sleep.debt` gauge.

    Args:
        assistant (str): The assistant's name.
        points (int): Its debt now.

    """
    if _enabled:
        _debts[assistant] = int(points)


def count_turn(assistant: str, result: str) -> None:
    """Count one awake turn in `ai_assistant.turns`.

    Args:
        assistant (str): The assistant's name.
        result (str): "ok" or "error".

    """
    if _enabled:
        _get_instruments().turns.add(1, {ASSISTANT: assistant, "ai_assistant.turn.result": result})


def error_kind(error: BaseException) -> str:
    """What kind of error it was, for `error.type`: an `LLMError`'s kind, else the class name
    (never its message, which may quote the provider or a player).

    Args:
        error (BaseException): The error.

    Returns:
        str: The kind.

    """
    return getattr(error, "kind", None) or type(error).__name__


def counts(report: Any, prefix: str) -> dict:
    """The numbers of a report as span attributes (`<prefix>.<key>`): ints, floats and bools
    only, so no text from the model or players ever becomes an attribute.

    Args:
        report: A report dict (anything else gives no attributes).
        prefix (str): The attribute names' prefix.

    Returns:
        dict: Attribute name -> number.

    """
    if not isinstance(report, dict):
        return {}
    return {
        f"{prefix}.{str(key).replace(' ', '_')}": value
        for key, value in report.items()
        if isinstance(value, (int, float, bool))
    }


# ---- generators: a span over work resumed across reactor steps -------------------------------


def traced(
    name: str,
    work: Generator | None,
    attributes: dict | None = None,
    describe: Callable[[Any], dict] | None = None,
) -> Generator | None:
    """The work inside a span, or the work itself when telemetry is off.

    The span starts when the work first runs (its parent is the span current then) and ends
    when it returns, raises or is closed. It is current during each stretch of the work, so
    spans and model calls started there are its children.

    Args:
        name (str): The span's name.
        work (Generator or None): A generator yielding blocking work (None: None).
        attributes (dict, optional): Attributes set at the start.
        describe (callable, optional): `describe(result)` -> attributes set at the end.

    Returns:
        Generator or None: Work yielding what `work` yields and returning what it returns.

    """
    if not _enabled or work is None:
        return work
    return _traced(name, work, attributes or {}, describe)


def _traced(name: str, work: Generator, attributes: dict, describe) -> Generator:
    span = _get_tracer().start_span(name, attributes=attributes)
    try:
        result = yield from _within(span, work)
    except GeneratorExit:
        span.end()
        raise
    except BaseException as exc:
        if getattr(exc, "waiting", False) is True:
            span.set_attribute("ai_assistant.waiting", type(exc).__name__)
        else:
            span.set_attribute(ERROR_TYPE, error_kind(exc))
            span.set_status(Status(StatusCode.ERROR, error_kind(exc)))
        span.end()
        raise
    try:
        if describe is not None:
            span.set_attributes(describe(result))
    except Exception:  # noqa: BLE001 - telemetry never fails the work it watches
        log.exception("ai_assistant telemetry: describing %s failed", name)
    finally:
        span.end()
    return result


def _within(span, work: Generator) -> Generator:
    """Drive `work`, with `span` current only while a stretch of it runs."""
    ctx = trace.set_span_in_context(span)
    value, error = None, None
    while True:
        token = otel_context.attach(ctx)
        try:
            step = work.send(value) if error is None else work.throw(error)
        except StopIteration as stop:
            return stop.value
        finally:
            otel_context.detach(token)
        try:
            value, error = (yield step), None
        except GeneratorExit:
            work.close()
            raise
        except BaseException as exc:  # thrown in by the driver: the call failed
            value, error = None, exc


# ---- model calls: spans and metrics in the thread or event loop that runs them ----------------


def model_call(
    kind: str, model: str, assistant: str, blocking: Callable, asynchronous: Callable
) -> tuple[Callable, Callable]:
    """A model call's two forms (see `driver.ModelWork`), each timed in a span; unchanged when
    telemetry is off.

    Called where the call is made (on the reactor thread, inside a traced stretch): the span
    current then becomes the parent of the call's span, which starts and ends in whatever
    thread or event loop runs the call.

    Args:
        kind (str): `CHAT`, `STRUCTURED`, `EMBEDDING` or `RERANK`.
        model (str): The model asked.
        assistant (str): Whose call it is.
        blocking (callable): The blocking form.
        asynchronous (callable): The coroutine function.

    Returns:
        tuple: (blocking, asynchronous), taking the same arguments as before.

    """
    if not _enabled:
        return blocking, asynchronous
    call = _Call(kind, model or "", assistant, otel_context.get_current())
    return partial(call.run, blocking), partial(call.arun, asynchronous)


class _Call:
    """One model call's telemetry: where it belongs and what it measured."""

    __slots__ = ("kind", "model", "assistant", "parent")

    def __init__(self, kind: str, model: str, assistant: str, parent):
        self.kind = kind
        self.model = model
        self.assistant = assistant
        self.parent = parent

    def _start(self):
        attributes = {
            ASSISTANT: self.assistant,
            "ai_assistant.call.kind": self.kind,
            "gen_ai.operation.name": _OPERATIONS.get(self.kind, "chat"),
            "gen_ai.request.model": self.model,
        }
        span = _get_tracer().start_span(
            MODEL_CALL_SPAN, context=self.parent, kind=SpanKind.CLIENT, attributes=attributes
        )
        return span, time.perf_counter()

    def run(self, blocking: Callable, *args):
        span, started = self._start()
        try:
            result = blocking(*args)
        except BaseException as exc:
            self._end(span, started, None, exc)
            raise
        self._end(span, started, result, None)
        return result

    async def arun(self, asynchronous: Callable, *args):
        span, started = self._start()
        try:
            result = await asynchronous(*args)
        except BaseException as exc:
            self._end(span, started, None, exc)
            raise
        self._end(span, started, result, None)
        return result

    def _replies(self, result) -> list:
        if result is None or self.kind in (EMBEDDING, RERANK):
            return []
        if self.kind == STRUCTURED:
            return list(result[1])
        return [result]

    def _end(self, span, started: float, result, error: BaseException | None) -> None:
        try:
            latency = (time.perf_counter() - started) * 1000
            replies = self._replies(result)
            prompt = sum(reply.usage.prompt for reply in replies)
            completion = sum(reply.usage.completion for reply in replies)
            labels = {
                ASSISTANT: self.assistant,
                "ai_assistant.call.kind": self.kind,
                "gen_ai.request.model": self.model,
            }
            span.set_attribute("ai_assistant.call.latency_ms", round(latency, 1))
            if replies:
                span.set_attributes(
                    {
                        "gen_ai.usage.input_tokens": prompt,
                        "gen_ai.usage.output_tokens": completion,
                        "ai_assistant.call.cached_tokens": sum(r.usage.cached for r in replies),
                        "ai_assistant.call.replies": len(replies),
                        "gen_ai.response.model": replies[-1].model or self.model,
                    }
                )
            elif self.kind in (EMBEDDING, RERANK) and isinstance(result, list):
                span.set_attribute("ai_assistant.call.results", len(result))
            if error is not None:
                labels[ERROR_TYPE] = error_kind(error)
                span.set_attribute(ERROR_TYPE, labels[ERROR_TYPE])
                span.set_status(Status(StatusCode.ERROR, labels[ERROR_TYPE]))
            instruments = _get_instruments()
            instruments.calls.add(1, labels)
            instruments.latency.record(latency, labels)
            if replies:
                instruments.tokens.add(prompt, {**labels, "gen_ai.token.type": "input"})
                instruments.tokens.add(completion, {**labels, "gen_ai.token.type": "output"})
        except Exception:  # noqa: BLE001 - telemetry never fails the call it watches
            log.exception("ai_assistant telemetry: recording a model call failed")
        finally:
            span.end()
