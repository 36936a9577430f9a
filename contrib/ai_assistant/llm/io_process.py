"""
Model calls made by a process of their own, for the server's model call queue.

The OpenAI SDK spends about a millisecond of Python per call (building the request, reading and
parsing the reply), and in the game server that Python shares the interpreter lock with the
reactor. With a hundred assistants answering at once, the reactor waited for the SDK's share of
the lock. Here the SDK runs in a child process: the queue's event loop hands each call over a
pipe and gets the finished reply back, which costs a small fraction of the SDK's work.

- **Parent side**, `ModelIOProcess`: used on one asyncio event loop (the model call queue's).
  `call(method, options, *args)` sends one call and returns its result, or raises the
  `LLMError` the child met. The child is started on first use (or by `start`) and again
  after it has died; its calls fail as `connection` errors when it dies or sends what cannot
  be read (it is stopped then), and as `timeout` when it gives no reply within the SDK's own
  timeouts and a margin. A child that cannot be started, or is not ready in time, marks the
  process `failed`, and the caller then makes its calls in its own process (see
  `OpenAIChatClient.acomplete`).
- **Child side**, `python -m ai_assistant.llm.io_process <fd>`: one event loop making every call
  with the same `OpenAIChatClient` the server would use. It stops when its input closes: when
  the server shuts down, reloads or dies, so it never outlives the server.

Calls go to the child's stdin and replies come back on a pipe of their own (its descriptor is
the child's last argument), as length-prefixed pickles. The pipes join two processes of the same
program and nothing else can write to them; what the child prints goes to the server's log, not
into a reply. The endpoint's options, the API key among them, go over the pipe with each call;
this code never puts them in the child's command line or environment (the child inherits the
server's environment as it is, `OPENAI_API_KEY` included if the server has one).

"""

import asyncio
import os
import pickle
import struct
import subprocess
import sys
from itertools import count
from typing import Any

from ..text import redact
from .chat import CONNECTION, OTHER, TIMEOUT, EndpointSettings, LLMError
from .client import OpenAIChatClient

_HEADER = struct.Struct(">I")
_READY = 0  # the id of the child's first message: it has imported the SDK and can take calls
_CANCEL = "cancel"
_WARM_UP = "warm_up"
READY_WITHIN = 30.0  # seconds for the child's imports; one that takes longer is not used
# seconds a call may take beyond the SDK's timeouts (its retries wait between attempts)
CALL_MARGIN = 15.0
DEFAULT_TIMEOUT = 600.0  # the SDK's own, when the options give none
# the methods of `OpenAIChatClient` the child makes for its parent
METHODS = ("acomplete", "aembed")


