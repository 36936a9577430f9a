"""
Batch mode: sleep-time structured work through the Batch API of a local (scripted) server,
over HTTP with the real `openai` SDK: one batch per tick, polled, applied as direct calls would
be; failed, expired and half-failed batches fall back to direct calls; an endpoint without the
Batch API turns it off; waking while a batch is pending loses nothing; off by default.

"""

import json
from datetime import timedelta

import pytest

from ai_assistant import lifecycle as life
from ai_assistant.conf import ConfigError, parse_override, resolve_config
from ai_assistant.llm.chat import EndpointSettings
from ai_assistant.llm.client import OpenAIChatClient
from ai_assistant.sleep.batch import request_key
from ai_assistant.sleep.tick import sleep_tick
from ai_assistant.memory.sleep_history import SleepHistory
from ai_assistant.state import (
    BATCH_RESULTS,
    BATCH_UNSUPPORTED,
    BATCH_WAITING,
    BATCHES,
    DREAMING_PROGRESS,
)
from ai_assistant.clock import to_iso
from ai_assistant.testing.server import (
    BatchOutcome,
    LocalModelServer,
    ScriptedResponder,
    error_reply,
    text_reply,
)
from ai_assistant.status import status_of

from .core_fakes import T0, make_assistant, run

MINUTE = timedelta(minutes=1)
DREAMY = {"batch_enabled": True, "entity_min_observations": 2, "reflection_threshold": 20}


@pytest.fixture
def responder():
    scripted = ScriptedResponder()
    yield scripted
    scripted.verify()


@pytest.fixture
def server(responder):
    with LocalModelServer(responder) as local:
        yield local


def http_assistant(server, **config):
    client = OpenAIChatClient(EndpointSettings(server.base_url, "sk-test", max_retries=0))
    # these tests count the other steps' requests (relationships: test_relationships.py)
    config.setdefault("relationships_enabled", False)
    return make_assistant(lambda: client, **config)


def json_reply(data: dict):
    return text_reply(json.dumps(data))


SCORES = json_reply(
    {
        "scores": [
            {"entry_id": "j000000", "importance": 7},
            {"entry_id": "j000001", "importance": 6},
            {"entry_id": "j000002", "importance": 2},
        ]
    }
)
FACTS = json_reply(
    {
        "entries": [
            {"entry_id": "j000000", "facts": ["Mira loves jasmine tea."]},
            {"entry_id": "j000001", "facts": ["Tobin keeps the ledger."]},
        ]
    }
)
PEOPLE = json_reply({"entities": [{"entity_id": "p0", "attributes": []}]})
INSIGHTS = json_reply(
    {"insights": [{"question": "Who?", "insight": "Bob wants the vault.", "cites": ["j000000"]}]}
)


def compacting(brain, hours=4):
    for text in ("Mira said she loves jasmine tea.", "Tobin keeps the ledger.", "Bob said hi."):
        brain.journal.add(text, author="Aria", now=T0)
    brain.lifecycle.go_to_sleep(
        T0, hours=hours, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    assert brain.lifecycle.phase == life.COMPACTING
    return brain


def dreaming(brain):
    """Asleep and dreaming, with one person to consolidate and enough to reflect on."""
    brain.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="builder", enforce_safeguards=False)
    assert brain.lifecycle.phase == life.DREAMING
    for i in range(2):
        brain.entities.observe(
            "name:ann", "Ann", f"Ann likes thing {i}", now=T0, author="Aria", audience=None
        )
    for i in range(4):
        brain.journal.add(f"Bob asked about the vault {i}", author="Aria", now=T0, importance=7)
    return brain


def schema_names(requests):
    return [request["response_format"]["json_schema"]["name"] for request in requests]


def test_off_by_default_no_batch_endpoint_is_asked(server, responder):
    brain = compacting(http_assistant(server))
    assert brain.config.batch_enabled is False
    responder.add(SCORES, FACTS)
    report = run(sleep_tick(brain, T0))
    assert report["consolidated"] == 2 and "batch" not in report
    assert server.batch_calls == [] and server.batches == {}


