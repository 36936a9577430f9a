"""
The model I/O process: the OpenAI client's calls made by a child of the server, the replies and
the provider's errors brought back whole, a child that dies or cannot start never leaving a call
stuck, and the API key kept out of the child's command line and environment.

"""

import asyncio
import os
import signal
import struct
import sys
import time

import pytest
from django.test import override_settings

from ai_assistant.llm.chat import (
    BAD_REQUEST,
    CONNECTION,
    RATE_LIMIT,
    TIMEOUT,
    ChatRequest,
    EndpointSettings,
    LLMError,
)
from ai_assistant.llm.client import OpenAIChatClient, close_async_clients, use_io_process
from ai_assistant.llm import io_process
from ai_assistant.llm.io_process import ModelIOProcess, _error_from, _error_message
from ai_assistant.shell.model_queue import ModelCallQueue
from ai_assistant.testing.server import (
    LocalModelServer,
    ScriptedResponder,
    error_reply,
    slow,
    text_reply,
    tool_call,
    tool_reply,
)

from .core_fakes import Results

KEY = "sk-test-not-for-the-child-environment"


def _request(text="hello"):
    return ChatRequest(model="local", messages=[{"role": "user", "content": text}])


def _client(server):
    # no retries by the SDK: a scripted error is the answer, not a reason to ask again
    return OpenAIChatClient(EndpointSettings(base_url=server.base_url, api_key=KEY, max_retries=0))


def _in_loop(test, io=None):
    """Run `test(io)` in a fresh event loop whose coroutine calls go through `io`."""

    async def run():
        process = io or ModelIOProcess()
        use_io_process(asyncio.get_running_loop(), process)
        try:
            return await test(process)
        finally:
            use_io_process(asyncio.get_running_loop(), None)
            process.close()
            await close_async_clients()  # a call made in this process (the fallback) opened one

    return asyncio.run(run())


def _gone(pid, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_calls_are_made_in_the_child_and_come_back_whole():
    responder = ScriptedResponder().add(
        tool_reply(tool_call("say", {"text": "Welcome."}, call_id="c1")),
        text_reply("Goodbye."),
    )

    async def test(io):
        with LocalModelServer(responder) as server:
            client = _client(server)
            first = await client.acomplete(_request("Talker says: hi"))
            second = await client.acomplete(_request("Talker says: bye"))
            vectors = await client.aembed("embed", ["a cat", "a dog"])
            return first, second, vectors, io.pid

    first, second, vectors, pid = _in_loop(test)
    assert pid is not None and pid != os.getpid()
    assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
        ("c1", "say", '{"text": "Welcome."}')
    ]
    assert first.usage.prompt > 0 and first.latency_ms > 0
    assert second.content == "Goodbye." and second.finish_reason == "stop"
    assert len(vectors) == 2 and vectors[0] != vectors[1]
    # the provider saw the messages as the server sent them
    assert [r["messages"][-1]["content"] for r in responder.requests] == [
        "Talker says: hi",
        "Talker says: bye",
    ]
    responder.verify()


def test_the_providers_errors_come_back_as_the_server_would_meet_them():
    responder = ScriptedResponder().add(error_reply(429, "slow down"), error_reply(400, "bad"))

    async def test(io):
        errors = []
        with LocalModelServer(responder) as server:
            client = _client(server)
            for _ in range(2):
                with pytest.raises(LLMError) as raised:
                    await client.acomplete(_request())
                errors.append(raised.value)
        return errors

    limited, bad = _in_loop(test)
    assert (limited.kind, limited.status) == (RATE_LIMIT, 429)
    assert (bad.kind, bad.status) == (BAD_REQUEST, 400)
    assert "slow down" in str(limited)
    # the provider's wait crosses the pipe with the error
    again = _error_from(_error_message(LLMError(RATE_LIMIT, "wait", 429, retry_after=2.5), [KEY]))
    assert (again.kind, str(again), again.status, again.retry_after) == (
        RATE_LIMIT,
        "wait",
        429,
        2.5,
    )
    # anything else is named, and the key taken out of its text
    other = _error_from(_error_message(KeyError(f"no {KEY} here"), [KEY]))
    assert other.kind == "other" and "KeyError" in str(other) and KEY not in str(other)


def test_a_child_that_dies_fails_its_calls_and_the_next_call_starts_another():
    responder = ScriptedResponder().add(slow(text_reply("never sent"), 5.0), text_reply("again"))

    async def test(io):
        with LocalModelServer(responder) as server:
            client = _client(server)
            call = asyncio.ensure_future(client.acomplete(_request()))
            while not responder.requests:  # the child has sent it
                await asyncio.sleep(0.01)
            first_pid = io.pid
            os.kill(first_pid, signal.SIGKILL)
            started = time.monotonic()
            with pytest.raises(LLMError) as raised:
                await call
            ended_after = time.monotonic() - started
            reply = await client.acomplete(_request())
            return raised.value, ended_after, first_pid, io.pid, reply

    error, ended_after, first_pid, second_pid, reply = _in_loop(test)
    assert error.kind == CONNECTION and "ended" in str(error)
    assert ended_after < 2.0  # not the provider's 5 s: the call ended with the child
    assert second_pid not in (None, first_pid)
    assert reply.content == "again"


