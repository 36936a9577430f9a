"""
An assistant's memory without Evennia: write it, let it sleep on it, ask it what it recalls.

`AssistantMemory` is the pure-core entry point to the same memory an assistant has in a game:
the journal, long-term memories, people, links and reflections, over any `KeyValueStore` (an
in-memory `DictStore` by default). It is what an outside evaluation calls, and what a game can
use in its own tests. See `docs/memory.md`.

    from datetime import datetime, timezone
    from ai_assistant.memory_api import AssistantMemory

    memory = AssistantMemory("Aria")
    day1 = datetime(2026, 11, 21, 10, 0, tzinfo=timezone.utc)
    memory.add_entry("Bob says his sister lives in Riverton.", speaker="Bob", time=day1,
                     place="Tavern", importance=6)
    memory.add_entry("Bob whispered that the vault code is 4-1-7.", speaker="Bob", time=day1,
                     audience=["Bob"])
    memory.consolidate(now=day1)          # a night's sleep: scoring, facts, links, people...
    for item in memory.recall("where does Bob's sister live?", k=5, audience=["Alice"]):
        print(item.score, item.text, item.entry_ids)   # the vault code is not among them

The same object over a game's live assistant is `character.assistant.memory`
(`AssistantMemory.over`). It holds what builders read and correct as `admin`
(`memory_admin.MemoryAdmin`: the journal and memories paged, people, forget, trust, core notes,
reminders, the sleep history, rollback), which `@assistant` and the dashboard use.

Consolidation needs a model for its structured calls (scoring, facts, profiles, reflection).
Pass any `ChatClient` (the `openai`-backed one, or `ai_assistant.testing.scripted.ScriptedModel`
with scripted answers); without one, the offline rehearsal rules answer (facts are the entries'
own words), which is deterministic and free.

"""

import dataclasses
import numbers
from collections.abc import Callable, Iterable
from datetime import datetime

from .agent.brain import Brain
from .clock import utcnow
from .conf import AssistantConfig
from .driver import drive, inline
from .errors import Refused
from .llm.chat import ChatClient, LLMError
from .memory.audience import Audience, person_key, served_by
from .memory.journal import Journal
from .memory.provenance import OBSERVED, SOURCES, spoken_source
from .memory.recalled import Recalled
from .memory.snapshots import describe
from .memory.store import DictStore, KeyValueStore
from .memory_admin import MemoryAdmin
from .sleep.tick import sleep_tick
from .tools.base import ToolRegistry

DEFAULT_MODEL_NAME = "offline-rehearsal"


class _NoWorld:
    """The world of an assistant that is not in a game: nobody is present."""

    def say(self, text): ...

    def emote(self, action): ...

    def whisper(self, target, text):
        return target

    def look(self, target):
        return ""

    def present(self):
        return []

    def present_people(self):
        return []

    def entity_key(self, name):
        return person_key(None, name), name


