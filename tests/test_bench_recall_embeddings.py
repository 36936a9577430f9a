"""
Benchmark 9 with the meaning channel: when `AI_ASSISTANT_BENCH_EMBED_URL` names an embeddings
endpoint, recall quality measures one more run (after one sleep that embeds every entry) beside
the others, checks it for leaks like them, and judges the paraphrased kinds of question by it;
an endpoint that cannot be reached stops the benchmark with its error. Offline: the endpoint is
the local test server's bag-of-words embeddings, at the benchmark's quick size.

"""

import re
import socket

import pytest

from ai_assistant.testing.server import LocalModelServer, ScriptedResponder
from bench.conversations import generate
from bench.memory import recall_quality

EMBEDDED = "pipeline with embeddings, after one sleep"


@pytest.fixture
def no_endpoint(monkeypatch):
    monkeypatch.delenv("AI_ASSISTANT_BENCH_EMBED_URL", raising=False)
    monkeypatch.delenv("AI_ASSISTANT_BENCH_EMBED_MODEL", raising=False)
    return monkeypatch


def quick_size() -> tuple[int, int, int]:
    """The quick data set's journal lines, questions and privacy probes."""
    data = generate(people=8, days=6)
    return len(data.lines), len(data.questions), len(data.probes)


def test_recall_quality_measures_a_run_with_embeddings_beside_the_others(no_endpoint):
    lines, questions, probes = quick_size()
    with LocalModelServer(ScriptedResponder()) as server:
        no_endpoint.setenv("AI_ASSISTANT_BENCH_EMBED_URL", server.base_url)
        no_endpoint.setenv("AI_ASSISTANT_BENCH_EMBED_MODEL", "bag-of-words")
        quality, privacy = recall_quality(quick=True)
    documents = [text for texts in server.embedding_requests for text in texts]
    assert len(documents) >= lines  # every journal entry embedded, and the questions

    row = next(d for d in quality.details if d.startswith(EMBEDDED))
    r5, r10, gold = (float(f) for f in row.split()[-3:])
    assert 0 < r5 <= r10 and 0 < gold
    assert re.search(r"; with embeddings \d\.\d\d$", quality.figure)
    # its column in the table by kind: seven ways of recalling now
    assert EMBEDDED in next(d for d in quality.details if d.startswith("R@10 by kind"))
    paraphrase = next(d for d in quality.details if d.startswith("  paraphrase ("))
    assert len(paraphrase.split(": ")[1].split(" / ")) == 7
    cost = next(d for d in quality.details if d.startswith("with embeddings (bag-of-words)"))
    embedded = re.search(r"the sleep embedded (\d+) texts \((\d+) journal entries", cost)
    # every entry with words (retention may have emptied a few), and the facts drawn from them
    assert 0.9 * lines <= int(embedded.group(2)) <= int(embedded.group(1))
    assert f"the {questions} questions in" in cost

    # the paraphrased kinds judged against plain BM25, and the verdict follows them
    checks = [d for d in quality.details if re.match(r"(ok  |MISS) with embeddings, ", d)]
    assert any("paraphrase R@10" in check for check in checks)
    at_10 = {d.rsplit("  ", 3)[0].strip(): float(d.split()[-2]) for d in quality.details[2:9]}
    assert len([name for name in at_10 if name.startswith("pipeline")]) == 4
    ahead = all(r10 > at_10["plain BM25"] for n, r10 in at_10.items() if n.startswith("pipeline"))
    assert quality.passed == (ahead and not any(c.startswith("MISS") for c in checks))

    # its recalls checked for leaks like the three others
    assert privacy.figure == f"0 leaks in {4 * (questions + probes)} recalls"
    assert "of the 4 pipeline runs" in privacy.details[0]
    assert privacy.details[1].endswith(f"out of {4 * probes}")


def test_without_an_endpoint_nothing_changes_and_the_details_say_how(no_endpoint):
    _, questions, probes = quick_size()
    quality, privacy = recall_quality(quick=True)
    assert not any(d.startswith(EMBEDDED) for d in quality.details)
    assert "with embeddings" not in quality.figure
    assert any(
        d.startswith("embeddings: set AI_ASSISTANT_BENCH_EMBED_URL") for d in quality.details
    )
    assert privacy.figure == f"0 leaks in {3 * (questions + probes)} recalls"


def test_an_endpoint_refusing_connections_fails_clearly(no_endpoint):
    with socket.socket() as probe:  # a port nothing listens on: connections are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    no_endpoint.setenv("AI_ASSISTANT_BENCH_EMBED_URL", f"http://127.0.0.1:{port}/v1")
    with pytest.raises(RuntimeError) as failed:
        recall_quality(quick=True)
    message = str(failed.value)
    assert f"127.0.0.1:{port}" in message and "embedded nothing in a sleep" in message
    assert "without a vector" in message and "Connection error" in message
