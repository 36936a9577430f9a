"""`make demo` runs offline end to end and shows the loop (a smoke test, so it cannot rot)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_demo_scene_runs_offline_with_the_rehearsal_model():
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "AI_ASSISTANT_", "DJANGO_SETTINGS"))
    }
    done = subprocess.run(
        [sys.executable, "-m", "world.demo_scene"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert out.splitlines()[0].startswith(
        "No model endpoint configured: using the offline " "REHEARSAL model"
    )
    assert 'Mira sees | Aria says, "Welcome, Mira. I will remember your name. (rehearsal)"' in out
    assert "Tobin sees | Aria whispers:" in out
    assert "Mira sees | You paged Aria" in out
    assert "tick: nothing needs the model" in out
    assert "ended by wait" in out
    assert "journal j000001 (importance 7 by llm, heard from Tobin, consolidated)" in out
    assert "about Mira: Introduced themselves as Mira." in out
    # the sleep cycle: refused, allowed, compacting with progress, dreaming, woken, cooldown
    assert "REFUSED: Error: you cannot sleep now. Not enough activity" in out
    assert "*** awake -> sleep" in out
    assert "sleep tick (compacting): scored" in out and "progress 3/3" in out
    assert "sleep tick (dreaming)" in out
    assert "*** sleep -> awake: Urgent event: whisper from Mira" in out
    assert "Too soon after waking: sleep is allowed again in 30 minutes" in out
    assert "memory m000001 (from j000001): The east door sticks when it rains." in out
    # emergency compaction: facts journaled first, the summary, the shrunken history
    assert "journal j000003 (self): Before my memory was compacted" in out
    assert "journal j000004 (compaction): [CONTEXT SYNTHESIS]" in out
    assert "summary | (rehearsal summary)" in out
    assert "-> 21 messages (40 summarised, extraction journaled 1 facts" in out
    assert "history now starts with: [CONTEXT SUMMARY]" in out
    assert "model usage" in out and "Traceback" not in out + done.stderr
