"""
The memory part of a live assistant: `character.assistant.memory`.

It is the pure core's memory (`memory_api.AssistantMemory`, over the brain the handler keeps),
holding the builder's view (`admin`, a `memory_admin.MemoryAdmin`), with the few things only a
running game can do: a search whose query is embedded off the reactor; a rollback and
forgetting a person wrapped around the admin's (refused while a turn is under way, run in one
database transaction, after which the handler builds its brain again from the store); export
to and import from a memory file in the game's folder.

It is given the handler (the door it hangs from) and uses only what the door offers; it
imports nothing of it.

"""

from twisted.internet import defer

from ..driver import default_runner
from ..errors import Refused
from ..llm.chat import LLMError
from .lore_book import game_lore
from ..memory_api import AssistantMemory
from .storage import MEMORY_CATEGORY, step_transaction


class LiveMemory(AssistantMemory):
    """`AssistantMemory` over a live assistant's brain; its `admin` is the builders'.

    Args:
        assistant (AssistantHandler): The assistant's handler (its brain, clock, runner and
            long-term store factory, and whether a turn is in flight).

    """

    def __init__(self, assistant):
        self.assistant = assistant
        self._hold(lambda: assistant.brain, assistant.now)

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
            Deferred: Fires with `Recalled` items, best first (found by words alone when the
                embeddings model fails: a failed call is counted in the assistant's usage).

        Raises:
            Refused: An empty or oversized query.

        """
        admin = self.admin
        query = admin.search_query(query)
        brain = self.brain
        runner = self.assistant.runner or default_runner()
        limit = brain.config.memory_search_limit

        def reranked(semantic=None):
            pool = admin.search(query, semantic, limit=brain.recall_pool(limit))
            work = brain.rerank(query, pool)
            if work is None:
                return pool[:limit]
            # a failed reranker leaves the first pass's order
            return runner(work).addCallbacks(
                lambda scores: brain.reranked(pool, scores, limit),
                lambda failure: brain.reranked(pool, None, limit),
            )

        def by_words(failure):
            failure.trap(LLMError)
            brain.usage().record_error(failure.value.kind)  # words alone still find, as in a turn
            return reranked()

        work = brain.semantic_search(query)
        if work is None:
            return defer.maybeDeferred(reranked)
        return runner(work).addCallbacks(reranked, by_words)

    def rollback_plan(self, sleep_id: str | None = None) -> dict:
        """What rolling back a sleep would change (see `MemoryAdmin.rollback_plan`), refused
        while a turn is under way; a game's own long-term store (the handler's
        `make_long_term_store`) gets the builders' corrections made again through it.

        Args:
            sleep_id (str, optional): The sleep, such as "s3"; by default the latest one.

        Returns:
            dict: The plan.

        Raises:
            Refused: It is asleep or busy, or the sleep cannot be rolled back.

        """
        self._not_busy()
        return self.admin.rollback_plan(sleep_id, self.assistant.make_long_term_store)

    def rollback(
        self,
        sleep_id: str | None = None,
        by: str = "builder",
        expected: list | None = None,
        expected_kept: list | None = None,
    ) -> dict:
        """Roll a sleep back (see `MemoryAdmin.rollback`), all of it in one database
        transaction, then have the handler build its brain again from the restored memory.

        Args:
            sleep_id (str, optional): The sleep, such as "s3"; by default the latest one.
            by (str, optional): Who ordered it (kept in the sleep history).
            expected (list, optional): The sleeps the builder was shown it would undo.
            expected_kept (list, optional): The corrections they were shown it keeps.

        Returns:
            dict: What changed, as `rollback_plan` gives it.

        Raises:
            Refused: As `rollback_plan`, or what was shown changed; nothing is changed.

        """
        self._not_busy()
        assistant = self.assistant
        with step_transaction():  # all of it or nothing
            summary, unrecorded = self.admin.rollback(
                sleep_id, by, expected, expected_kept, assistant.make_long_term_store
            )
        for undone in unrecorded:
            assistant.log("warn", f"sleep {undone} was rolled back but has no record to note it in")
        # every cache of memory (journal, long-term, links, the recall index) is rebuilt from
        # the restored store at the next use
        assistant.forget_brain()
        return summary

    # ---- export and import (`memory.transfer`, files by `transfer_files`) ----------------------

    def memory_replaced(self) -> None:
        """Its memory was replaced (an import): the handler builds its brain again at the next
        use, from what is stored."""
        self.assistant.forget_brain()

    def forget_person(self, person, by, reason="", keys=(), names=(), lore=None):
        """Forget everything about a person (see `MemoryAdmin.forget_person`), refused while a
        turn is under way, in one database transaction; the game's lore book is read for what
        remains that names them. The brain is built again from the store at its next use.

        Args:
            person (str or None): Their name or key, as typed; None when `keys` and `names`
                say who.
            by (str): Who forgets them.
            reason (str, optional): Why.
            keys (list, optional): Their keys besides (`#12`, `account#3`).
            names (list, optional): Their names and aliases besides.
            lore (LoreBook, optional): The lore book; the game's by default.

        Returns:
            PersonForgotten: What was forgotten and what remains.

        Raises:
            Refused: Busy, or nobody of that name is known; nothing is changed.

        """
        self._not_busy()
        if lore is None:
            lore = game_lore(make=False)  # a game without lore has no lore script
        with step_transaction():  # all of it or nothing
            report = self.admin.forget_person(person, by, reason, keys, names, lore)
        self.assistant.forget_brain()
        return report

    def export_to(self, path: str) -> tuple[str, dict[str, int]]:
        """Write everything the assistant remembers to a new memory file in the game's folder
        (no secret, no embedding: see `memory.transfer`).

        Args:
            path (str): The file's path, relative to the game's memory folder
                (`transfer_files.EXPORT_FOLDER`; a new .json file).

        Returns:
            tuple: (the path written, the records by kind).

        Raises:
            Refused: A bad path, a file already there, or a game's own long-term store.

        """
        from . import game_settings
        from ..conf import config_keys
        from ..memory.transfer import counts, uncovered
        from .transfer_files import game_identity, write_memory_file

        assistant = self.assistant
        obj = assistant.obj
        data = self.admin.export_data(
            {
                "name": obj.key,
                "dbref": obj.dbref,
                "persona": obj.db.persona or "",
                "settings": assistant.overrides(),
            },
            game_identity(),
            game_settings.secrets(),
            config_keys(),
        )
        written = write_memory_file(path, data)
        keys = obj.db_attributes.filter(db_category=MEMORY_CATEGORY).values_list(
            "db_key", flat=True
        )
        missing = uncovered(keys)
        if missing:
            # a kind of memory newer than this schema version: said, never left out unseen
            assistant.log(
                "warn",
                f"its memory file {written.name} leaves out stored values of no known kind: "
                f"{', '.join(missing[:10])}",
            )
        return str(written), counts(data)

    def import_plan_from(self, path: str, replace: bool = False) -> dict:
        """Read and check a memory file, and what importing it would do (`import_plan`),
        changing nothing; its settings are checked as `@assistant/set` checks them.

        Args:
            path (str): The file's path, relative to the game's folder.
            replace (bool): Whether the memory it holds now may be replaced.

        Returns:
            dict: As `MemoryAdmin.import_plan`, with "path".

        Raises:
            Refused: A bad path or file (naming what and where), busy or asleep, or memory
                held without `replace`.

        """
        from . import game_settings
        from ..conf import ConfigError, resolve_config
        from ..memory.transfer import TransferError
        from .transfer_files import game_identity, read_memory_file

        self._not_busy()
        raw = read_memory_file(path)
        plan = self.admin.import_plan(raw, game_identity()["id"], replace)
        try:
            resolve_config(game_settings.game_defaults(), plan["file"].assistant.settings)
        except ConfigError as err:
            raise TransferError(
                f"The file was not imported, nothing was changed: assistant.settings: {err}"
            ) from None
        return {**plan, "path": str(path).strip()}

    def import_from(self, plan: dict) -> dict[str, int]:
        """Replace the assistant's memory, persona and own settings with a checked file's
        (`import_plan_from`), in one database transaction, then build its brain again.

        Args:
            plan (dict): What `import_plan_from` returned.

        Returns:
            dict: The records written, by kind.

        Raises:
            Refused: A turn began since, or it fell asleep; nothing is changed.

        """
        from ..state import CONFIG_OVERRIDES

        self._not_busy()
        assistant = self.assistant
        if self.brain.asleep:
            raise Refused(f"{assistant.obj.key} fell asleep since; wake it, then import again.")
        parsed = plan["file"]
        obj = assistant.obj
        old_keys = list(
            obj.db_attributes.filter(db_category=MEMORY_CATEGORY).values_list("db_key", flat=True)
        )
        with step_transaction():  # all of it or nothing
            written = self.admin.import_memory(plan, old_keys)
            if parsed.assistant.persona:
                obj.db.persona = parsed.assistant.persona
            assistant.script.attributes.add(CONFIG_OVERRIDES, dict(parsed.assistant.settings))
        # every cache of memory (journal, long-term, links, the recall index) is built again
        # from what was imported at the next use
        obj.attributes.reset_cache()
        assistant.forget_brain()
        assistant.script.ensure_ticker(assistant.tick_rate())
        return written
