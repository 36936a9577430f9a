"""
Benchmarks 9-11: the memory, through `AssistantMemory` (the pure core: no Evennia, no database,
an in-memory `DictStore`).

9. Recall quality on a seeded data set of many conversations (`bench.conversations`): recall@5
   and recall@10 of the project's pipeline (before and after sleep, and with embeddings when
   `AI_ASSISTANT_BENCH_EMBED_URL` names an endpoint: `bench.endpoints`), of plain BM25 over the
   same entries and of recency alone, side by side; and whether a private entry ever comes back
   to someone it was not told to.
10. Recall and write cost at 10,000 memories vs 100, alternating between the two in one process,
    and what the recall index holds at 10,000, with and without vectors; and recall with 10,000
    lore entries shared by 100 assistants vs none (one shared index).
11. Dreaming cost: model calls and tokens of each sleep step for 200 new entries and 30 people,
    with a model that answers at once in process.

"""

import gc
import math
import os
import re
import statistics
import time
import tracemalloc
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from datetime import timedelta

import numpy

from ai_assistant.conf import AssistantConfig
from ai_assistant.llm.chat import TokenUsage
from ai_assistant.llm.tokens import TokenCounter
from ai_assistant.memory.audience import person_key, served_by
from ai_assistant.memory.lexical import STOP_WORDS
from ai_assistant.memory.lore import Knower, LoreBook
from ai_assistant.memory.semantic import pack_vector
from ai_assistant.memory.store import DictStore
from ai_assistant.memory_api import AssistantMemory
from ai_assistant.offline.rehearsal import RehearsalResponder
from ai_assistant.sleep.relationships import plan as relationship_plan
from ai_assistant.testing.server import ResponderClient

from bench.cases import Result
from bench.conversations import Conversations, Line, generate
from bench.endpoints import EMBED_MODEL, EMBED_URL, Endpoints, embedding_model

ASSISTANT = "Aria"
# the kinds of question that share no word with their answer but a name: with embeddings they
# must do at least as well as plain BM25 (which also matches their function words)
PARAPHRASED = ("paraphrase", "world: paraphrase")
# the most sleeps the run with embeddings may take to embed every entry
EMBEDDING_SLEEPS = 20


# ---- 8. recall quality ------------------------------------------------------------------------


_TOKEN_RE = re.compile(r"[a-z0-9]+")


def plain_tokens(text: str) -> list[str]:
    """Lower-cased runs of letters and digits: no stemming, no stop words."""
    return _TOKEN_RE.findall(text.lower())


class PlainBM25:
    """Textbook BM25 (k1=1.2, b=0.75) over a fixed list of texts, the baseline of benchmark 9.

    Args:
        texts (list): The documents; a document's number is its position.
        tokens (callable): A text's terms (`plain_tokens`: no stemming, no stop words dropped).

    """

    def __init__(self, texts: list[str], k1: float = 1.2, b: float = 0.75, tokens=plain_tokens):
        self.k1, self.b = k1, b
        self.tokens = tokens
        self.lengths = []
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for number, text in enumerate(texts):
            counts = Counter(tokens(text))
            self.lengths.append(sum(counts.values()))
            for term, count in counts.items():
                self.postings[term].append((number, count))
        self.average = sum(self.lengths) / max(len(self.lengths), 1) or 1.0

    def scores(self, query: str) -> dict[int, float]:
        """Every document sharing a term with `query`, with its score."""
        total = len(self.lengths)
        scores: dict[int, float] = defaultdict(float)
        for term in set(self.tokens(query)):
            posting = self.postings.get(term, ())
            if not posting:
                continue
            idf = math.log(1 + (total - len(posting) + 0.5) / (len(posting) + 0.5))
            for number, count in posting:
                norm = self.k1 * (1 - self.b + self.b * self.lengths[number] / self.average)
                scores[number] += idf * count * (self.k1 + 1) / (count + norm)
        return scores


@dataclass
class System:
    """One way of recalling, and what it returned for each question (line numbers per item)."""

    name: str
    answers: list[list[set[int]]] = field(default_factory=list)

    def hits(self, questions, k: int) -> list[bool]:
        return [
            bool(set(question.gold) & set().union(*items[:k]))
            for question, items in zip(questions, self.answers)
        ]

    def recall_at(self, questions, k: int) -> float:
        hits = self.hits(questions, k)
        return sum(hits) / len(hits) if hits else 0.0

    def gold_found(self, questions, k: int) -> float:
        """The mean share of each question's answering entries found in the top k."""
        shares = [
            len(set(question.gold) & set().union(*items[:k])) / len(question.gold)
            for question, items in zip(questions, self.answers)
        ]
        return sum(shares) / len(shares) if shares else 0.0


def write_line(memory: AssistantMemory, line: Line) -> str:
    """Write one line of the data set as a journal entry, with its speaker, time, place and
    audience; returns the entry's id."""
    return memory.add_entry(
        line.text,
        time=line.time,
        speaker=line.speaker,
        place=line.place,
        audience=line.audience,
        about=line.about,
    )


def _visible(line: Line, asker: str) -> bool:
    return line.audience is None or asker in line.audience


def content_tokens(text: str) -> list[str]:
    """`plain_tokens` without the words recall drops (`memory.lexical.STOP_WORDS`)."""
    return [token for token in plain_tokens(text) if token not in STOP_WORDS]


