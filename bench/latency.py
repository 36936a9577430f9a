"""
Benchmark 8, reply latency: a real Evennia server, a player's telnet connection, and the
stand-in provider (300 ms a call, as many at once as are sent) in a process of its own.

Measured from the moment the player's line is sent to the moment the assistant's spoken answer
reaches the player's connection:

- one assistant addressed by name, one line at a time (the next after the answer, and a pause
  for the turn's closing call): p50 and p99;
- 100 assistants addressed by one line (each has the alias "helpers"): every answer, p50 and
  p99, and how many answered.

The assistants keep the default `tick_rate` (5 s): an answer that waited for the tick would
take 2.5 s more on average. The server's reactor-thread CPU per answered turn (`thread_time`
read in the reactor thread) and the threads of the server process are reported with it, and
where the model calls were made: the model I/O process (its CPU per answered turn too) or the
server itself.

"""

import os
import re
import statistics
import time

from .cases import Result
from .model_process import ModelProcess
from .server import (
    PASSWORD,
    Client,
    _evennia,
    _game_dir,
    _login,
    _percentile,
    _py,
    _settle,
    _start_server,
    free_port,
    server_env,
)

LATENCY = 0.3
DEFAULTS = {"respond_to_ambient": False, "max_retries": 0, "request_timeout": 15}
_VALUE = re.compile(r"<<([^'<>]*)>>")


def _value(client: Client, expression: str) -> str:
    """Evaluate `expression` in the server (its reactor thread) and return it as text."""
    client.drain()
    client.send(f"py print('<<' + str({expression}) + '>>')")
    found = None
    deadline = time.monotonic() + 60
    while found is None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no value for {expression!r}")
        found = _VALUE.search(client.drain(wait=0.2))
    return found.group(1)


def _reactor_cpu(client: Client) -> float:
    return float(_value(client, "__import__('time').thread_time()"))


class _ReactorCpu:
    """The reactor thread's CPU over a stretch of the run, less what it spends when no one
    talks (Evennia's own timers, the benchmark's 10 ms lag timer), measured first."""

    def __init__(self, client: Client, idle_seconds: float = 3.0):
        self.client = client
        started, cpu = time.monotonic(), _reactor_cpu(client)
        time.sleep(idle_seconds)
        self.idle_rate = (_reactor_cpu(client) - cpu) / (time.monotonic() - started)
        self.started, self.cpu = time.monotonic(), _reactor_cpu(client)

    def per(self, count: int) -> float:
        spent = _reactor_cpu(self.client) - self.cpu
        idle = self.idle_rate * (time.monotonic() - self.started)
        return max(0.0, spent - idle) / max(count, 1)


def _io_process(client: Client) -> str:
    """Where the server makes its model calls (`QueueStats.io_process`)."""
    # (code from before the model I/O process has no such field: its calls were in the server)
    stats = "__import__('ai_assistant.shell.model_queue', fromlist=['_']).current_stats()"
    return _value(client, f"getattr({stats}, 'io_process', 'in the server')")


