"""
What builders read and correct of an assistant's memory, in the pure core.

`MemoryAdmin` is held by `memory_api.AssistantMemory` as its `admin`: over a game's live brain
it is `character.assistant.memory.admin`, which `@assistant` and the dashboard use; over a brain
of its own (`MemoryAdmin(brain)`), a game's tests or an outside tool can use the same. It reads
without writing, pages what grows (journal, memories, people, reviews), and every correction
either happens or raises `errors.Refused`, naming what was wrong and what is allowed, and
changing nothing.

What it covers: searching memory, a builder's corrections (forget, trust), forgetting
a person, the sleep debt,
snapshots and rolling a sleep back, and export and import of the whole memory as a file
(`memory.transfer`). What builders edit of one kind alone is that kind's (`memory.kinds`),
reached with `kind(name)`: `admin.kind("reminders").add(...)`, `admin.kind("core_notes").set(...)`,
`admin.kind("relationships").set(...)`.
A rollback here is the core's part: the handler runs it in one database transaction and builds
its brain again after it.

"""

import re
from collections.abc import Callable, Sequence
from datetime import datetime

from .agent.brain import Brain
from .clock import to_iso, utcnow
from .debt import SleepDebt
from .errors import Refused
from .memory.recalled import Recalled
from .memory.forget_person import PersonForgotten
from .memory.kinds import BY_NAME, REGISTRY
from .memory.person_forgetting import PersonForgetting, unsay
from .memory.review import parse_trust
from .memory.semantic import EmbeddedMemoryStore
from .memory.snapshots import Snapshots
from .memory import transfer
from .records import MAX_QUERY_CHARS
from .memory.sleep_history import SleepHistory
from .state import CORE_CONSOLIDATION