def baselines(data: Conversations, k: int) -> tuple[System, System, System]:
    """Plain BM25, the same without stop words, and recency alone, each seeing only what the
    pipeline may: entries written by the question's moment, public or told to the one asking.

    Plain BM25 matches function words ("in", "the", the "s" of "Corwin's") that recall drops;
    the second baseline shows what of its figures comes from them."""
    systems = (
        (System("plain BM25"), PlainBM25([line.text for line in data.lines])),
        (
            System("BM25 without stop words"),
            PlainBM25([line.text for line in data.lines], tokens=content_tokens),
        ),
    )
    recent = System("recency alone")
    for question in data.questions:
        allowed = [
            line.index
            for line in data.lines
            if line.time <= question.at and _visible(line, question.asker)
        ]
        for system, bm25 in systems:
            scores = bm25.scores(question.text)
            # ties (rare: the same words) go to the newer entry
            ranked = sorted(
                (n for n in allowed if scores.get(n, 0.0) > 0), key=lambda n: (-scores[n], -n)
            )
            system.answers.append([{n} for n in ranked[:k]])
        recent.answers.append([{n} for n in sorted(allowed, reverse=True)[:k]])
    return systems[0][0], systems[1][0], recent


def write_conversations(
    data: Conversations,
    config: AssistantConfig | None = None,
    nightly: bool = False,
    model=None,
    embedding_model: str | None = None,
) -> tuple[AssistantMemory, dict[str, int]]:
    """The data set as an assistant's journal, optionally sleeping on it every night.

    Args:
        data (Conversations): The data set.
        config (AssistantConfig, optional): The assistant's configuration.
        nightly (bool): Sleep at the end of every game night.
        model (ChatClient, optional): The model sleep uses (the offline rules by default).
        embedding_model (str, optional): The embeddings model, asked of `model`.

    Returns:
        tuple: The memory, and each journal entry id's line number.

    """
    memory = AssistantMemory(ASSISTANT, config=config, model=model, embedding_model=embedding_model)
    ids: dict[str, int] = {}
    nights = list(data.nights) if nightly else []
    for line in data.lines:
        while nights and nights[0] < line.time:
            memory.consolidate(now=nights.pop(0))
        entry_id = write_line(memory, line)
        ids[entry_id] = line.index
    for night in nights:
        memory.consolidate(now=night)
    return memory, ids


class PipelineRun:
    """The project's recall over one written memory, question by question, as a turn asks it:
    for the person asking (its audience), with the person asking present (the person boost)."""

    def __init__(self, name: str, memory: AssistantMemory, ids: dict[str, int]):
        self.system = System(name)
        self.memory = memory
        self.ids = ids
        self.items: list[list] = []  # the raw `Recalled` items, for the leak check

    def ask(self, text: str, at, asker: str, k: int) -> list:
        return self.memory.recall(text, k=k, at=at, audience=[asker], people=[asker])

    def run(self, data: Conversations, k: int) -> "PipelineRun":
        for question in data.questions:
            found = self.ask(question.text, question.at, question.asker, k)
            self.items.append(found)
            self.system.answers.append(
                [{self.ids[e] for e in item.entry_ids if e in self.ids} for item in found]
            )
        return self

    def owners_find(self, data: Conversations, k: int) -> int:
        """How many probes, asked by the secret's owner instead, get it back: a check that the
        probes' words do find the secret when it may be told."""
        found = 0
        for probe in data.probes:
            owner = data.lines[probe.secret].speaker
            items = self.ask(probe.text, probe.at, owner, k)
            found += any(self.ids.get(e) == probe.secret for i in items for e in i.entry_ids)
        return found

    def leaks(self, data: Conversations, k: int) -> tuple[int, int]:
        """Items recalled for someone who may not know them, over every question and every
        privacy probe: (leaking items, questions and probes with one)."""
        asked = [(q.text, q.at, q.asker, items) for q, items in zip(data.questions, self.items)]
        for probe in data.probes:
            asked.append(
                (probe.text, probe.at, probe.asker, self.ask(probe.text, probe.at, probe.asker, k))
            )
        hidden_cache: dict[str, set[int]] = {}
        leaking = questions = 0
        for _, _, asker, items in asked:
            if asker not in hidden_cache:
                hidden_cache[asker] = data.hidden_from(asker)
            hidden = hidden_cache[asker]
            words = [data.tokens[n] for n in hidden if n in data.tokens]
            key = person_key(None, asker)
            bad = [
                item
                for item in items
                if {self.ids.get(e) for e in item.entry_ids} & hidden
                or (item.audience is not None and key not in item.audience)
                or any(word in item.text.lower() for word in words)
            ]
            leaking += len(bad)
            questions += bool(bad)
        return leaking, questions


@dataclass
class Embedded:
    """The run with embeddings, and what its embedding cost."""

    run: PipelineRun
    sleeps: int  # the sleeps it took to embed every entry
    texts: int  # texts embedded while asleep: the journal's entries and the facts drawn
    entries: int  # the journal's entries with a vector after the sleeps (all of them)
    seconds: float  # time in embeddings calls while asleep
    queries: int  # texts embedded by the questions (one each)
    query_seconds: float

    def details(self, model: str) -> list[str]:
        per_text = self.seconds / self.texts * 1000 if self.texts else 0.0
        per_query = self.query_seconds / self.queries * 1000 if self.queries else 0.0
        return [
            f"with embeddings ({model}): the sleep embedded {self.texts} texts "
            f"({self.entries} journal entries and the facts drawn from them) in "
            f"{self.seconds:.1f} s of embeddings calls ({per_text:.0f} ms a text) over "
            f"{self.sleeps} sleep(s); the {self.queries} questions in {self.query_seconds:.1f} s "
            f"({per_query:.0f} ms each)"
        ]


