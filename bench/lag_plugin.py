"""
Loaded into the benchmark's Evennia server (SERVER_SERVICES_PLUGIN_MODULES): a 10 ms timer that
records how late the reactor runs it, flushed once a second to settings.BENCH_LAG_FILE as
"<unix time> <lag seconds>" lines.

"""

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
                            out.write(f"--- stalled ({seen[stack]} samples) at {time.time():.2f}\n{stack}\n")

    threading.Thread(target=watch, daemon=True).start()