class MemoryAdmin:
    """A builder's view of one assistant's memory, and the corrections they may make.

    Held, not inherited: `memory_api.AssistantMemory` holds one as `admin`, and so does the
    live `character.assistant.memory` (`live_memory.LiveMemory`), which wraps the few calls
    a running game times its own way (a rollback, forgetting a person: off a turn, in one
    transaction).

    Args:
        brain (Brain or callable): The brain, or `brain()` giving the current one (a game's
            handler builds it again when its settings change).
        now (callable, optional): `now()` -> the current real time; the system clock by
            default.
        replaced (callable, optional): Called once the whole memory was replaced (an import):
            the holder builds its brain again (the brain's caches of memory are stale).

    """

    def __init__(
        self,
        brain: "Brain | Callable[[], Brain]",
        now: Callable[[], datetime] = utcnow,
        replaced: Callable[[], None] | None = None,
    ):
        self._brain_source = brain if callable(brain) else (lambda: brain)
        self._now = now
        self._replaced = replaced

    @property
    def brain(self) -> Brain:
        """The assistant's brain (the current one, over a live assistant)."""
        return self._brain_source()

    def now(self) -> datetime:
        """The current real time."""
        return self._now()

    def kind(self, name: str):
        """What builders read and correct of one kind of memory (`memory.kinds`), bound to
        the current brain: `kind("journal")` pages and filters the journal,
        `kind("long_term")` pages the memories, `kind("links")` lists the strongest links,
        `kind("profiles")` reads people's profiles, `kind("relationships")` reads and sets
        relationships, `kind("core_notes")` reads, pins
        and removes core notes, `kind("reminders")` lists, adds and removes reminders,
        `kind("review_log")` lists the corrections, `kind("gossip_log")` who told whom what,
        `kind("sleep_history")` the last sleeps.

        Args:
            name (str): The kind's name, as `memory.kinds.BY_NAME` has it.

        Returns:
            object: The kind's builder operations (`Kind.builder`).

        Raises:
            Refused: No kind of that name has builder operations.

        """
        kind = BY_NAME.get(name)
        bound = kind.builder(self.brain, self.now) if kind is not None else None
        if bound is None:
            allowed = ", ".join(
                k.name for k in REGISTRY if k.builder(self.brain, self.now) is not None
            )
            raise Refused(
                f"'{str(name)[:40]}' is not a kind builders edit here; one of: {allowed}."
            )
        return bound

    # ---- searching memory ---------------------------------------------------------------------

    def searches_by_meaning(self) -> bool:
        """Whether a search also looks for what is near in meaning (an embeddings model is
        configured), besides the words.

        Returns:
            bool: True with embeddings.

        """
        return bool(self.brain.embedding_model)

    def search_query(self, query: str) -> str:
        """A builder's memory query, checked.

        Args:
            query (str): What to look for.

        Returns:
            str: The query, stripped.

        Raises:
            Refused: An empty or oversized query.

        """
        query = (query or "").strip()
        if not query or len(query) > MAX_QUERY_CHARS:
            raise Refused(
                f"A query is 1 to at most {MAX_QUERY_CHARS} characters; this one has {len(query)}."
            )
        return query

    def search(self, query: str, semantic=None, limit: int | None = None) -> list[Recalled]:
        """Everything the assistant remembers for `query`, ranked as recall ranks it, from all
        audiences (a builder sees everything).

        Args:
            query (str): What to look for (`search_query` checks it).
            semantic (list, optional): What `brain.semantic_search(query)` found, when an
                embeddings model is configured (its call runs off the reactor).
            limit (int, optional): How many; default `memory_search_limit`.

        Returns:
            list: `Recalled` items, best first.

        Raises:
            Refused: An empty or oversized query.

        """
        brain = self.brain
        return brain.recall(
            self.search_query(query),
            now=self.now(),
            served=None,
            limit=brain.config.memory_search_limit if limit is None else limit,
            semantic=semantic,
        )

    # ---- a builder's corrections ----------------------------------------------------------------

    def forget(self, memory_id: str, by: str, reason: str = "") -> list[str]:
        """Forget a memory (a builder's correction, recorded).

        Args:
            memory_id (str): The memory's id, e.g. j000012 or m000003.
            by (str): Who decided.
            reason (str, optional): Why.

        Everything drawn from it goes too, and the words leave the snapshots kept for a
        rollback (`memory.snapshots.Snapshots.scrub`): a rollback would forget them again
        anyway, and they are not kept unread either.

        Returns:
            Forgotten: The ids of what was forgotten, the memory first (`memory.review`); its
                `rewritten` lists what was kept with the words taken out.

        Raises:
            Refused: No memory has that id.

        """
        gone = self.brain.review.forget(memory_id, self.now(), by, reason)
        Snapshots(self.brain.state).scrub(gone, gone.words)
        gone.rewritten += unsay(self.brain, gone.words)
        return gone

    # ---- forgetting a person (`memory.person_forgetting`) ----------------------------------

    def find_person(self, person: str) -> tuple[list[str], list[str]]:
        """Someone it knows, by name or key: their keys and names
        (`memory.person_forgetting.PersonForgetting.find`, which says what it raises)."""
        return PersonForgetting(self.brain, self.now).find(person)

    def forget_person_plan(self, person: str) -> dict:
        """What forgetting a person would forget, without changing anything: "keys", "names"
        and "found" (`memory.person_forgetting.PersonForgetting.plan`)."""
        return PersonForgetting(self.brain, self.now).plan(person)

    def forget_person(
        self,
        person: str | None,
        by: str,
        reason: str = "",
        keys: Sequence[str] = (),
        names: Sequence[str] = (),
        lore=None,
    ) -> PersonForgotten:
        """Forget everything about a person (recorded; a rollback does not bring them back),
        and every trace of theirs (`memory.person_forgetting.PersonForgetting.forget`, whose
        docstring says what each argument is, what is returned and what is refused)."""
        return PersonForgetting(self.brain, self.now).forget(person, by, reason, keys, names, lore)

    def set_trust(self, memory_id: str, level: str, by: str) -> tuple[float, float | None]:
        """Set how far a memory is trusted (recorded): (the new trust, the one it had set).

        Args:
            memory_id (str): j000012, m000003, #12/o3 ...
            level (str): low, medium, high or a number from 0 to 1.
            by (str): Who decided.

        Returns:
            tuple: (the new trust, the trust that was set before or None).

        Raises:
            Refused: A bad id or level.

        """
        trust = parse_trust(level)
        return trust, self.brain.review.set_trust(memory_id, trust, self.now(), by)

    # ---- sleep debt -------------------------------------------------------

    def debt(self) -> dict:
        """The assistant's sleep debt.

        Returns:
            dict: "points", "level", "turns_since_sleep", "last_sleep" (ISO or None) and
                "last_reason" (the last builder's reason, or None).

        """
        debt = SleepDebt(self.brain.state)
        return {
            "points": debt.points,
            "level": debt.level,
            "turns_since_sleep": debt.turns_since_sleep,
            "last_sleep": debt.last_sleep(),
            "last_reason": debt.last_reason(),
        }

    def add_debt(self, points: int, reason: str) -> dict:
        """Add sleep debt by hand: a builder's account of a day the assistant did not log.

        Args:
            points (int): 1 to 3.
            reason (str): Why.

        Returns:
            dict: The debt after (as `debt()` gives it).

        Raises:
            Refused: Points outside 1-3 or no reason; nothing is changed.

        """
        SleepDebt(self.brain.state).add(points, reason)
        return self.debt()

    # ---- snapshots and rollback -----------------------------------------------------------------

    def snapshots(self) -> list[dict]:
        """The memory snapshots kept, newest first (see `ai_assistant.memory.snapshots`).

        Returns:
            list: Dicts with "sleep_id", "started", "keys" and "complete".

        """
        return list(reversed(Snapshots(self.brain.state).kept()))

    def rollback_plan(self, sleep_id: str | None = None, long_term: Callable | None = None) -> dict:
        """What rolling back a sleep would change, without changing anything.

        Args:
            sleep_id (str, optional): The sleep, such as "s3"; by default the latest sleep
                with a snapshot.
            long_term (callable, optional): Makes the long-term store over a store
                (`AssistantHandler.make_long_term_store`): a game's own store gets the
                builders' corrections made again through it.

        Returns:
            dict: "sleep_id", "sleeps" (the ids undone, newest first), "values" (stored values
                that change), "changes" (counts, see `memory.snapshots.SUMMARY_LABELS`) and
                "kept" (the builder corrections made since, which the rollback keeps: see
                `memory.review.MemoryReview.reapply`).

        Raises:
            Refused: It is asleep, the id is malformed, or there is no snapshot of that sleep
                that can be rolled back.

        """
        brain = self.brain
        name = brain.name
        if brain.asleep:
            raise Refused(
                f"{name} is asleep: a sleep under way is still changing its memory. Wake it "
                f"first (@assistant/wake {name}), then roll back."
            )
        snapshots = Snapshots(brain.state)
        if sleep_id is None or not sleep_id.strip():
            kept = snapshots.kept()
            if not kept:
                raise Refused(
                    f"{name} has no memory snapshot: one is taken when a sleep begins "
                    f"(snapshots_kept={brain.config.snapshots_kept})."
                )
            sleep_id = kept[-1]["sleep_id"]
        sleep_id = sleep_id.strip().lower()
        if not re.fullmatch(r"s[0-9]{1,9}", sleep_id):
            raise Refused(
                f"'{sleep_id[:20]}' is not a sleep id: one looks like s3 (see @assistant/sleeps "
                f"{name})."
            )
        plan = snapshots.preview(sleep_id, brain.memory_store.inner, long_term=long_term)
        return {"sleep_id": sleep_id, **plan}

    def rollback(
        self,
        sleep_id: str | None = None,
        by: str = "builder",
        expected: list | None = None,
        expected_kept: list | None = None,
        long_term: Callable | None = None,
    ) -> tuple[dict, list[str]]:
        """Restore the assistant's memory as it was when a sleep began, undoing that sleep and
        every later one (and what it learned awake since), except the builders' corrections
        made since (forgotten memories stay forgotten, trust settings stay set, core notes
        pinned stay pinned and removed ones stay removed; the review log is never rolled
        back). Run it in one transaction: all of it, or nothing.

        Args:
            sleep_id (str, optional): The sleep, such as "s3"; by default the latest sleep
                with a snapshot.
            by (str, optional): Who ordered it (kept in the sleep history).
            expected (list, optional): The sleeps the builder was shown it would undo (as
                `rollback_plan` gave them); refused when that changed since (a sleep came and
                went while they answered).
            expected_kept (list, optional): The "seq" of each correction they were shown it
                keeps; refused when that changed since (a memory forgotten, its trust set, or
                a core note pinned or removed while they answered: they confirm only what they
                were shown).
            long_term (callable, optional): As for `rollback_plan`.

        Returns:
            tuple: (what changed, as `rollback_plan` gives it; the sleeps undone that had no
                record left to note it in). The brain's caches of memory are stale after it:
                build it again.

        Raises:
            Refused: As `rollback_plan`, or what was shown changed; nothing is changed.

        """
        plan = self.rollback_plan(sleep_id, long_term)
        if expected is not None and list(plan["sleeps"]) != list(expected):
            raise Refused(
                f"the sleeps it would undo changed since you were asked "
                f"({', '.join(expected)} -> {', '.join(plan['sleeps'])}); ask again."
            )
        kept = [correction["seq"] for correction in plan["kept"]]
        if expected_kept is not None and kept != list(expected_kept):
            raise Refused(
                "the builders' corrections it would keep changed since you were asked (a "
                "memory was forgotten or its trust set, or a core note pinned or removed); ask "
                "again."
            )
        brain = self.brain
        summary = Snapshots(brain.state).rollback(
            plan["sleep_id"], brain.memory_store.inner, long_term=long_term
        )
        history = SleepHistory(brain.state)
        unrecorded = [
            undone
            for undone in summary["sleeps"]
            if not history.mark(undone, rolled_back={"at": to_iso(self.now()), "by": by})
        ]
        # core memory's consolidation marks how far it read the memories, which may now be
        # fewer: it weighs them afresh at the next sleep
        brain.state.delete(CORE_CONSOLIDATION)
        return {"sleep_id": plan["sleep_id"], **summary}, unrecorded

    # ---- export and import ------------------------------------------------------------------

    def _own_long_term(self) -> None:
        if not isinstance(self.brain.long_term, EmbeddedMemoryStore):
            raise transfer.TransferError(
                "its long-term memories live in the game's own store (make_long_term_store), "
                "which a memory file does not cover; back that store up with its own tools."
            )

    def export_data(
        self, assistant: dict, game: dict, secrets: list[str], settings_keys: list[str]
    ) -> dict:
        """Everything the assistant remembers, as a memory file's data (`memory.transfer`).

        Args:
            assistant (dict): "name", "dbref", "persona" and "settings" (its own overrides,
                filtered here: `transfer.exported_settings`).
            game (dict): "id" and "name" of this game.
            secrets (list): The game's secrets, kept out of the file.
            settings_keys (list): The configuration keys an override may have.

        Returns:
            dict: The file's data.

        Raises:
            Refused: Its long-term memories live in a game's own store.

        """
        self._own_long_term()
        brain = self.brain
        assistant = {
            **assistant,
            "settings": transfer.exported_settings(
                assistant.get("settings") or {}, settings_keys, secrets
            ),
        }
        return transfer.export_memory(
            brain.memory_store,
            brain.state,
            assistant=assistant,
            game=game,
            exported_at=to_iso(self.now()),
            secrets=secrets,
        )

    def import_plan(self, raw: bytes | str, game_id: str, replace: bool = False) -> dict:
        """Check a memory file, and what importing it would do, changing nothing.

        Args:
            raw (bytes or str): The file's content.
            game_id (str): This game's id (a file from another game is re-keyed).
            replace (bool): Whether memory it holds now may be replaced.

        Returns:
            dict: "file" (the checked `MemoryFile`), "counts" (its records by kind), "held"
                (what the assistant holds now, by kind), "rekey" (dbrefs re-keyed, for a file
                from another game: `transfer.rekey_map`; empty otherwise).

        Raises:
            Refused: The file is bad (naming what and where), it is asleep, its long-term
                memories live in a game's own store, or it holds memory and `replace` is False.

        """
        brain = self.brain
        if brain.asleep:
            raise Refused(
                f"{brain.name} is asleep: a sleep under way is still changing its memory. "
                f"Wake it first (@assistant/wake {brain.name}), then import."
            )
        self._own_long_term()
        parsed = transfer.parse_file(raw)
        held = transfer.held(brain.memory_store, brain.state)
        if held and not replace:
            raise Refused(
                f"{brain.name} already remembers {transfer.describe_counts(held)}; an import "
                "replaces all of it. Use /replace to replace it (export it first to keep a copy)."
            )
        mapping = {} if transfer.same_game(parsed, game_id) else transfer.rekey_map(parsed)
        return {
            "file": parsed,
            "counts": transfer.counts(parsed.model_dump()),
            "held": held,
            "rekey": mapping,
            "replace": replace,
        }

    def import_memory(self, plan: dict, old_keys: list[str]) -> dict[str, int]:
        """Replace the assistant's memory with a checked file's (`import_plan`). Run it in one
        transaction, and build the brain again after it (its caches are stale).

        Args:
            plan (dict): What `import_plan` returned.
            old_keys (list): Every key its memory store holds now.

        Returns:
            dict: The records written, by kind.

        Raises:
            Refused: It came to remember something since `import_plan`, which was not asked to
                replace; nothing is changed.

        """
        brain = self.brain
        if not plan.get("replace") and transfer.held(brain.memory_store, brain.state):
            raise Refused(
                f"{brain.name} has learned something since you were asked; import again, with "
                "/replace to replace it."
            )
        written = transfer.write_memory(
            plan["file"], brain.memory_store.inner, brain.state, old_keys, plan["rekey"]
        )
        # how far core memory's consolidation had read was of the memory replaced
        brain.state.delete(CORE_CONSOLIDATION)
        self.memory_replaced()
        return written

    def memory_replaced(self) -> None:
        """The whole memory was replaced (an import): the brain's caches of it (journal,
        long-term memories, the recall index) are stale; the holder builds its brain again."""
        if self._replaced is not None:
            self._replaced()
