"""
Driving a turn: the pure core's generators meet Twisted's threads here.

A turn is a generator that yields *blocking work* (a zero-argument callable doing HTTP only, such
as `partial(client.complete, request)`) and receives its result, or has its exception thrown in.
Everything between two yields (tool execution, Attribute writes) runs on the thread that resumes
the generator. `drive` resumes it from Deferred callbacks, which Twisted fires on the reactor
thread, so world and database access stays on the reactor thread while HTTP runs in a worker.

Two ways to run the blocking work:

- `in_thread`: `deferToThread`, for a running server (the reactor must be running).
- `inline`: in the calling thread, for tests, the headless demo and scripts where no reactor
  runs.

"""

from collections.abc import Callable, Generator
from typing import Any

from twisted.internet import defer, threads
from twisted.python.failure import Failure

BlockingWork = Callable[[], Any]
Runner = Callable[[BlockingWork], defer.Deferred]


DEFAULT_MODEL_THREADS = 4
_pool = None


def model_pool(size: int = DEFAULT_MODEL_THREADS):
    """The model calls' own thread pool, made once and stopped with the reactor.

    Kept apart from the reactor's shared pool, and small: the threads mostly wait on HTTP, but
    the SDK's request and response handling is Python that competes with the reactor thread for
    the GIL; a few threads keep enough calls in flight without crowding the reactor out.

    """
    global _pool
    if _pool is None:
        from twisted.internet import reactor
        from twisted.python.threadpool import ThreadPool

        _pool = ThreadPool(minthreads=0, maxthreads=size, name="ai_assistant_model")
        _pool.start()
        reactor.addSystemEventTrigger("during", "shutdown", _pool.stop)
    elif _pool.max != size:
        _pool.adjustPoolsize(maxthreads=size)
    return _pool


def in_thread(work: BlockingWork, threads_count: int = DEFAULT_MODEL_THREADS) -> defer.Deferred:
    from twisted.internet import reactor

    return threads.deferToThreadPool(reactor, model_pool(threads_count), work)


def inline(work: BlockingWork) -> defer.Deferred:
    return defer.maybeDeferred(work)


def default_runner() -> Runner:
    """Worker threads when the reactor runs (a live server), else inline."""
    from twisted.internet import reactor

    return in_thread if reactor.running else inline


def drive(turn: Generator, run: Runner) -> defer.Deferred:
    """Run a turn generator to completion.

    Args:
        turn (Generator): Yields blocking callables; returns the turn's result.
        run (Runner): How to run each blocking callable.

    Returns:
        Deferred: Fires with the generator's return value, or errbacks with what it raised.

    """
    done = defer.Deferred()

    def resume(value: Any = None, error: BaseException | None = None) -> None:
        try:
            work = turn.send(value) if error is None else turn.throw(error)
        except StopIteration as stop:
            done.callback(stop.value)
            return
        except BaseException:
            done.errback(Failure())
            return
        pending = run(work)
        pending.addCallbacks(resume, lambda failure: resume(error=failure.value))

    resume()
    return done
