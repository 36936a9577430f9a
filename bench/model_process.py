"""
The stand-in provider for benchmark 1, in a process of its own.

The scripted model server answers about a dozen requests a second under load and counts the
tokens of each (whole histories). Run in the benchmark's own process, that work would hold the
same interpreter lock as the probe client, whose round trips would then include waits for the
fake provider: a cost of the harness, charged to the assistants. A real provider runs
elsewhere, so here it runs in a separate process, like the game server.

"""

import multiprocessing


class _CountingResponder:
    """The rehearsal rules, counting requests where the benchmark process can read them."""

    def __init__(self, counter):
        from ai_assistant.offline.rehearsal import RehearsalResponder

        self.rules = RehearsalResponder()
        self.counter = counter

    def respond(self, request):
        with self.counter.get_lock():
            self.counter.value += 1
        return self.rules.respond(request)


def _serve(latency: float, counter, ready, stop) -> None:
    from ai_assistant.testing.server import LocalModelServer

    server = LocalModelServer(_CountingResponder(counter), latency=latency).start()
    ready.send(server.base_url)
    stop.wait()
    server.stop()


class ModelProcess:
    """A `LocalModelServer` answering by the rehearsal rules in a child process.

    Args:
        latency (float): Seconds before every answer.

    `requests` is how many chat requests it has answered so far; `base_url` is for the SDK.

    """

    def __init__(self, latency: float):
        self.latency = latency
        context = multiprocessing.get_context("spawn")
        self._counter = context.Value("q", 0)
        self._stop = context.Event()
        self._ready, child_end = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_serve,
            args=(latency, self._counter, child_end, self._stop),
            name="bench-model",
            daemon=True,
        )
        self.base_url = ""

    def start(self, timeout: float = 60.0) -> "ModelProcess":
        self._process.start()
        if not self._ready.poll(timeout):
            self._process.kill()
            raise TimeoutError(f"the model server process did not start within {timeout:.0f} s")
        self.base_url = self._ready.recv()
        return self

    @property
    def requests(self) -> int:
        return self._counter.value

    def stop(self) -> None:
        self._stop.set()
        self._process.join(10)
        if self._process.is_alive():
            self._process.kill()
