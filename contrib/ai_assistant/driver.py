"""
Driving a turn: the pure core's generators meet Twisted's threads here.

A turn is a generator that yields *model work* (`ModelWork`: one model call, callable as
blocking work and awaitable as a coroutine) and receives its result, or has its exception thrown
in. Everything between two yields (tool execution, Attribute writes) runs on the thread that
resumes the generator. `drive` resumes it from Deferred callbacks, which Twisted fires on the
reactor thread, so world and database access stays on the reactor thread while HTTP runs
elsewhere.

Ways to run the work (a *runner*: work in, Deferred out):

- on a live server, the shell hands it to the server's model call queue
  (`ai_assistant.shell.model_queue`), which awaits the coroutine on its own event loop;
- `in_thread`: the blocking form in a small daemon thread pool (the reactor must be running);
- `inline`: in the calling thread, for tests, the headless demo and scripts where no reactor
  runs.

"""

import threading
from collections import deque
from collections.abc import Callable, Generator
from contextlib import AbstractContextManager, nullcontext
from functools import partial
from typing import Any

from twisted.internet import defer, threads
from twisted.python import log
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool

BlockingWork = Callable[[], Any]
Runner = Callable[[BlockingWork], defer.Deferred]


class ModelWork:
    """Blocking work that can also run as a coroutine: one model call (or a short sequence of
    them), in the two forms the runners need.

    Calling it runs the blocking form (`inline`, `in_thread`); `coroutine()` makes the
    coroutine the server's model call queue awaits on its event loop.

    Args:
        blocking (callable): The blocking function.
        asynchronous (callable): The coroutine function taking the same arguments.
        *args: The arguments of both.

    """

    __slots__ = ("blocking", "asynchronous", "args")

    def __init__(self, blocking: Callable, asynchronous: Callable, *args: Any):
        self.blocking = blocking
        self.asynchronous = asynchronous
        self.args = args

    def __call__(self) -> Any:
        return self.blocking(*self.args)

    def coroutine(self):
        """The coroutine form.

        Returns:
            Coroutine: Awaiting it does the work.

        """
        return self.asynchronous(*self.args)

    def __repr__(self) -> str:
        return f"ModelWork({getattr(self.blocking, '__name__', self.blocking)})"


class _NextStep:
    """Yielded by a turn instead of blocking work: "let the reactor serve others, then go on"."""

    def __init__(self, name: str = "NEXT_STEP"):
        self.name = name

    def __repr__(self) -> str:
        return self.name


NEXT_STEP = _NextStep()
# as NEXT_STEP, and what is left of the turn is closing work (the players have their answer):
# from here on its stretches wait behind other turns' answers and new ticks
CLOSING_STEP = _NextStep("CLOSING_STEP")


DEFAULT_MODEL_THREADS = 4
_pool = None


def model_pool(size: int = DEFAULT_MODEL_THREADS):
    """The model calls' own thread pool, made once, abandoned (not joined) at shutdown.

    Kept apart from the reactor's shared pool, and small: the threads mostly wait on HTTP, but
    the SDK's request and response handling is Python that competes with the reactor thread for
    the GIL; a few threads keep enough calls in flight without crowding the reactor out.

    Its threads are daemon threads and shutdown does not wait for them: a call that hangs on
    the provider must never hold up `evennia reload` or `stop` (the old server would linger
    while the portal starts a new one). An abandoned call's events stay queued, because events
    leave the queue only when a reply has arrived.

    Args:
        size (int, optional): The most threads the pool may have; a later call with another
            size resizes it.

    Returns:
        ThreadPool: The pool.

    """
    global _pool
    if _pool is None:
        from twisted.internet import reactor

        _pool = AbandonedThreadPool(minthreads=0, maxthreads=size, name="ai_assistant_model")
        _pool.start()
        reactor.addSystemEventTrigger("during", "shutdown", _pool.abandon)
    elif _pool.max != size:
        _pool.adjustPoolsize(maxthreads=size)
    return _pool


class AbandonedThreadPool(ThreadPool):
    """A thread pool of daemon threads that shutdown leaves behind instead of joining."""

    # staticmethod: a bare partial as a class attribute will bind like a method (Python 3.13+)
    threadFactory = staticmethod(partial(threading.Thread, daemon=True))

    def abandon(self) -> None:
        """Stop taking work and let idle threads end; never wait for busy ones."""
        global _pool
        self.joined = True
        self.started = False
        self._team.quit()
        if _pool is self:
            _pool = None