def test_compacting_through_batches_consolidates_as_direct_calls_do(server, responder):
    # the same sleep, direct: what it stores and what it asks
    direct = compacting(http_assistant(server))
    responder.add(SCORES, FACTS)
    run(sleep_tick(direct, T0))
    direct_requests = list(responder.requests)
    responder.requests.clear()

    brain = compacting(http_assistant(server, batch_enabled=True))
    first = run(sleep_tick(brain, T0))
    # the scoring call went into a batch; nothing changed
    assert first["waiting"] == "batch" and first["batch"]["submitted"] == 1
    assert first["scored"] == 0 and not first["error"]
    assert brain.long_term.count() == 0 and len(brain.journal.unconsolidated()) == 3
    assert all(e["scoring_method"] == "heuristic" for e in brain.journal.all())
    (line,) = server.batches["batch-1"]["lines"]
    assert [b["keys"] for b in brain.state.get(BATCHES)] == [[line["custom_id"]]]
    assert line["url"] == "/v1/chat/completions" and line["body"] == direct_requests[0]
    assert responder.requests == []  # no direct call

    # still in progress: polled, waits, asks nothing again
    server.batch_script.append("in_progress")
    second = run(sleep_tick(brain, T0 + MINUTE))
    assert second["waiting"] == "batch" and second["batch"]["waiting"] == 1
    assert second["batch"]["submitted"] == 0 and len(server.batches) == 1
    assert brain.state.get(BATCH_WAITING) is True

    # done: scores applied as a direct reply would be, extraction goes into the next batch
    responder.add(SCORES)
    third = run(sleep_tick(brain, T0 + 2 * MINUTE))
    assert third["scored"] == 3 and third["batch"]["applied"] == 1
    assert third["batch"]["submitted"] == 1 and len(server.batches) == 2
    assert server.batches["batch-2"]["lines"][0]["body"] == direct_requests[1]
    assert brain.long_term.count() == 0

    responder.add(FACTS)
    fourth = run(sleep_tick(brain, T0 + 3 * MINUTE))
    assert fourth["consolidated"] == 2 and fourth["batch"]["applied"] == 1
    assert [m["text"] for m in brain.long_term.recent(10)] == [
        m["text"] for m in direct.long_term.recent(10)
    ]
    assert [
        (e["importance"], e.get("consolidated"), e.get("skipped")) for e in brain.journal.all()
    ] == [(e["importance"], e.get("consolidated"), e.get("skipped")) for e in direct.journal.all()]
    assert brain.lifecycle.phase == life.DREAMING and brain.state.get(BATCH_WAITING) is None
    # every reply came from a batch, counted as batch usage; nothing is left over
    usage = brain.usage()
    assert usage.calls == 2 and usage.batch_calls == 2
    assert usage.batch_prompt_tokens == usage.prompt_tokens > 0
    assert brain.state.get(BATCHES) == [] and brain.state.get(BATCH_RESULTS) == {}
    assert len(responder.requests) == 2  # the two batch lines, answered once each


def test_one_batch_holds_every_request_deferred_in_a_tick(server, responder):
    brain = dreaming(http_assistant(server, **DREAMY))
    first = run(sleep_tick(brain, T0))
    steps = {report["step"]: report for report in first}
    assert steps["people"] == {"step": "people", "waiting": "batch"}
    assert steps["reflection"] == {"step": "reflection", "waiting": "batch"}
    # a step reading what a waiting step brings waits with it instead of asking twice
    assert steps["core memory"] == {"step": "core memory", "waiting": "batch"}
    assert "pruning" in steps  # the other steps went on
    assert steps["batch"]["submitted"] == 2 and "error" not in steps["batch"]
    assert list(server.batches) == ["batch-1"]
    assert [c for c in server.batch_calls if c[0] == "POST"] == [
        ("POST", "/v1/files"),
        ("POST", "/v1/batches"),
    ]
    lines = server.batches["batch-1"]["lines"]
    assert schema_names([line["body"] for line in lines]) == ["EntitySynthesis", "Reflection"]
    done = brain.state.get(DREAMING_PROGRESS)["done"]
    assert "people" not in done and "reflection" not in done
    assert not brain.entities.profile("name:ann")["observations"][0].get("consolidated")

    responder.add(PEOPLE, INSIGHTS)
    second = run(sleep_tick(brain, T0 + MINUTE))
    # the core memory step reads the reflections: it waited for them, and asks now
    assert [r["step"] for r in second] == ["people", "reflection", "core memory", "batch"]
    assert second[-1]["applied"] == 2 and second[-1]["submitted"] == 1
    done = brain.state.get(DREAMING_PROGRESS)["done"]
    assert "people" in done and "reflection" in done
    assert all(o["consolidated"] for o in brain.entities.profile("name:ann")["observations"])
    assert brain.journal.all()[-1]["kind"] == "reflection"
    assert len(responder.requests) == 2 and brain.usage().batch_calls == 2


