"""
Start-up objects are frozen out of full garbage collections once, in a running server only, and
a game can turn it off.

"""

import gc
from types import SimpleNamespace

import pytest
from django.test import override_settings

from ai_assistant import scripts
from ai_assistant.shell import heap


@pytest.fixture
def fresh_heap_state(monkeypatch):
    monkeypatch.setattr(heap, "_frozen", False)
    yield
    gc.unfreeze()


def test_freezing_happens_once_and_takes_the_live_objects_out_of_collections(fresh_heap_state):
    kept = [{"a": [n]} for n in range(1000)]
    frozen, took = heap.freeze_startup_objects()
    assert frozen == gc.get_freeze_count() and frozen >= len(kept)
    assert took >= 0
    # a second call changes nothing
    assert heap.freeze_startup_objects() is None
    assert gc.get_freeze_count() == frozen


@pytest.fixture
def recorded_freezes(monkeypatch):
    calls = []
    monkeypatch.setattr(heap, "freeze_startup_objects", lambda: calls.append(1) or (7, 0.002))
    return calls


def test_a_running_server_freezes(monkeypatch, recorded_freezes):
    monkeypatch.setattr(scripts, "reactor", SimpleNamespace(running=True))
    logged = []
    monkeypatch.setattr(scripts.logger, "log_info", logged.append)
    scripts._freeze_startup_objects()
    assert recorded_freezes == [1]
    assert "7 start-up objects" in logged[0] and "AI_ASSISTANT_FREEZE_STARTUP_OBJECTS" in logged[0]


def test_the_setting_turns_it_off(monkeypatch, recorded_freezes):
    monkeypatch.setattr(scripts, "reactor", SimpleNamespace(running=True))
    with override_settings(AI_ASSISTANT_FREEZE_STARTUP_OBJECTS=False):
        scripts._freeze_startup_objects()
    assert recorded_freezes == []


def test_tests_and_headless_runs_keep_their_collections(monkeypatch, recorded_freezes):
    monkeypatch.setattr(scripts, "reactor", SimpleNamespace(running=False))
    scripts._freeze_startup_objects()
    assert recorded_freezes == []