def in_thread(work: BlockingWork, threads_count: int = DEFAULT_MODEL_THREADS) -> defer.Deferred:
    """Run blocking work in the model calls' thread pool.

    Args:
        work (callable): The blocking work, called with no arguments.
        threads_count (int, optional): The pool's size.

    Returns:
        Deferred: Fires with the work's result, on the reactor thread.

    """
    from twisted.internet import reactor

    return threads.deferToThreadPool(reactor, model_pool(threads_count), work)


def inline(work: BlockingWork) -> defer.Deferred:
    """Run blocking work now, in this thread (tests and headless runs).

    Args:
        work (callable): The work, called with no arguments.

    Returns:
        Deferred: Already fired with the work's result or its failure.

    """
    return defer.maybeDeferred(work)


def default_runner() -> Runner:
    """Choose how work runs: off the reactor when it runs, else inline.

    Returns:
        callable: `in_thread` on a live server (which the script replaces with the model call
            queue, `AssistantScript.drive`), else `inline`.

    """
    from twisted.internet import reactor

    return in_thread if reactor.running else inline


class StepQueue:
    """Runs submitted calls on the reactor thread one per reactor iteration.

    Model calls finish off the reactor, and Twisted runs every result that has arrived in one
    go before it looks at the network again. Several turns resuming at once would hold the
    reactor for all of their steps back to back while players' commands wait. Through this
    queue each step waits its turn, and the reactor serves its I/O between two steps.

    The order puts the model to work as early as it can, then the answers in front of players:

    1. the first stretch of a turn begun by a prompt start (`submit_opening`: recall and the
       prompt, up to the model call);
    2. prompt starts (`submit`: a direct line was heard, someone waits for an answer);
    3. the next stretch of work under way (`submit_continuation`: a reply arrived, or the turn
       let the reactor in);
    4. a turn's closing work (`submit_closing`: what follows once its answer has reached the
       players, such as the call that sees the tool results);
    5. the ticker's periodic ticks (`submit_background`): they hear ambient speech and do
       sleep work, which can wait a few milliseconds.

    A prompt start and its turn's first stretch run back to back, so when a line addresses a
    hundred assistants, all hundred calls are on their way within a few hundred milliseconds
    and the provider works on them while the reactor applies the first replies; replies that
    arrive meanwhile wait for the remaining starts. Many assistants answering at once all
    answer before any of them closes. Within each kind the order is first in, first out.

    Args:
        call_later (callable, optional): `reactor.callLater` or a stand-in (tests).

    """

    def __init__(self, call_later: Callable | None = None):
        self._call_later = call_later
        self._opening: deque = deque()
        self._ready: deque = deque()
        self._going: deque = deque()
        self._closing: deque = deque()
        self._background: deque = deque()
        self._scheduled = False

    def __len__(self) -> int:
        return (
            len(self._opening)
            + len(self._ready)
            + len(self._going)
            + len(self._closing)
            + len(self._background)
        )

    def submit(self, func: Callable, *args: Any) -> None:
        """Queue new work (a tick, a prompt start) for a later reactor iteration.

        Args:
            func (callable): What to call.
            *args: Its arguments.

        """
        self._ready.append((func, args))
        self._schedule()

    def submit_opening(self, func: Callable, *args: Any) -> None:
        """Queue the first stretch of a turn a prompt start began, ahead of everything.

        Args:
            func (callable): What to call.
            *args: Its arguments.

        """
        self._opening.append((func, args))
        self._schedule()

    def submit_continuation(self, func: Callable, *args: Any) -> None:
        """Queue the next stretch of work under way, ahead of new work.

        Args:
            func (callable): What to call.
            *args: Its arguments.

        """
        self._going.append((func, args))
        self._schedule()

    def submit_closing(self, func: Callable, *args: Any) -> None:
        """Queue a stretch of a turn's closing work (its answer is out), after all else.

        Args:
            func (callable): What to call.
            *args: Its arguments.

        """
        self._closing.append((func, args))
        self._schedule()

    def submit_background(self, func: Callable, *args: Any) -> None:
        """Queue periodic work (a tick of the ticker), behind every other kind.

        Args:
            func (callable): What to call.
            *args: Its arguments.

        """
        self._background.append((func, args))
        self._schedule()

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self._later(self._run_next)

    def _later(self, func: Callable) -> None:
        call_later = self._call_later
        if call_later is None:
            from twisted.internet import reactor

            call_later = reactor.callLater
        # a call made while Twisted runs its due calls waits for the next iteration: I/O first
        call_later(0, func)

    def _run_next(self) -> None:
        func, args = (
            self._opening or self._ready or self._going or self._closing or self._background
        ).popleft()
        try:
            func(*args)
        except Exception:
            log.err(Failure(), "ai_assistant: a queued step raised")
        finally:
            if len(self):
                self._later(self._run_next)
            else:
                self._scheduled = False