@pytest.mark.parametrize("status", ["failed", "expired", "cancelled"])
def test_a_failed_expired_or_cancelled_batch_falls_back_to_direct_calls(server, responder, status):
    brain = compacting(http_assistant(server, batch_enabled=True))
    SleepHistory(brain.state).start(
        "2026-11-21T12:00:00", began="builder", depth="light", debt_before=0, quiet=False
    )
    run(sleep_tick(brain, T0))
    server.batch_script.append(status)
    responder.add(SCORES)  # asked directly, in the same tick
    second = run(sleep_tick(brain, T0 + MINUTE))
    assert second["scored"] == 3 and second["batch"]["direct"] == 1
    assert f"batch batch-1 {status}" in second["batch"]["error"]
    assert "response_format" in responder.requests[-1]  # a direct chat completion
    assert brain.usage().batch_calls == 0 and brain.usage().calls == 1
    # the next request (extraction) goes into a new batch again
    assert second["batch"]["submitted"] == 1 and len(server.batches) == 2
    # the fallback is counted in the sleep's record
    assert SleepHistory(brain.state).current()["errors"] == 1


def test_a_batch_that_fails_halfway_uses_what_succeeded_and_calls_the_rest(server, responder):
    brain = dreaming(http_assistant(server, **DREAMY))
    run(sleep_tick(brain, T0))
    # the batch completes, but its second line (reflection) failed
    responder.add(PEOPLE, error_reply(500, "overloaded"))
    responder.add(INSIGHTS)  # the direct call that stands in for the failed line
    second = run(sleep_tick(brain, T0 + MINUTE))
    report = second[-1]
    assert report["step"] == "batch" and report["applied"] == 1 and report["direct"] == 1
    assert "1 of 2 requests called directly" in report["error"]
    assert "overloaded" in report["error"]
    done = brain.state.get(DREAMING_PROGRESS)["done"]
    assert "people" in done and "reflection" in done
    assert brain.usage().batch_calls == 1 and brain.usage().calls == 2
    assert len(responder.requests) == 3


def test_an_expired_batch_keeps_the_lines_it_answered(server, responder):
    brain = dreaming(http_assistant(server, **DREAMY))
    run(sleep_tick(brain, T0))
    server.batch_script.append(BatchOutcome("expired", answered=1))
    responder.add(PEOPLE, INSIGHTS)  # the first line in the batch, the second directly
    second = run(sleep_tick(brain, T0 + MINUTE))
    assert second[-1]["applied"] == 1 and second[-1]["direct"] == 1
    assert "batch batch-1 expired: 1 of 2" in second[-1]["error"]
    assert "reflection" in brain.state.get(DREAMING_PROGRESS)["done"]


def test_an_endpoint_without_the_batch_api_turns_batch_mode_off(responder):
    with LocalModelServer(responder, batches=False) as server:
        brain = compacting(http_assistant(server, batch_enabled=True))
        first = run(sleep_tick(brain, T0))
        assert server.batch_calls == [("POST", "/v1/files")]  # the upload got 404
        assert "batch not submitted" in first["batch"]["error"]
        assert brain.state.get(BATCH_UNSUPPORTED)["reason"].startswith("batch not submitted")
        assert first["scored"] == 0 and brain.state.get(BATCHES) in (None, [])
        # the next tick calls directly; the one after never tries the Batch API again
        responder.add(SCORES, FACTS)
        second = run(sleep_tick(brain, T0 + MINUTE))
        assert second["scored"] == 3 and second["consolidated"] == 2
        assert "batch" not in second  # batch mode is off: no round at all
        assert server.batch_calls == [("POST", "/v1/files")]
        assert len(responder.requests) == 2