def sleep_until_embedded(memory: AssistantMemory, endpoints: Endpoints, now) -> int:
    """Sleep at `now` until every journal entry has its vector (a sleep embeds in batches,
    within each tick's call budget, and rests a step that keeps failing).

    Returns:
        int: How many sleeps it took.

    Raises:
        RuntimeError: When a sleep embeds nothing (naming the endpoint's last error) or
            `EMBEDDING_SLEEPS` sleeps leave entries without a vector.

    """
    model = memory.brain.embedding_model
    journal = memory.journal

    def left() -> int:
        return len(journal.unembedded(model, 10**9)[0])

    before = left()
    for sleeps in range(1, EMBEDDING_SLEEPS + 1):
        memory.consolidate(now=now)
        after = left()
        if not after:
            return sleeps
        if after >= before:
            raise RuntimeError(
                f"the embeddings endpoint {os.environ.get(EMBED_URL)} ({EMBED_URL}) embedded "
                f"nothing in a sleep: {after} journal entries left without a vector by "
                f"{model}; its last error: {endpoints.error or 'none'}"
            )
        before = after
    raise RuntimeError(
        f"{before} journal entries still without a vector by {model} after "
        f"{EMBEDDING_SLEEPS} sleeps"
    )


def embedded_run(data: Conversations, k: int) -> Embedded:
    """The pipeline with embeddings (`embedding_model` from `AI_ASSISTANT_BENCH_EMBED_MODEL`,
    asked of `AI_ASSISTANT_BENCH_EMBED_URL`), after one sleep at the end that embedded every
    entry; chat is the offline rehearsal model, as in the other runs."""
    endpoints, model = Endpoints(), embedding_model()
    memory, ids = write_conversations(data, model=endpoints, embedding_model=model)
    sleeps = sleep_until_embedded(memory, endpoints, data.asked_at - timedelta(hours=1))
    texts, seconds = endpoints.embedded_texts, endpoints.embed_seconds
    run = PipelineRun("pipeline with embeddings, after one sleep", memory, ids).run(data, k)
    return Embedded(
        run,
        sleeps,
        texts,
        sum(1 for entry in memory.journal.all() if memory.journal.vector(entry, model)),
        seconds,
        endpoints.embedded_texts - texts,
        endpoints.embed_seconds - seconds,
    )


def recall_quality(quick: bool = False) -> list[Result]:
    """9. Recall@5/@10 of the pipeline vs plain BM25 vs recency; private entries never leak."""
    people, days = (8, 6) if quick else (24, 35)
    data = generate(people=people, days=days)
    k = 10
    started = time.perf_counter()
    journal_only = PipelineRun("pipeline, journal only", *write_conversations(data)).run(data, k)
    nightly = PipelineRun(
        "pipeline, after a sleep each night", *write_conversations(data, nightly=True)
    ).run(data, k)
    memory, ids = write_conversations(data)
    memory.consolidate(now=data.asked_at - timedelta(hours=1))
    once = PipelineRun("pipeline, after one sleep at the end", memory, ids).run(data, k)
    runs = [journal_only, nightly, once]
    lexical, content, recent = baselines(data, k)
    seconds = time.perf_counter() - started
    embedded = embedded_run(data, k) if embedding_model() else None
    if embedded:
        runs.append(embedded.run)
    systems = [run.system for run in runs] + [lexical, content, recent]
    questions = data.questions

    details = [
        f"data set (seed 8): {len(data.people)} people, {data.days} days, {len(data.lines)} "
        f"journal entries ({sum(1 for l in data.lines if l.audience)} private), "
        f"{len(questions)} questions, {len(data.probes)} privacy probes",
    ]
    width = max(len(system.name) for system in systems)
    details.append(f"{'':<{width}}  R@5    R@10   gold found@10")
    for system in systems:
        details.append(
            f"{system.name:<{width}}  {system.recall_at(questions, 5):.3f}  "
            f"{system.recall_at(questions, 10):.3f}  {system.gold_found(questions, 10):.3f}"
        )
    details += _by_category(questions, systems)
    details += _fairness(data, journal_only.memory, journal_only.ids)
    details += _kinds_returned(once)
    details.append(f"({seconds:.1f} s to write, sleep on and ask all of it without embeddings)")

    bm25_at_10 = lexical.recall_at(questions, 10)
    ours = [run.system.recall_at(questions, 10) for run in runs]
    figure = f"R@10 {ours[0]:.2f} / {ours[1]:.2f} / {ours[2]:.2f} vs BM25 {bm25_at_10:.2f}"
    target = "ahead of plain BM25 at @10"
    checks = {}
    if embedded:
        figure += f"; with embeddings {ours[3]:.2f}"
        target += ", paraphrase kinds >= BM25 with embeddings"
        details += _kinds_returned(embedded.run)
        details += embedded.details(embedding_model())
        checks = _paraphrase_checks(questions, embedded.run.system, lexical)
        details += [f"{'ok  ' if held else 'MISS'} {check}" for check, held in checks.items()]
    else:
        details.append(
            f"embeddings: set {EMBED_URL} (and {EMBED_MODEL}) to measure recall with them "
            "(one more run, after one sleep that embeds every entry)"
        )
    quality = Result(
        f"recall quality, {len(questions)} questions over {len(data.lines)} entries",
        figure,
        target,
        min(ours) > bm25_at_10 and all(checks.values()),
        details,
    )
    leaking = affected = owners = 0
    for run in runs:
        items, asked = run.leaks(data, k)
        leaking += items
        affected += asked
        owners += run.owners_find(data, k)
    asked = len(runs) * (len(questions) + len(data.probes))
    privacy = Result(
        "private entries recalled for others",
        f"{leaking} leaks in {asked} recalls",
        "0",
        leaking == 0,
        [
            f"every recall (top {k}) of the {len(runs)} pipeline runs checked: an item that rests "
            f"on a private entry, has an audience without the asker, or holds a secret's words; "
            f"{len(data.probes)} probes ask for someone else's secret by its words; "
            f"{affected} recalls had a leak",
            f"the same probes asked by each secret's owner get it back {owners} times out of "
            f"{len(runs) * len(data.probes)}",
        ],
    )
    return [quality, privacy]


