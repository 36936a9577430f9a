"""
Run by tests/test_threading.py in a subprocess (a reactor cannot be restarted in one process):
drives a real turn against a slow local model and prints what it saw. With no argument the
model calls run with `deferToThread`; with "queue", through the server's model call queue (the
SDK's async client on the queue's event loop), as a live server runs them.

"""

import json
import sys
import threading
from functools import partial

from twisted.internet import reactor, task

from ai_assistant.llm.chat import EndpointSettings
from ai_assistant.llm.client import OpenAIChatClient
from ai_assistant.testing.server import (
    LocalModelServer,
    ScriptedResponder,
    slow,
    tool_call,
    tool_reply,
)
from ai_assistant.driver import default_runner, drive, in_thread, reactor_steps
from tests.core_fakes import FakeWorld, hear, make_assistant
from ai_assistant.awake.turn import awake_tick
from tests.core_fakes import T0

LATENCY = 0.3


def main():
    responder = ScriptedResponder().add(
        slow(tool_reply(tool_call("say", {"text": "hello"})), LATENCY),
        slow(tool_reply(tool_call("noop", {})), LATENCY),
    )
    server = LocalModelServer(responder).start()
    client = OpenAIChatClient(
        EndpointSettings(base_url=server.base_url, api_key="x", max_retries=0, timeout=5)
    )
    http_threads = []

    class RecordingClient:
        def complete(self, request):
            http_threads.append(threading.current_thread().name)
            return client.complete(request)

        async def acomplete(self, request):
            http_threads.append(threading.current_thread().name)
            return await client.acomplete(request)

    world = FakeWorld()
    said_on = []
    original_say = world.say
    world.say = lambda text: (said_on.append(threading.current_thread().name), original_say(text))
    assistant = make_assistant(RecordingClient, world=world)
    hear(assistant, "Aria, hi")
    beats = []
    heartbeat = task.LoopingCall(lambda: beats.append(1))
    result = {}

    def start():
        result["runner_is_thread"] = default_runner() is in_thread
        heartbeat.start(0.01)
        turn = awake_tick(assistant, T0)
        # resumed through the step queue, as the shell does on a live server
        runner = in_thread
        if "queue" in sys.argv[1:]:
            from ai_assistant.shell.model_queue import queued_runner

            runner = queued_runner("aria", max_in_flight=8, threads=2)
        drive(turn, runner, schedule=reactor_steps.submit_continuation).addBoth(finish)

    def finish(outcome):
        heartbeat.stop()
        result.update(
            stop_reason=getattr(outcome, "stop_reason", repr(outcome)),
            http_threads=http_threads,
            said_on=said_on,
            reactor_thread=threading.current_thread().name,
            beats=len(beats),
            said=world.said,
        )
        server.stop()
        reactor.stop()

    reactor.callWhenRunning(start)
    reactor.run()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