def _shown(value) -> str:
    """A value as a refusal names it (bounded: it may be anything)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _whole(value) -> bool:
    """Whether `value` is a whole number (numpy's too), not a truth value."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _moment(name: str, value) -> datetime:
    """`value`, a datetime with a timezone, or a refusal naming `name`."""
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise Refused(
            f"{name} must be a datetime with a timezone (datetime(2026, 5, 1, "
            f"tzinfo=timezone.utc)), not {_shown(value)}"
        )
    return value


def _text(name: str, value, optional: bool = False) -> str | None:
    """`value`, a string (or None when `optional`), or a refusal naming `name`."""
    if not isinstance(value, str) and not (optional and value is None):
        allowed = "a string or None" if optional else "a string"
        raise Refused(f"{name} must be {allowed}, not {type(value).__name__}")
    return value


def _names(name: str, value, optional: bool = False) -> list[str] | None:
    """`value`, a list of names or keys (or None when `optional`), or a refusal naming `name`
    (a string alone would be read as its letters)."""
    if value is None and optional:
        return None
    if not isinstance(value, str) and isinstance(value, Iterable):
        value = list(value)
        if all(isinstance(one, str) for one in value):
            return value
    allowed = "a list of names, such as ['Bob'], or None" if optional else "a list of names"
    raise Refused(f"{name} must be {allowed}, not {_shown(value)}")


def _keys(people: Iterable[str] | None) -> list[str] | None:
    """People as keys: `#12` and `name:...` are kept, a plain name becomes `name:<lower>`."""
    if people is None:
        return None
    return sorted({p if p.startswith(("#", "name:")) else person_key(None, p) for p in people if p})


class AssistantMemory:
    """One assistant's memory, in plain Python.

    Args:
        name (str): The assistant's name (facts about itself are never stored).
        store (KeyValueStore, optional): Where the memory lives; a new `DictStore` by default.
        config (AssistantConfig, optional): Its tunables (recall weights, thresholds...).
        model (ChatClient, optional): The model for consolidation; offline rules by default.
        model_name (str, optional): The model name sent with each request.
        embedding_model (str, optional): Embeddings model (the client's `embed` is used) for
            semantic recall and embedded memories.
        aliases (list, optional): Other names of the assistant.
        time_factor (float): Game seconds per real second (recency decays on game time).

    Over a live assistant, use `AssistantMemory.over(brain_source, now)` instead.

    Attributes:
        admin (MemoryAdmin): What builders read and correct of the same memory (the journal
            and memories paged, people, forget, trust, core notes, reminders, the sleep
            history, rollback, export and import).

    """

    def _hold(self, brain: Callable[[], Brain], now: Callable[[], datetime]) -> None:
        """Hold the brain's source, the clock and the builder's view over them."""
        self._brain_source = brain
        self._now = now
        # the admin asks through this object: a brain built again reaches it too
        self.admin = MemoryAdmin(lambda: self.brain, self.now, self.memory_replaced)

    @classmethod
    def over(
        cls, brain: "Brain | Callable[[], Brain]", now: Callable[[], datetime] | None = None
    ) -> "AssistantMemory":
        """The memory of an assistant that already has a brain (a game's, a test's).

        Args:
            brain (Brain or callable): The brain, or `brain()` giving the current one (a
                game's handler builds it again when its settings change).
            now (callable, optional): `now()` -> the current real time; the system clock by
                default.

        Returns:
            AssistantMemory: Over that brain; nothing is copied.

        """
        memory = cls.__new__(cls)
        memory._hold(brain if callable(brain) else (lambda: brain), now or utcnow)
        return memory

    @property
    def brain(self) -> Brain:
        """The assistant's brain (the current one, over a live assistant)."""
        return self._brain_source()

    def now(self) -> datetime:
        """The current real time (the clock it was given; the system's by default)."""
        return self._now()

    def __init__(
        self,
        name: str = "Assistant",
        *,
        store: KeyValueStore | None = None,
        config: AssistantConfig | None = None,
        model: ChatClient | None = None,
        model_name: str | None = None,
        embedding_model: str | None = None,
        aliases: Iterable[str] = (),
        time_factor: float = 1.0,
    ):
        if model is None:
            from .offline.rehearsal import RehearsalResponder
            from .offline.replies import ResponderClient

            model = ResponderClient(RehearsalResponder())
        brain = Brain(
            name=name,
            persona="",
            config=config or AssistantConfig(),
            model=model_name or DEFAULT_MODEL_NAME,
            state=DictStore(),
            memory_store=store if store is not None else DictStore(),
            world=_NoWorld(),
            registry=ToolRegistry([]),
            client_factory=lambda: model,
            aliases=list(aliases),
            embedding_model=embedding_model,
            time_factor=time_factor,
        )
        self._hold(lambda: brain, utcnow)

    def memory_replaced(self) -> None:
        """Its memory was replaced (an import): a brain built again over the same stores."""
        brain = self.brain
        fresh = dataclasses.replace(brain, memory_store=brain.memory_store.inner, long_term=None)
        self._brain_source = lambda: fresh

    @property
    def journal(self) -> Journal:
        """The assistant's journal, where entries are written before consolidation.

        Returns:
            Journal: The brain's journal.

        """
        return self.brain.journal

    def add_entry(
        self,
        content: str,
        *,
        time: datetime,
        speaker: str | None = None,
        place: str | None = None,
        importance: int | None = None,
        audience: Iterable[str] | None = None,
        about: Iterable[str] = (),
        source: str | None = None,
        account: str | None = None,
    ) -> str:
        """Write a journal entry; returns its id (`j000042`).

        Args:
            content (str): What happened or was said.
            time (datetime): When (timezone-aware).
            speaker (str, optional): Who said it, if someone did.
            place (str, optional): Where.
            importance (int, optional): 1-10; a heuristic score when omitted (sleep rescores).
            audience (list, optional): Who may know it (names or keys); None for public.
            about (list, optional): Who it is about (names or keys).
            source (str, optional): How it was learned (`memory.provenance.SOURCES`); by
                default a claim of the speaker (their own, when it is about them) or, without
                a speaker, an observation.
            account (str, optional): Who plays the speaker (their account): two characters
                of one account are one voice, and never corroborate each other.

        Returns:
            str: The entry's id.

        Raises:
            Refused: A time without a timezone, text that is not a string, a list of names
                given as one string, an unknown source, or an importance outside 1-10 (a
                `ValueError`, as every refusal is); nothing is written.

        """
        _text("content", content)
        _moment("time", time)
        for label, value in (("speaker", speaker), ("place", place), ("account", account)):
            _text(label, value, optional=True)
        audience = _names("audience", audience, optional=True)
        about = _names("about", about, optional=True) or []
        if source is not None and source not in SOURCES:
            raise Refused(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
        if importance is not None:
            if not _whole(importance) or not 1 <= importance <= 10:
                raise Refused(f"importance must be from 1 to 10, not {_shown(importance)}")
            importance = int(importance)
        about_keys = _keys(about) or []
        if source is None:
            source = OBSERVED
            if speaker:
                source = spoken_source(
                    instruction=False,
                    addressed=True,
                    about_speaker=about_keys == [person_key(None, speaker)],
                )
        entry = self.brain.journal.add(
            content,
            author=self.brain.name,
            now=time,
            location=place,
            source_type=source,
            heard_from=speaker,
            importance=importance,
            # an importance given here is kept; without one, sleep scores the entry
            scoring_method="given" if importance is not None else "heuristic",
            audience=_keys(audience),
            about=about_keys or ([person_key(None, speaker)] if speaker else []),
            voice=account if speaker else None,
        )
        return entry["id"]

    def observe(
        self,
        person: str,
        text: str,
        *,
        time: datetime,
        speaker: str | None = None,
        place: str | None = None,
        audience: Iterable[str] | None = None,
    ) -> str:
        """Note something about a person; returns the observation's id (`o3`).

        Args:
            person (str): Who the observation is about (a name).
            text (str): What was observed.
            time (datetime): When (timezone-aware).
            speaker (str, optional): Who said it; without one it counts as observed.
            place (str, optional): Where.
            audience (list, optional): Who may know it (names or keys); None for public.

        Returns:
            str: The observation's id.

        Raises:
            Refused: As `add_entry`; nothing is written.

        """
        _text("person", person)
        _text("text", text)
        _moment("time", time)
        _text("speaker", speaker, optional=True)
        _text("place", place, optional=True)
        audience = _names("audience", audience, optional=True)
        source = OBSERVED
        if speaker:
            source = spoken_source(
                instruction=False, addressed=True, about_speaker=speaker.lower() == person.lower()
            )
        profile = self.brain.entities.observe(
            person_key(None, person),
            person,
            text,
            now=time,
            author=self.brain.name,
            location=place,
            source_type=source,
            heard_from=speaker,
            audience=_keys(audience),
        )
        return profile["observations"][-1]["id"]

    def consolidate(self, now: datetime, max_ticks: int = 1000) -> list:
        """Sleep on it: scoring and consolidation, then every dreaming step, run to the end.

        Args:
            now (datetime): The time of the sleep.
            max_ticks (int): A bound on sleep ticks (each a batch of work).

        Returns:
            list: The report of each sleep tick.

        Raises:
            Refused: A time without a timezone.

        """
        _moment("now", now)
        lifecycle = self.brain.lifecycle
        if not self.brain.asleep:
            lifecycle.go_to_sleep(
                now, reason="consolidation", initiated_by="builder", enforce_safeguards=False
            )
        reports = []
        for _ in range(max_ticks):
            work = sleep_tick(self.brain, now)
            if work is None:
                break
            results: list = []
            drive(work, inline).addBoth(results.append)
            result = results[0]
            if hasattr(result, "raiseException"):
                result.raiseException()
            reports.append(result)
        lifecycle.wake_up(now, "consolidated")
        return reports

    def recall(
        self,
        query: str,
        *,
        k: int = 5,
        at: datetime | None = None,
        audience: Iterable[str] | None = None,
        people: Iterable[str] = (),
    ) -> list[Recalled]:
        """The top `k` memories for `query`.

        Args:
            query (str): What to recall.
            k (int): How many.
            at (datetime, optional): The moment of the recall: nothing made later is recalled,
                and recency counts back from it. Default: the time of the newest journal
                entry or observation of a person.
            audience (list, optional): The people the answer is for (names or keys): only what
                all of them may know is recalled. None: everything (a builder's view).
            people (list): People named or present (their memories get the person boost).

        Returns:
            list: `Recalled` items, best first; each has `text`, `score`, `scores`, `kind`,
                `entry_ids` (the journal entries it rests on) and `provenance`.

        Raises:
            Refused: A query that is not a string, a `k` that is not a whole number of 0 or
                more, a time without a timezone, or a list of names given as one string.

        """
        _text("query", query)
        if not _whole(k) or k < 0:
            raise Refused(f"k must be a whole number, 0 or more, not {_shown(k)}")
        k = int(k)
        if at is not None:
            _moment("at", at)
        audience = _names("audience", audience, optional=True)
        people = _names("people", people, optional=True) or []
        brain = self.brain
        if at is None:
            newest = brain.journal.recent(1)
            moments = [datetime.fromisoformat(newest[0]["created_at"])] if newest else []
            told = brain.index.newest_told()
            moments += [told] if told is not None else []
            at = max(moments) if moments else utcnow()
        served = None if audience is None else served_by(_keys(audience))
        semantic = None
        work = brain.semantic_search(query)
        if work is not None:
            try:
                semantic = work()
            except LLMError as err:
                brain.usage().record_error(err.kind)  # words alone still answer, as in a turn
        pool = brain.recall(
            query,
            now=at,
            served=served,
            people=[*people, *(_keys(people) or [])],
            limit=brain.recall_pool(k),
            semantic=semantic,
        )
        scores = None
        work = brain.rerank(query, pool)
        if work is not None:
            try:
                scores = work()
            except LLMError:
                pass  # a failed reranker leaves the first pass's order, as in a turn
        return brain.reranked(pool, scores, k)

    def memories(self) -> list[dict]:
        """Every long-term memory, oldest first.

        Returns:
            list: The memories as dicts.

        """
        return self.brain.long_term.all()

    def links(self) -> list[tuple[str, str, float]]:
        """Every memory link once, strongest first.

        Returns:
            list: `(id, id, strength)` tuples.

        """
        return self.brain.links.all()

    def reflections(self) -> list[dict]:
        """The reflections in the journal, oldest first.

        Returns:
            list: The reflection entries as dicts.

        """
        return [entry for entry in self.brain.journal.all() if Journal.is_reflection(entry)]

    def digests(self) -> list[dict]:
        """The daily digests (one per game day and audience), oldest first.

        Returns:
            list: The digests as dicts (day, summary, people_met, open_threads, new_facts,
                audience, entry_ids, ...).

        """
        return self.brain.digests.all()

    @staticmethod
    def describe_rollback(summary: dict) -> list[str]:
        """What a rollback changes, or changed, in lines of text (`memory.snapshots.describe`),
        for a display that takes data and returns text.

        Args:
            summary (dict): As `rollback_plan` or `rollback` gives it.

        Returns:
            list: One line per kind of change, then one per builder correction kept (at most
                ten, then how many more).

        """
        return describe(summary)


__all__ = ["AssistantMemory", "Audience"]