def _paraphrase_checks(questions, embedded: System, lexical: System) -> dict[str, bool]:
    """With embeddings, each paraphrased kind of question at least as well found as by plain
    BM25 (a kind with no question at this size is not judged)."""
    checks = {}
    for category in PARAPHRASED:
        ours, theirs = (_category_recall(questions, s, category) for s in (embedded, lexical))
        if ours is not None:
            checks[f"with embeddings, {category} R@10 {ours:.2f} >= plain BM25's {theirs:.2f}"] = (
                ours >= theirs
            )
    return checks


def _category_recall(questions, system: System, category: str) -> float | None:
    """R@10 over the questions of one kind; None when there is none."""
    hits = [hit for hit, q in zip(system.hits(questions, 10), questions) if q.category == category]
    return sum(hits) / len(hits) if hits else None


def _by_category(questions, systems) -> list[str]:
    lines = ["R@10 by kind of question (" + " / ".join(s.name for s in systems) + "):"]
    for category in sorted({q.category for q in questions}):
        chosen = sum(q.category == category for q in questions)
        figures = [f"{_category_recall(questions, system, category):.2f}" for system in systems]
        lines.append(f"  {category} ({chosen}): {' / '.join(figures)}")
    return lines


def _fairness(data: Conversations, memory: AssistantMemory, ids: dict[str, int]) -> list[str]:
    """How old and how important the answers are, next to every entry: the data set must not
    favour what recency or importance weights would find anyway."""
    line_id = {line: entry for entry, line in ids.items()}
    importance = {n: memory.journal.get(line_id[n])["importance"] for n in range(len(data.lines))}
    gold = [n for q in data.questions for n in q.gold]
    ages = [
        (q.at - data.lines[n].time).total_seconds() / 86400 for q in data.questions for n in q.gold
    ]
    every_age = [(data.asked_at - line.time).total_seconds() / 86400 for line in data.lines]
    return [
        f"answers: median age {statistics.median(ages):.1f} days when asked (all entries: "
        f"{statistics.median(every_age):.1f} at the end); mean importance "
        f"{statistics.mean(importance[n] for n in gold):.2f} (all entries: "
        f"{statistics.mean(importance.values()):.2f})"
    ]


def _kinds_returned(run: PipelineRun) -> list[str]:
    kinds = Counter(item.kind for items in run.items for item in items)
    short = sum(1 for items in run.items if len(items) < 10)
    return [
        f"{run.system.name}: kinds recalled {dict(sorted(kinds.items()))}; "
        f"{short} of {len(run.items)} recalls returned fewer than 10 items"
    ]


# ---- 10. recall and write cost at scale --------------------------------------------------------

# what a turn recalls with: the words of what was just said to the assistant
TURN_QUERIES = (
    "{me}, do you remember where {other}'s sister lives? I want to send a letter before the "
    "harvest festival.",
    "Good evening {me}. Has anyone told you what {other} does for a living these days?",
    "I'm back from {town}. The road was muddy and the bridge looked bad. Any news from there?",
    "{me}, what was the name of {other}'s dog again? I keep forgetting it.",
    "Do you know a good place to buy horseshoes? My horse threw one on the way from {town}.",
    "Tell me what you know about {other}. We are meeting at the market tomorrow.",
    "Is it true the mine above {town} closed? My cousin was hoping to find work there.",
    "{me}, I brought some honey cakes for {other}. Who else loves them so much?",
)


TOWNS_ASKED = ("Riverton", "Ashford", "Dunmere", "Saltmarsh")

# the vectors benchmark 10 gives a memory: as many dimensions as multilingual-e5-small's
VECTOR_MODEL = "bench-vectors"
VECTOR_DIMENSIONS = 384
# the most an assistant's recall index may hold at 10,000 memories, vectors included
INDEX_MIB = 50


