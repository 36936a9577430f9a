"""
Benchmark 9, second part: recall on real long conversations (LoCoMo), when its data is here.

LoCoMo's conversations are long talks between two people over weeks, with questions that name
the turns that answer them. Its licence (CC BY-NC) keeps it out of this repository: the data is
read from `AI_ASSISTANT_LOCOMO` (a path), else from `../shared/data/locomo-dev.json` beside the
project, and the benchmark says so and passes without it.

Each turn becomes one journal entry (`AssistantMemory.add_entry`, the session's date, 30 s
between turns; a shared photo's caption joins its turn), each question of categories 1-4 with
evidence is asked with `recall(question, k=25)`, and a question's score at k is the share of its
evidence turns among the entries the top k items rest on (an item resting on more than three
entries, a whole day's digest, points at nothing). Modes: plain BM25 over the turns (the
project's words), the journal alone, after one night's sleep (the offline rehearsal model), and
with embeddings when `AI_ASSISTANT_BENCH_EMBED_URL` (and `AI_ASSISTANT_BENCH_EMBED_MODEL`) name an
OpenAI-compatible embeddings endpoint, and reranked when `AI_ASSISTANT_BENCH_RERANK_URL` (and
`AI_ASSISTANT_BENCH_RERANK_MODEL`) name a `/rerank` endpoint. Beside recall@k, each mode reports what reaches the
prompt: the share of evidence turns among the lines a turn would show (the default
`recall_limit` best memories, within `recall_budget_tokens`), how many lines that is, and
what they are: how many rest on evidence, and how many of the others are the turn next to a line
shown above them.
What each step adds (sleep over the journal alone, and embeddings over the same sleep and over
the journal alone) is given with a 95% interval from a paired bootstrap over the questions
(`paired_gain`): two conversations are 230 questions, and one question moves a mean by 0.004.

The targets: recall alone (no model calls) at R@10 0.75 or more, R@25 clearly above R@10 (by
0.02), ahead of plain BM25 at every k; after a night's sleep R@10 no lower than the journal
alone's; with embeddings R@10 0.80 or more.

"""

import collections
import json
import os
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bench.cases import Result
from bench.endpoints import EMBED_URL, RERANK_MODEL, RERANK_URL, Endpoints, embedding_model

KS = (5, 10, 25)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
# the targets (see the module doc)
LEXICAL_R10 = 0.75
R25_ABOVE_R10 = 0.02
EMBEDDINGS_R10 = 0.80
# what a step adds is given with a 95% interval from this many resamples of the questions
RESAMPLES = 10_000


def data_path() -> Path:
    """Where the LoCoMo conversations are read from."""
    return Path(os.environ.get("AI_ASSISTANT_LOCOMO") or DEFAULT_DATA)


def turns_of(conversation: dict) -> list[tuple[str, str, str, datetime]]:
    """(turn id, speaker, text, time) of each turn, in order."""
    talk = conversation["conversation"]
    sessions = sorted(
        (key for key in talk if re.fullmatch(r"session_\d+", key)), key=lambda k: int(k[8:])
    )
    turns = []
    for key in sessions:
        start = datetime.strptime(talk[f"{key}_date_time"].strip(), "%I:%M %p on %d %B, %Y")
        start = start.replace(tzinfo=timezone.utc)
        for position, turn in enumerate(talk[key]):
            text = turn["text"]
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            when = start + timedelta(seconds=30 * position)
            turns.append((turn["dia_id"], turn["speaker"], text, when))
    return turns


def _memory(mode: str, turns):
    from ai_assistant.conf import AssistantConfig
    from ai_assistant.memory_api import AssistantMemory

    embedding = embedding_model() if mode in ("embed", "rerank") else None
    if mode == "rerank":
        config = AssistantConfig(recall_rerank_model=os.environ.get(RERANK_MODEL) or "reranker")
        memory = AssistantMemory(
            "Assistant", model=Endpoints(), embedding_model=embedding, config=config
        )
    elif mode == "embed":
        memory = AssistantMemory("Assistant", model=Endpoints(), embedding_model=embedding)
    else:
        memory = AssistantMemory("Assistant")
    entry_of = {}
    for turn_id, speaker, text, when in turns:
        entry_of[memory.add_entry(text, speaker=speaker, time=when)] = turn_id
    if mode != "raw":
        memory.consolidate(now=turns[-1][3] + timedelta(hours=8))
    return memory, entry_of


def _bm25_order(turns):
    """A plain BM25 over the turns, with the project's words."""
    from ai_assistant.memory.lexical import LexicalIndex

    index = LexicalIndex()
    for turn_id, speaker, text, _ in turns:
        index.add(turn_id, f"{speaker}: {text}")
    return lambda question: [doc for doc, _ in index.search(question, max(KS))]


