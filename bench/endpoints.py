"""
The model endpoints a benchmark measures when the environment names them (benchmarks 9 and 9b):
an OpenAI-compatible embeddings endpoint (`AI_ASSISTANT_BENCH_EMBED_URL`, its model
`AI_ASSISTANT_BENCH_EMBED_MODEL`) and a `/rerank` endpoint (`AI_ASSISTANT_BENCH_RERANK_URL`,
`AI_ASSISTANT_BENCH_RERANK_MODEL`). Chat stays the offline rehearsal model, so what is measured
is recall, not a chat model's sleep.

"""

import os
import time

EMBED_URL = "AI_ASSISTANT_BENCH_EMBED_URL"
EMBED_MODEL = "AI_ASSISTANT_BENCH_EMBED_MODEL"
RERANK_URL = "AI_ASSISTANT_BENCH_RERANK_URL"
RERANK_MODEL = "AI_ASSISTANT_BENCH_RERANK_MODEL"


def embedding_model() -> str | None:
    """The embeddings model to measure: None when no embeddings endpoint is named."""
    if not os.environ.get(EMBED_URL):
        return None
    return os.environ.get(EMBED_MODEL) or "embedding"


class Endpoints:
    """The offline rehearsal model for chat; the configured endpoints for embeddings and
    reranking. It counts what embedding cost (calls, texts, seconds) and keeps the last error
    an endpoint raised, so a benchmark can say how long embedding took and why it stopped."""

    def __init__(self):
        from ai_assistant.llm.chat import EndpointSettings
        from ai_assistant.llm.client import OpenAIChatClient
        from ai_assistant.offline.rehearsal import RehearsalResponder
        from ai_assistant.offline.replies import ResponderClient

        def endpoint(variable):
            url = os.environ.get(variable)
            return OpenAIChatClient(EndpointSettings(url, "not-needed")) if url else None

        self._rules = ResponderClient(RehearsalResponder())
        self._embedder, self._reranker = endpoint(EMBED_URL), endpoint(RERANK_URL)
        self.embed_calls = self.embedded_texts = 0
        self.embed_seconds = 0.0
        self.error: Exception | None = None

    def __getattr__(self, name):
        return getattr(self._rules, name)

    def embed(self, model, texts, input_type=None):
        started = time.perf_counter()
        self.embed_calls += 1
        try:
            vectors = self._embedder.embed(model, texts, input_type=input_type)
        except Exception as error:
            self.error = error
            raise
        finally:
            self.embed_seconds += time.perf_counter() - started
        self.embedded_texts += len(texts)
        return vectors

    def served_models(self):
        return self._embedder.served_models()

    def rerank(self, model, query, documents):
        return self._reranker.rerank(model, query, documents)
