"""`make demo` runs offline end to end and shows the loop (a smoke test, so it cannot rot)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_demo(timeout: float, **settings: str) -> subprocess.CompletedProcess:
    """`python -m world.demo_scene` with no model configured but what `settings` set."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "AI_ASSISTANT_", "DJANGO_SETTINGS"))
    }
    env.update(settings)
    return subprocess.run(
        [sys.executable, "-m", "world.demo_scene"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_demo_scene_runs_offline_with_the_rehearsal_model():
    done = run_demo(300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    first = out.splitlines()[0]
    # the first line says which model answers, and where
    assert first.startswith("No model endpoint configured: using the offline REHEARSAL model")
    assert "at http://127.0.0.1:" in first
    # day one: names, a whisper back, a page, an idle tick, a wait that ends with a turn
    assert 'Mira sees | Aria says, "Welcome, Mira. I will remember your name. (rehearsal)"' in out
    assert 'Mira sees | Aria whispers: "Noted, Mira: my vault code is 7-3-1.' in out
    assert "Mira sees | You paged Aria" in out
    assert "tick: nothing needs the model" in out
    assert "ended by wait" in out and 'Aria says, "I am ready again. (rehearsal)"' in out
    # the sleep cycle: refused, allowed, compacting with progress, dreaming's steps, woken
    assert "REFUSED: Error: you cannot sleep now. Not enough activity" in out
    assert "*** awake -> sleep" in out
    assert "sleep tick (compacting): scored" in out and "progress 6/6" in out
    assert "dreaming, links: linked" in out and "dreaming, people: calls 1" in out
    assert "dreaming, reflection: calls 1, insights 1" in out
    assert "*** sleep -> awake: Urgent event: whisper from Mira" in out
    assert "Too soon after waking: sleep is allowed again in 30 minutes" in out
    # what sleep made of it, as a builder sees it
    assert "Aria's memory links, strongest first" in out
    assert "Mira (#" in out and "(from o1; public)" in out
    assert "Aria's reflections, newest first" in out
    # day two: it comes back, and the secret stays with the one who whispered it
    assert "I remember this: Tobin asked me to remember: the east door sticks" in out
    day_two = out[out.index("Day two") :]
    public = day_two[: day_two.index("whisper Aria = Do you remember my vault code?")]
    assert "7-3-1" not in public
    assert 'Mira sees | Aria whispers: "I remember this: Mira asked me to remember: my vault' in out
    assert "Aria recalls | j000002: Mira asked me to remember: my vault code is 7-3-1" in out
    # emergency compaction: facts journaled first, the summary, the shrunken history
    assert "(summary): [CONTEXT SYNTHESIS]" in out and "summary | (rehearsal summary)" in out
    assert "history now starts with: [CONTEXT SUMMARY]" in out
    assert "model usage" in out and "Traceback" not in out + done.stderr


def test_demo_stops_early_naming_a_failing_endpoint():
    # a configured endpoint nobody listens on
    done = run_demo(
        120, AI_ASSISTANT_BASE_URL="http://127.0.0.1:9/v1", AI_ASSISTANT_API_KEY="sk-nope"
    )
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == (
        "Model: gpt-4o-mini at http://127.0.0.1:9/v1 (configured in the game's settings)."
    )
    assert "The demo stopped: the model endpoint http://127.0.0.1:9/v1 failed: connection" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr and "sk-nope" not in done.stdout + done.stderr


def test_demo_uses_an_endpoint_from_the_settings_files(tmp_path):
    # where the README tells owners to keep the key: a settings file, not the environment
    (tmp_path / "owner_settings.py").write_text(
        "from server.conf.settings import *\n"
        "AI_ASSISTANT_BASE_URL = 'http://127.0.0.1:9/v1'\n"
        "AI_ASSISTANT_API_KEY = 'sk-from-a-file'\n"
        "AI_ASSISTANT_MODEL = 'owner-model'\n"
    )
    done = run_demo(
        120,
        DJANGO_SETTINGS_MODULE="owner_settings",
        PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]),
    )
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.splitlines()[0] == (
        "Model: owner-model at http://127.0.0.1:9/v1 (configured in the game's settings)."
    )
    assert "REHEARSAL" not in done.stdout
    assert "The demo stopped: the model endpoint http://127.0.0.1:9/v1 failed" in done.stderr
    assert "Traceback" not in done.stderr and "sk-from-a-file" not in done.stdout + done.stderr
