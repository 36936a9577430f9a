"""
Recall weights: how the signals of a recalled memory are mixed into its score, and how far each
source is trusted.

As Generative Agents do, with weights and a decay that are configurable:

- relevance: how well it matches the query, 0-1 (`memory.recall` measures it: words, and
  meaning with embeddings);
- recency: `recall_recency_decay` to the power of the game hours since the memory was made;
- importance: its 1-10 score, scaled to 0-1;
- trust: how far its source is trusted (`trust_*`, a builder's setting, corroboration), never
  above the least trusted of what it was drawn from (`rests_on`: `memory.provenance`);
- people: a memory about someone named in the query or present gets a boost.

"""

from dataclasses import dataclass

from ..conf import AssistantConfig


@dataclass(frozen=True)
class RecallWeights:
    """How the signals are mixed (see the module doc), and how far each source is trusted.

    Their values, and their defaults, are the configuration's (`recall_weight_*`,
    `recall_recency_decay`, `trust_*`): `from_config` makes them.

    """

    relevance: float
    recency: float
    importance: float
    person: float
    decay: float
    trust: float
    trusts: tuple[tuple[str, float], ...]
    semantic: float

    @classmethod
    def from_config(cls, config: AssistantConfig) -> "RecallWeights":
        """The weights an assistant's configuration sets.

        Args:
            config (AssistantConfig): The configuration.

        Returns:
            RecallWeights: Its weights and trusts.

        """
        return cls(
            relevance=config.recall_weight_relevance,
            recency=config.recall_weight_recency,
            importance=config.recall_weight_importance,
            person=config.recall_weight_person,
            decay=config.recall_recency_decay,
            trust=config.recall_weight_trust,
            trusts=tuple(config.trusts().items()),
            semantic=config.recall_semantic_share,
        )

    def score(
        self, relevance: float, recency: float, importance: float, trust: float, person: float = 0.0
    ) -> float:
        """A recalled memory's score: its signals mixed by these weights (see the module doc).

        Args:
            relevance (float): How well it matches the query, 0-1.
            recency (float): How recent it is, 0-1 (1 for what is always current).
            importance (float): Its importance, 1-10.
            trust (float): Its trust, 0-1.
            person (float, optional): 1 when it is about someone the recall is about.

        Returns:
            float: The score.

        """
        return (
            self.relevance * relevance
            + self.recency * recency
            + self.person * person
            + self.standing(importance, trust)
        )

    def standing(self, importance: float, trust: float) -> float:
        """The part of a score that depends on neither the query nor the moment.

        Args:
            importance (float): The memory's importance, 1-10.
            trust (float): Its trust, 0-1.

        Returns:
            float: Weighted importance plus weighted trust.

        """
        return self.importance * importance / 10 + self.trust * trust

    def trust_of(self, doc) -> float:
        """A memory's trust: a builder's setting, else its source's (a claim two people made
        independently counts as corroborated).

        An unknown source gets the trust of "inferred" (0.5 if that is not set either).

        Args:
            doc (memory.indexing.Doc): The memory.

        Returns:
            float: Its trust, 0-1.

        """
        if doc.trust is not None:
            return doc.trust
        trusts = self._trust_table()
        source = "corroborated" if doc.corroborated else doc.provenance.get("source_type")
        trust = trusts.get(source or "observed", trusts.get("inferred", 0.5))
        # drawn from other memories: never trusted above the least trusted of them
        rests_on = doc.provenance.get("rests_on")
        return min(trust, trusts[rests_on]) if rests_on in trusts else trust

    def _trust_table(self) -> dict[str, float]:
        table = self.__dict__.get("_table")
        if table is None:
            table = dict(self.trusts)
            object.__setattr__(self, "_table", table)  # frozen, so cached by hand
        return table
