"""
The server's model call queue: every assistant's model calls, many in flight at once, in a fair
order, on one event loop of their own.

A turn yields its model call as work (`driver.ModelWork`); on a live server the shell hands it
to this queue with the assistant as its owner, and gets a Deferred that fires on the reactor
thread. The queue runs an asyncio event loop in one daemon thread: each call is a coroutine of
the OpenAI SDK's async client, so a hundred calls in flight are a hundred sockets, not a hundred
threads, and the reactor thread does no HTTP and no parsing of replies. With `io_process` (the
game setting `AI_ASSISTANT_MODEL_IO_PROCESS`, on by default) those coroutines hand their
requests to the model I/O process (`ai_assistant.llm.io_process`), so the SDK's Python work
does not take the interpreter lock from the reactor either.

- **In flight**: at most `max_in_flight` calls at once, server-wide
  (`AI_ASSISTANT_MODEL_CALLS_IN_FLIGHT`, 128: a room of a hundred assistants addressed at
  once is served at once). The rest wait in the queue.
- **Woken only when idle**: the first call wakes the loop; while it has calls, it collects new
  ones every `ARRIVALS_EVERY` seconds (a wake-up from the reactor thread hands the loop's thread
  the interpreter in the middle of the reactor's step).
- **Fair**: each owner (assistant) has its own line, and a free slot goes to the next owner
  in turn (round robin): an assistant with many calls waiting cannot hold back the others.
- **Rate limits, once for everyone**: when the provider refuses a call with a 429, nothing more
  is sent until its `retry-after` has passed (1 s when it gave none, doubling while the 429s go
  on, at most 60 s); the refused call goes back to the head of its owner's line, up to twice,
  then fails as a rate-limit error (its turn backs off; its events stay queued).
- **Never stuck**: every call ends its Deferred exactly once, with a reply or an `LLMError`:
  the SDK's timeout ends a hung request, and a call cancelled at shutdown fails as "cancelled".
- **Shutdown and reload never wait**: the loop and its thread are abandoned, not joined. A call
  abandoned in flight has its events still queued: events leave the queue only with a reply.

Work without a coroutine form (a game's own `ChatClient`, test doubles, plain callables) runs
in a small pool of daemon threads (`AI_ASSISTANT_MODEL_THREADS`), still in the queue's order
and within its limit.

"""

import asyncio
import statistics
import threading
import time
from collections import deque
from dataclasses import dataclass
from functools import partial
from typing import Any

from twisted.internet import defer
from twisted.python.failure import Failure

from ..driver import DEFAULT_MODEL_THREADS, BlockingWork, AbandonedThreadPool
from ..llm.chat import CANCELLED, RATE_LIMIT, LLMError
from ..llm.client import close_async_clients, use_io_process
from ..llm.io_process import ModelIOProcess

DEFAULT_MAX_IN_FLIGHT = 128
# how often a call refused with a 429 goes back into the queue before it fails
RATE_LIMIT_RETRIES = 2
FIRST_PAUSE, LONGEST_PAUSE = 1.0, 60.0
WAITS_KEPT = 1000
# while it has calls, the loop takes new ones this often (seconds) instead of being woken
ARRIVALS_EVERY = 0.01


@dataclass(frozen=True)
class QueueStats:
    """A snapshot of the queue, for `/status` and the operations docs.

    Attributes:
        in_flight (int): Calls sent and not yet answered.
        max_in_flight (int): The limit.
        queued (int): Calls waiting for a slot.
        owners_waiting (int): Assistants with a call waiting.
        calls (int): Calls finished since the server started.
        rate_limited (int): 429s met since the server started.
        paused_for (float): Seconds left of a rate-limit pause (0 when sending).
        wait_p50_ms (float): Median wait for a slot, over the last 1,000 calls.
        wait_max_ms (float): Longest of those waits.
        io_process (str): Where the OpenAI client's calls are made: "process <pid>" (the model
            I/O process), "in the server", or why the process could not be used.

    """

    in_flight: int
    max_in_flight: int
    queued: int
    owners_waiting: int
    calls: int
    rate_limited: int
    paused_for: float
    wait_p50_ms: float
    wait_max_ms: float
    io_process: str = "in the server"