def test_a_child_that_cannot_start_leaves_the_calls_in_the_server():
    responder = ScriptedResponder().add(text_reply("made here"))
    broken = ModelIOProcess(command=[sys.executable, "-c", "raise SystemExit(3)"])

    async def test(io):
        with LocalModelServer(responder) as server:
            return await _client(server).acomplete(_request())

    reply = _in_loop(test, broken)
    assert reply.content == "made here"
    assert broken.failed.startswith("it exited before it was ready")


def test_what_the_child_prints_is_not_taken_for_a_reply():
    responder = ScriptedResponder().add(text_reply("clean"))
    # a library that prints on stdout as it loads, before the child takes its first call
    noisy = ModelIOProcess(
        command=[
            sys.executable,
            "-c",
            "print('loaded, with a banner', flush=True); import runpy; "
            "runpy.run_module('ai_assistant.llm.io_process', run_name='__main__')",
        ]
    )

    async def test(io):
        with LocalModelServer(responder) as server:
            return await _client(server).acomplete(_request()), io.pid

    reply, pid = _in_loop(test, noisy)
    assert reply.content == "clean"
    assert noisy.failed is None and pid is not None  # answered by the child, not the fallback


def test_closing_never_waits_and_the_child_exits():
    responder = ScriptedResponder().add(slow(text_reply("too late"), 3.0))

    async def test(io):
        with LocalModelServer(responder) as server:
            call = asyncio.ensure_future(_client(server).acomplete(_request()))
            while not responder.requests:
                await asyncio.sleep(0.01)
            pid = io.pid
            started = time.monotonic()
            io.close()
            closed_in = time.monotonic() - started
            with pytest.raises(LLMError) as raised:
                await call
            return pid, closed_in, raised.value

    pid, closed_in, error = _in_loop(test)
    assert closed_in < 0.1
    assert error.kind == CONNECTION
    assert _gone(pid)


def test_the_api_key_stays_out_of_the_childs_command_line_and_environment():
    responder = ScriptedResponder().add(text_reply("ok"))

    async def test(io):
        with LocalModelServer(responder) as server:
            await _client(server).acomplete(_request())
            with open(f"/proc/{io.pid}/cmdline", "rb") as cmdline:
                command = cmdline.read()
            with open(f"/proc/{io.pid}/environ", "rb") as environ:
                environment = environ.read()
            return command, environment

    if not os.path.exists("/proc/self/environ"):
        pytest.skip("reads the child's command line from /proc")
    command, environment = _in_loop(test)
    assert b"ai_assistant.llm.io_process" in command
    assert KEY.encode() not in command and KEY.encode() not in environment


def test_the_queue_sends_its_calls_through_the_child_and_ends_it_at_shutdown():
    responder = ScriptedResponder().add(text_reply("through the queue"))
    with LocalModelServer(responder) as server:
        client = _client(server)

        class Call:
            def __call__(self):
                raise AssertionError("the queue must use the coroutine form")

            def coroutine(self):
                return client.acomplete(_request())

        queue = ModelCallQueue(deliver=lambda func, *args: func(*args), io_process=True).start()
        try:
            results = Results()
            results.track("call", queue.submit("aria", Call()))
            results.wait(1, timeout=20)
            where = queue.stats().io_process
        finally:
            queue.abandon()
    assert results.values["call"].content == "through the queue"
    assert where.startswith("process ")
    assert _gone(int(where.split()[1]))
    # without the option, the calls are made in the server
    plain = ModelCallQueue(deliver=lambda func, *args: func(*args)).start()
    try:
        assert plain.stats().io_process == "in the server"
    finally:
        plain.abandon()


def test_the_game_setting_is_checked():
    from ai_assistant.shell import game_settings

    assert game_settings.model_io_process() is True
    with override_settings(AI_ASSISTANT_MODEL_IO_PROCESS="yes"):
        with pytest.raises(ValueError, match="AI_ASSISTANT_MODEL_IO_PROCESS must be True or False"):
            game_settings.model_io_process()
    with override_settings(AI_ASSISTANT_MODEL_IO_PROCESS=False):
        assert game_settings.model_io_process() is False


def test_a_wrong_method_is_refused_before_anything_is_sent():
    async def test(io):
        with pytest.raises(ValueError, match="not a model call"):
            await io.call("complete_everything", {}, None)
        return io.pid

    assert _in_loop(test) is None  # nothing was started for it


def test_status_says_where_the_calls_are_made():
    from ai_assistant.commands import CmdAssistant

    stats = dict(
        in_flight=0,
        max_in_flight=128,
        queued=0,
        owners_waiting=0,
        calls=3,
        rate_limited=0,
        paused_for=0.0,
        wait_p50_ms=0.0,
        wait_max_ms=0.0,
    )
    command = CmdAssistant()
    assert "made process 4242" in command.format_model_calls(
        {**stats, "io_process": "process 4242"}
    )
    failed = "in the server: the model I/O process failed (it exited before it was ready)"
    assert f"|y{failed}|n" in command.format_model_calls({**stats, "io_process": failed})


