"""
With a running reactor, model calls run in worker threads, tools run on the reactor thread, and
the reactor keeps serving other work while a call is in flight.

"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _probe(*args: str) -> dict:
    """Run `tests.reactor_probe` in its own process (a reactor runs once per process)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.reactor_probe", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"DJANGO_SETTINGS_MODULE": "tests.settings", "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_turn_uses_worker_threads_and_never_blocks_the_reactor():
    result = _probe()
    assert result["runner_is_thread"] is True
    assert result["stop_reason"] == "noop" and result["said"] == ["hello"]
    # HTTP in worker threads, tools on the reactor (main) thread
    assert len(result["http_threads"]) == 2
    assert all(name != result["reactor_thread"] for name in result["http_threads"])
    assert result["said_on"] == [result["reactor_thread"]] == ["MainThread"]
    # 0.6 s of model latency: a 10 ms heartbeat kept beating throughout
    assert result["beats"] >= 30


def test_a_live_server_sends_model_calls_from_the_queue_loop():
    result = _probe("queue")
    assert result["stop_reason"] == "noop" and result["said"] == ["hello"]
    # both calls from the queue's one event-loop thread (no thread per call); tools on the
    # reactor thread
    assert result["http_threads"] == ["ai_assistant_model_calls"] * 2
    assert result["said_on"] == [result["reactor_thread"]] == ["MainThread"]
    assert result["beats"] >= 30


class FakeReactor:
    """`callLater(0, f)` collected; `iterate()` runs what was due, as one reactor iteration."""

    def __init__(self):
        self.due = []
        self.iterations = 0

    def call_later(self, delay, func, *args):
        assert delay == 0
        self.due.append((func, args))

    def iterate(self):
        self.iterations += 1
        due, self.due = self.due, []
        for func, args in due:
            func(*args)


def test_step_queue_runs_one_step_per_reactor_iteration_in_order():
    from ai_assistant.driver import StepQueue

    fake = FakeReactor()
    queue = StepQueue(call_later=fake.call_later)
    ran = []
    for name in ("a", "b", "c"):
        queue.submit(ran.append, name)
    assert ran == [] and len(queue) == 3 and len(fake.due) == 1  # one scheduled at a time
    fake.iterate()
    assert ran == ["a"]
    queue.submit(ran.append, "d")  # joins the queue behind the others
    fake.iterate()
    fake.iterate()
    assert ran == ["a", "b", "c"]
    fake.iterate()
    assert ran == ["a", "b", "c", "d"] and len(queue) == 0 and fake.due == []
    queue.submit(ran.append, "e")  # an empty queue starts again
    fake.iterate()
    assert ran[-1] == "e" and fake.iterations == 5


def test_prompt_starts_and_their_first_stretches_go_before_replies():
    from ai_assistant.driver import StepQueue

    fake = FakeReactor()
    queue = StepQueue(call_later=fake.call_later)
    ran = []

    def prompt_start(name):
        ran.append(f"start {name}")
        # the turn it begins: recall and the prompt, up to the model call
        queue.submit_opening(ran.append, f"call {name}")

    for name in ("a", "b", "c"):
        queue.submit(prompt_start, name)
    fake.iterate()
    # replies for turns under way arrive: they wait until every waiting start has its call out
    queue.submit_continuation(ran.append, "reply x")
    queue.submit_continuation(ran.append, "reply y")
    while fake.due:
        fake.iterate()
    assert ran == [
        "start a",
        "call a",
        "start b",
        "call b",
        "start c",
        "call c",
        "reply x",
        "reply y",
    ]
    assert len(queue) == 0 and fake.iterations == 8


def test_ticks_of_the_ticker_wait_behind_every_other_kind():
    from ai_assistant.driver import StepQueue

    fake = FakeReactor()
    queue = StepQueue(call_later=fake.call_later)
    ran = []
    queue.submit_background(ran.append, "tick-1")
    queue.submit_closing(ran.append, "closing")
    queue.submit(ran.append, "prompt start")
    queue.submit_background(ran.append, "tick-2")
    queue.submit_continuation(ran.append, "turn")
    queue.submit_opening(ran.append, "opening")
    while fake.due:
        fake.iterate()
    assert ran == ["opening", "prompt start", "turn", "closing", "tick-1", "tick-2"]
    assert len(queue) == 0 and fake.iterations == 6


def test_a_turns_closing_work_waits_behind_answers_and_prompt_starts():
    from twisted.internet import defer

    from ai_assistant.driver import CLOSING_STEP, StepQueue, drive

    fake = FakeReactor()
    queue = StepQueue(call_later=fake.call_later)
    ran = []

    def turn(name):
        ran.append(f"{name}: answer")
        yield CLOSING_STEP
        ran.append(f"{name}: prepare the closing call")
        yield "closing call"
        ran.append(f"{name}: closed")

    for name in ("a", "b"):
        drive(
            turn(name),
            lambda work: defer.succeed(None),
            schedule=queue.submit_continuation,
            start_later=True,
            schedule_closing=queue.submit_closing,
        )
    queue.submit(ran.append, "prompt start")
    while fake.due:
        fake.iterate()
    assert ran == [
        "prompt start",
        "a: answer",
        "b: answer",
        "a: prepare the closing call",
        "b: prepare the closing call",
        "a: closed",
        "b: closed",
    ]


