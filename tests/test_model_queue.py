"""
The server's model call queue: many calls in flight within a limit, a fair turn for each
assistant, rate limits applied once for everyone, and every call ends, also at shutdown.

"""

import asyncio
import threading
import time

import pytest
from django.test import override_settings

from ai_assistant.llm.chat import CANCELLED, RATE_LIMIT, LLMError
from ai_assistant.shell.model_queue import RATE_LIMIT_RETRIES, ModelCallQueue

from .core_fakes import Results, until


class Work:
    """Work with a coroutine form that records when it ran and may wait for a gate."""

    def __init__(self, name, log, gate=None, delay=0.0, fail=None, tracker=None):
        self.name, self.log, self.gate, self.delay = name, log, gate, delay
        self.fail = list(fail or [])
        self.tracker = tracker

    def __call__(self):
        raise AssertionError("the queue must use the coroutine form")

    async def _run(self):
        self.log.append((self.name, time.monotonic()))
        if self.tracker is not None:
            self.tracker["now"] += 1
            self.tracker["most"] = max(self.tracker["most"], self.tracker["now"])
        try:
            if self.gate is not None:
                await self.gate.wait()
            if self.delay:
                await asyncio.sleep(self.delay)
            if self.fail:
                raise self.fail.pop(0)
            return self.name
        finally:
            if self.tracker is not None:
                self.tracker["now"] -= 1

    def coroutine(self):
        return self._run()


@pytest.fixture
def queue():
    made = []

    def make(**kwargs):
        made.append(ModelCallQueue(deliver=lambda func, *args: func(*args), **kwargs).start())
        return made[-1]

    yield make
    for each in made:
        each.abandon()


def _gate(queue):
    gate = asyncio.Event()
    return gate, lambda: queue._loop.call_soon_threadsafe(gate.set)


def test_each_assistant_gets_its_turn(queue):
    q = queue(max_in_flight=1)
    log, results = [], Results()
    gate, open_gate = _gate(q)
    results.track("a1", q.submit("A", Work("a1", log, gate=gate)))
    until(lambda: q.stats().in_flight == 1)
    for owner, name in (("A", "a2"), ("A", "a3"), ("B", "b1")):
        results.track(name, q.submit(owner, Work(name, log)))
    until(lambda: q.stats().queued == 3)
    assert q.stats().owners_waiting == 2
    open_gate()
    results.wait(4)
    # B's one call goes before A's third, though A asked first
    assert [name for name, _ in log] == ["a1", "a2", "b1", "a3"]
    assert results.values == {"a1": "a1", "a2": "a2", "a3": "a3", "b1": "b1"}
    assert q.stats().calls == 4 and q.stats().queued == 0


def test_many_calls_in_flight_within_the_limit(queue):
    q = queue(max_in_flight=5)
    log, results, tracker = [], Results(), {"now": 0, "most": 0}
    for n in range(12):
        results.track(n, q.submit(n % 3, Work(n, log, delay=0.05, tracker=tracker)))
    results.wait(12)
    assert tracker["most"] == 5
    assert sorted(results.values) == list(range(12)) and not results.errors
    stats = q.stats()
    assert stats.in_flight == 0 and stats.calls == 12 and stats.wait_max_ms > 0


def test_a_429_pauses_everyone_and_the_call_is_sent_again(queue):
    q = queue(max_in_flight=4)
    log, results = [], Results()
    refused = LLMError(RATE_LIMIT, "slow down", 429, retry_after=0.3)
    results.track("first", q.submit("A", Work("first", log, fail=[refused])))
    until(lambda: q.stats().rate_limited == 1)
    assert q.stats().paused_for > 0
    results.track("other", q.submit("B", Work("other", log)))
    results.wait(2)
    assert results.values == {"first": "first", "other": "other"}
    refused_at = log[0][1]
    later = {name: at for name, at in log[1:]}
    # nothing was sent during the provider's wait, neither the retry nor the other assistant's
    assert later["first"] - refused_at >= 0.25 and later["other"] - refused_at >= 0.25


def test_a_call_back_from_a_429_goes_first_though_its_owner_has_more_waiting(queue):
    q = queue(max_in_flight=1)
    log, results = [], Results()
    gate, open_gate = _gate(q)
    refused = LLMError(RATE_LIMIT, "slow down", 429, retry_after=0.05)
    results.track("a1", q.submit("A", Work("a1", log, gate=gate, fail=[refused])))
    until(lambda: q.stats().in_flight == 1)
    for owner, name in (("B", "b1"), ("A", "a2"), ("C", "c1")):
        results.track(name, q.submit(owner, Work(name, log)))
    until(lambda: q.stats().queued == 3)
    open_gate()
    results.wait(4)
    assert [name for name, _ in log] == ["a1", "a1", "b1", "c1", "a2"]
    assert not results.errors and q.stats().queued == 0


