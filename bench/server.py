"""
Benchmark 1, reactor responsiveness: a real Evennia server process with 0 and N awake
assistants, all handling speech through a model with 300 ms latency (a `LocalModelServer` on
127.0.0.1). A probe client measures command round trips; the server's own 10 ms timer measures
reactor lag. Phases with 0 and N assistants alternate; the assistants are moved into and out of
the hall where a talker speaks once a second.

"""

import json
import math
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from .cases import Result
from .model_process import ModelProcess

ROOT = Path(__file__).resolve().parent.parent
# every assistant takes a turn on every line it hears (the load benchmark 1 puts on the reactor)
BENCH_1_DEFAULTS = {"respond_to_ambient": True, "max_retries": 0, "request_timeout": 15}
PASSWORD = "bench-pass-123"
# an assistant's spoken answer quotes the line it answers: "... number <tag>-<n>."
_ANSWER = re.compile(r"^Helper\d+ says.*?number (\w+-\d+)", re.MULTILINE)
# colour codes and telnet commands (IAC ...), stripped from the bytes before they are decoded
_ANSI = re.compile(rb"\x1b\[[0-9;]*m|\xff[\xfb-\xfe].|\xff.", re.DOTALL)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Client:
    """A minimal telnet client: send lines, wait for text."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buffer = ""
        self.lock = threading.Lock()

    def send(self, line: str) -> None:
        self.sock.sendall(line.encode() + b"\r\n")

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"waited for {text!r}; got {self.buffer[-300:]!r}")
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                raise TimeoutError(f"waited for {text!r}; got {self.buffer[-500:]!r}") from None
            if not data:
                raise ConnectionError("server closed the connection")
            self.buffer += _ANSI.sub(b"", data).decode(errors="replace")
        before, _, after = self.buffer.partition(text)
        self.buffer = after
        return before

    def read(self, wait: float) -> str:
        """What one read brings within `wait` seconds ("" when nothing came): the text is read
        as it arrives, so its time can be taken (`drain` reads until a quiet moment)."""
        text, self.buffer = self.buffer, ""
        self.sock.settimeout(wait)
        try:
            data = self.sock.recv(65536)
        except (socket.timeout, BlockingIOError):
            return text
        return text + _ANSI.sub(b"", data).decode(errors="replace")

    def drain(self, wait: float = 0.05) -> str:
        """Read whatever arrives within `wait` seconds; return it (and forget it)."""
        self.sock.settimeout(wait)
        try:
            while data := self.sock.recv(65536):
                self.buffer += _ANSI.sub(b"", data).decode(errors="replace")
        except (socket.timeout, BlockingIOError):
            pass
        text, self.buffer = self.buffer, ""
        return text

    def close(self) -> None:
        try:
            self.send("quit")
        finally:
            self.sock.close()


def _game_dir(
    folder: str,
    model_url: str,
    telnet: int,
    lag_file: str,
    defaults: dict | None = None,
) -> Path:
    game = Path(folder) / "game"
    for part in ("server", "typeclasses", "commands", "world"):
        shutil.copytree(
            ROOT / part,
            game / part,
            ignore=shutil.ignore_patterns("*.db3", "*.log", "*.pid", "__pycache__"),
        )
    (game / "server" / "logs").mkdir(exist_ok=True)
    # the game folder is on the server's path (the launcher does not pass PYTHONPATH on)
    shutil.copy(
        Path(__file__).with_name("lag_plugin.py"), game / "server" / "conf" / "bench_lag.py"
    )
    with open(game / "server" / "conf" / "settings.py", "a") as out:
        out.write(f"""