class _Frames(asyncio.Protocol):
    """Length-prefixed pickles read from a pipe, each handed on as it is complete.

    Args:
        on_message (callable): Called with each message.
        on_closed (callable): Called once the pipe has closed.
        on_garbled (callable): Called when a frame cannot be read, or handling it raised: the
            link is not to be trusted further, and nothing more is read from it.

    """

    def __init__(self, on_message, on_closed, on_garbled):
        self._buffer = bytearray()
        self._on_message = on_message
        self._on_closed = on_closed
        self._on_garbled = on_garbled
        self._broken = False

    def data_received(self, data: bytes) -> None:
        if self._broken:
            return
        buffer = self._buffer
        buffer += data
        while len(buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(buffer)
            end = _HEADER.size + size
            if len(buffer) < end:
                return
            payload = bytes(buffer[_HEADER.size : end])
            del buffer[:end]  # before it is handled: a frame is never handled twice
            try:
                self._on_message(pickle.loads(payload))
            except Exception:  # noqa: BLE001 - a frame we cannot read breaks the link
                self._broken = True
                buffer.clear()
                self._on_garbled()
                return

    def connection_lost(self, exc) -> None:
        self._on_closed()


def _frame(message: Any) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def _error_message(error: BaseException, secrets: list[str]) -> tuple:
    if isinstance(error, LLMError):  # the client has already taken the key out of its text
        return ("LLMError", error.kind, str(error), error.status, error.retry_after)
    # anything else crosses as an LLMError too: its type named, the key taken out, cut short
    return (
        "LLMError",
        OTHER,
        redact(f"{type(error).__name__}: {error}", secrets)[:300],
        None,
        None,
    )


def _error_from(message: tuple) -> LLMError:
    _, kind, text, status, retry_after = message
    return LLMError(kind, text, status, retry_after=retry_after)


class ModelIOProcess:
    """The parent's side: model calls sent to a child process (see the module doc).

    Use it from one asyncio event loop only.

    Args:
        command (list, optional): What starts the child; by default this interpreter running
            this module, with the parent's import path.

    Attributes:
        failed (str or None): Why the child could not be started, once it could not; the
            caller then makes its calls itself.

    """

    def __init__(self, command: list[str] | None = None):
        self._command = command or [sys.executable, "-m", __name__]
        self._process: subprocess.Popen | None = None
        self._writer: asyncio.WriteTransport | None = None
        self._ready = False
        self._pending: dict[int, asyncio.Future] = {}
        self._ids = count(_READY + 1)
        self._closed = False
        self._starting: asyncio.Future | None = None
        self.failed: str | None = None

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs, else None."""
        return self._process.pid if self._writer is not None else None

    def start(self) -> None:
        """Start the child soon (it imports the SDK, about half a second), unless it runs.
        Call from the loop's thread."""
        if self._writer is None and self._starting is None and not self._closed:
            asyncio.get_running_loop().create_task(self._started())

    async def _started(self) -> None:
        """Return once the child is ready for calls, or cannot be (`failed`, or closed)."""
        if self._closed or self.failed or (self._writer is not None and self._ready):
            return
        starting = self._starting
        if starting is None:
            starting = self._starting = asyncio.get_running_loop().create_future()
            try:
                self._start_child()
            except Exception as error:  # noqa: BLE001 - no fork, no descriptors: calls stay here
                self._give_up(f"it could not be started: {error}")
        await asyncio.shield(starting)

    def _start_child(self) -> None:
        if os.name == "nt":
            return self._give_up("Windows cannot hand it its pipe")
        env = dict(os.environ)
        # the parent's import path, so the child imports this package as the server does
        env["PYTHONPATH"] = os.pathsep.join(path for path in sys.path if path)
        # the replies come back on a pipe of their own, not on the child's stdout: what a
        # library prints there (in the server's log) cannot be taken for a reply
        replies, reply_end = os.pipe()
        try:
            process = subprocess.Popen(
                [*self._command, str(reply_end)],
                stdin=subprocess.PIPE,
                pass_fds=(reply_end,),
                env=env,
            )
        except BaseException:
            os.close(replies)
            raise
        finally:
            os.close(reply_end)
        self._process, self._ready = process, False
        asyncio.get_running_loop().create_task(
            self._connect(process, os.fdopen(replies, "rb", buffering=0))
        )

    async def _connect(self, process: subprocess.Popen, replies) -> None:
        loop = asyncio.get_running_loop()
        try:
            # the pipes become the loop's transports: writes never block its thread
            frames = _Frames(self._received, self._child_ended, self._garbled)
            self._writer, _ = await loop.connect_write_pipe(asyncio.Protocol, process.stdin)
            await loop.connect_read_pipe(lambda: frames, replies)
        except Exception as error:  # noqa: BLE001 - a loop that cannot watch pipes
            replies.close()
            return self._give_up(f"its pipes could not be used: {error}", process)
        if self._closed:  # closed while it started: its input closes now, and it exits
            self._writer.close()
            return
        loop.call_later(READY_WITHIN, self._not_ready_in_time, process)

    def _give_up(self, reason: str, process: subprocess.Popen | None = None) -> None:
        """The child cannot be used: calls are made in this process from now on."""
        self.failed = reason
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        if process is not None:
            process.kill()
            if process.stdin is not None:
                process.stdin.close()
            _reap_soon(asyncio.get_running_loop(), process)
        self._start_settled()

    def _not_ready_in_time(self, process: subprocess.Popen) -> None:
        if process is self._process and not self._ready and process.poll() is None:
            self.failed = f"it was not ready within {READY_WITHIN:.0f} s"
            process.kill()  # its pipes close: `_child_ended` settles the rest

    def _garbled(self) -> None:
        # a reply that cannot be read: the calls waiting on it would never end, so the child
        # goes, and `_child_ended` fails them (the next call starts another)
        if self._process is not None and self._process.poll() is None:
            self._process.kill()

    def _start_settled(self) -> None:
        starting, self._starting = self._starting, None
        if starting is not None and not starting.done():
            starting.set_result(None)

    async def available(self) -> bool:
        """Start the child if it is not running; True when it runs, False when it cannot.

        Returns:
            bool: False after `close`, or when the child cannot be started (`failed`).

        """
        await self._started()
        return self._writer is not None

    async def call(self, method: str, options: dict, *args: Any) -> Any:
        """Make one call in the child.

        Args:
            method (str): One of `METHODS`.
            options (dict): The client's options (`OpenAIChatClient`'s), the API key among them.
            *args: The method's arguments.

        Returns:
            Any: What the method returned in the child.

        Raises:
            LLMError: What the method raised there, or `CONNECTION` when the child ended before
                it answered.

        """
        if method not in METHODS:
            raise ValueError(f"{method!r} is not a model call; the child makes {METHODS}.")
        if not await self.available():
            raise LLMError(CONNECTION, f"The model I/O process is not running ({self.failed}).")
        call_id = next(self._ids)
        frame = _frame((call_id, method, options, args))
        future = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        self._writer.write(frame)
        # the SDK's timeout ends a hung request in the child; this ends the wait if the child
        # itself hangs, so no call stays in flight for ever
        limit = _longest_wait(options)
        try:
            return await asyncio.wait_for(future, limit)
        except (asyncio.CancelledError, asyncio.TimeoutError) as stopped:
            if self._pending.pop(call_id, None) is not None and self._writer is not None:
                self._writer.write(_frame((call_id, _CANCEL, None, ())))
            if isinstance(stopped, asyncio.CancelledError):
                raise
            raise LLMError(
                TIMEOUT, f"The model I/O process gave no reply within {limit:.0f} s."
            ) from None

    def warm_up(self, options: dict) -> None:
        """Have the child make its client for `options` now, before the first call needs it.

        Args:
            options (dict): The client's options (`OpenAIChatClient`'s).

        """
        asyncio.get_running_loop().create_task(self._warm_up(options))

    async def _warm_up(self, options: dict) -> None:
        if await self.available():
            self._writer.write(_frame((next(self._ids), _WARM_UP, options, ())))

    def close(self) -> None:
        """Close the child's input; it ends its calls and exits. Never waits."""
        self._closed = True
        if self._writer is not None:
            self._writer.close()

    def _received(self, message: tuple) -> None:
        call_id, ok, value = message
        if call_id == _READY:
            self._ready = True
            self._start_settled()
            return
        future = self._pending.pop(call_id, None)
        if future is None or future.done():
            return  # cancelled meanwhile
        if ok:
            future.set_result(value)
        else:
            future.set_exception(_error_from(value))

    def _child_ended(self) -> None:
        process, writer, self._writer = self._process, self._writer, None
        if writer is not None:
            writer.close()
        code = process.poll() if process is not None else None
        if process is not None and code is None:
            _reap_soon(asyncio.get_running_loop(), process)
        if not self._ready and not self._closed and not self.failed:
            # it never got as far as taking calls: starting it again would fail the same way
            self.failed = "it exited before it was ready" + (
                f" (exit code {code})" if code is not None else ""
            )
        self._start_settled()
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(
                    LLMError(
                        CONNECTION,
                        "The model I/O process ended before the reply came"
                        + (f" (exit code {code})." if code is not None else "."),
                    )
                )


def _longest_wait(options: dict) -> float:
    """How long a call may take in the child: each of the SDK's attempts, and a margin."""
    timeout = float(options.get("timeout") or DEFAULT_TIMEOUT)
    attempts = int(options.get("max_retries") or 0) + 1
    return timeout * attempts + CALL_MARGIN


def _reap_soon(loop, process: subprocess.Popen, tries: int = 50) -> None:
    """Collect the child's exit status once it has exited (its pipe closes just before)."""
    if process.poll() is None and tries:
        loop.call_later(0.1, _reap_soon, loop, process, tries - 1)


# ---- the child ---------------------------------------------------------------------------


class _Child:
    """The child's side: reads calls, makes them with the SDK, writes the replies."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.clients: dict[tuple, OpenAIChatClient] = {}
        self.tasks: dict[int, asyncio.Task] = {}
        self.writer: asyncio.WriteTransport | None = None
        self.done = loop.create_future()

    def client(self, options: dict) -> OpenAIChatClient:
        key = tuple(sorted(options.items()))
        client = self.clients.get(key)
        if client is None:
            client = self.clients[key] = OpenAIChatClient(EndpointSettings(**options))
        return client

    def received(self, message: tuple) -> None:
        call_id, method, options, args = message
        if method == _CANCEL:
            task = self.tasks.pop(call_id, None)
            if task is not None:
                task.cancel()
            return
        if method == _WARM_UP:
            try:
                self.client(options).warm_up()
            except Exception as error:  # noqa: BLE001 - the first call will meet it and say so
                secrets = [options.get("api_key")]
                print(
                    redact(f"ai_assistant model I/O process: {error!r}", secrets), file=sys.stderr
                )
            return
        task = self.loop.create_task(self.run(call_id, method, options, args))
        self.tasks[call_id] = task

    async def run(self, call_id: int, method: str, options: dict, args: tuple) -> None:
        try:
            if method not in METHODS:
                raise LLMError(OTHER, f"{method!r} is not a model call.")
            value = await getattr(self.client(options), method)(*args)
        except asyncio.CancelledError:
            return
        except BaseException as error:  # noqa: BLE001 - every failure goes back to the caller
            self.send((call_id, False, _error_message(error, [options.get("api_key") or ""])))
        else:
            self.send((call_id, True, value))
        finally:
            self.tasks.pop(call_id, None)

    def send(self, message: tuple) -> None:
        if self.writer is not None and not self.writer.is_closing():
            self.writer.write(_frame(message))

    def input_closed(self) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def _serve(in_fd: int, out_fd: int) -> None:
    from .client import close_async_clients

    loop = asyncio.get_running_loop()
    child = _Child(loop)
    child.writer, _ = await loop.connect_write_pipe(
        asyncio.Protocol, os.fdopen(out_fd, "wb", buffering=0)
    )
    # a call it cannot read ends it like a closed input: the parent fails what it had sent
    await loop.connect_read_pipe(
        lambda: _Frames(child.received, child.input_closed, child.input_closed),
        os.fdopen(in_fd, "rb", buffering=0),
    )
    child.send((_READY, True, os.getpid()))
    await child.done
    for task in list(child.tasks.values()):
        task.cancel()
    await asyncio.gather(*child.tasks.values(), return_exceptions=True)
    await close_async_clients()


def main() -> None:
    """The child's entry point: serve the calls read on stdin until it closes, writing the
    replies to the pipe whose descriptor is the last argument."""
    asyncio.run(_serve(0, int(sys.argv[-1])))


if __name__ == "__main__":
    main()
