"""
With a running reactor, model calls run in worker threads, tools run on the reactor thread, and
the reactor keeps serving other work while a call is in flight.

"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_turn_uses_worker_threads_and_never_blocks_the_reactor():
    done = subprocess.run(
        [sys.executable, "-m", "tests.reactor_probe"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"DJANGO_SETTINGS_MODULE": "tests.settings", "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["runner_is_thread"] is True
    assert result["stop_reason"] == "noop" and result["said"] == ["hello"]
    # HTTP in worker threads, tools on the reactor (main) thread
    assert len(result["http_threads"]) == 2
    assert all(name != result["reactor_thread"] for name in result["http_threads"])
    assert result["said_on"] == [result["reactor_thread"]] == ["MainThread"]
    # 0.6 s of model latency: a 10 ms heartbeat kept beating throughout
    assert result["beats"] >= 30