def test_step_queue_keeps_going_after_a_step_raises():
    from twisted.python import log

    from ai_assistant.driver import StepQueue

    fake = FakeReactor()
    queue = StepQueue(call_later=fake.call_later)
    errors = []
    log.addObserver(errors.append)
    try:

        def broken():
            raise ValueError("boom")

        ran = []
        queue.submit(broken)
        queue.submit(ran.append, "after")
        fake.iterate()
        fake.iterate()
    finally:
        log.removeObserver(errors.append)
    assert ran == ["after"]
    assert any(event.get("isError") and "boom" in str(event.get("failure")) for event in errors)


def test_drive_resumes_through_the_schedule():
    from twisted.internet import defer

    from ai_assistant.driver import drive

    scheduled = []

    def turn():
        first = yield "work-1"
        second = yield "work-2"
        return [first, second]

    results = []
    drive(
        turn(),
        lambda work: defer.succeed(work.upper()),
        schedule=lambda func, *args: scheduled.append((func, args)),
    ).addCallback(results.append)
    # the first stretch runs at once; each resume waits for the schedule
    assert len(scheduled) == 1 and results == []
    func, args = scheduled.pop()
    func(*args)
    assert len(scheduled) == 1 and results == []
    func, args = scheduled.pop()
    func(*args)
    assert results == [["WORK-1", "WORK-2"]]


def test_drive_can_start_as_a_step_of_its_own():
    from twisted.internet import defer

    from ai_assistant.driver import drive

    scheduled, started, results = [], [], []

    def turn():
        started.append(True)
        value = yield "work"
        return value

    drive(
        turn(),
        lambda work: defer.succeed(work.upper()),
        schedule=lambda func, *args: scheduled.append((func, args)),
        start_later=True,
    ).addCallback(results.append)
    # nothing of the turn ran in the caller's step: its first stretch waits for the schedule
    assert started == [] and len(scheduled) == 1
    func, args = scheduled.pop()
    func(*args)
    assert started == [True] and len(scheduled) == 1 and results == []
    func, args = scheduled.pop()
    func(*args)
    assert results == ["WORK"]


def test_drive_can_queue_its_first_stretch_apart_from_the_rest():
    from twisted.internet import defer

    from ai_assistant.driver import drive

    first, rest, results = [], [], []

    def turn():
        value = yield "work"
        return value

    drive(
        turn(),
        lambda work: defer.succeed(work.upper()),
        schedule=lambda func, *args: rest.append((func, args)),
        start_later=True,
        schedule_first=lambda func, *args: first.append((func, args)),
    ).addCallback(results.append)
    assert len(first) == 1 and rest == []  # a prompt start's turn opens ahead of the others
    func, args = first.pop()
    func(*args)
    assert first == [] and len(rest) == 1 and results == []  # the reply waits its turn
    func, args = rest.pop()
    func(*args)
    assert results == ["WORK"]


def test_drive_wraps_each_stretch_in_step_and_reports_errors_after_it():
    from contextlib import contextmanager

    from twisted.internet import defer

    from ai_assistant.driver import drive

    exits = []

    @contextmanager
    def step():
        try:
            yield
        except BaseException as exc:  # what a transaction would roll back on
            exits.append(f"raised {exc!r}")
            raise
        exits.append("clean")

    def turn():
        yield "work"
        raise RuntimeError("tool bug")

    failures = []
    drive(turn(), lambda work: defer.succeed(work), step=step).addErrback(failures.append)
    # two stretches, both left cleanly: the writes before the error are kept, not rolled back
    assert exits == ["clean", "clean"]
    assert len(failures) == 1 and "tool bug" in str(failures[0].value)


def test_tools_that_reach_players_end_the_answer_part_of_a_turn():
    from tests.core_fakes import make_assistant

    registry = make_assistant().registry
    assert [name for name in ("say", "emote", "whisper") if registry.reaches_players(name)] == [
        "say",
        "emote",
        "whisper",
    ]
    assert not any(registry.reaches_players(name) for name in ("recall", "look", "noop", "nope"))


def test_a_runner_that_raises_at_once_fails_the_turn():
    from ai_assistant.driver import drive

    def turn():
        yield "work"
        return "never"

    def broken_runner(work):
        raise RuntimeError("no pool")

    failures = []
    drive(turn(), broken_runner).addErrback(lambda failure: failures.append(failure.value))
    assert len(failures) == 1 and "no pool" in str(failures[0])