# ---- benchmark ----
TELNET_PORTS = [{telnet}]
AMP_PORT = {free_port()}
WEBSERVER_ENABLED = False
WEBSOCKET_CLIENT_ENABLED = False
SERVER_SERVICES_PLUGIN_MODULES = [*SERVER_SERVICES_PLUGIN_MODULES, "server.conf.bench_lag"]
BENCH_LAG_FILE = {lag_file!r}
BENCH_STALL_SECONDS = {float(os.environ.get("BENCH_STALL_MS", 300)) / 1000!r}
AI_ASSISTANT_BASE_URL = {model_url!r}
AI_ASSISTANT_API_KEY = "bench"
AI_ASSISTANT_MODEL_THREADS = {int(os.environ.get("BENCH_MODEL_THREADS", 4))}
{_optional_settings()}AI_ASSISTANT_DEFAULTS = {defaults or BENCH_1_DEFAULTS!r}
# the talker stands in for a room of players addressing every assistant: the limits on one
# player would hold it back (its tokens for the hour are spent in the first loaded phase)
AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE = 0
AI_ASSISTANT_PLAYER_TOKENS_PER_HOUR = 0
AI_ASSISTANT_PLAYER_TOKENS_PER_DAY = 0
""")
    return game


def _optional_settings() -> str:
    """Settings a run may change from the contrib's defaults, for a comparison:
    `BENCH_CALLS_IN_FLIGHT` (a number) and `BENCH_MODEL_IO_PROCESS` ("0" or "1")."""
    lines = []
    if os.environ.get("BENCH_CALLS_IN_FLIGHT"):
        lines.append(
            f"AI_ASSISTANT_MODEL_CALLS_IN_FLIGHT = {int(os.environ['BENCH_CALLS_IN_FLIGHT'])}"
        )
    if os.environ.get("BENCH_MODEL_IO_PROCESS"):
        lines.append(
            f"AI_ASSISTANT_MODEL_IO_PROCESS = {os.environ['BENCH_MODEL_IO_PROCESS'] != '0'}"
        )
    return "\n".join(lines)


def _evennia(game: Path, *args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).parent / "evennia"), *args],
        cwd=game,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def _start_server(game: Path, env: dict, attempts: int = 3) -> None:
    """`evennia start`, until the server is up.

    The launcher gives the portal 10 seconds to answer; on a loaded 2-core machine the portal
    can take longer to import, and the launcher then gives up before starting the server. A
    second `evennia start` finds the portal running and starts the server.

    """
    log = game / "server" / "logs" / "server.log"
    output = ""
    for _attempt in range(attempts):
        done = _evennia(game, "start", env=env)
        output = f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        # the first start runs Evennia's initial setup, then restarts the server once
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            text = log.read_text() if log.exists() else ""
            if "successfully restarted" in text:
                return
            if not text and time.monotonic() > deadline - 90:
                break  # no server after 30 s: the launcher gave up on the portal
            time.sleep(0.5)
    raise TimeoutError(f"the benchmark server did not start; the launcher said:\n{output}")


def _login(port: int, name: str) -> Client:
    client = Client(port)
    client.wait_for("connect")
    client.send(f"connect {name} {PASSWORD}")
    client.wait_for("You become")
    time.sleep(0.5)
    client.drain()
    return client


def _py(client: Client, code: str, marker: str) -> None:
    client.send(f"py {code}; print('{marker}')")
    client.wait_for(f"\n{marker}", timeout=60)
    time.sleep(0.2)
    client.drain()


def _phase(
    probe: Client, talker: Client, seconds: float, tag: str, count: int, probes: dict
) -> tuple[list[float], list[float], int]:
    """Talk in the hall once a second, each line to one assistant by name (every assistant
    there hears it and calls the model; the one named answers aloud); probe round trips every
    100 ms from another room.

    Returns the round trips (s), the answer times of the lines answered within the phase (s),
    and how many lines were spoken. Each probe's send and receive times (Unix time) go into
    `probes`, by marker.

    """
    stop = threading.Event()
    sent: dict[str, float] = {}
    answers: list[float] = []

    def talk():
        n, pending = 0, ""
        while not stop.is_set():
            line_id = f"{tag}-{n}"
            talker.send(f"say Helper{n % max(count, 1)}, hello, a question, number {line_id}.")
            sent[line_id] = time.perf_counter()
            n += 1
            next_line = time.monotonic() + 1.0
            while not stop.is_set() and time.monotonic() < next_line:
                # a line may arrive in two reads: match whole lines only
                complete, _, pending = (pending + talker.read(wait=0.1)).rpartition("\n")
                for answered in _ANSWER.findall(complete):
                    if answered in sent:
                        answers.append(time.perf_counter() - sent.pop(answered))

    thread = threading.Thread(target=talk, daemon=True)
    thread.start()
    rtts = []
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        marker = f"ping{tag}x{n}"
        started, sent_at = time.perf_counter(), time.time()
        probe.send(f"say {marker}")
        probe.wait_for(f'"{marker}"', timeout=30)
        rtts.append(time.perf_counter() - started)
        probes[marker] = (sent_at, time.time())
        n += 1
        time.sleep(0.1)
    stop.set()
    thread.join()
    return rtts, answers, len(sent) + len(answers)


def _settle(model: ModelProcess, quiet: float = 3.0, limit: float = 180.0) -> float:
    """Wait until the model has had no request for `quiet` seconds (turns queued in the last
    phase have finished), so the next phase starts from rest. Returns the seconds waited."""
    started = time.monotonic()
    last, since = model.requests, time.monotonic()
    while time.monotonic() - since < quiet and time.monotonic() - started < limit:
        time.sleep(0.25)
        if model.requests != last:
            last, since = model.requests, time.monotonic()
    return time.monotonic() - started


def _slowest_split(probes: dict, inputs_file: str, steps_file: str) -> str:
    """Where the slowest 1% of round trips spent their time: on the way to the server's command
    handling, in it (both timed by the plugin) or on the way back; and how many of them met an
    assistant's step on the reactor (a tick's work or a stretch of a turn) over 1 ms."""
    if not os.path.exists(inputs_file):
        return "-"
    handled = {}
    with open(inputs_file) as src:
        for line in src:
            marker, start, end = line.split()
            handled[marker] = (float(start), float(end))
    steps = []
    if os.path.exists(steps_file):
        with open(steps_file) as src:
            steps = [tuple(map(float, line.split())) for line in src]
    slowest = sorted(probes.items(), key=lambda item: item[1][1] - item[1][0], reverse=True)
    slowest = [item for item in slowest[: max(1, len(slowest) // 100)] if item[0] in handled]
    if not slowest:
        return "-"
    # per round trip: total, to the command handling, in it, back (seconds)
    parts = [
        (received - sent, start - sent, end - start, received - end)
        for marker, (sent, received) in slowest
        for start, end in [handled[marker]]
    ]
    met_step = sum(
        any(start < received and end > sent for start, end in steps)
        for _, (sent, received) in slowest
    )
    total, to_handling, handling, back = (
        statistics.median(column) * 1000 for column in zip(*parts)
    )
    return (
        f"{len(slowest)} slowest round trips: median {total:.1f} ms: "
        f"{to_handling:.1f} ms to the command handling, {handling:.1f} ms in it, "
        f"{back:.1f} ms back; {met_step} met an assistant step over 1 ms"
    )


def _full_collections(gc_file: str, windows: list[tuple[float, float]]) -> list[float]:
    """Durations of the server's full garbage collections within the given time windows."""
    if not os.path.exists(gc_file):
        return []
    with open(gc_file) as src:
        pauses = [tuple(map(float, line.split())) for line in src]
    return [took for at, took in pauses if any(start <= at <= end for start, end in windows)]