class _Call:
    __slots__ = ("owner", "work", "deferred", "queued_at", "attempts", "finished")

    def __init__(self, owner: Any, work: BlockingWork, deferred: defer.Deferred, now: float):
        self.owner = owner
        self.work = work
        self.deferred = deferred
        self.queued_at = now
        self.attempts = 0
        self.finished = False


class ModelCallQueue:
    """Model calls from every assistant, sent from one event loop (see the module doc).

    Args:
        max_in_flight (int, optional): Calls in flight at once.
        threads (int, optional): Threads for work without a coroutine form.
        deliver (callable, optional): How a result reaches the caller's thread, called as
            `deliver(func, *args)` from the loop's thread; by default `reactor.callFromThread`.
        clock (callable, optional): Monotonic seconds (tests pass their own).
        io_process (bool, optional): Make the OpenAI client's calls in a child process
            (`ai_assistant.llm.io_process`) instead of on the loop's own thread.

    """

    def __init__(
        self,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        threads: int = DEFAULT_MODEL_THREADS,
        deliver=None,
        clock=time.monotonic,
        io_process: bool = False,
    ):
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1, not {max_in_flight}.")
        self.max_in_flight = max_in_flight
        self._threads = threads
        self._deliver = deliver
        self._clock = clock
        self._lines: dict[Any, deque] = {}
        self._turns: deque = deque()  # owners with a call waiting, in the order they are served
        self._running: dict = {}  # task -> its call
        self._in_flight = 0
        self._paused_until = 0.0
        self._pause = FIRST_PAUSE
        self._wake_scheduled = False
        self._waits: deque = deque(maxlen=WAITS_KEPT)
        self._calls = 0
        self._rate_limited = 0
        self._closed = False
        # calls submitted and not yet taken by the loop, and whether the loop is taking them on
        # its own (it has calls) or must be woken for them (it was idle)
        self._arrivals: list[_Call] = []
        self._arrivals_lock = threading.Lock()
        self._collecting = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pool = None
        self._io = ModelIOProcess() if io_process else None

    # ---- the caller's side (the reactor thread) --------------------------------------------

    def start(self) -> "ModelCallQueue":
        """Start the event loop's thread.

        Returns:
            ModelCallQueue: Itself.

        """
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            threading.Thread(
                target=self._loop.run_forever, name="ai_assistant_model_calls", daemon=True
            ).start()
            if self._io is not None:
                self._loop.call_soon_threadsafe(self._open_io_process)
        return self

    def submit(self, owner: Any, work: BlockingWork) -> defer.Deferred:
        """Queue one call for `owner`.

        Args:
            owner: Who the call is for (an assistant's id): the unit of fairness.
            work (callable): `ModelWork` (run as a coroutine) or any blocking callable (run in
                the queue's threads).

        Returns:
            Deferred: Fires with the work's result, or fails with its error, in the caller's
                thread (through `deliver`).

        """
        deferred = defer.Deferred()
        if self._closed or self._loop is None:
            deferred.errback(Failure(LLMError(CANCELLED, "The model call queue is closed.")))
            return deferred
        call = _Call(owner, work, deferred, self._clock())
        with self._arrivals_lock:
            self._arrivals.append(call)
            wake, self._collecting = not self._collecting, True
        if wake:
            # waking the loop writes to its pipe, which lets its thread take the interpreter
            # there and then, in the middle of the reactor's step (a tenth of the reactor's time
            # under load): only an idle loop is woken; a busy one collects calls every
            # `ARRIVALS_EVERY` seconds, mostly while the reactor waits for input
            self._loop.call_soon_threadsafe(self._take_arrivals)
        return deferred

    def run_on_loop(self, func, *args) -> None:
        """Run `func(*args)` on the queue's event loop thread, soon (work that belongs to the
        loop, such as making a client whose connection pool the loop will use).

        Args:
            func (callable): What to run; what it raises is logged by asyncio.
            *args: Its arguments.

        """
        if self._loop is not None and not self._closed:
            self._loop.call_soon_threadsafe(func, *args)

    def set_max_in_flight(self, max_in_flight: int) -> None:
        """Change the limit (the game setting was changed).

        Args:
            max_in_flight (int): Calls in flight at once, at least 1.

        """
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1, not {max_in_flight}.")
        if max_in_flight != self.max_in_flight:
            self.max_in_flight = max_in_flight
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self._dispatch)

    def stats(self) -> QueueStats:
        """A snapshot of the queue (numbers read without a lock: a moment's view).

        Returns:
            QueueStats: Depth, calls in flight, waits and rate limits.

        """
        waits = list(self._waits)
        lines = list(self._lines.values())
        return QueueStats(
            in_flight=self._in_flight,
            max_in_flight=self.max_in_flight,
            queued=sum(len(line) for line in lines),
            owners_waiting=sum(1 for line in lines if line),
            calls=self._calls,
            rate_limited=self._rate_limited,
            paused_for=max(0.0, self._paused_until - self._clock()),
            wait_p50_ms=statistics.median(waits) * 1000 if waits else 0.0,
            wait_max_ms=max(waits) * 1000 if waits else 0.0,
            io_process=self._io_process_state(),
        )

    def _io_process_state(self) -> str:
        io = self._io
        if io is None:
            return "in the server"
        if io.failed:
            return f"in the server: the model I/O process failed ({io.failed})"
        pid = io.pid
        return f"process {pid}" if pid else "process (starting)"

    def abandon(self) -> None:
        """At shutdown: fail what waits, cancel what is in flight, stop the loop; never wait."""
        if self._closed:
            return
        self._closed = True
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._close)
        if self._pool is not None:
            self._pool.abandon()

    # ---- the loop's side ------------------------------------------------------------------

    def _take_arrivals(self) -> None:
        with self._arrivals_lock:
            calls, self._arrivals = self._arrivals, []
            if not calls and not self._in_flight and not self._turns:
                self._collecting = False  # idle: the next call wakes the loop
                return
        if not self._closed:
            # the next look is booked first: nothing a call raises stops the collecting
            self._loop.call_later(ARRIVALS_EVERY, self._take_arrivals)
        for call in calls:
            self._enqueue(call, False)

    def _enqueue(self, call: _Call, first: bool) -> None:
        line = self._lines.get(call.owner)
        if line is None:
            line = self._lines[call.owner] = deque()
        if first:
            # a call back from a 429 goes first, before its owner's other calls and before
            # every other owner (it was sent before all of them)
            if line:
                self._turns.remove(call.owner)
            self._turns.appendleft(call.owner)
            line.appendleft(call)
        else:
            if not line:
                self._turns.append(call.owner)  # an owner with nothing waiting joins the round
            line.append(call)
        self._dispatch()

    def _dispatch(self) -> None:
        if self._closed:
            return
        wait = self._paused_until - self._clock()
        if wait > 0:
            if not self._wake_scheduled:
                self._wake_scheduled = True
                self._loop.call_later(wait, self._wake)
            return
        while self._in_flight < self.max_in_flight and self._turns:
            owner = self._turns.popleft()
            line = self._lines[owner]
            call = line.popleft()
            if line:
                self._turns.append(owner)  # the others go first
            else:
                del self._lines[owner]
            self._in_flight += 1
            if call.attempts == 0:
                self._waits.append(self._clock() - call.queued_at)
            call.attempts += 1
            task = self._loop.create_task(self._run(call))
            self._running[task] = call
            task.add_done_callback(self._forget)

    def _open_io_process(self) -> None:
        # started now, at server start, so no player waits for the child's imports
        use_io_process(self._loop, self._io)
        self._io.start()

    def _forget(self, task: asyncio.Task) -> None:
        self._running.pop(task, None)

    def _wake(self) -> None:
        self._wake_scheduled = False
        self._dispatch()

    async def _run(self, call: _Call) -> None:
        try:
            coroutine = getattr(call.work, "coroutine", None)
            if coroutine is not None:
                result = await coroutine()
            else:
                result = await self._in_threads(call.work)
        except asyncio.CancelledError:
            self._finish(call, error=LLMError(CANCELLED, "The call was cancelled (shutdown)."))
        except LLMError as error:
            if error.kind == RATE_LIMIT and self._rate_limited_retry(call, error):
                return
            self._finish(call, error=error)
        except BaseException as error:  # noqa: BLE001 - every failure reaches the turn
            self._finish(call, error=error)
        else:
            self._pause = FIRST_PAUSE
            self._finish(call, result=result)
        finally:
            self._in_flight -= 1
            self._dispatch()

    def _rate_limited_retry(self, call: _Call, error: LLMError) -> bool:
        """Pause everyone for the provider's wait; True when the call goes back in line."""
        self._rate_limited += 1
        pause = error.retry_after if error.retry_after is not None else self._pause
        self._pause = min(LONGEST_PAUSE, max(self._pause * 2, FIRST_PAUSE))
        self._paused_until = max(self._paused_until, self._clock() + min(pause, LONGEST_PAUSE))
        if call.attempts > RATE_LIMIT_RETRIES or self._closed:
            return False
        self._enqueue(call, first=True)
        return True

    def _in_threads(self, work: BlockingWork) -> asyncio.Future:
        if self._pool is None:
            self._pool = AbandonedThreadPool(
                minthreads=0, maxthreads=self._threads, name="ai_assistant_model"
            )
            self._pool.start()
        future = self._loop.create_future()

        def settle(ok: bool, result: Any) -> None:
            if future.done():
                return
            if ok:
                future.set_result(result)
            else:
                future.set_exception(result.value)

        self._pool.callInThreadWithCallback(
            lambda ok, result: self._loop.call_soon_threadsafe(settle, ok, result), work
        )
        return future

    def _finish(self, call: _Call, result: Any = None, error: BaseException | None = None) -> None:
        if call.finished:
            return
        call.finished = True
        self._calls += 1
        if error is None:
            self._send(call.deferred.callback, result)
        else:
            self._send(call.deferred.errback, Failure(error))

    def _send(self, func, *args) -> None:
        deliver = self._deliver
        if deliver is None:
            from twisted.internet import reactor

            deliver = reactor.callFromThread
        deliver(func, *args)

    def _close(self) -> None:
        with self._arrivals_lock:
            arrived, self._arrivals = self._arrivals, []
        for call in arrived:
            self._finish(call, error=LLMError(CANCELLED, "The server is shutting down."))
        for line in self._lines.values():
            for call in line:
                self._finish(call, error=LLMError(CANCELLED, "The server is shutting down."))
        self._lines.clear()
        self._turns.clear()
        for task, call in list(self._running.items()):
            # ended here, not when the task unwinds: a cancelled HTTP call may still await its
            # clean-up, and the loop stops before it would be done
            self._finish(call, error=LLMError(CANCELLED, "The call was cancelled (shutdown)."))
            task.cancel()
        # let the cancelled tasks unwind and the clients close their connections, then stop
        closing = self._loop.create_task(self._wind_down(list(self._running), self._io))
        closing.add_done_callback(lambda _: self._loop.stop())

    @staticmethod
    async def _wind_down(tasks: list, io: ModelIOProcess | None) -> None:
        if tasks:
            await asyncio.wait(tasks, timeout=1.0)
        await close_async_clients()
        if io is not None:
            # its input closes and it exits on its own: the server never waits for it
            use_io_process(asyncio.get_running_loop(), None)
            io.close()