def mixed_memory(total: int, data: Conversations, dimensions: int = 0) -> AssistantMemory:
    """An assistant's memory of `total` items, in the proportions a long-lived one has: 60%
    journal entries, 30% long-term memories drawn from them, 10% observations of people (about
    25 each), all with the data set's words, time and audiences; with `dimensions`, every
    entry and memory also has a vector of that many (seeded noise, by `VECTOR_MODEL`), as
    after the sleeps of an assistant with an embeddings model."""
    journal = total * 6 // 10
    memories = total * 3 // 10
    observations = total - journal - memories
    memory = AssistantMemory(ASSISTANT, store=DictStore())
    noise = numpy.random.default_rng(9)
    lines = data.lines[:journal]
    ids = []
    for line in lines:
        ids.append(write_line(memory, line))
    for n in range(memories):
        line = lines[n % len(lines)]
        memory.brain.long_term.add(
            line.text,
            importance=5,
            now=line.time,
            source_entry_ids=[ids[n % len(lines)]],
            provenance={
                "source_type": "claim" if line.speaker else "observed",
                "heard_from": line.speaker,
                "about": [person_key(None, name) for name in line.about],
                "location": line.place,
            },
            audience=(
                None if line.audience is None else [person_key(None, a) for a in line.audience]
            ),
            vector=noise.standard_normal(dimensions).tolist() if dimensions else None,
        )
    if dimensions:
        _embed_journal(memory, noise, dimensions)
    people = data.people[: max(1, min(len(data.people), observations // 25))]
    said = {person: [l for l in data.lines if l.speaker == person] for person in people}
    for n in range(observations):
        person = people[n % len(people)]
        line = said[person][(n // len(people)) % len(said[person])]
        memory.observe(person, line.text, time=line.time, speaker=person, place=line.place)
    return memory


def _embed_journal(memory: AssistantMemory, noise, dimensions: int) -> None:
    """Give every journal entry a vector by `VECTOR_MODEL`, as sleep's embedding step does."""
    journal = memory.brain.journal
    while True:
        entries, through = journal.unembedded(VECTOR_MODEL, 500)
        vectors = {entry["id"]: pack_vector(noise.standard_normal(dimensions)) for entry in entries}
        journal.embedded(VECTOR_MODEL, vectors, through)
        if not entries:
            return


def index_memory(store, embedding_model: str | None = None) -> float:
    """MiB the recall index of the memory in `store` holds once built, as after a server start:
    what the build allocates and keeps (tracemalloc), the stores' own reads done before."""
    memory = AssistantMemory(ASSISTANT, store=store, embedding_model=embedding_model)
    brain = memory.brain
    for entry in brain.journal.all():
        brain.journal.vector(entry, embedding_model)
    list(brain.long_term.all())
    list(brain.entities.profiles())
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        brain.index.build()
        gc.collect()
        return (tracemalloc.get_traced_memory()[0] - before) / 2**20
    finally:
        tracemalloc.stop()


def _timed(samples: list[float], work) -> None:
    started = time.perf_counter()
    work()
    samples.append(time.perf_counter() - started)


def recall_at_scale(quick: bool = False) -> list[Result]:
    """10. Recall per turn, and writing a memory, at `large` memories vs 100, alternating."""
    small, large = 100, 1000 if quick else 10000
    rounds = 30 if quick else 300
    # any 100 appends in a row fill a stored chunk (100 items) from every level once, so write
    # costs compare alike whatever the sizes' own fill levels
    write_rounds = 100 if quick else 300
    # enough lines for the large journal: about 45 a day with 30 visitors
    data = generate(people=30, days=max(6, large * 6 // 10 // 40 + 2), seed=9)
    built, memories = {}, {}
    for size in (small, large):
        filled = mixed_memory(size, data)
        # the index is built once, from the stores, when an assistant first recalls after a
        # server start: a fresh memory over the same store times that
        fresh = AssistantMemory(ASSISTANT, store=filled.brain.memory_store)
        started = time.perf_counter()
        fresh.brain.index.build()
        built[size] = time.perf_counter() - started
        memories[size] = fresh
    count = {size: len(memory.brain.index) for size, memory in memories.items()}
    # what the index holds at the large size, and with a vector for every entry and memory
    held = index_memory(memories[large].brain.memory_store)
    vectored = mixed_memory(large, data, dimensions=VECTOR_DIMENSIONS)
    held_with = index_memory(vectored.brain.memory_store, VECTOR_MODEL)
    del vectored
    now = data.lines[-1].time + timedelta(hours=1)
    queries = []
    for n in range(len(TURN_QUERIES)):
        asker, other = data.people[n], data.people[-1 - n]
        text = TURN_QUERIES[n].format(me=ASSISTANT, other=other, town=TOWNS_ASKED[n % 4])
        queries.append((text, asker))
    recall_samples = {size: [] for size in memories}
    entry_samples = {size: [] for size in memories}
    memory_samples = {size: [] for size in memories}
    # the collector's pauses depend on everything the process holds (both cases at once), not
    # on the code measured: it is held off while measuring, and each sample is one call
    gc.collect()
    gc.disable()
    try:
        for round_no in range(rounds + 5):
            text, asker = queries[round_no % len(queries)]
            key = person_key(None, asker)
            for size, memory in memories.items():
                brain = memory.brain
                samples = recall_samples[size] if round_no >= 5 else []
                _timed(
                    samples,
                    lambda: brain.recall(
                        text, now=now, served=served_by([key]), people=[asker, key]
                    ),
                )
        for round_no in range(write_rounds + 5):
            text, asker = queries[round_no % len(queries)]
            for size, memory in memories.items():
                warm = round_no >= 5
                _timed(
                    entry_samples[size] if warm else [],
                    lambda: memory.add_entry(text, time=now, speaker=asker, place="the tavern"),
                )
                _timed(
                    memory_samples[size] if warm else [],
                    lambda: memory.brain.long_term.add(
                        f"{asker} asked: {text}",
                        importance=5,
                        now=now,
                        source_entry_ids=[],
                        provenance={"source_type": "claim", "heard_from": asker},
                    ),
                )
    finally:
        gc.enable()

    def ms(samples) -> float:
        return statistics.median(samples) * 1000

    recall_ratio = ms(recall_samples[large]) / ms(recall_samples[small])
    entry_ratio = ms(entry_samples[large]) / ms(entry_samples[small])
    memory_ratio = ms(memory_samples[large]) / ms(memory_samples[small])
    mix = f"{large * 6 // 10} entries, {large * 3 // 10} memories, {large // 10} observations"
    recall = Result(
        f"recall per turn at {large} vs {small} memories",
        f"{recall_ratio:.2f}x",
        "<= 2x",
        recall_ratio <= 2.0,
        [
            f"median recall (a turn's words, top {memories[small].brain.config.recall_limit}): "
            f"{ms(recall_samples[small]):.2f} ms at {small}, {ms(recall_samples[large]):.2f} ms "
            f"at {large} ({rounds} recalls each, alternating, after the index was built)",
            f"{large} memories: {mix}; {count[large]} searchable items",
            f"one-time index build from the store: {built[large] * 1000:.0f} ms at {large} "
            f"({built[small] * 1000:.1f} ms at {small})",
        ],
    )
    write = Result(
        f"memory write at {large} vs {small} memories",
        f"{max(entry_ratio, memory_ratio):.2f}x (entry {entry_ratio:.2f}x, memory "
        f"{memory_ratio:.2f}x)",
        "<= 2x",
        max(entry_ratio, memory_ratio) <= 2.0,
        [
            f"median journal entry (add_entry): {ms(entry_samples[small]):.3f} ms at {small}, "
            f"{ms(entry_samples[large]):.3f} ms at {large}; long-term memory "
            f"(long_term.add): {ms(memory_samples[small]):.3f} ms, "
            f"{ms(memory_samples[large]):.3f} ms ({write_rounds} each, alternating, index kept "
            "current)"
        ],
    )
    footprint = Result(
        f"recall index memory at {large} memories",
        f"{held:.1f} MiB; {held_with:.1f} MiB with vectors",
        f"<= {INDEX_MIB} MiB with vectors",
        held_with <= INDEX_MIB,
        [
            f"what the index built from the store keeps (tracemalloc), {mix}: {held:.1f} MiB; "
            f"with a {VECTOR_DIMENSIONS}-dimension vector for each entry and memory (as "
            f"multilingual-e5-small's, after sleep embedded them) {held_with:.1f} MiB"
        ],
    )
    return [recall, write, footprint]


def recall_among_whispers(quick: bool = False) -> Result:
    """10. A player's recall where nearly every memory is another's whisper, vs all public: the
    whispers of 29 others, and whispers each to another pair of people (as many audiences as
    lines: which of them a player may see is remembered between recalls, not asked again)."""
    size, rounds = (1000, 30) if quick else (10000, 300)
    data = generate(people=30, days=max(6, size // 40 + 2), seed=9)
    lines = data.lines[:size]
    whisperers = data.people[1:]
    memories = {}
    for shape in ("public", "whispered", "pairs"):
        memory = AssistantMemory(ASSISTANT, store=DictStore())
        for n, line in enumerate(lines):
            # 99 lines in 100 private to one of 29 others, or each to another pair, the same
            # words either way
            private = shape != "public" and n % 100
            speaker = whisperers[n % len(whisperers)] if private else line.speaker
            audience = None
            if private:
                audience = [speaker] if shape == "whispered" else [speaker, f"Stranger{n}"]
            memory.add_entry(line.text, speaker=speaker, time=line.time, audience=audience)
        memory.brain.index.build()
        memories[shape] = memory
    asker = data.people[0]
    key = person_key(None, asker)
    now = lines[-1].time + timedelta(hours=1)
    samples = {shape: [] for shape in memories}
    gc.collect()
    gc.disable()
    try:
        for round_no in range(rounds + 5):
            text = TURN_QUERIES[round_no % len(TURN_QUERIES)].format(
                me=ASSISTANT, other=data.people[-1], town=TOWNS_ASKED[round_no % 4]
            )
            for shape, memory in memories.items():
                brain = memory.brain
                _timed(
                    samples[shape] if round_no >= 5 else [],
                    lambda: brain.recall(text, now=now, served=served_by([key]), people=[asker]),
                )
    finally:
        gc.enable()
    ms = {shape: statistics.median(found) * 1000 for shape, found in samples.items()}
    ratio = max(ms["whispered"], ms["pairs"]) / ms["public"]
    return Result(
        f"recall per turn among {size} memories nearly all whispered to others vs public",
        f"{ratio:.2f}x",
        "<= 2x",
        ratio <= 2.0,
        [
            f"median recall for one player: {ms['public']:.2f} ms when all {size} are public, "
            f"{ms['whispered']:.2f} ms when 99 in 100 are whispers of {len(whisperers)} others "
            f"({rounds} recalls each, in turn): what the player may not see is left out "
            "before it is weighed, and never takes the place of what they may",
            f"{ms['pairs']:.2f} ms when 99 in 100 are whispers each to another pair "
            f"({sum(1 for n in range(len(lines)) if n % 100)} audiences): which audiences the "
            "player may see is remembered between recalls, and only new ones are asked (the "
            "first recall, which asks of them all, is not counted)",
        ],
    )


# ---- 10b. recall with shared lore at scale --------------------------------------------------

LORE_THINGS = (
    "mine", "bridge", "market", "festival", "road", "mill", "sister", "dog", "horseshoes",
    "honey cakes", "letter", "harvest", "cousin", "tavern", "well", "bell",
)  # fmt: skip


def lore_book_for(entries: int, assistants: int) -> LoreBook:
    """A game's lore book of `entries`, shared by `assistants`: 30% for everyone, 30% for one
    assistant by name, 20% for a room, 20% for a tag of assistants; the words are the towns
    and things a turn's words ask about, so the searches find lore."""
    book = LoreBook(DictStore())
    items = []
    for n in range(entries):
        thing = LORE_THINGS[n % len(LORE_THINGS)]
        town = TOWNS_ASKED[(n // len(LORE_THINGS)) % len(TOWNS_ASKED)]
        share = n % 10
        who = (
            None
            if share < 3
            else f"A{n % assistants}" if share < 6 else f"room:r{n % 10}" if share < 8 else
            f"tag:t{n % 5}"
        )  # fmt: skip
        items.append(
            {
                "title": f"The {thing} of {town}, note {n}",
                "text": f"In {town}, the {thing} story number {n} began in the year "
                f"{1000 + n % 300}; it is told at the {LORE_THINGS[(n * 7) % 16]}.",
                "who": who,
            }
        )
    book.add_many(items, by="bench")
    return book


def lore_at_scale(quick: bool = False) -> list[Result]:
    """10b. Recall per turn with 10,000 lore entries shared by 100 assistants vs none."""
    entries, assistants = (1000, 20) if quick else (10000, 100)
    rounds = 30 if quick else 200
    data = generate(people=30, days=20, seed=9)
    memory = mixed_memory(1000, data)
    brain = memory.brain
    brain.index.build()
    started = time.perf_counter()
    book = lore_book_for(entries, assistants)
    stored = time.perf_counter() - started
    started = time.perf_counter()
    LoreBook(book.store).search("mine", None, 1)  # a server start: the index built from store
    built = time.perf_counter() - started
    knowers = [Knower.of(f"A{n}", room=f"r{n % 10}", tags=[f"t{n % 5}"]) for n in range(assistants)]
    now = data.lines[-1].time + timedelta(hours=1)
    queries = []
    for n in range(len(TURN_QUERIES)):
        asker, other = data.people[n], data.people[-1 - n]
        text = TURN_QUERIES[n].format(me=ASSISTANT, other=other, town=TOWNS_ASKED[n % 4])
        queries.append((text, asker))
    samples: dict[str, list[float]] = {"none": [], "lore": []}
    lore_items = 0
    gc.collect()
    gc.disable()
    try:
        for round_no in range(rounds + 5):
            text, asker = queries[round_no % len(queries)]
            key = person_key(None, asker)
            # each round another of the assistants recalls, over the one shared book
            knower = knowers[round_no % assistants]
            for case in ("none", "lore"):
                brain.lore = (
                    None
                    if case == "none"
                    else lambda q, limit, weights: book.recall(q, knower, limit, weights)
                )
                found = []
                _timed(
                    samples[case] if round_no >= 5 else [],
                    lambda: found.extend(
                        brain.recall(text, now=now, served=served_by([key]), people=[asker, key])
                    ),
                )
                if case == "lore":
                    lore_items += sum(item.kind == "lore" for item in found)
    finally:
        gc.enable()
        brain.lore = None

    def ms(values) -> float:
        return statistics.median(values) * 1000

    ratio = ms(samples["lore"]) / ms(samples["none"])
    return [
        Result(
            f"recall per turn with {entries} lore entries shared by {assistants} assistants "
            "vs none",
            f"{ratio:.2f}x",
            "<= 1.5x",
            ratio <= 1.5 and book.builds == 1,
            [
                f"median recall (1,000 own memories, a turn's words): {ms(samples['none']):.2f} "
                f"ms without lore, {ms(samples['lore']):.2f} ms with it ({rounds} recalls each, "
                f"alternating, each by another of the {assistants} assistants)",
                f"one shared index, built {book.builds} time(s) for all of them; built from the "
                f"store in {built * 1000:.0f} ms (a server start); adding the {entries} entries "
                f"took {stored * 1000:.0f} ms",
                f"lore recalled: {lore_items} items in {rounds + 5} recalls (at most half of "
                "each recall's results)",
            ],
        )
    ]


# ---- 11. dreaming cost ------------------------------------------------------------------------

# the structured output each sleep step asks for, and the step's name in the report
STEPS = {
    "ImportanceScores": "scoring",
    "FactExtraction": "facts",
    "EntitySynthesis": "people",
    "RelationshipUpdate": "relationships",
    "Reflection": "reflection",
    "ConsolidatedCore": "core memory",
    "CompactionSummary": "context",
}


class CountingClient:
    """The offline rehearsal model answering in process, counting each step's calls and tokens.

    Which step a call belongs to is read from the structured output it asks for (the
    compaction summary, and a request without one, journaling before compaction, are context
    upkeep). Prompt tokens
    are the whole request; completion tokens are what the model wrote back.

    """

    def __init__(self):
        self.inner = ResponderClient(RehearsalResponder())
        self.counter = TokenCounter()
        self.calls: Counter = Counter()
        self.prompt: Counter = Counter()
        self.completion: Counter = Counter()

    def __call__(self) -> "CountingClient":
        return self

    def complete(self, request):
        reply = self.inner.complete(request)
        schema = (request.response_format or {}).get("json_schema") or {}
        step = STEPS.get(schema.get("name"), "context")
        prompt = self.counter.count_request(request.messages, request.tools)
        written = (reply.content or "") + "".join(call.arguments for call in reply.tool_calls)
        completion = self.counter.count_text(written)
        self.calls[step] += 1
        self.prompt[step] += prompt
        self.completion[step] += completion
        # the assistant's own usage accounting sees the same figures
        return replace(reply, usage=TokenUsage(prompt=prompt, completion=completion))

    def embed(self, model, texts):
        return self.inner.embed(model, texts)


def dreaming_cost(quick: bool = False) -> Result:
    """11. Model calls and tokens per sleep step for new entries and people's observations."""
    entries, people = (40, 6) if quick else (200, 30)
    data = generate(people=30, days=12, seed=10)
    config = AssistantConfig()
    model = CountingClient()
    memory = AssistantMemory(ASSISTANT, model=model, config=config)
    lines = data.lines[:entries]
    for line in lines:
        write_line(memory, line)
    # each person gets a few more new observations than a profile needs; every fifth also has
    # some told in private, which are consolidated apart (a group of their own)
    minimum = config.entity_min_observations
    moment = lines[-1].time
    for n, person in enumerate(data.people[:people]):
        said = [line.text for line in data.lines if line.speaker == person]
        for i in range(minimum + n % 3):
            memory.observe(person, said[i % len(said)], time=moment, speaker=person)
        if n % 5 == 0:
            for i in range(minimum):
                text = f"{person} whispered something about their plans, part {i}."
                memory.observe(person, text, time=moment, speaker=person, audience=[person])
    groups = _people_groups(memory, minimum)
    # the relationships step's units (a person and an audience with evidence), before the sleep
    _, units, _ = relationship_plan(memory.brain, moment + timedelta(hours=2))
    relationship_groups = Counter(str(unit["audience"]) for unit in units)

    reports = memory.consolidate(now=moment + timedelta(hours=2))
    journal = memory.journal.all()
    dreaming = [step for report in reports if isinstance(report, list) for step in report]
    reported = Counter()
    for step in dreaming:
        reported[step["step"]] += step.get("calls", 0)
    compacting = [report for report in reports if isinstance(report, dict)]

    # the most calls each step may make: one per batch, batches never mixing audiences
    batch = config.scoring_batch_size
    consolidated = Counter(
        _audience_key(e)
        for e in journal
        if e.get("memory_ids") or e.get("consolidated")
        if not memory.journal.is_reflection(e)
    )
    reflected = Counter(_audience_key(e) for e in journal[:entries])
    bounds = {
        "scoring": math.ceil(entries / batch),
        "facts": sum(math.ceil(count / batch) for count in consolidated.values()),
        "people": sum(math.ceil(count / config.entity_batch_size) for count in groups.values()),
        "relationships": sum(
            math.ceil(count / config.relationship_batch_size)
            for count in relationship_groups.values()
        ),
        "reflection": sum(1 for count in reflected.values() if count >= 3),
        "core memory": 1,  # one call a sleep, public notes only
    }
    over = [step for step, bound in bounds.items() if model.calls[step] > bound]
    mismatch = [
        step
        for step in ("people", "relationships", "reflection", "core memory")
        if reported[step] != model.calls[step]
    ]
    details = [
        f"{entries} new journal entries ({sum(1 for l in lines if l.audience)} private), "
        f"{people} people with {minimum}+ new observations each "
        f"({sum(groups.values())} groups by audience); {len(compacting)} compacting and "
        f"{len(reports) - len(compacting)} dreaming sleep ticks "
        f"(dream_max_calls_per_tick {config.dream_max_calls_per_tick})",
        f"{'step':<13} calls  most allowed  prompt tokens  completion tokens",
    ]
    steps = ("scoring", "facts", "links", "people", "relationships", "reflection", "core memory")
    for step in (*steps, "context"):
        bound = bounds.get(step, 0)
        details.append(
            f"{step:<13} {model.calls[step]:>5}  {bound:>12}  {model.prompt[step]:>13}  "
            f"{model.completion[step]:>17}"
        )
    profiles = memory.admin.kind("profiles").find()
    details.append(
        f"in all: {sum(model.calls.values())} calls, {sum(model.prompt.values())} prompt + "
        f"{sum(model.completion.values())} completion tokens; "
        f"{len(memory.memories())} memories, {len(memory.reflections())} reflections, "
        f"{sum(len(p.get('attributes', [])) for p in profiles)} attributes"
    )
    if mismatch:
        details.append(f"the sleep's own reports count other calls for: {', '.join(mismatch)}")
    return Result(
        f"dreaming cost for {entries} entries and {people} people",
        f"{sum(model.calls.values())} calls for {sum(bounds.values())} batches"
        + "".join(f"; {step} {model.calls[step]}/{bounds[step]}" for step in over),
        "<= 1 call per batch",
        not over and not mismatch,
        details,
    )


def _audience_key(record: dict) -> tuple | None:
    audience = record.get("audience")
    return None if audience is None else tuple(audience)


def _people_groups(memory: AssistantMemory, minimum: int) -> Counter:
    """How many people have enough new observations for a profile, per audience (each a group
    the people step consolidates; groups of one audience share calls)."""
    groups: Counter = Counter()
    for profile in memory.admin.kind("profiles").find():
        fresh = Counter(
            _audience_key(o) for o in profile["observations"] if not o.get("consolidated")
        )
        for audience, count in fresh.items():
            if count >= minimum:
                groups[audience] += 1
    return groups
