"""
Loaded into the benchmark's Evennia server (SERVER_SERVICES_PLUGIN_MODULES). It writes, next to
settings.BENCH_LAG_FILE:

- the file itself: a 10 ms timer's lateness, "<unix time> <lag seconds>" lines, once a second;
- ".stalls": the reactor thread's stack whenever the timer is late by BENCH_STALL_SECONDS;
- ".inputs": when the server began and ended each probe command ("say ping...");
- ".gc": each full garbage collection, "<unix time> <seconds>";
- ".steps": each assistant step on the reactor (a tick's work or a stretch of a turn) that took
  over a millisecond, "<unix start> <unix end>".

"""

import gc
import re
import sys
import threading
import time
import traceback
from collections import Counter

from django.conf import settings
from twisted.internet import task

INTERVAL = 0.01


def start_plugin_services(server):
    samples = []
    probe_timings = _time_probe_commands()
    step_timings = _time_assistant_steps()
    last = [time.perf_counter()]

    def beat():
        now = time.perf_counter()
        samples.append((time.time(), max(0.0, now - last[0] - INTERVAL)))
        last[0] = now

    def flush():
        if samples:
            with open(settings.BENCH_LAG_FILE, "a") as out:
                out.writelines(f"{t:.4f} {lag:.5f}\n" for t, lag in samples)
            samples.clear()
        if probe_timings:
            with open(settings.BENCH_LAG_FILE + ".inputs", "a") as out:
                out.writelines(probe_timings)
            probe_timings.clear()
        if step_timings:
            with open(settings.BENCH_LAG_FILE + ".steps", "a") as out:
                out.writelines(step_timings)
            step_timings.clear()

    _time_garbage_collections()
    task.LoopingCall(beat).start(INTERVAL, now=False)
    task.LoopingCall(flush).start(1.0, now=False)
    _watchdog(last, getattr(settings, "BENCH_STALL_SECONDS", 0.3))


def _watchdog(last, stall):
    """When the reactor stalls, sample where it is: the stacks go to BENCH_LAG_FILE + ".stalls"."""
    reactor_thread = threading.get_ident()
    seen = Counter()
    poll = min(0.1, stall / 3)

    def watch():
        while True:
            time.sleep(poll)
            if time.perf_counter() - last[0] > stall:
                frame = sys._current_frames().get(reactor_thread)
                if frame is not None:
                    stack = "".join(traceback.format_stack(frame)[-24:])
                    seen[stack] += 1
                    if seen[stack] in (1, 10, 100):
                        with open(settings.BENCH_LAG_FILE + ".stalls", "a") as out:
                            out.write(
                                f"--- stalled ({seen[stack]} samples) at {time.time():.2f}\n{stack}\n"
                            )

    threading.Thread(target=watch, daemon=True).start()


_PROBE = re.compile(r"say (ping\w+)")


def _time_probe_commands() -> list:
    """Record when the server starts and ends each probe command ("say ping..."), so a slow
    round trip can be split into the server's work and the wait around it. Returns the list
    that collects "<marker> <start> <end>" lines (flushed to BENCH_LAG_FILE + ".inputs")."""
    from evennia.server.sessionhandler import ServerSessionHandler

    original = ServerSessionHandler.data_in
    timings = []

    def data_in(self, session, **kwargs):
        started = time.time()
        try:
            return original(self, session, **kwargs)
        finally:
            match = _PROBE.search(str(kwargs.get("text", ""))[:200])
            if match:
                timings.append(f"{match.group(1)} {started:.5f} {time.time():.5f}\n")

    ServerSessionHandler.data_in = data_in
    return timings


def _time_assistant_steps() -> list:
    """Record the assistants' reactor steps over a millisecond (see module doc)."""
    from ai_assistant.driver import StepQueue

    original = StepQueue._run_next
    timings = []

    def run_next(self):
        started = time.time()
        try:
            return original(self)
        finally:
            ended = time.time()
            if ended - started > 0.001:
                timings.append(f"{started:.5f} {ended:.5f}\n")

    StepQueue._run_next = run_next
    return timings


def _time_garbage_collections():
    """Record each garbage collection of the oldest generation, which walks every object the
    server holds: "<unix time> <seconds>" lines in BENCH_LAG_FILE + ".gc"."""
    started = [0.0]

    def on_collect(phase, info):
        if info.get("generation") != 2:
            return
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            with open(settings.BENCH_LAG_FILE + ".gc", "a") as out:
                out.write(f"{time.time():.4f} {time.perf_counter() - started[0]:.5f}\n")

    gc.callbacks.append(on_collect)