def test_waking_while_a_batch_is_pending_loses_nothing(server, responder):
    brain = compacting(http_assistant(server, batch_enabled=True), hours=1)
    run(sleep_tick(brain, T0))
    # the wake is due while compacting waits on the batch: it is not held back
    wake_at = T0 + timedelta(hours=1)
    server.batch_script.append("in_progress")
    run(sleep_tick(brain, wake_at))
    brain.lifecycle.apply_wake_conditions([], wake_at)
    assert brain.lifecycle.mode == life.AWAKE
    assert "kept for the next sleep" in brain.state.get(life.TRANSITION_REASON)
    assert brain.state.get(BATCH_WAITING) is None
    # nothing was applied, nothing lost: the entries wait, the batch is still known
    assert len(brain.journal.unconsolidated()) == 3 and brain.long_term.count() == 0
    assert [b["id"] for b in brain.state.get(BATCHES)] == ["batch-1"]
    # status shows it under way
    (shown,) = status_of(brain, wake_at).batches
    assert shown["id"] == "batch-1" and shown["requests"] == 1 and shown["submitted_at"]

    # the next sleep polls the batch, applies it, and goes on
    later = wake_at + timedelta(hours=2)
    brain.lifecycle.go_to_sleep(
        later, hours=1, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    responder.add(SCORES)
    report = run(sleep_tick(brain, later))
    assert report["scored"] == 3 and report["batch"]["applied"] == 1
    responder.add(FACTS)
    report = run(sleep_tick(brain, later + MINUTE))
    assert report["consolidated"] == 2 and brain.long_term.count() == 2
    assert brain.lifecycle.phase == life.DREAMING


def test_a_batch_unknown_or_too_old_is_given_up_for_direct_calls(server, responder):
    brain = compacting(http_assistant(server, batch_enabled=True, batch_max_wait_hours=2))
    run(sleep_tick(brain, T0))
    server.batch_script.extend(["in_progress", "in_progress"])
    report = run(sleep_tick(brain, T0 + timedelta(hours=1)))
    assert report["waiting"] == "batch"
    responder.add(SCORES)
    report = run(sleep_tick(brain, T0 + timedelta(hours=2)))
    assert report["scored"] == 3 and "still in_progress after 2 h" in report["batch"]["error"]

    # a batch the provider does not know (404) is given up at once
    other = compacting(http_assistant(server, batch_enabled=True))
    other.state.set(
        BATCHES,
        [{"id": "batch-404", "keys": ["q0"], "submitted_at": to_iso(T0)}],
    )
    run(sleep_tick(other, T0))
    # (batch-2 is the first brain's extraction; batch-3 the new one's scoring, asked again)
    assert [b["id"] for b in other.state.get(BATCHES)] == ["batch-3"]
    assert other.state.get(BATCH_RESULTS) == {
        "q0": {"direct": "batch batch-404 is unknown to the provider", "at": to_iso(T0)}
    }


def test_request_keys_are_stable_and_tell_requests_apart():
    from ai_assistant.llm.chat import ChatRequest
    from ai_assistant.sleep.prompts import FactExtraction, ImportanceScores

    request = ChatRequest(model="m", messages=[{"role": "user", "content": "a"}])
    same = ChatRequest(model="m", messages=[{"role": "user", "content": "a"}])
    other = ChatRequest(model="m", messages=[{"role": "user", "content": "b"}])
    assert request_key(request, ImportanceScores) == request_key(same, ImportanceScores)
    assert request_key(request, ImportanceScores) != request_key(other, ImportanceScores)
    assert request_key(request, ImportanceScores) != request_key(request, FactExtraction)


def test_batch_settings_are_validated():
    assert resolve_config({}).batch_enabled is False
    assert resolve_config({"batch_enabled": True}).batch_enabled is True
    with pytest.raises(ConfigError, match="batch_max_wait_hours"):
        resolve_config({"batch_max_wait_hours": 0})
    with pytest.raises(ConfigError, match="batch_max_wait_hours"):
        resolve_config({"batch_max_wait_hours": 1000})
    assert parse_override("batch_enabled", "true") is True
    with pytest.raises(ConfigError, match="batch_enabled"):
        parse_override("batch_enabled", "maybe")


def test_past_the_batches_under_way_a_new_request_is_called_directly(
    server, responder, monkeypatch
):
    from ai_assistant.sleep import batch

    monkeypatch.setattr(batch, "MAX_UNDER_WAY", 1)
    brain = compacting(http_assistant(server, batch_enabled=True))
    run(sleep_tick(brain, T0))
    # the journal changed: the scoring request is not the one in the batch any more
    brain.journal.add("Mira whispered the vault code.", author="Aria", now=T0, salience=3)
    server.batch_script.append("in_progress")
    responder.add(
        json_reply({"scores": [{"entry_id": "j000003", "importance": 8}]}),
        json_reply({"entries": []}),
    )
    report = run(sleep_tick(brain, T0 + MINUTE))
    # scoring and then extraction, both called directly in this tick
    assert report["scored"] == 1 and report["batch"]["direct"] == 2
    assert report["batch"]["submitted"] == 0 and len(server.batches) == 1
    assert schema_names(responder.requests) == ["ImportanceScores", "FactExtraction"]


# ---- in the game: the script's ticks, Attributes and all ----------------------------------------

from .helpers import SleepTestCase  # noqa: E402


class TestBatchModeInTheGame(SleepTestCase):
    overrides = {**SleepTestCase.overrides, "batch_enabled": True}

    def test_ticks_batch_poll_apply_and_a_wake_is_not_held_for_a_batch(self):
        self.journal("Mira said she loves jasmine tea.", "Tobin keeps the ledger.", "Bob said hi.")
        self.builder_sleep(hours=1)
        self.tick(advance=60)
        assert self.server.batch_calls == [("POST", "/v1/files"), ("POST", "/v1/batches")]
        assert [b["id"] for b in self.script.db.batches] == ["batch-1"]
        assert self.responder.requests == []
        # the wake time comes while compacting waits on the batch: it wakes all the same
        self.server.batch_script.append("in_progress")
        self.tick(advance=3600)
        assert self.mode() == "awake"
        assert "kept for the next sleep" in self.script.db.mode_transition_reason
        brain = self.handler.brain
        assert len(brain.journal.unconsolidated()) == 3 and brain.long_term.count() == 0
        assert [b["id"] for b in self.script.db.batches] == ["batch-1"]
        # the next sleep applies it, then batches the extraction, then applies that
        self.builder_sleep(hours=1)
        self.responder.add(SCORES)
        self.tick(advance=60)
        assert [b["id"] for b in self.script.db.batches] == ["batch-2"]
        self.responder.add(FACTS)
        self.tick(advance=60)
        assert brain.long_term.count() == 2 and self.script.db.sleep_phase == "dreaming"
        usage = self.handler.status().usage
        assert usage.batch_calls == 2 and "2 of the calls in batches" in usage.summary()
        assert self.script.db.batches == [] and self.script.db.batch_results == {}


def test_batch_replies_are_counted_apart_and_have_no_latency():
    from ai_assistant.llm.chat import ChatReply, TokenUsage
    from ai_assistant.llm.usage import UsageStats

    usage = UsageStats()
    usage.record_reply(ChatReply("{}", [], "stop", usage=TokenUsage(100, 10), latency_ms=300.0))
    usage.record_reply(ChatReply("{}", [], "stop", usage=TokenUsage(200, 20), batch=True))
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (2, 300, 30)
    assert (usage.batch_calls, usage.batch_prompt_tokens, usage.batch_completion_tokens) == (
        1,
        200,
        20,
    )
    assert usage.mean_latency_ms == 300.0
    assert UsageStats.load(usage.model_dump()) == usage


def test_compacting_asks_for_every_slice_in_one_batch_audiences_apart(server, responder):
    brain = http_assistant(server, batch_enabled=True, scoring_batch_size=2)
    for i in range(4):
        brain.journal.add(f"Visitor {i} asked about the atlas.", author="Aria", now=T0)
    brain.journal.add("Mira whispered her key.", author="Aria", now=T0, audience=["mira"])
    brain.lifecycle.go_to_sleep(
        T0, hours=4, reason="rest", initiated_by="builder", enforce_safeguards=False
    )
    first = run(sleep_tick(brain, T0))
    assert first["batch"]["submitted"] == 3 and first["scored"] == 0
    assert len(server.batches["batch-1"]["lines"]) == 3

    def scores(*ids):
        return json_reply({"scores": [{"entry_id": i, "importance": 6} for i in ids]})

    responder.add(scores("j000000", "j000001"), scores("j000002", "j000003"), scores("j000004"))
    second = run(sleep_tick(brain, T0 + MINUTE))
    assert second["scored"] == 5 and second["batch"]["applied"] == 3
    # every extraction at once, the whisper in a request of its own
    assert second["batch"]["submitted"] == 3 and second["consolidated"] == 0
    contents = [
        line["body"]["messages"][-1]["content"] for line in server.batches["batch-2"]["lines"]
    ]
    assert ["Mira whispered" in content for content in contents] == [False, False, True]

    def facts(*ids):
        return json_reply({"entries": [{"entry_id": i, "facts": [f"Fact {i}."]} for i in ids]})

    responder.add(facts("j000000", "j000001"), facts("j000002", "j000003"), facts("j000004"))
    third = run(sleep_tick(brain, T0 + 2 * MINUTE))
    assert third["consolidated"] == 5 and third["memories"] == 5
    assert brain.lifecycle.phase == life.DREAMING
    private = [m for m in brain.long_term.recent(10) if m["text"] == "Fact j000004."]
    assert private[0]["audience"] == ["mira"]


def test_a_batch_reply_that_does_not_fit_is_asked_again_directly(server, responder):
    brain = compacting(http_assistant(server, batch_enabled=True))
    run(sleep_tick(brain, T0))
    responder.add(text_reply("not json at all"))  # the batch's answer
    responder.add(SCORES)  # the direct call that replaces it
    report = run(sleep_tick(brain, T0 + MINUTE))
    assert report["scored"] == 3 and report["batch"]["direct"] == 1
    assert "did not fit" in report["batch"]["error"] and not report["error"]
    # the unusable reply was billed: counted, and counted as malformed
    usage = brain.usage()
    assert usage.batch_calls == 1 and usage.calls == 2
    assert usage.malformed == {"batch_reply": 1}


def test_every_audience_reflects_in_one_batch_and_none_twice(server, responder):
    # no core memory candidates: reflections are of importance 8-9
    brain = dreaming(http_assistant(server, **DREAMY, core_memory_min_importance=10))
    for i in range(3):
        brain.journal.add(
            f"Bob whispered secret {i}", author="Aria", now=T0, importance=7, audience=["#5"]
        )
    run(sleep_tick(brain, T0))
    lines = server.batches["batch-1"]["lines"]
    # the public and the private reflection go out together, with the people
    assert schema_names([line["body"] for line in lines]).count("Reflection") == 2
    private = json_reply(
        {"insights": [{"question": "?", "insight": "Bob hides something.", "cites": ["j000004"]}]}
    )
    responder.add(PEOPLE, INSIGHTS, private)
    for minute in range(1, 6):
        work = sleep_tick(brain, T0 + minute * MINUTE)
        if work is None:
            break  # every dreaming step is done
        run(work)
    written = [e["content"] for e in brain.journal.all() if e.get("kind") == "reflection"]
    assert sorted(written) == ["Bob hides something.", "Bob wants the vault."]
    assert [e["audience"] for e in brain.journal.all() if e.get("kind") == "reflection"] in (
        [None, ["#5"]],
        [["#5"], None],
    )