def _process_cpu(pid: int) -> float:
    """Seconds of CPU a process has used (Linux's /proc; 0 elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _threads(client: Client) -> int:
    return int(_value(client, "__import__('threading').active_count()"))


def _ask(talker: Client, line: str, pattern: re.Pattern, expected: int, timeout: float) -> list:
    """Say `line`; return the seconds until each of `expected` answers matching `pattern`."""
    talker.drain()
    sent = time.perf_counter()
    talker.send(line)
    times, pending = [], ""
    deadline = time.monotonic() + timeout
    while len(times) < expected and time.monotonic() < deadline:
        # each read timed as it comes: a stream of answers is not stamped when it ends
        complete, _, pending = (pending + talker.read(wait=0.02)).rpartition("\n")
        now = time.perf_counter()
        times += [now - sent for _ in pattern.findall(complete)]
    return times


def reply_latency(folder: str, quick: bool = False, latency: float = LATENCY) -> list[Result]:
    """Benchmark 8 (see the module doc).

    Args:
        folder (str): A scratch folder for the game.
        quick (bool, optional): Smallest sizes (smoke test).
        latency (float, optional): The stand-in provider's seconds per call.

    Returns:
        list[Result]: One assistant addressed; many addressed by one line.

    """
    lines, crowd, rounds = (4, 5, 1) if quick else (30, 100, 3)
    telnet = free_port()
    model = ModelProcess(latency).start()
    game = _game_dir(folder, model.base_url, telnet, os.path.join(folder, "lag8.txt"), DEFAULTS)
    env = server_env()
    one, many, asked_many = [], [], 0
    cpu_many = io_cpu_many = 0.0
    threads_seen = 0
    io_process = ""
    ev = "__import__('evennia')"
    try:
        done = _evennia(game, "migrate", env=env)
        if done.returncode != 0:
            raise RuntimeError(f"evennia migrate failed:\n{done.stdout[-2000:]}")
        _start_server(game, env)
        admin = _login(telnet, "admin")
        _py(
            admin,
            f"from evennia import DefaultAccount; DefaultAccount.create(username='talker', "
            f"password='{PASSWORD}')",
            "account-done",
        )
        talker = _login(telnet, "talker")
        _py(
            admin,
            f"{ev}.create_object('typeclasses.rooms.Room', key='Hall'); "
            f"{ev}.create_object('typeclasses.rooms.Room', key='Side'); "
            f"{ev}.search_object('talker')[0].move_to({ev}.search_object('Hall')[0], quiet=True)",
            "rooms-done",
        )
        # one assistant, alone with the player
        _py(
            admin,
            f"{ev}.create_object('ai_assistant.characters.AssistantCharacter', key='Aria', "
            f"location={ev}.search_object('Hall')[0], home={ev}.search_object('Hall')[0])",
            "aria-done",
        )
        time.sleep(1.0)
        answer = re.compile(r"^Aria says.*?number (a-\d+)", re.MULTILINE)
        for n in range(lines):
            one += _ask(talker, f"say Aria, hello, a question, number a-{n}.", answer, 1, 10)
            time.sleep(1.0)  # the turn's closing call, then quiet
        _py(
            admin,
            f"{ev}.search_object('Aria')[0].move_to({ev}.search_object('Side')[0], quiet=True)",
            "aria-gone",
        )
        # many assistants, one line for all of them
        _py(
            admin,
            f"[{ev}.create_object('ai_assistant.characters.AssistantCharacter', "
            f"key='Helper' + str(i), aliases=['helpers'], location={ev}.search_object('Hall')[0],"
            f" home={ev}.search_object('Hall')[0]) for i in range({crowd})]",
            "helpers-done",
        )
        _settle(model)
        answer = re.compile(r"^Helper\d+ says.*?number (b-\d+)", re.MULTILINE)
        io_process = _io_process(admin)
        io_pid = int(io_process.split()[1]) if io_process.startswith("process ") else None
        io_cpu = _process_cpu(io_pid) if io_pid else 0.0
        cpu = _ReactorCpu(admin)
        for n in range(rounds):
            many += _ask(
                talker, f"say helpers, hello, a question, number b-{n}.", answer, crowd, 30
            )
            asked_many += crowd
            threads_seen = max(threads_seen, _threads(admin))
            _settle(model)
        cpu_many = cpu.per(len(many))
        if io_pid:
            io_cpu_many = (_process_cpu(io_pid) - io_cpu) / max(len(many), 1)
        admin.close()
        talker.close()
    finally:
        _evennia(game, "stop", env=env)
        model.stop()
    p50, p99 = _percentile(one, 0.5), _percentile(one, 0.99)
    many_p50, many_p99 = _percentile(many, 0.5), _percentile(many, 0.99)
    ms = latency * 1000
    one_passed = len(one) == lines and p50 <= latency + 0.15 and p99 <= latency + 0.4
    many_passed = len(many) == asked_many and many_p99 <= 3 * latency
    shared = (
        f"reactor CPU per answered turn {cpu_many * 1000:.1f} ms ({crowd} at once, idle CPU "
        f"subtracted); the server process ran {threads_seen} threads; model calls made "
        f"{io_process}"
        + (f" ({io_cpu_many * 1000:.1f} ms of its CPU per answered turn)" if io_cpu_many else "")
    )
    return [
        Result(
            "reply latency, 1 assistant addressed",
            f"p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms",
            f"p50 <= {ms + 150:.0f}, p99 <= {ms + 400:.0f} ms",
            one_passed,
            [
                f"{len(one)} of {lines} lines answered; provider {ms:.0f} ms a call, "
                f"tick_rate 5 s; median {statistics.median(one or [0]) * 1000:.0f} ms",
                shared,
            ],
        ),
        Result(
            f"reply latency, {crowd} assistants addressed by one line",
            f"{len(many)}/{asked_many} answered, p50 {many_p50 * 1000:.0f} ms, "
            f"p99 {many_p99 * 1000:.0f} ms",
            f"all answered, p99 <= {3 * ms:.0f} ms",
            many_passed,
            [
                f"{rounds} lines, each to all {crowd} (alias 'helpers'), the provider taking "
                f"every call at once",
                shared,
            ],
        ),
    ]