reactor_steps = StepQueue()


def drive(
    turn: Generator,
    run: Runner,
    step: Callable[[], AbstractContextManager] = nullcontext,
    schedule: Callable[..., None] | None = None,
    start_later: bool = False,
    schedule_closing: Callable[..., None] | None = None,
    schedule_first: Callable[..., None] | None = None,
) -> defer.Deferred:
    """Run a turn generator to completion.

    Args:
        turn (Generator): Yields blocking callables; returns the turn's result.
        run (Runner): How to run each blocking callable.
        step (callable, optional): A context manager factory wrapped around each stretch of
            the turn between two yields (and the completion callbacks after the last one).
            The shell passes a database transaction, so a stretch's writes commit once.
        schedule (callable, optional): How to resume the turn when blocking work finishes,
            called as `schedule(func, *args)`; by default at once. The shell passes
            `reactor_steps.submit_continuation`.
        start_later (bool, optional): With `schedule`, run the first stretch as a step of its
            own instead of now. The shell starts turns from a tick, and the tick's own work
            (queueing what was heard) and the turn's first stretch (recall, the prompt) are
            each a few milliseconds: apart, a player's command waits for one of them, never
            for both.
        schedule_closing (callable, optional): How to resume the turn once it has yielded
            `CLOSING_STEP` (its answer is out), for the rest of it; by default `schedule`.
            The shell passes `reactor_steps.submit_closing`.
        schedule_first (callable, optional): With `start_later`, how to queue the first
            stretch; by default `schedule`. The shell passes `reactor_steps.submit_opening` for
            a turn a prompt start began.

    Returns:
        Deferred: Fires with the generator's return value, or errbacks with what it raised.

    A turn may also yield `NEXT_STEP` between two stretches that need no blocking work (two
    tool calls, say): with `schedule` it is resumed on a later reactor iteration, so players'
    commands are served in between; without, at once.

    Notes:
        Whatever a stretch raises is caught inside `step` and reported after it, so the
        context manager always exits cleanly: a transaction keeps what the stretch wrote
        before the error, as separate writes would have. A step that fails as it ends (its
        batched writes refused) ends the turn with that failure.

    """
    done = defer.Deferred()
    closing = [False]

    def later(*args: Any) -> None:
        (schedule_closing if closing[0] and schedule_closing else schedule)(*args)

    def resume(value: Any = None, error: BaseException | None = None) -> None:
        while True:
            failure = None
            finished = False
            try:
                with step():
                    try:
                        work = turn.send(value) if error is None else turn.throw(error)
                    except StopIteration as stop:
                        finished = True
                        done.callback(stop.value)
                    except BaseException:
                        failure = Failure()
            except BaseException:
                # the step failed as it ended (its writes were refused and rolled back): the
                # turn cannot go on from a state the database does not hold
                if finished or done.called:
                    log.err(Failure(), "ai_assistant: a step's writes failed after its turn")
                    return
                # an error the stretch raised comes first: it is why the step did not stand
                failure = failure if failure is not None else Failure()
                try:
                    turn.close()
                except BaseException:  # noqa: BLE001 - its clean-up failed too: keep the first
                    log.err(Failure(), "ai_assistant: a turn's clean-up failed")
            if finished:
                return
            if failure is not None:
                # reported after the step: a database error may have left its transaction
                # unusable, and whoever is told may want to write (record the error)
                done.errback(failure)
                return
            if work is CLOSING_STEP:
                closing[0] = True
            elif work is not NEXT_STEP:
                break
            if schedule is not None:
                later(resume)
                return
            value, error = None, None  # inline: nothing else to serve, go straight on
        # a runner that raises at once fails the turn like a failed call
        pending = defer.maybeDeferred(run, work)
        if schedule is None:
            pending.addCallbacks(resume, lambda failure: resume(error=failure.value))
        else:
            pending.addCallbacks(
                lambda value: later(resume, value),
                lambda failure: later(resume, None, failure.value),
            )

    if start_later and schedule is not None:
        (schedule_first or schedule)(resume)
    else:
        resume()
    return done
