"""
The embeddings step of dreaming: journal entries get their vectors, so recall finds a moment by
meaning as well as by its words.

Only with an embeddings model configured. Each entry with words and no vector by the current
model is embedded as a document (`Journal.passage`: its words and the line said before it, each after
who said them, marked the way the model wants: `llm.embedding_roles`), `embedding_batch_size`
entries a call, one call of the tick's budget each. The vectors are kept beside the journal
(`Journal.embedded`), so a restart does not embed anything again; a new model embeds everything
again, the old vectors let go. Nothing is embedded while awake: a turn costs no extra call, and
recent entries are found by their words (and are in the conversation history anyway).

A failed call changes nothing: the same entries are asked for at the next tick.

"""

from collections.abc import Generator
from datetime import datetime

from ..agent.brain import Brain
from ..llm.embedding_roles import DOCUMENT
from ..memory.semantic import pack_vector
from .steps import Budget, StepResult


def embed_entries(brain: Brain, now: datetime, budget: Budget) -> StepResult | Generator:
    """Embed the journal entries that have no vector yet, within the tick's budget.

    Args:
        brain (Brain): The sleeping assistant's brain.
        now (datetime): The current time. Unused: embeddings do not age.
        budget (Budget): The model calls this tick may still make (one a batch).

    Returns:
        StepResult or Generator: Done at once without an embeddings model; else work that
            yields the embedding calls and returns a `StepResult` with how many entries were
            embedded (done when none is left).

    """
    if not brain.embedding_model:
        return StepResult(True, {"skipped": "no embeddings model"})
    return _embed(brain, budget)


def _embed(brain: Brain, budget: Budget) -> Generator:
    model = brain.embedding_model
    size = brain.config.embedding_batch_size
    journal = brain.journal
    embedded = 0
    while True:
        entries, through = journal.unembedded(model, size)
        if not entries:
            journal.embedded(model, {}, through)
            return StepResult(True, {"embedded": embedded})
        if not budget.take():
            return StepResult(False, {"embedded": embedded})
        vectors = yield brain.embed([journal.passage(entry) for entry in entries], DOCUMENT)
        packed = {entry["id"]: pack_vector(vector) for entry, vector in zip(entries, vectors)}
        journal.embedded(model, packed, through)
        embedded += len(packed)
