"""
The memory part of a live assistant: `character.assistant.memory`.

It is the pure core's builder API (`memory_api.AssistantMemory`, over the brain the handler
keeps) with the few things only a running game can do: a search whose query is embedded off
the reactor, and a rollback refused while a turn is under way, run in one database transaction,
after which the handler builds its brain again from the restored memory.

It is given the handler (the door it hangs from) and uses only what the door offers; it
imports nothing of it.

"""

from twisted.internet import defer

from .driver import default_runner
from .errors import Refused
from .memory_api import AssistantMemory
from .storage import step_transaction


class LiveMemory(AssistantMemory):
    """`AssistantMemory` over a live assistant's brain.

    Args:
        assistant (AssistantHandler): The assistant's handler (its brain, clock, runner and
            long-term store factory, and whether a turn is in flight).

    """

    def __init__(self, assistant):
        self.assistant = assistant
        self._brain_source = lambda: assistant.brain
        self._now = assistant.now

    def _not_busy(self) -> None:
        if self.assistant.in_flight:
            raise Refused(
                f"{self.assistant.obj.key} is in the middle of a turn; try again in a moment."
            )

    def search_deferred(self, query: str):
        """Everything the assistant remembers for `query`, ranked as recall ranks it (a
        builder sees every audience), with the query's embedding (when an embeddings model is
        configured) and the reranking model's look (when one is) off the reactor.

        Args:
            query (str): What to look for.

        Returns:
            Deferred: Fires with `Recalled` items, best first.

        Raises:
            Refused: An empty or oversized query.

        """
        query = self.search_query(query)
        brain = self.brain
        runner = self.assistant.runner or default_runner()
        limit = brain.config.memory_search_limit

        def reranked(semantic=None):
            pool = self.search(query, semantic, limit=brain.recall_pool(limit))
            work = brain.rerank(query, pool)
            if work is None:
                return pool[:limit]
            # a failed reranker leaves the first pass's order
            return runner(work).addCallbacks(
                lambda scores: brain.reranked(pool, scores, limit),
                lambda failure: brain.reranked(pool, None, limit),
            )

        work = brain.semantic_search(query)
        if work is None:
            return defer.maybeDeferred(reranked)
        return runner(work).addCallback(reranked)

    def rollback_plan(self, sleep_id: str | None = None, long_term=None) -> dict:
        """What rolling back a sleep would change (see `MemoryAdmin.rollback_plan`), refused
        while a turn is under way; a game's own long-term store gets the builders'
        corrections made again through it.

        Args:
            sleep_id (str, optional): The sleep, such as "s3"; by default the latest one.
            long_term (callable, optional): Ignored: the handler's `make_long_term_store`.

        Returns:
            dict: The plan.

        Raises:
            Refused: It is asleep or busy, or the sleep cannot be rolled back.

        """
        self._not_busy()
        return super().rollback_plan(sleep_id, self.assistant.make_long_term_store)

    def rollback(
        self,
        sleep_id: str | None = None,
        by: str = "builder",
        expected: list | None = None,
        expected_kept: list | None = None,
        long_term=None,
    ) -> dict:
        """Roll a sleep back (see `MemoryAdmin.rollback`), all of it in one database
        transaction, then have the handler build its brain again from the restored memory.

        Args:
            sleep_id (str, optional): The sleep, such as "s3"; by default the latest one.
            by (str, optional): Who ordered it (kept in the sleep history).
            expected (list, optional): The sleeps the builder was shown it would undo.
            expected_kept (list, optional): The corrections they were shown it keeps.
            long_term (callable, optional): Ignored: the handler's `make_long_term_store`.

        Returns:
            dict: What changed, as `rollback_plan` gives it.

        Raises:
            Refused: As `rollback_plan`, or what was shown changed; nothing is changed.

        """
        self._not_busy()
        assistant = self.assistant
        with step_transaction():  # all of it or nothing
            summary, unrecorded = super().rollback(
                sleep_id, by, expected, expected_kept, assistant.make_long_term_store
            )
        for undone in unrecorded:
            assistant.log("warn", f"sleep {undone} was rolled back but has no record to note it in")
        # every cache of memory (journal, long-term, links, the recall index) is rebuilt from
        # the restored store at the next use
        assistant.forget_brain()
        return summary
