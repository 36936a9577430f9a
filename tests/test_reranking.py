"""
A reranking model's second look at recall: off unless `recall_rerank_model` is set; then the
best candidates go to it (only those the conversation may know), its order decides, a failed
call leaves the first pass's order, and a hostile reply is refused whole.

"""

import math
from datetime import datetime, timedelta

import pytest

from ai_assistant.conf import AssistantConfig
from ai_assistant.llm.chat import EndpointSettings, LLMError
from ai_assistant.llm.client import OpenAIChatClient
from ai_assistant.memory.recalled import Recalled
from ai_assistant.memory.reranking import RERANK_TEXT_CHARS, reordered
from ai_assistant.memory_api import AssistantMemory
from ai_assistant.testing.server import LocalModelServer, ScriptedResponder

from .core_fakes import T0, ScriptedModel, hear, make_assistant, reply, run_tick


class Reranker(ScriptedModel):
    """A model client that reranks: the documents holding `favourite` first."""

    def __init__(self, *answers, favourite="", error=None):
        super().__init__(*answers)
        self.favourite, self.error = favourite, error
        self.reranked: list[tuple[str, str, list[str]]] = []

    def rerank(self, model, query, documents):
        self.reranked.append((model, query, list(documents)))
        if self.error:
            raise self.error
        return [5.0 if self.favourite in document else -2.0 for document in documents]


def item(doc_id, score, relevance=None, **scores):
    parts = dict(scores)
    if relevance is not None:
        parts["relevance"] = relevance
    return Recalled(doc_id, "entry", doc_id, score, parts, [doc_id], T0, 3, None, {})


def memory_of(model, *lines, **config):
    memory = AssistantMemory(
        "Aria", model=model, config=AssistantConfig(recall_rerank_model="rr", **config)
    )
    ids = [
        memory.add_entry(text, speaker=speaker, time=T0 + timedelta(hours=i), **extra)
        for i, (speaker, text, extra) in enumerate(lines)
    ]
    return memory, ids


# ---- the order ---------------------------------------------------------------------------------


def test_the_rerankers_scores_take_the_place_of_relevance():
    pool = [item("a", 1.3, 1.0), item("b", 1.0, 0.7), item("c", 0.5, 0.2)]
    found = reordered(pool, [0.1, -3.0, 9.0], relevance_weight=1.0, limit=3)
    assert [it.id for it in found] == ["c", "a", "b"]
    best = found[0]
    assert best.scores["relevance"] == 1.0 and best.scores["rerank"] == 9.0
    assert math.isclose(best.score, 0.5 + (1.0 - 0.2))


def test_a_linked_memory_keeps_its_score_and_a_left_out_one_counts_as_weakest():
    pool = [item("a", 1.3, 1.0), item("b", 1.2, 0.9), item("link", 0.9, link=0.9)]
    found = reordered(pool, [None, 2.0, 0.0], relevance_weight=1.0, limit=2)
    # a: relevance 1.0 -> 0 (left out of the reply); b: 0.9 -> 1.0; the link keeps 0.9
    assert [it.id for it in found] == ["b", "link"]
    assert reordered(pool, [None, None, None], 1.0, 2) == pool[:2]


# ---- through the entry point -------------------------------------------------------------------


def test_recall_takes_the_rerankers_order():
    model = Reranker(favourite="lantern")
    memory, (door, lantern, fish) = memory_of(
        model,
        ("Bob", "The door of the old mill sticks.", {}),
        ("Bob", "A lantern hangs in the mill.", {}),
        ("Carol", "Fish are sold at dawn by the mill.", {}),
    )
    found = memory.recall("mill door", k=3)
    assert found[0].entry_ids == [lantern] and found[0].scores["rerank"] == 5.0
    (model_name, query, documents), *_ = model.reranked
    assert model_name == "rr" and query == "mill door" and len(documents) == 3
    # without the reranker the door comes first (two of the query's words)
    plain = AssistantMemory("Aria")
    for entry in memory.brain.journal.all():
        when = datetime.fromisoformat(entry["created_at"])
        plain.add_entry(entry["content"], speaker=entry["heard_from"], time=when)
    assert plain.recall("mill door", k=1)[0].entry_ids == [door]
    assert fish


def test_the_reranker_reads_as_much_of_a_long_query_as_of_a_memory():
    model = Reranker(favourite="lantern")
    memory, _ = memory_of(
        model,
        ("Bob", "The door of the old mill sticks.", {}),
        ("Bob", "A lantern hangs in the mill.", {}),
    )
    memory.recall("mill  door " * 50_000, k=2)
    (_, query, _), *_ = model.reranked
    assert query == ("mill door " * 100)[:RERANK_TEXT_CHARS]


def test_no_reranker_configured_no_call():
    model = Reranker(favourite="lantern")
    memory = AssistantMemory("Aria", model=model)
    memory.add_entry("The old mill has a lantern.", speaker="Bob", time=T0)
    memory.add_entry("The mill door sticks.", speaker="Bob", time=T0 + timedelta(hours=1))
    memory.recall("mill", k=2)
    assert model.reranked == []