def test_a_child_that_cannot_be_run_leaves_the_calls_in_the_server():
    responder = ScriptedResponder().add(text_reply("made here"))
    missing = ModelIOProcess(command=["/nonexistent/python-for-the-model-io-process"])

    async def test(io):
        with LocalModelServer(responder) as server:
            return await _client(server).acomplete(_request())

    assert _in_loop(test, missing).content == "made here"
    assert missing.failed.startswith("it could not be started")


def test_a_child_that_is_not_ready_in_time_is_stopped_and_not_used(monkeypatch):
    monkeypatch.setattr(io_process, "READY_WITHIN", 0.5)
    responder = ScriptedResponder().add(text_reply("made here"))
    stuck = ModelIOProcess(command=[sys.executable, "-c", "import time; time.sleep(60)"])

    async def test(io):
        with LocalModelServer(responder) as server:
            reply = await _client(server).acomplete(_request())
        end = time.monotonic() + 5
        while io._process.poll() is None and time.monotonic() < end:  # reaped, not a zombie
            await asyncio.sleep(0.05)
        return reply, io._process.poll()

    reply, code = _in_loop(test, stuck)
    assert reply.content == "made here"
    assert stuck.failed.startswith("it was not ready within")
    assert code is not None


def test_a_child_that_hangs_does_not_hold_a_call_for_ever(monkeypatch):
    monkeypatch.setattr(io_process, "CALL_MARGIN", 0.5)
    responder = ScriptedResponder().add(slow(text_reply("never read"), 3.0))

    async def test(io):
        with LocalModelServer(responder) as server:
            client = OpenAIChatClient(
                EndpointSettings(base_url=server.base_url, api_key=KEY, timeout=1.0, max_retries=0)
            )
            await io.available()
            os.kill(io.pid, signal.SIGSTOP)  # alive, but answering nothing
            started = time.monotonic()
            try:
                with pytest.raises(LLMError) as raised:
                    await client.acomplete(_request())
            finally:
                os.kill(io.pid, signal.SIGCONT)
            return raised.value, time.monotonic() - started

    error, waited = _in_loop(test)
    assert error.kind == TIMEOUT and "gave no reply within" in str(error)
    assert waited < 3.0  # the SDK's 1 s and the margin, not the provider's 3 s or for ever


GARBLING_CHILD = """
import os, pickle, struct, sys, time
replies = int(sys.argv[-1])
ready = pickle.dumps((0, True, os.getpid()))
os.write(replies, struct.pack(">I", len(ready)) + ready)
sys.stdin.buffer.read(4)  # a call came
os.write(replies, struct.pack(">I", 5) + b"xxxxx")  # and this is no reply
time.sleep(60)
"""


def test_a_reply_that_cannot_be_read_ends_the_child_and_the_call():
    garbling = ModelIOProcess(command=[sys.executable, "-c", GARBLING_CHILD])

    async def test(io):
        await io.available()
        pid = io.pid
        started = time.monotonic()
        with pytest.raises(LLMError) as raised:
            await io.call(
                "acomplete", {"api_key": KEY, "timeout": 1.0, "max_retries": 0}, _request()
            )
        return raised.value, time.monotonic() - started, pid

    error, waited, pid = _in_loop(test, garbling)
    assert error.kind == CONNECTION and waited < 5.0
    assert _gone(pid)


def test_frames_are_read_across_pieces_and_a_bad_one_stops_the_reading():
    seen, garbled, closed = [], [], []
    frames = io_process._Frames(seen.append, lambda: closed.append(1), lambda: garbled.append(1))
    data = io_process._frame(("one", 1)) + io_process._frame({"two": [2, 2]})
    for index in range(len(data)):  # one byte at a time
        frames.data_received(data[index : index + 1])
    assert seen == [("one", 1), {"two": [2, 2]}]
    # a frame that is no pickle: reported once, the frames before it are not handled again
    frames.data_received(struct.pack(">I", 3) + b"bad" + io_process._frame("after"))
    assert garbled == [1] and seen == [("one", 1), {"two": [2, 2]}]
    frames.data_received(io_process._frame("later"))
    assert seen == [("one", 1), {"two": [2, 2]}]  # the link is no longer trusted
    frames.connection_lost(None)
    assert closed == [1]


def test_closing_while_the_child_starts_still_ends_it():
    async def test(io):
        io.start()
        while io._process is None:  # started, its pipes not yet connected
            await asyncio.sleep(0)
        pid = io._process.pid
        io.close()
        end = time.monotonic() + 15
        while io._process.poll() is None and time.monotonic() < end:
            await asyncio.sleep(0.05)
        return pid, io._process.poll()

    pid, code = _in_loop(test)
    assert code is not None, f"the child {pid} still runs after close()"


def test_warming_up_outside_an_event_loop_makes_the_client_here():
    client = OpenAIChatClient(EndpointSettings(base_url="http://127.0.0.1:9/v1", api_key=KEY))
    client.warm_up()  # a script, a test: no loop runs, so no process is asked
    assert client._async_sdk is not None
