"""
Loaded into the benchmark's Evennia server (SERVER_SERVICES_PLUGIN_MODULES): a 10 ms timer that
records how late the reactor runs it, flushed once a second to settings.BENCH_LAG_FILE as
"<unix time> <lag seconds>" lines.

"""

import time

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