def test_a_call_refused_again_and_again_fails_as_a_rate_limit(queue):
    q = queue()
    log, results = [], Results()
    refusals = [LLMError(RATE_LIMIT, "no", 429, retry_after=0.01) for _ in range(5)]
    results.track("x", q.submit("A", Work("x", log, fail=refusals)))
    results.wait(1)
    assert results.errors["x"].kind == RATE_LIMIT
    assert len(log) == RATE_LIMIT_RETRIES + 1


def test_errors_reach_the_caller(queue):
    q = queue()
    results = Results()
    results.track("bad", q.submit("A", Work("bad", [], fail=[ValueError("broken reply")])))
    results.wait(1)
    assert isinstance(results.errors["bad"], ValueError)
    assert q.stats().in_flight == 0


def test_work_without_a_coroutine_runs_in_the_queue_threads(queue):
    q = queue(threads=2)
    results = Results()
    results.track("plain", q.submit("A", lambda: threading.current_thread().name))
    results.wait(1)
    assert "ai_assistant_model" in results.values["plain"]


def test_shutdown_ends_every_call_at_once(queue):
    q = queue(max_in_flight=1)
    results = Results()
    gate = asyncio.Event()  # never opened: a provider that never answers
    results.track("hung", q.submit("A", Work("hung", [], gate=gate)))
    until(lambda: q.stats().in_flight == 1)
    results.track("waiting", q.submit("B", Work("waiting", [])))
    until(lambda: q.stats().queued == 1)
    started = time.monotonic()
    q.abandon()
    results.wait(2)
    assert time.monotonic() - started < 2
    assert {name: error.kind for name, error in results.errors.items()} == {
        "hung": CANCELLED,
        "waiting": CANCELLED,
    }
    # a closed queue takes nothing more, and says so
    late = Results()
    late.track("late", q.submit("A", Work("late", [])))
    late.wait(1)
    assert late.errors["late"].kind == CANCELLED


def test_the_limit_must_be_at_least_one():
    with pytest.raises(ValueError, match="at least 1"):
        ModelCallQueue(max_in_flight=0)


def test_the_game_setting_is_checked():
    from ai_assistant.shell import game_settings

    with override_settings(AI_ASSISTANT_MODEL_CALLS_IN_FLIGHT=0):
        with pytest.raises(ValueError, match="AI_ASSISTANT_MODEL_CALLS_IN_FLIGHT"):
            game_settings.model_calls_in_flight()
    with override_settings(AI_ASSISTANT_MODEL_CALLS_IN_FLIGHT=100):
        assert game_settings.model_calls_in_flight() == 100


def test_a_call_that_unwinds_slowly_still_ends_at_shutdown(queue):
    q = queue(max_in_flight=1)
    results = Results()

    class SlowToCancel(Work):
        async def _run(self):
            try:
                await asyncio.Event().wait()  # the provider never answers
            finally:
                await asyncio.sleep(0.5)  # closing its connection takes a while

    results.track("slow", q.submit("A", SlowToCancel("slow", [])))
    until(lambda: q.stats().in_flight == 1)
    q.abandon()
    results.wait(1, timeout=2)
    assert results.errors["slow"].kind == CANCELLED


def test_a_busy_loop_collects_calls_without_being_woken_for_each(queue):
    """Waking the loop hands its thread the interpreter in the middle of the reactor's step:
    only an idle loop is woken; a busy one collects what arrived on its own."""
    q = queue(max_in_flight=8)
    results = Results()
    gate, open_gate = _gate(q)
    results.track("first", q.submit("A", Work("first", [], gate=gate)))
    until(lambda: q.stats().in_flight == 1)
    wakes, real = [], q._loop.call_soon_threadsafe
    q._loop.call_soon_threadsafe = lambda *args: (wakes.append(args), real(*args))[1]
    for n in range(5):
        results.track(f"more{n}", q.submit("B", Work(f"more{n}", [], gate=gate)))
    until(lambda: q.stats().in_flight == 6)
    assert wakes == []
    open_gate()
    results.wait(6)
    assert sorted(results.values) == ["first", "more0", "more1", "more2", "more3", "more4"]
    until(lambda: not q._collecting)  # idle again: the next call wakes it
    results.track("later", q.submit("A", Work("later", [])))
    results.wait(7)
    assert results.values["later"] == "later" and len(wakes) == 2  # the gate, then the call


def test_calls_not_yet_collected_end_at_shutdown(queue, monkeypatch):
    import ai_assistant.shell.model_queue as model_queue

    monkeypatch.setattr(model_queue, "ARRIVALS_EVERY", 60.0)  # the loop never collects them
    q = queue(max_in_flight=8)
    results = Results()
    results.track("hung", q.submit("A", Work("hung", [], gate=asyncio.Event())))
    until(lambda: q.stats().in_flight == 1)
    results.track("arrived", q.submit("B", Work("arrived", [])))
    q.abandon()
    results.wait(2)
    assert {name: error.kind for name, error in results.errors.items()} == {
        "hung": CANCELLED,
        "arrived": CANCELLED,
    }