def _lag(lag_file: str, start: float, end: float) -> list[float]:
    if not os.path.exists(lag_file):
        return []
    samples = []
    with open(lag_file) as src:
        for line in src:
            t, lag = line.split()
            if start <= float(t) <= end:
                samples.append(float(lag))
    return samples


def _keep_raw(folder: str | None, lag_file: str, probes: dict, windows: dict) -> None:
    """Copy the run's raw samples into `folder` (BENCH_RAW_OUT), for a closer look: the
    server's files (lag, stalls, probe timings, full collections) and the client's probes."""
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    for suffix in ("", ".stalls", ".inputs", ".gc", ".steps"):
        if os.path.exists(lag_file + suffix):
            shutil.copy(lag_file + suffix, os.path.join(folder, "lag.txt" + suffix))
    with open(os.path.join(folder, "probes.json"), "w") as out:
        json.dump({"probes": probes, "windows": windows}, out)


def _percentile(values: list[float], share: float = 0.99) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def _p99(values: list[float]) -> float:
    return _percentile(values, 0.99)


def _ms(seconds: float) -> str:
    return "-" if math.isnan(seconds) else f"{seconds * 1000:.0f} ms"


def server_env() -> dict:
    """The environment `evennia` runs in for a benchmark's game: the superuser, the repository
    on the path, this interpreter's scripts first, no test settings."""
    env = {
        **os.environ,
        "EVENNIA_SUPERUSER_USERNAME": "admin",
        "EVENNIA_SUPERUSER_PASSWORD": PASSWORD,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


def reactor_responsiveness(
    folder: str, quick: bool = False, assistants: int | None = None, latency: float = 0.3
) -> Result:
    count = assistants if assistants is not None else (5 if quick else 100)
    seconds, rounds = (4.0, 1) if quick else (20.0, 4)
    telnet = free_port()
    lag_file = os.path.join(folder, "lag.txt")
    model = ModelProcess(latency).start()
    game = _game_dir(folder, model.base_url, telnet, lag_file)
    env = server_env()
    results = {0: [], count: []}
    lags = {0: [], count: []}
    calls = {0: 0, count: 0}
    answers = {0: [], count: []}
    lines = {0: 0, count: 0}
    baseline_settle_waits = []
    probes = {0: {}, count: {}}
    windows = {0: [], count: []}
    try:
        done = _evennia(game, "migrate", env=env)
        if done.returncode != 0:
            raise RuntimeError(
                f"evennia migrate failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            )
        _start_server(game, env)
        probe = _login(telnet, "admin")
        _py(
            probe,
            f"from evennia import DefaultAccount; DefaultAccount.create(username='talker', "
            f"password='{PASSWORD}')",
            "account-done",
        )
        talker = _login(telnet, "talker")
        # (py runs code with separate globals and locals: comprehensions use __import__)
        ev = "__import__('evennia')"
        _py(
            probe,
            f"{ev}.create_object('typeclasses.rooms.Room', key='Hall'); "
            f"{ev}.create_object('typeclasses.rooms.Room', key='Storage'); "
            f"{ev}.search_object('talker')[0].move_to({ev}.search_object('Hall')[0], quiet=True)",
            "rooms-done",
        )
        _py(
            probe,
            f"[{ev}.create_object('ai_assistant.characters.AssistantCharacter', "
            f"key='Helper' + str(i), location={ev}.search_object('Storage')[0], "
            f"home={ev}.search_object('Storage')[0]) for i in range({count})]",
            "assistants-done",
        )
        move = (
            f"[o.move_to({ev}.search_object('{{room}}')[0], quiet=True) "
            f"for o in {ev}.search_tag('ai_assistant', category='ai_assistant')]"
        )
        for round_no in range(rounds):
            for n in (0, count):
                _py(probe, move.format(room="Hall" if n else "Storage"), f"moved-{round_no}-{n}")
                # each phase starts from rest: turns queued in the last one have finished
                waited = _settle(model)
                if n == 0:
                    baseline_settle_waits.append(waited)
                talker.drain()
                started = time.time()
                calls_before = model.requests
                rtts, answer_times, spoken = _phase(
                    probe, talker, seconds, f"{round_no}n{n}", count, probes[n]
                )
                results[n] += rtts
                answers[n] += answer_times
                lines[n] += spoken
                calls[n] += model.requests - calls_before
                time.sleep(1.5)  # let the lag file flush
                lags[n] += _lag(lag_file, started, started + seconds)
                windows[n].append((started, started + seconds))
        probe.close()
        talker.close()
    finally:
        _evennia(game, "stop", env=env)
        model.stop()
        _keep_raw(os.environ.get("BENCH_RAW_OUT"), lag_file, probes, windows)
        server_log = game / "server" / "logs" / "server.log"
        if not os.path.exists(lag_file) and server_log.exists():
            print("no reactor lag samples; server log tail:\n" + server_log.read_text()[-1500:])
    gcs = {n: _full_collections(lag_file + ".gc", windows[n]) for n in (0, count)}
    base, loaded = _p99(results[0]), _p99(results[count])
    ratio = loaded / base
    worst = max(results[count])
    slowest = _slowest_split(probes[count], lag_file + ".inputs", lag_file + ".steps")
    passed = ratio <= 2.0 and worst <= 0.25
    return Result(
        f"reactor: command round trip p99 with {count} assistants vs 0",
        f"{ratio:.2f}x, worst {worst * 1000:.0f} ms",
        "<= 2x, none over 250 ms",
        passed,
        [
            f"p99 round trip {base * 1000:.1f} ms with 0, {loaded * 1000:.1f} ms with {count} "
            f"({len(results[0])} and {len(results[count])} probes, {rounds} alternating phases of "
            f"{seconds:.0f} s each, model latency {latency * 1000:.0f} ms)",
            f"median round trip {statistics.median(results[0]) * 1000:.1f} / "
            f"{statistics.median(results[count]) * 1000:.1f} ms",
            f"reactor lag p99 (10 ms timer) {_p99(lags[0]) * 1000:.1f} ms with 0, "
            f"{_p99(lags[count]) * 1000:.1f} ms with {count}; max {max(lags[count] or [0]) * 1000:.1f} ms",
            f"work done with {count}: {calls[count] / (rounds * seconds):.1f} model calls a second "
            f"(with 0: {calls[0] / (rounds * seconds):.1f}); {len(answers[count])} of "
            f"{lines[count]} lines answered within their phase, in {_ms(_percentile(answers[count], 0.5))} "
            f"median, {_ms(_percentile(answers[count], 0.9))} p90",
            f"slowest 1% with {count}: {slowest}",
            f"full garbage collections in the server during the phases: "
            f"{len(gcs[0])} with 0, {len(gcs[count])} with {count}, longest "
            f"{max(gcs[0] + gcs[count] or [0]) * 1000:.0f} ms",
            f"before each phase with 0 the model was idle after "
            f"{max(baseline_settle_waits or [0]):.0f} s at most (the queued turns of the phase before)",
        ],
    )
