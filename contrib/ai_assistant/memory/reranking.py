"""
A reranking model's second look at recall's best candidates.

Recall's first pass (words, meaning, people, time; `memory.recall`) is cheap and runs in the
game's thread. A reranking model (a cross-encoder: bge-reranker, jina-reranker, Qwen3-Reranker,
served by llama.cpp's server, vLLM, Jina or Cohere at `POST /rerank`) reads the query together
with each candidate and judges relevance far better, at the price of a call. When
`recall_rerank_model` is set, the best `recall_rerank_candidates` of a recall are sent to it,
off the game's thread with the other model calls, and its scores take the place of the
relevance signal: recency, importance, people and trust count as before. The candidates are
those the conversation may know already (recall filters by audience first), so the call carries
nothing its turn's own request would not.

A failed call leaves the first pass's order; a memory pulled in by a link keeps its score.

"""

from dataclasses import replace

from .recalled import Recalled

# the most characters of the query, and of one memory, sent to the reranker (rerankers read
# about 512 tokens of query and document together)
RERANK_TEXT_CHARS = 1000


def rerank_query(query: str) -> str:
    """What the reranker reads of the query: cut to `RERANK_TEXT_CHARS`, as each candidate is.

    Args:
        query (str): What was recalled (a player's line, of any length).

    Returns:
        str: The text sent.

    """
    return " ".join(query.split())[:RERANK_TEXT_CHARS]


def rerank_documents(items: list[Recalled]) -> list[str]:
    """What the reranker reads of each candidate: its text, cut to `RERANK_TEXT_CHARS`.

    Args:
        items (list): The candidates, best first.

    Returns:
        list: One text per candidate.

    """
    return [" ".join(item.text.split())[:RERANK_TEXT_CHARS] for item in items]


def reordered(
    items: list[Recalled], scores: list[float | None], relevance_weight: float, limit: int
) -> list[Recalled]:
    """The candidates ordered again, with the reranker's scores as their relevance.

    The scores are spread between the weakest and the best (rerankers differ in scale: logits,
    probabilities), so the best candidate has relevance 1 and the weakest 0, as in the first
    pass. A candidate the reply left out counts as the weakest.

    Args:
        items (list): The candidates (`Recalled`), best first.
        scores (list): The reranker's score of each, in order (None: left out).
        relevance_weight (float): The weight of relevance in a score (`recall_weight_relevance`).
        limit (int): How many to keep.

    Returns:
        list: The best `limit` candidates, best first; each reranked one has its `relevance`
            replaced and the reranker's own score under `rerank`.

    """
    given = [score for score in scores if score is not None]
    if not given:
        return items[:limit]
    low, high = min(given), max(given)
    spread = high - low
    result = []
    for item, score in zip(items, scores):
        if "relevance" not in item.scores:
            result.append(item)  # pulled in by a link: scored by the hit that pulled it
            continue
        relevance = 0.0 if score is None else (score - low) / spread if spread > 1e-9 else 1.0
        change = relevance_weight * (relevance - item.scores["relevance"])
        parts = {**item.scores, "relevance": round(relevance, 4)}
        if score is not None:
            parts["rerank"] = round(score, 4)
        result.append(replace(item, score=item.score + change, scores=parts))
    result.extend(items[len(scores) :])
    result.sort(key=lambda item: -item.score)
    return result[:limit]