def measure(path: Path, modes: list[str]) -> tuple[dict, dict]:
    """Scores by mode and (k, category), and seconds by mode."""
    scores = {mode: collections.defaultdict(list) for mode in modes}
    seconds = collections.Counter()
    for conversation in json.loads(path.read_text()):
        turns = turns_of(conversation)
        ids = {turn[0] for turn in turns}
        questions = [
            qa
            for qa in conversation["qa"]
            if qa.get("category") in CATEGORIES and qa.get("evidence")
        ]
        for mode in modes:
            started = time.perf_counter()
            if mode == "bm25":
                order = _bm25_order(turns)

                def found(question, k, order=order):
                    return set(order(question)[:k])

            else:
                memory, entry_of = _memory(mode, turns)
                prompt = _prompt_share(memory, entry_of, ids)

                def found(question, k, memory=memory, entry_of=entry_of, cache={}):
                    if question not in cache:
                        cache[question] = memory.recall(question, k=max(KS))
                    got = set()
                    for item in cache[question][:k]:
                        entries = list(item.entry_ids or [])
                        if 0 < len(entries) <= 3:
                            got.update(entry_of.get(entry) for entry in entries)
                    return got

            for qa in questions:
                evidence = [turn for turn in qa["evidence"] if turn in ids]
                if not evidence:
                    continue
                for k in KS:
                    top = found(qa["question"], k)
                    share = sum(turn in top for turn in evidence) / len(evidence)
                    scores[mode][(k, qa["category"])].append(share)
                    scores[mode][(k, 0)].append(share)
                if mode != "bm25":
                    share, lines, on_evidence, beside = prompt(qa["question"], evidence)
                    scores[mode][("prompt", qa["category"])].append(share)
                    scores[mode][("prompt", 0)].append(share)
                    scores[mode][("lines", 0)].append(lines)
                    scores[mode][("on evidence", 0)].append(on_evidence)
                    scores[mode][("beside", 0)].append(beside)
            seconds[mode] += time.perf_counter() - started
    return scores, seconds


def _prompt_share(memory, entry_of: dict, ids: set):
    """What a turn's prompt would show for a question: the share of its evidence turns among
    the recalled lines that fit `recall_budget_tokens` (of the `recall_limit` best), how many
    lines that is, and what those lines are: how many rest on evidence, and how many of the
    others are a turn next to one shown above them (the lines beside a hit)."""
    from ai_assistant.memory.recalled import render

    brain = memory.brain
    config = brain.config
    place = {turn: number for number, turn in enumerate(sorted(ids, key=_turn_order))}

    def shown(question: str, evidence: list) -> tuple[float, int, int, int]:
        items = memory.recall(question, k=config.recall_limit)
        lines = render(items, config.recall_budget_tokens, brain.counter.count_text)
        seen, above = set(), set()
        on_evidence = beside = 0
        for item in items[: len(lines)]:
            entries = list(item.entry_ids or [])
            turns = {entry_of.get(e) for e in entries} - {None} if 0 < len(entries) <= 3 else set()
            if turns & set(evidence):
                on_evidence += 1
            elif any(abs(place[t] - place[u]) == 1 for t in turns for u in above):
                beside += 1
            seen |= turns
            above |= turns
        share = sum(turn in seen for turn in evidence) / len(evidence)
        return share, len(lines), on_evidence, beside

    return shown


def paired_gain(better: list, base: list, resamples: int = RESAMPLES) -> tuple:
    """What `better` adds over `base`, two lists of scores of the same questions in the same
    order, with a 95% interval from a paired bootstrap over the questions: two conversations
    are a few hundred questions, and a change of one question's score moves the mean by 0.004.

    Args:
        better (list): One score a question.
        base (list): The same questions' scores, in the same order.
        resamples (int): How many resamples of the questions.

    Returns:
        tuple: (mean gain, low, high), the interval's bounds from the 2.5th and 97.5th
            percentiles of the resampled means (a fixed seed: the same figures each run).

    """
    import numpy

    if len(better) != len(base) or not base:
        raise ValueError(
            f"paired_gain needs two lists of the same questions; got {len(better)} and "
            f"{len(base)} scores"
        )
    gains = numpy.asarray(better, dtype=float) - numpy.asarray(base, dtype=float)
    random = numpy.random.default_rng(0)
    means = []
    for start in range(0, resamples, 1000):  # (in chunks: all of LoCoMo is 2,000 questions)
        picks = random.integers(0, len(gains), (min(1000, resamples - start), len(gains)))
        means.append(gains[picks].mean(axis=1))
    low, high = numpy.percentile(numpy.concatenate(means), [2.5, 97.5])
    return float(gains.mean()), float(low), float(high)


def _turn_order(turn_id: str) -> tuple[int, int]:
    """A LoCoMo turn id ("D3:12") as (session, turn), to put turns in the order they were said."""
    session, number = turn_id[1:].split(":")
    return int(session), int(number)