def test_the_reranker_reads_only_what_the_conversation_may_know():
    model = Reranker(favourite="vault")
    memory, (whisper, public, other) = memory_of(
        model,
        ("Bob", "The vault of the mill opens at noon.", {"audience": ["Bob"]}),
        ("Carol", "The mill wheel turns again.", {}),
        ("Carol", "The mill pond froze.", {}),
    )
    found = memory.recall("mill", k=3, audience=["Carol"])
    assert whisper not in [entry for it in found for entry in it.entry_ids]
    (_, _, documents), *_ = model.reranked
    assert not any("vault" in document for document in documents)


def test_a_failed_reranker_leaves_the_first_pass():
    model = Reranker(favourite="lantern", error=LLMError("timeout", "no answer"))
    memory, ids = memory_of(
        model,
        ("Bob", "The door of the old mill sticks.", {}),
        ("Bob", "A lantern hangs in the mill.", {}),
    )
    found = memory.recall("mill door", k=2)
    plain = AssistantMemory("Aria")
    for entry in memory.brain.journal.all():
        when = datetime.fromisoformat(entry["created_at"])
        plain.add_entry(entry["content"], speaker=entry["heard_from"], time=when)
    assert [it.entry_ids for it in found] == [it.entry_ids for it in plain.recall("mill door", k=2)]


# ---- in a turn and in the recall tool ----------------------------------------------------------


def test_a_turn_shows_memories_in_the_rerankers_order():
    model = Reranker(reply(("say", {"message": "The lantern, yes."})), favourite="lantern")
    brain = make_assistant(model, recall_rerank_model="rr", recall_limit=1)
    brain.journal.add("The old mill door sticks.", author="Bob", now=T0, heard_from="Bob")
    brain.journal.add(
        "The old mill has a lantern.", author="Bob", now=T0 + timedelta(hours=1), heard_from="Bob"
    )
    hear(brain, "Tell me about the old mill door", "whisper", "Bob", now=T0 + timedelta(hours=2))
    run_tick(brain, T0 + timedelta(hours=2))
    (_, query, documents), *_ = model.reranked
    assert query == "Tell me about the old mill door" and len(documents) == 2
    sent = model.requests[0].messages[-1]["content"]
    assert "lantern" in sent and "door sticks" not in sent


def test_the_recall_tool_reranks_too():
    model = Reranker(
        reply(("recall", {"query": "old mill"})),
        reply(("say", {"message": "Noted."})),
        favourite="lantern",
    )
    brain = make_assistant(model, recall_rerank_model="rr", recall_limit=0)
    brain.journal.add("The old mill door sticks.", author="Bob", now=T0, heard_from="Bob")
    brain.journal.add(
        "The old mill has a lantern.", author="Bob", now=T0 + timedelta(hours=1), heard_from="Bob"
    )
    hear(brain, "What do you know?", "whisper", "Bob", now=T0 + timedelta(hours=2))
    run_tick(brain, T0 + timedelta(hours=2))
    assert [query for _, query, _ in model.reranked] == ["old mill"]
    result = model.requests[1].messages[-1]["content"]
    assert result.index("lantern") < result.index("door sticks")


# ---- over HTTP ---------------------------------------------------------------------------------


@pytest.fixture
def server():
    with LocalModelServer(ScriptedResponder()) as local:
        yield local


def client_of(server):
    return OpenAIChatClient(EndpointSettings(server.base_url, "sk-test", max_retries=0))


def test_the_sdk_client_posts_the_rerank_body_and_reads_the_reply(server):
    scores = client_of(server).rerank("bge-reranker", "old mill", ["a pond", "the old mill"])
    assert scores == [0.0, 2.0]
    (body,) = server.rerank_requests
    assert body == {
        "model": "bge-reranker",
        "query": "old mill",
        "documents": ["a pond", "the old mill"],
        "top_n": 2,
    }


@pytest.mark.parametrize(
    "body",
    [
        {"results": [{"index": 5, "relevance_score": 1.0}]},
        {"results": [{"index": 0, "relevance_score": 1.0}, {"index": 0, "relevance_score": 2}]},
        {"results": [{"index": 0, "relevance_score": "high"}]},
        {"results": [{"index": True, "relevance_score": 1.0}]},
        {"results": [{"index": i, "relevance_score": 1.0} for i in range(3)]},
        {"results": "all good"},
        {},
    ],
)
def test_a_hostile_rerank_reply_is_refused(server, body):
    server.rerank_reply = lambda request: body
    with pytest.raises(LLMError) as raised:
        client_of(server).rerank("rr", "q", ["a", "b"])
    assert raised.value.kind == "invalid_response"


def test_a_server_without_rerank_fails_as_an_error_not_a_crash(server):
    server.rerank_reply = lambda request: {"results": []}
    assert client_of(server).rerank("rr", "q", ["a", "b"]) == [None, None]