_queue: ModelCallQueue | None = None


def model_queue(
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    threads: int = DEFAULT_MODEL_THREADS,
    io_process: bool = False,
):
    """The server's queue, started on first use and abandoned at shutdown (reactor thread).

    Args:
        max_in_flight (int, optional): The limit; a later call with another value changes it.
        threads (int, optional): Threads for work without a coroutine form.
        io_process (bool, optional): Make the OpenAI client's calls in the model I/O process;
            read when the queue starts (a change takes a reload).

    Returns:
        ModelCallQueue: The queue.

    """
    global _queue
    if _queue is None or _queue._closed:
        from twisted.internet import reactor

        _queue = ModelCallQueue(max_in_flight, threads, io_process=io_process).start()
        reactor.addSystemEventTrigger("during", "shutdown", _queue.abandon)
    else:
        _queue.set_max_in_flight(max_in_flight)
    return _queue


def current_stats() -> QueueStats | None:
    """The queue's stats, or None when no call has been queued since the server started.

    Returns:
        QueueStats or None: The snapshot.

    """
    return None if _queue is None else _queue.stats()


def queued_runner(owner: Any, max_in_flight: int, threads: int, io_process: bool = False):
    """A runner (see `ai_assistant.driver`) that sends `owner`'s work through the queue.

    Args:
        owner: The assistant (its id).
        max_in_flight (int): The server's limit.
        threads (int): Threads for work without a coroutine form.
        io_process (bool, optional): See `model_queue`.

    Returns:
        callable: `runner(work) -> Deferred`.

    """
    return partial(model_queue(max_in_flight, threads, io_process).submit, owner)