NAMES = {
    "bm25": "plain BM25 over the turns",
    "raw": "recall, journal only",
    "slept": "recall after one night's sleep",
    "embed": "after sleep, with embeddings",
    "rerank": "after sleep, reranked (with embeddings if named)",
}


def locomo_recall(quick: bool = False) -> list[Result]:
    """9b. Recall@5/10/25 on LoCoMo's development conversations, by mode and category."""
    name = "recall on LoCoMo (real conversations)"
    path = data_path()
    if quick:
        return [Result(name, "not run (--quick)", "sleep and embeddings never lower R@10", True)]
    if not path.is_file():
        return [
            Result(
                name,
                "not run: no data",
                "sleep and embeddings never lower R@10",
                True,
                [f"no LoCoMo data at {path} (set AI_ASSISTANT_LOCOMO to its path)"],
            )
        ]
    modes = ["bm25", "raw", "slept"]
    if os.environ.get(EMBED_URL):
        modes.append("embed")
    if os.environ.get(RERANK_URL):
        modes.append("rerank")
    scores, seconds = measure(path, modes)

    def mean(mode, k, category=0):
        values = scores[mode][(k, category)]
        return sum(values) / len(values) if values else 0.0

    count = len(scores["raw"][(10, 0)])
    width = max(len(NAMES[mode]) for mode in modes)
    details = [f"{path.name}: {count} questions; R@5 / R@10 / R@25; in the prompt (lines shown)"]
    for mode in modes:
        figures = " / ".join(f"{mean(mode, k):.3f}" for k in KS)
        if mode != "bm25":
            figures += f"; {mean(mode, 'prompt'):.3f} ({mean(mode, 'lines'):.1f} lines)"
        details.append(f"{NAMES[mode]:<{width}}  {figures}  ({seconds[mode]:.0f} s)")
    for mode in modes[1:]:
        lines = mean(mode, "lines")
        on_evidence, beside = mean(mode, "on evidence"), mean(mode, "beside")
        details.append(
            f"the lines shown, {NAMES[mode]}: {on_evidence:.1f} of {lines:.1f} rest on evidence; "
            f"of the others, {beside:.1f} are the turn next to a line shown above, "
            f"{lines - on_evidence - beside:.1f} apart"
        )
    details.append("by category, R@5 / R@10 / R@25 (" + ", ".join(modes) + "):")
    for category, label in CATEGORIES.items():
        figures = ", ".join(
            " / ".join(f"{mean(mode, k, category):.2f}" for k in KS) for mode in modes
        )
        details.append(f"  {label}: {figures}")
    steps = [("sleep over the journal alone", "slept", "raw")]
    if "embed" in modes:
        steps += [
            ("embeddings over the same sleep", "embed", "slept"),
            ("a sleep with embeddings over the journal alone", "embed", "raw"),
        ]
    details.append(
        "what a step adds, R@5 / R@10 / R@25 (a 95% interval, resampling the questions):"
    )
    for label, better, base in steps:
        figures = ", ".join(
            "{:+.3f} ({:+.3f}..{:+.3f})".format(
                *paired_gain(scores[better][(k, 0)], scores[base][(k, 0)])
            )
            for k in KS
        )
        details.append(f"  {label}: {figures}")
    if "embed" not in modes:
        details.append("embeddings: set AI_ASSISTANT_BENCH_EMBED_URL (and _MODEL) to measure them")
    if "rerank" not in modes:
        details.append(f"reranking: set {RERANK_URL} (and {RERANK_MODEL}) to measure it")
    raw = {k: round(mean("raw", k), 3) for k in KS}
    bm25 = {k: round(mean("bm25", k), 3) for k in KS}
    checks = {
        f"journal alone R@10 >= {LEXICAL_R10}": raw[10] >= LEXICAL_R10,
        f"R@25 above R@10 by {R25_ABOVE_R10}": raw[25] >= raw[10] + R25_ABOVE_R10,
        "ahead of plain BM25 at every k": all(raw[k] > bm25[k] for k in KS),
        "sleep does not lower R@10": round(mean("slept", 10), 3) >= raw[10],
    }
    if "embed" in modes:
        checks[f"with embeddings R@10 >= {EMBEDDINGS_R10}"] = (
            round(mean("embed", 10), 3) >= EMBEDDINGS_R10
        )
    if "rerank" in modes:
        # what reranking buys is reported; it must not cost
        before = "embed" if "embed" in modes else "slept"
        checks["reranking does not lower R@10"] = round(mean("rerank", 10), 3) >= round(
            mean(before, 10), 3
        )
    details += [f"{'ok  ' if held else 'MISS'} {check}" for check, held in checks.items()]
    passed = all(checks.values())
    figure = "R@10 " + " / ".join(f"{mean(mode, 10):.3f}" for mode in modes[1:])
    figure += f" vs BM25 {mean('bm25', 10):.3f}"
    target = "R@10 >= 0.75 (0.80 with embeddings), sleep never lower, ahead of BM25"
    return [Result(name, figure, target, passed, details)]
