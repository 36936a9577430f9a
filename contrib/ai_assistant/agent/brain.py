"""
The brain: one assistant's parts as the core sees them, and the requests it sends the model.

The Evennia shell builds a `Brain` for each assistant (`ai_assistant.handler`) from plain parts:
its configuration, two key-value stores (the script's state, the character's memory), the
world its tools act on, its tools and a way to reach the model. Everything above it (the awake
turn, sleep work, compaction) takes a brain and changes the world and memory only through it.

Model calls are handed out as *blocking work*: zero-argument callables that do HTTP only. The
driver (`ai_assistant.driver`) runs them off the game's reactor thread and resumes the turn on
it.

"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .. import telemetry
from ..conf import AssistantConfig, ConfigError
from ..driver import BlockingWork, ModelWork
from ..budget import TokenBudget, billed_tokens
from ..events import EventQueue
from ..lifecycle import SLEEP, Lifecycle
from ..llm.calibration import Calibration
from ..llm.chat import ChatClient, ChatRequest, LLMError
from ..llm.embedding_roles import DOCUMENT, RolesResolver
from ..llm.tokens import TokenCounter
from ..llm.usage import UsageStats
from ..memory.core import CoreMemory
from ..memory.digests import DigestArchive
from ..memory.entities import EntityMemory
from ..memory.gossip import GossipLog
from ..memory.groups import GROUP, GroupShares
from ..memory.groups import merged as merged_shares
from ..memory.history import ConversationHistory, visible_history, wire_format
from ..memory.journal import Journal
from ..memory.links import MemoryLinks
from ..memory.lore import LORE, merged
from ..memory.recall import MemoryIndex
from ..memory.recall_weights import RecallWeights
from ..memory.recalled import Recalled
from ..memory.reranking import rerank_documents, rerank_query, reordered
from ..memory.review import MemoryReview
from ..memory.semantic import EmbeddedMemoryStore, MemoryStore
from ..memory.snapshots import RecordingStore, Snapshots
from ..memory.store import KeyValueStore
from ..prompt import SYSTEM_PROMPT, system_prompt
from ..memory.reminders import Reminders
from ..state import USAGE, USAGE_BY_HOUR
from ..memory.audience import Audience, message_audience, narrowest
from ..tools.base import TURN, Speaker, ToolContext, ToolRegistry, World
from . import model_calls

# hours of usage kept for the charts (a week)
HOURS_KEPT = 168
# the least room a context budget must leave for the conversation itself
MIN_CONVERSATION_TOKENS = 500


@dataclass
class Prompt:
    """A request to the model, and who may know what it holds.

    Attributes:
        request (ChatRequest): What is sent.
        audience (list or None): The narrowest audience of its parts (None: public).

    """

    request: ChatRequest
    audience: Audience


@dataclass
class Brain:
    """One assistant's parts.

    Args:
        name (str): The character's name.
        persona (str): Who it is, in a few sentences.
        config (AssistantConfig): Its resolved configuration.
        model (str): The chat model's name.
        state (KeyValueStore): The script's store (events, history, counters, sleep state).
        memory_store (KeyValueStore): The character's store (journal, people, memories);
            wrapped in a `RecordingStore` over `state`'s snapshots unless it is one already.
        world (World): What the tools act on.
        registry (ToolRegistry): Its tools.
        client_factory (callable): Returns the model client; called in worker threads only.
        embedding_client_factory (callable, optional): Returns the client embeddings are asked
            of, when they have an endpoint of their own; None: `client_factory`'s.
        aliases (list): Other names it answers to.
        location (str, optional): Where it is now.
        embedding_model (str, optional): Embeddings model for memory search; None for lexical
            search only.
        on_transition (callable, optional): `on_transition(mode, reason)` after falling asleep
            or waking (the shell swaps the ticker and tells the room).
        long_term (MemoryStore, optional): The long-term memory store; by default an
            `EmbeddedMemoryStore` on `memory_store`.
        prompt_template (str, optional): The system prompt, with `{name}` and `{persona}`.
        time_factor (float, optional): Game seconds per real second (recall's recency decays
            on game time).
        game_now (callable, optional): `game_now(now)` -> the game clock's time (the token
            budget counts game days); by default real time.
        lore (callable, optional): `lore(query, limit, weights)` -> the game's lore this
            assistant may know, recalled (`memory.lore.LoreBook.recall`); None: no lore.
        groups (object, optional): Its groups (`shell.groups.AssistantGroups`): `sharing()`
            (the names of those whose sharing is on), `size(group)` (their shares) and
            `recall(query, limit, weights, config)` (fellow members' shares,
            `memory.groups.GroupRecalled`); None: in none.

    """

    name: str
    persona: str
    config: AssistantConfig
    model: str
    state: KeyValueStore
    memory_store: KeyValueStore
    world: World
    registry: ToolRegistry
    client_factory: Callable[[], ChatClient]
    aliases: list[str] = field(default_factory=list)
    location: str | None = None
    embedding_model: str | None = None
    on_transition: Callable[[str, str], None] = lambda mode, reason: None
    long_term: MemoryStore | None = None
    prompt_template: str = SYSTEM_PROMPT
    time_factor: float = 1.0
    game_now: Callable[[datetime], datetime] = lambda now: now
    embedding_client_factory: Callable[[], ChatClient] | None = None
    # the game's lore this assistant may know: lore(query, limit, weights) -> recalled items
    # (`memory.lore.LoreBook.recall` for where it stands now); None: no lore
    lore: Callable[[str, int, RecallWeights], list[Recalled]] | None = None
    # its groups and what their members shared (`memory.groups`); None: in none
    groups: Any = None

    def __post_init__(self):
        if not isinstance(self.memory_store, RecordingStore):
            # every write to memory keeps what it replaced in the open snapshot (a rollback)
            self.memory_store = RecordingStore(self.memory_store, Snapshots(self.state))
        self.counter = TokenCounter(self.model)
        # what the server taught of its count of tokens and its window
        self.calibration = Calibration(self.state, self.model, self.counter, self.config)
        self.events = EventQueue(self.state)
        self.history = ConversationHistory(self.state, self.counter)
        self.journal = Journal(self.memory_store)
        # each entry notes its game time: the daily digest groups entries by game day
        self.journal.game_clock = lambda now: self.game_now(now)
        self.digests = DigestArchive(self.memory_store)
        self.entities = EntityMemory(self.memory_store)
        # who told whom what (`memory.gossip`)
        self.gossip_log = GossipLog(self.memory_store)
        # what it shared with its groups (`memory.groups`)
        self.group_shares = GroupShares(self.memory_store)
        self.core_memory = CoreMemory(self.memory_store, self.counter)
        self._usage: UsageStats | None = None
        self._tool_tokens: dict[str, int] = {}
        self._weights: RecallWeights | None = None
        # the configuration with group sharing off, for a brain in no sharing group
        self._unshared: tuple[AssistantConfig, AssistantConfig] | None = None
        self.lifecycle = Lifecycle(
            self.state,
            self.journal,
            self.config,
            lambda *args: self.on_transition(*args),
            game_now=lambda now: self.game_now(now),
            entities=self.entities,
            budget_spent=lambda now: self.budget_spent(now),
        )
        if self.long_term is None:
            self.long_term = EmbeddedMemoryStore(self.memory_store)
        self.links = MemoryLinks(self.memory_store)
        # how the embeddings model is told a query from a document (worked out once)
        self.embedding_roles = RolesResolver(self.config, self.embedding_model)
        self.index = MemoryIndex(
            self.journal,
            self.long_term,
            self.entities,
            self.links,
            digests=self.digests,
            stemmer=self.config.recall_stemmer,
            embedding_model=self.embedding_model,
        )
        self.review = MemoryReview(
            self.memory_store,
            self.journal,
            self.long_term,
            self.entities,
            self.links,
            digests=self.digests,
        )

    def tool_settings(self) -> AssistantConfig:
        """The configuration the tools' `setting`s are read from (`ToolRegistry.schemas`): its
        own, but with group sharing off while it is in no group whose sharing is on, so that
        `share_with_group` is offered only to a member (no tokens spent on it otherwise).

        Returns:
            AssistantConfig: The configuration, or a copy with `group_sharing_enabled` off.

        """
        config = self.config
        if not config.group_sharing_enabled or (self.groups is not None and self.groups.sharing()):
            return config
        if self._unshared is None or self._unshared[0] is not config:
            self._unshared = (config, config.model_copy(update={"group_sharing_enabled": False}))
        return self._unshared[1]

    @property
    def names(self) -> list[str]:
        """The names it answers to: its own and its aliases."""
        return [self.name, *self.aliases]

    # ---- blocking work: each runs in a worker thread and does HTTP only ---------------------

    def call_model(self, request: ChatRequest) -> BlockingWork:
        """A chat completion, as blocking work returning a `ChatReply`.

        Args:
            request (ChatRequest): What to send to the model.

        Returns:
            BlockingWork: A call to run in a worker thread; it returns a `ChatReply`.

        """
        forms = telemetry.model_call(
            telemetry.CHAT, request.model, self.name, model_calls.complete, model_calls.acomplete
        )
        return ModelWork(*forms, self.client_factory, request)

    def structured(self, request: ChatRequest, output_model) -> BlockingWork:
        """A structured completion sent now (a sleep tick in batch mode asks through its
        `sleep.batch.BatchRound`, which calls this for what a batch does not answer).

        Args:
            request (ChatRequest): What to send to the model.
            output_model: The pydantic model the answer must fit.

        Returns:
            BlockingWork: A call to run in a worker thread; it returns `(object, replies)`.

        """
        forms = telemetry.model_call(
            telemetry.STRUCTURED,
            request.model,
            self.name,
            model_calls.structured,
            model_calls.astructured,
        )
        return ModelWork(
            *forms, self.client_factory, request, output_model, self.config.structured_output
        )

    def embed(self, texts: list[str], role: str = DOCUMENT) -> BlockingWork:
        """Embeddings of `texts`, as blocking work returning a list of vectors.

        Args:
            texts (list): The texts to embed.
            role (str, optional): `DOCUMENT` (what is remembered) or `QUERY` (what is asked):
                marked as the model needs (`llm.embedding_roles`).

        Returns:
            BlockingWork: A call to run in a worker thread; it returns one vector per text.

        """
        forms = telemetry.model_call(
            telemetry.EMBEDDING,
            self.embedding_model,
            self.name,
            model_calls.embed,
            model_calls.aembed,
        )
        return ModelWork(
            *forms,
            self.embeddings_client(),
            self.embedding_model,
            texts,
            role,
            self.embedding_roles,
        )

    def embeddings_client(self) -> Callable[[], ChatClient]:
        """What makes the client embeddings are asked of: their own endpoint's, else the chat
        endpoint's.

        Returns:
            callable: A client factory.

        """
        return self.embedding_client_factory or self.client_factory

    def semantic_search(self, query: str) -> BlockingWork | None:
        """The memories nearest `query` by embeddings, as blocking work returning
        (id, similarity) pairs; None when no embeddings model is configured. The query's
        embedding and the similarity search both run in the worker thread.

        Args:
            query (str): What to search for.

        Returns:
            BlockingWork or None: A call returning `(id, similarity)` pairs; None without an
                embeddings model or with an empty query.

        """
        if not self.embedding_model or not query.strip():
            return None
        forms = telemetry.model_call(
            telemetry.EMBEDDING,
            self.embedding_model,
            self.name,
            model_calls.embed_and_search,
            model_calls.aembed_and_search,
        )
        return ModelWork(
            *forms,
            self.embeddings_client(),
            self.embedding_model,
            query,
            self.index.vector_snapshot(),
            self.embedding_roles,
        )

    # ---- recall ------------------------------------------------------------------------------

    def recall_weights(self) -> RecallWeights:
        """How recall mixes its signals, from the configuration (made once: it never changes
        for a brain, and every turn asks).

        Returns:
            RecallWeights: The weights, cached after the first call.

        """
        if self._weights is not None:
            return self._weights
        self._weights = RecallWeights.from_config(self.config)
        return self._weights

    def recall(
        self,
        query: str,
        *,
        now: datetime,
        served: frozenset[str] | None,
        people: list[str] = (),
        limit: int | None = None,
        semantic: list[tuple[str, float]] | None = None,
        kinds: set[str] | None = None,
    ) -> list[Recalled]:
        """What the assistant remembers for `query` (see `memory.recall.MemoryIndex.search`),
        with the game's lore it may know ranked among it (`memory.lore`; kinds without "lore"
        leave lore out).

        Args:
            query (str): What to recall.
            now (datetime): The moment.
            served (frozenset or None): Who the conversation serves; None: everything.
            people (list): Names or keys of people named or present.
            limit (int, optional): How many; default `recall_limit`.
            semantic (list, optional): Results of `semantic_search`.
            kinds (set, optional): Only these kinds of memory.

        Returns:
            list: `Recalled` items, best first.

        """
        config = self.config
        found = self.index.search(
            query,
            now=now,
            served=served,
            people=people,
            limit=config.recall_limit if limit is None else limit,
            weights=self.recall_weights(),
            semantic=semantic,
            time_factor=self.time_factor,
            candidates=config.recall_candidates,
            neighbours=config.recall_link_neighbours,
            kinds=kinds,
        )
        limit = config.recall_limit if limit is None else limit
        if self.lore is not None and (kinds is None or LORE in kinds):
            # the game's lore, ranked with its own memories and marked as lore (`memory.lore`)
            found = merged(found, self.lore(query, limit, self.recall_weights()), limit)
        if self.groups is not None and config.group_sharing_enabled:
            if kinds is None or GROUP in kinds:
                # what fellow members of its groups reported, with its chain (`memory.groups`)
                shared = self.groups.recall(query, limit, self.recall_weights(), config)
                found = merged_shares(found, shared, limit)
        return found

    def recall_pool(self, limit: int) -> int:
        """How many memories a recall of `limit` asks the first pass for: the reranker's
        candidates when one is configured (`recall_rerank_model`), else `limit`.

        Args:
            limit (int): How many the recall returns.

        Returns:
            int: How many to ask for.

        """
        if not self.config.recall_rerank_model or limit <= 0:
            return limit
        return max(limit, self.config.recall_rerank_candidates)

    def rerank(self, query: str, pool: list[Recalled]) -> BlockingWork | None:
        """The reranking model's scores of a recall's candidates (`memory.reranking`), as
        blocking work returning one score per candidate; None without a reranking model, a
        query or more than one candidate.

        Args:
            query (str): What was recalled.
            pool (list): The first pass's candidates, best first (`recall_pool`).

        Returns:
            BlockingWork or None: A call returning the scores, in the order of `pool`.

        """
        model = self.config.recall_rerank_model
        pool = pool[: self.config.recall_rerank_candidates]
        if not model or not query.strip() or len(pool) < 2:
            return None
        forms = telemetry.model_call(
            telemetry.RERANK, model, self.name, model_calls.rerank, model_calls.arerank
        )
        return ModelWork(
            *forms, self.client_factory, model, rerank_query(query), rerank_documents(pool)
        )

    def reranked(
        self, pool: list[Recalled], scores: list | None, limit: int | None = None
    ) -> list[Recalled]:
        """The best `limit` of a recall's candidates, in the reranking model's order when it
        answered (`scores`), else in the first pass's.

        Args:
            pool (list): The first pass's candidates, best first.
            scores (list or None): What `rerank` returned; None when it failed or was not
                asked.
            limit (int, optional): How many; default `recall_limit`.

        Returns:
            list: `Recalled` items, best first.

        """
        limit = self.config.recall_limit if limit is None else limit
        if not scores:
            return pool[:limit]
        return reordered(pool, scores, self.recall_weights().relevance, limit)

    # ---- usage and budget ---------------------------------------------------------------------

    def budget(self) -> TokenBudget:
        """The token budget of this assistant, per game day and per real hour.

        Returns:
            TokenBudget: A view over this assistant's state with the configured limits.

        """
        config = self.config
        return TokenBudget(self.state, config.token_budget_per_day, config.token_budget_per_hour)

    def record_reply(self, reply, now: datetime) -> int:
        """Count a reply: in the usage stats, per hour (the last week), and against the token
        budget (what it cost: `budget.billed_tokens`).

        Args:
            reply (ChatReply): The model's reply, with its token usage.
            now (datetime): The real time of the reply.

        Returns:
            int: The tokens it cost, as the budgets count them.

        """
        self.usage().record_reply(reply)
        billed = billed_tokens(reply.usage, self.model)
        self.budget().add(billed, now, self.game_now(now))
        hours = dict(self.state.get(USAGE_BY_HOUR) or {})
        hour = now.strftime("%Y-%m-%dT%H")
        bucket = hours.get(hour) or {"calls": 0, "prompt": 0, "completion": 0, "cached": 0}
        bucket["calls"] += 1
        bucket["prompt"] += reply.usage.prompt
        bucket["completion"] += reply.usage.completion
        bucket["cached"] += reply.usage.cached
        hours[hour] = bucket
        for old in sorted(hours)[:-HOURS_KEPT]:
            del hours[old]
        self.state.set(USAGE_BY_HOUR, hours)
        return billed

    def record_failure(self, error: LLMError, now: datetime) -> None:
        """Count a failed call: its kind, and the replies it received before failing (a
        structured reply that did not fit, or was cut off, was billed all the same, so its
        tokens count in the usage and against the budget).

        Args:
            error (LLMError): The failure (`llm.structured` puts the replies on `replies`).
            now (datetime): The real time.

        """
        for reply in getattr(error, "replies", None) or ():
            self.record_reply(reply, now)
        self.usage().record_error(error.kind)

    def usage_by_hour(self) -> dict[str, dict]:
        """Model calls and tokens per real hour ("YYYY-MM-DDTHH"), the last week.

        Returns:
            dict: Hour -> {"calls", "prompt", "completion", "cached"} counts (a copy).

        """
        return dict(self.state.get(USAGE_BY_HOUR) or {})

    def budget_spent(self, now: datetime) -> str | None:
        """Why the model may not be called now (a budget is spent), or None.

        Args:
            now (datetime): The real time; the game time is derived from it.

        Returns:
            str or None: The reason when a budget is spent, else None.

        """
        return self.budget().exhausted(now, self.game_now(now))

    def usage(self) -> UsageStats:
        """The usage stats, one object shared by everything this assistant runs.

        Returns:
            UsageStats: Loaded from the state on first use, then reused.

        """
        if self._usage is None:
            self._usage = UsageStats.load(self.state.get(USAGE))
        return self._usage

    def save_usage(self, usage: UsageStats | None = None) -> None:
        """Store the usage stats in the assistant's state.

        Args:
            usage (UsageStats, optional): Stats to keep and save; by default the current ones.

        """
        self._usage = usage or self.usage()
        self.state.set(USAGE, self._usage.model_dump())

    # ---- requests ---------------------------------------------------------------------------

    def prefix_messages(self, served: frozenset[str] | None = None) -> list[dict]:
        """What leads every request: the system prompt, then the core memory block (only the
        notes the people served may know; None: all of them, as for counting the budget).

        Args:
            served (frozenset, optional): Who the conversation serves; None: everyone.

        Returns:
            list: The system message, then the core memory message if there is one.

        """
        return self._prefix(served)[0]

    def _prefix(self, served: frozenset[str] | None) -> tuple[list[dict], list[Audience]]:
        """The prefix messages, and the audiences of the core notes in them."""
        messages = [system_prompt(self.name, self.persona, self.prompt_template)]
        notes = self.core_memory.items(served)
        if notes:
            messages.append(self.core_memory.message_of(notes))
        return messages, [note.get("audience") for note in notes.values()]

    def compose(
        self,
        pending: list[dict],
        tools: list[dict] | None = None,
        served: frozenset[str] | None = None,
        history: bool = True,
        turn: str | None = None,
    ) -> "Prompt":
        """Prefix + history + this conversation's uncommitted messages, with the turn's tools,
        and who may know what the request holds.

        The order keeps the prefix stable from call to call (prompt caching): system prompt,
        tool schemas, core memory, the compaction summary (the history's first message), then
        the history, newest last.

        The audience is the narrowest of every part sent: the core notes shown, the history
        messages shown and the pending messages (each keeps its audience in its metadata). The
        ReAct loop narrows the conversation to it before sending, so whatever the model says
        or writes from a request is known only to those who may know all of it.

        Args:
            pending (list): Messages of this conversation not yet in the history.
            tools (list, optional): Tool schemas; by default those of an awake turn.
            served (frozenset, optional): Who the conversation serves: history from private
                conversations with others is left out (a note says one took place), and so are
                core notes they may not know. None shows everything.
            history (bool): False for a request without the history.
            turn (str, optional): The conversation's own key (`ToolContext.turn`): its own
                messages already in the history are always shown to it.

        Returns:
            Prompt: The request and its audience.

        """
        messages, audiences = self._prefix(served)
        if history:
            shown, shown_audiences = visible_history(self.history.all(), served, turn)
            messages += shown
            audiences += shown_audiences
        messages += [wire_format(message) for message in pending]
        audiences += [message_audience(message) for message in pending]
        request = ChatRequest(
            model=self.model,
            messages=messages,
            tools=self.registry.schemas(TURN, self.tool_settings()) if tools is None else tools,
            temperature=self.config.temperature,
            max_tokens=self.config.max_reply_tokens,
            tool_choice=self.config.tool_choice,
        )
        return Prompt(request, narrowest(audiences))

    def build_request(
        self,
        pending: list[dict],
        tools: list[dict] | None = None,
        served: frozenset[str] | None = None,
        history: bool = True,
    ) -> ChatRequest:
        """The request `compose` makes, without its audience.

        Args:
            pending (list): Messages of this conversation not yet in the history.
            tools (list, optional): Tool schemas; by default those of an awake turn.
            served (frozenset, optional): Who the conversation serves (see `compose`).
            history (bool): False for a request without the history.

        Returns:
            ChatRequest: What to send.

        """
        return self.compose(pending, tools, served, history).request

    def request_tokens(self, request: ChatRequest) -> int:
        """Count the tokens of a whole request: its messages and tool schemas.

        Args:
            request (ChatRequest): The request to count.

        Returns:
            int: The number of tokens.

        """
        return self.counter.count_request(request.messages, request.tools)

    def tool_context(
        self,
        now: datetime,
        speakers: dict[str, Speaker],
        served: frozenset[str] | None = None,
        audience: list[str] | None = None,
        owners: dict[str, str] | None = None,
    ) -> ToolContext:
        """What the tools may use in one conversation.

        Args:
            now (datetime): The time of the conversation.
            speakers (dict): Who said something in it (lower-case name -> `Speaker`): the only
                people a journal entry or observation may name as its source.
            served (frozenset, optional): Who the conversation serves (`memory.audience`).
            audience (list, optional): The audience of what it writes (None: public).
            owners (dict, optional): Whom what the model sets is for (key -> name; see
                `awake.turn.owners_of`); by default the speakers who gave no instruction.

        Returns:
            ToolContext: For the tools.

        """

        def recall(query: str, people: list[str], semantic, limit: int) -> list[Recalled]:
            return self.recall(
                query, now=now, served=served, people=people, semantic=semantic, limit=limit
            )

        return ToolContext(
            turn=uuid.uuid4().hex[:12],
            served=served,
            audience=audience,
            recall=recall,
            semantic=self.semantic_search,
            reranker=self,
            assistant_name=self.name,
            world=self.world,
            journal=self.journal,
            entities=self.entities,
            config=self.config,
            now=now,
            location=self.location,
            speakers=speakers,
            lifecycle=self.lifecycle,
            core_memory=self.core_memory,
            reminders=Reminders(self.state),
            remembered=self.remembered,
            gossip_log=self.gossip_log,
            groups=self.groups,
            group_shares=self.group_shares,
            owners=(
                dict(owners)
                if owners is not None
                else {s.key: s.name for s in speakers.values() if not s.instruction}
            ),
        )

    def remembered(self, memory_id: str) -> dict | None:
        """One memory by id, as a tool that names it (`tell`) needs it: what it says, who may
        know it, how far it is trusted and where it came from.

        Args:
            memory_id (str): Its id (`j000012`, `m000003`, `#12/o3`), as recall shows it.

        Returns:
            dict or None: "id", "kind", "text", "audience", "trust", "importance", "about"
                (keys of the people it is about) and "provenance" (with the entry's
                `voice` and `gossip` when it has them); None for an unknown or forgotten id.

        """
        doc = self.index.doc(str(memory_id)[:40])
        if doc is None or not doc.text:
            return None
        provenance = dict(doc.provenance or {})
        about = [person for person in doc.people if person.startswith(("#", "name:"))]
        raw = None
        if doc.kind != "memory" and doc.id.startswith("j"):
            raw = self.journal.get(doc.id)
        elif doc.kind == "memory" and hasattr(self.long_term, "get"):
            raw = self.long_term.get(doc.id)
        # what is drawn from told entries (a fact, a reflection, a digest, an attribute) has
        # passed through their hands too: its chain and hops are theirs, not a fresh start
        for entry_id in doc.entry_ids:
            told = (self.journal.get(entry_id) or {}).get("gossip") if entry_id[:1] == "j" else None
            if told and len(told.get("tellers") or []) >= len(
                (provenance.get("gossip") or {}).get("tellers") or []
            ):
                provenance["gossip"] = told
        if raw is not None:
            about = list(raw.get("about") or (raw.get("provenance") or {}).get("about") or about)
            for key in ("voice", "gossip"):
                if raw.get(key):
                    provenance[key] = raw[key]
        return {
            "id": doc.id,
            "kind": doc.kind,
            "text": doc.text,
            "audience": doc.audience,
            "trust": self.recall_weights().trust_of(doc),
            "importance": doc.importance,
            "about": about,
            "provenance": provenance,
        }

    # ---- the context budget -----------------------------------------------------------------

    def fixed_tokens(self, scope: str = TURN) -> int:
        """Tokens every request in `scope` carries before any history: prompt, core memory (the
        largest block one conversation sees) and the scope's tools.

        Args:
            scope (str): Which set of tools the request carries (default: an awake turn's).

        Returns:
            int: The number of tokens.

        """
        if scope not in self._tool_tokens:  # the schemas never change; checked every awake tick
            self._tool_tokens[scope] = self.counter.count_tools(
                self.registry.schemas(scope, self.tool_settings())
            )
        # the core notes of the largest block one conversation is sent (each sees only its own)
        prefix = [system_prompt(self.name, self.persona, self.prompt_template)]
        notes = self.core_memory.largest_view()
        if notes:
            prefix.append(self.core_memory.message_of(notes))
        return self.counter.count_messages(prefix) + self._tool_tokens[scope]

    def context_tokens(self, scope: str = TURN) -> int:
        """Tokens of the next request without new messages (history read from its total).

        Args:
            scope (str): Which set of tools the request carries (default: an awake turn's).

        Returns:
            int: The number of tokens.

        """
        return self.calibration.scaled(self.fixed_tokens(scope) + self.history.tokens())

    def pending_tokens(self, pending: list[dict], scope: str = TURN) -> int:
        """Tokens of `build_request(pending, <scope's tools>)`, without re-counting the history:
        equal to `request_tokens(...)` of that request, at a cost that does not grow with it.

        Args:
            pending (list): Messages not yet in the history.
            scope (str): Which set of tools the request carries (default: an awake turn's).

        Returns:
            int: The number of tokens.

        """
        counted = self.fixed_tokens(scope) + self.history.tokens()
        return self.calibration.scaled(
            counted + sum(self.counter.count_message(m) for m in pending)
        )

    def usage_ratio(self) -> float:
        """How full the context is: `context_tokens()` over the context budget.

        Returns:
            float: The ratio; 1.0 means the context is full.

        """
        return self.context_tokens() / self.calibration.context_budget()

    def discover_context_window(self) -> BlockingWork | None:
        """Ask the server, once per chat model, what window it reports (`GET /models`); what
        it answers goes to `calibration.learn_context_window`.

        Returns:
            BlockingWork or None: Work returning the window or None; None when it was asked.

        """
        if self.calibration.window_asked():
            return None
        return ModelWork(
            model_calls.served_window, model_calls.aserved_window, self.client_factory, self.model
        )

    def check_override(self, key: str, value) -> None:
        """Rules a configuration value must follow for this assistant, beyond its bounds.

        Only `max_context_tokens` is checked: it must hold the fixed tokens plus room for a
        conversation.

        Args:
            key (str): The configuration key.
            value: The proposed value.

        Raises:
            ConfigError: Naming the key, the value and what is needed.

        """
        if key == "max_context_tokens":
            # counted as the server counts, as the budget is checked
            needed = self.calibration.scaled(self.fixed_tokens()) + MIN_CONVERSATION_TOKENS
            if value < needed:
                raise ConfigError(
                    f"max_context_tokens={value} cannot hold the system prompt, core memory and "
                    f"tools ({needed - MIN_CONVERSATION_TOKENS} tokens) plus "
                    f"{MIN_CONVERSATION_TOKENS} for the conversation: at least {needed}."
                )

    @property
    def asleep(self) -> bool:
        """Whether the assistant is asleep.

        Returns:
            bool: True when the lifecycle mode is sleep.

        """
        return self.lifecycle.mode == SLEEP
