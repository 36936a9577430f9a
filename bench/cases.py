"""
Benchmarks 2-7: in-process, on a real Evennia database (Attributes and all), with the model on
127.0.0.1 (`LocalModelServer`) or, where only the assistant's own CPU is measured, answering
instantly in process.

Each returns a `Result`. Timed figures are ratios of medians of a baseline and a measured case
run alternately in the same process, never bare times.

"""

import argparse
import gc
import os
import tempfile
import json
import math
import statistics
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from django.conf import settings

from ai_assistant.clock import ManualClock
from ai_assistant.llm.chat import ChatReply, TokenUsage, ToolCall
from ai_assistant.testing.server import LocalModelServer
from ai_assistant.offline.rehearsal import RehearsalResponder
from ai_assistant.driver import inline
from ai_assistant import lifecycle as life

START = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)


@dataclass
class Result:
    name: str
    figure: str
    target: str
    passed: bool
    details: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.name}: {self.figure} (target {self.target}) {'PASS' if self.passed else 'FAIL'}"
        )


class InstantClient:
    """A model that answers at once, in process: say, then noop after the tool result."""

    def __init__(self):
        self.calls = 0

    def __call__(self):
        return self

    def complete(self, request):
        self.calls += 1
        if request.messages[-1].get("role") == "tool":
            calls = [ToolCall(f"n{self.calls}", "noop", "{}")]
        else:
            calls = [ToolCall(f"s{self.calls}", "say", '{"text": "Hello there."}')]
        return ChatReply(
            content=None,
            tool_calls=calls,
            finish_reason="tool_calls",
            usage=TokenUsage(prompt=100, completion=10),
        )


class World:
    """A room with a speaker, and helpers to make assistants in it."""

    def __init__(self, room):
        from django.conf import settings
        from evennia.utils import create

        # one visitor asks every assistant many questions a minute: the per-player limit on
        # turns would hold them back, and it is not what these benchmarks measure
        settings.AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE = 0
        self.room = room
        self.speaker = create.create_object(
            "typeclasses.characters.Character", key="Visitor", location=room, home=room
        )
        self.count = 0

    def assistant(self, overrides: dict | None = None, name: str | None = None):
        from evennia.utils import create

        self.count += 1
        character = create.create_object(
            "ai_assistant.characters.AssistantCharacter",
            key=name or f"Bench{self.count}",
            location=self.room,
            home=self.room,
        )
        handler = character.assistant
        handler.clock = ManualClock(START)
        handler.runner = inline
        handler.script.db.config_overrides = dict(overrides or {})
        return character, handler


def _message_pairs(count: int) -> list[dict]:
    messages = []
    for i in range(count // 2):
        messages.append(
            {
                "role": "user",
                "content": f'<event type="say" from="Visitor">question number {i}</event>',
            }
        )
        messages.append({"role": "assistant", "content": f"answer number {i}"})
    return messages


_CONTENTS = (
    "Mira asked me to remember that shelf {i} holds the sea charts.",
    "Tobin said the east door sticks when it rains (day {i}).",
    "Someone mentioned the weather again, visit {i}.",
    "A visitor told me their name is Guest{i} and their quest is the lost atlas.",
    "Small talk about the lamp, round {i}.",
)


def _journal_entries(count: int) -> list[dict]:
    """Entries of varied weight: heard facts, names and quests, small talk."""
    return [
        {
            "id": f"j{i:06d}",
            "seq": i,
            "content": _CONTENTS[i % len(_CONTENTS)].format(i=i),
            "author": "Bench",
            "source_type": "heard" if i % 5 < 2 else "self",
            "heard_from": ("Mira", "Tobin")[i % 2] if i % 5 < 2 else None,
            "location": "Hall",
            "created_at": START.isoformat(),
            "importance": 5,
            "scoring_method": "heuristic",
            "tags": [],
            "consolidated": False,
            "memory_ids": [],
        }
        for i in range(count)
    ]


def _fill(handler, history: int, journal: int) -> None:
    assistant = handler.brain
    assistant.history.extend(_message_pairs(history))
    assistant.journal.entries.extend(_journal_entries(journal))


def tick_overhead(world: World, small=(10, 100), large=(1000, 10000), rounds=30) -> Result:
    """2. CPU time of an awake tick (instant model) with small vs large history and journal."""
    cases = {}
    for label, (history, journal) in (("small", small), ("large", large)):
        character, handler = world.assistant({"max_context_tokens": 2000000})
        _fill(handler, history, journal)
        handler.brain.client_factory = InstantClient()
        cases[label] = (character, handler, [])
    for round_no in range(rounds + 3):
        for label, (character, handler, samples) in cases.items():
            character.assistant.hearing.hear(
                "say", world.speaker, f"{character.key}, question {round_no}?"
            )
            handler.clock.advance(5)
            gc.collect()
            started = time.process_time()
            handler.script.at_assistant_tick()
            elapsed = time.process_time() - started
            if round_no >= 3:  # warm-up
                samples.append(elapsed)
    small_ms = statistics.median(cases["small"][2]) * 1000
    large_ms = statistics.median(cases["large"][2]) * 1000
    ratio = large_ms / small_ms
    return Result(
        f"tick overhead {large[0]} msgs/{large[1]} entries vs {small[0]}/{small[1]}",
        f"{ratio:.2f}x",
        "<= 2x",
        ratio <= 2.0,
        [
            f"median awake tick CPU: {small_ms:.2f} ms small, {large_ms:.2f} ms large "
            f"({rounds} ticks each, alternating)"
        ],
    )


def journal_write(world: World, small=100, large=10000, rounds=60, naive=5000) -> Result:
    """3. Wall time of one journal append at `small` vs `large` existing entries."""
    cases = {}
    for label, size in (("small", small), ("large", large)):
        _, handler = world.assistant()
        handler.brain.journal.entries.extend(_journal_entries(size))
        cases[label] = (handler.brain.journal, [])
    for round_no in range(rounds + 3):
        for label, (journal, samples) in cases.items():
            started = time.perf_counter()
            journal.add(f"entry {round_no}", author="Bench", now=START)
            if round_no >= 3:
                samples.append(time.perf_counter() - started)
    small_ms = statistics.median(cases["small"][1]) * 1000
    large_ms = statistics.median(cases["large"][1]) * 1000
    ratio = large_ms / small_ms
    details = [f"median append: {small_ms:.2f} ms at {small}, {large_ms:.2f} ms at {large}"]
    if naive:
        # for comparison: the layout the design rules out, one Attribute holding a list
        holder, _ = world.assistant()
        holder.db.naive_journal = _journal_entries(naive)
        samples = []
        for i in range(10):
            started = time.perf_counter()
            holder.db.naive_journal.append({"content": f"x{i}"})
            samples.append(time.perf_counter() - started)
        details.append(
            f"(a single-Attribute list at {naive} entries: "
            f"{statistics.median(samples) * 1000:.1f} ms per append)"
        )
    return Result(
        f"journal append at {large} vs {small} entries",
        f"{ratio:.2f}x",
        "<= 2x",
        ratio <= 2.0,
        details,
    )


class Recording:
    """Wraps a responder, keeping every request."""

    def __init__(self, responder):
        self.responder = responder
        self.requests = []

    def respond(self, request):
        self.requests.append(request)
        return self.responder.respond(request)


def _use_server(server: LocalModelServer) -> None:
    settings.AI_ASSISTANT_BASE_URL = server.base_url
    settings.AI_ASSISTANT_API_KEY = "bench"


def idle_cost(world: World, ticks=1000) -> Result:
    """4. Model calls and tokens over idle awake ticks (ambient chatter only)."""
    recording = Recording(RehearsalResponder())
    with LocalModelServer(recording) as server:
        _use_server(server)
        character, handler = world.assistant()
        for i in range(ticks):
            if i % 10 == 0:
                world.speaker.execute_cmd(f"say the weather is fine today, part {i}")
            handler.clock.advance(5)
            handler.script.at_assistant_tick()
        usage = handler.status().usage
    calls, tokens = len(recording.requests), usage.total_tokens
    return Result(
        f"idle cost over {ticks} awake ticks",
        f"{calls} calls, {tokens} tokens",
        "0",
        calls == 0 and tokens == 0,
        [
            f"{ticks // 10} ambient lines heard; pending events kept: "
            f"{handler.status().pending_events}"
        ],
    )


def sleep_cost(world: World, entries=200, batch=10) -> Result:
    """5. Model calls and tokens to consolidate `entries` journal entries."""
    recording = Recording(RehearsalResponder())
    with LocalModelServer(recording) as server:
        _use_server(server)
        _, handler = world.assistant({"scoring_batch_size": batch})
        assistant = handler.brain
        assistant.journal.entries.extend(_journal_entries(entries))
        assistant.lifecycle.go_to_sleep(
            handler.clock.now(), reason="bench", initiated_by="builder", enforce_safeguards=False
        )
        ticks = 0
        while handler.script.db.sleep_phase == life.COMPACTING and ticks < 10 * entries:
            handler.clock.advance(60)
            handler.script.at_assistant_tick()
            ticks += 1
        usage = handler.status().usage
    kinds = [
        r.get("response_format", {}).get("json_schema", {}).get("name") for r in recording.requests
    ]
    scoring = kinds.count("ImportanceScores")
    extraction = kinds.count("FactExtraction")
    batches = math.ceil(entries / batch)
    memories = handler.brain.long_term.count()
    return Result(
        f"sleep cost for {entries} entries (batch {batch})",
        f"{scoring} scoring calls for {batches} batches, {usage.total_tokens / entries:.0f} "
        "tokens per entry",
        "<= 1 scoring call per batch",
        scoring <= batches and handler.script.db.sleep_phase == life.DREAMING,
        [
            f"{len(recording.requests)} calls in all ({scoring} scoring, {extraction} extraction) "
            f"over {ticks} sleep ticks; {usage.prompt_tokens} prompt + {usage.completion_tokens} "
            f"completion tokens; {memories} memories stored"
        ],
    )


# list prices per million tokens of a small hosted model (gpt-4o-mini); a batch costs half
PRICE_PROMPT = 0.15
PRICE_COMPLETION = 0.60
BATCH_DISCOUNT = 0.5


def _estimated_cost(usage) -> float:
    """Dollars for the usage: direct tokens at list price, batch tokens at the discount."""
    direct_prompt = usage.prompt_tokens - usage.batch_prompt_tokens
    direct_completion = usage.completion_tokens - usage.batch_completion_tokens
    direct = direct_prompt * PRICE_PROMPT + direct_completion * PRICE_COMPLETION
    batch = usage.batch_prompt_tokens * PRICE_PROMPT + usage.batch_completion_tokens * (
        PRICE_COMPLETION
    )
    return (direct + batch * BATCH_DISCOUNT) / 1_000_000


# a day in the hall: who speaks to the assistant, and what (the offline rehearsal model journals
# names, "remember ..." and bookmarks, and answers everything else)
_DAY_LINES = (
    ("Mira", "my name is Mira, I keep the maps."),
    ("Tobin", "my name is Tobin."),
    ("Mira", "remember that shelf {i} holds the sea charts."),
    ("Tobin", "remember that the east door sticks when it rains, day {i}."),
    ("Guest", "what a fine lamp, round {i}."),
    ("Mira", "important: the atlas of shelf {i} is missing."),
    ("Tobin", "remember that Tobin owes Mira {i} coins."),
    ("Guest", "is it going to rain, {i}?"),
)


def _sleep_until_rested(handler, limit: int) -> int:
    """Sleep ticks until compacting and every dreaming step are done; how many ticks it took."""
    from ai_assistant.sleep.dreaming import DREAMING_STEPS
    from ai_assistant.state import DREAMING_PROGRESS

    names = [step.name for step in DREAMING_STEPS]
    ticks = 0
    while ticks < limit:
        done = (handler.script.attributes.get(DREAMING_PROGRESS) or {}).get("done", [])
        if handler.script.db.sleep_phase == life.DREAMING and all(n in done for n in names):
            break
        handler.clock.advance(60)
        handler.script.at_assistant_tick()
        ticks += 1
    return ticks


def _usage_of(handler) -> tuple:
    usage = handler.status().usage
    return usage, (usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.batch_calls)


def _a_day(world: World, batch_mode: bool, lines: int) -> dict:
    """An assistant's day of activity (people talk to it), the night's sleep once the game day
    has ended, then a quiet day and its sleep."""
    from datetime import timedelta

    from evennia.utils import create

    recording = Recording(RehearsalResponder())
    with LocalModelServer(recording) as server:
        _use_server(server)
        overrides = {
            "scoring_batch_size": 10,
            "entity_min_observations": 2,
            "reflection_threshold": 20,
            "core_memory_min_importance": 6,
            "batch_enabled": batch_mode,
        }
        character, handler = world.assistant(overrides, name=f"Day{world.count + 1}")
        handler.game_clock = handler.clock  # game time runs with the bench's clock
        people = {
            name: create.create_object(
                "typeclasses.characters.Character", key=name, location=world.room, home=world.room
            )
            for name in ("Mira", "Tobin", "Guest")
        }
        for i in range(lines):
            name, text = _DAY_LINES[i % len(_DAY_LINES)]
            people[name].execute_cmd(f"say {character.key}, {text.format(i=i)}")
            handler.clock.advance(60)
            handler.script.at_assistant_tick()
        day_usage, day = _usage_of(handler)
        entries = len(handler.brain.journal)
        # the night: the game day has ended, it sleeps until every step is done
        handler.clock.advance(int(timedelta(hours=16).total_seconds()))
        asked = len(recording.requests)
        handler.brain.lifecycle.go_to_sleep(
            handler.clock.now(), reason="night", initiated_by="builder", enforce_safeguards=False
        )
        night_ticks = _sleep_until_rested(handler, 400)
        night_usage, after_night = _usage_of(handler)
        kinds = [
            r.get("response_format", {}).get("json_schema", {}).get("name") or "other"
            for r in recording.requests[asked:]
        ]
        brain = handler.brain
        result = {
            "http": server.requests_served,
            "day": day,
            "entries": entries,
            "night": tuple(b - a for a, b in zip(day, after_night)),
            "day_cost": _estimated_cost(day_usage),
            "night_cost": _estimated_cost(night_usage) - _estimated_cost(day_usage),
            "night_ticks": night_ticks,
            "kinds": {kind: kinds.count(kind) for kind in dict.fromkeys(kinds)},
            "memories": sorted(m["text"] for m in brain.long_term.recent(1000)),
            "profiles": sorted(
                (p["name"], len(p.get("attributes", []))) for p in brain.entities.profiles()
            ),
            "digests": len(brain.digests),
            "core": len(brain.core_memory.items()),
        }
        # a quiet day: it wakes, nobody comes, and it sleeps again
        brain.lifecycle.wake_up(handler.clock.now(), "morning")
        handler.clock.advance(int(timedelta(hours=20).total_seconds()))
        handler.brain.lifecycle.go_to_sleep(
            handler.clock.now(), reason="night", initiated_by="builder", enforce_safeguards=False
        )
        _sleep_until_rested(handler, 50)
        usage, after_quiet = _usage_of(handler)
        result["quiet"] = tuple(b - a for a, b in zip(after_night, after_quiet))
        result["cost"] = _estimated_cost(usage)
        return result


def day_cost(world: World, lines=24) -> Result:
    """13. A day of activity and its sleep, with and without batch mode; then a quiet day."""
    direct = _a_day(world, False, lines)
    batched = _a_day(world, True, lines)
    ratio = batched["night_cost"] / direct["night_cost"] if direct["night_cost"] else 1.0
    same = direct["memories"] == batched["memories"] and direct["profiles"] == batched["profiles"]
    quiet = direct["quiet"][0] + batched["quiet"][0]

    def row(label, run):
        calls, prompt, completion, from_batches = run["night"]
        return (
            f"{label}: the day {run['day'][0]} calls, {run['day'][1] + run['day'][2]} tokens "
            f"({run['entries']} journal entries); its sleep {calls} model replies "
            f"({from_batches} from batches) over {run['night_ticks']} ticks, {prompt} prompt + "
            f"{completion} completion tokens ({', '.join(f'{k} {v}' for k, v in run['kinds'].items())}); "
            f"{len(run['memories'])} memories, {run['digests']} digests, {run['core']} core notes; "
            f"the quiet day's sleep {run['quiet'][0]} calls; per 1000 assistants: the day "
            f"${run['day_cost'] * 1000:.2f}, its sleep ${run['night_cost'] * 1000:.3f}"
        )

    return Result(
        f"a day of activity and its sleep ({lines} lines)",
        f"sleep in batches {ratio:.2f}x the direct cost, same memories: "
        f"{'yes' if same else 'no'}, quiet day {quiet} calls",
        "<= 0.55x, same memories, 0 calls",
        ratio <= 0.55 and same and quiet == 0,
        [
            row("direct", direct),
            row("batch ", batched),
            f"prices: ${PRICE_PROMPT}/M prompt, ${PRICE_COMPLETION}/M completion tokens, "
            f"batch at {BATCH_DISCOUNT:.0%} (awake turns never go through a batch)",
        ],
    )


def prompt_stability(world: World, turns=15) -> Result:
    """6. Share of prompt tokens that repeat the previous call's prefix (cacheable)."""
    recording = Recording(RehearsalResponder())
    with LocalModelServer(recording) as server:
        _use_server(server)
        character, handler = world.assistant()
        for i in range(turns):
            world.speaker.execute_cmd(f"say {character.key}, tell me about shelf {i}.")
            handler.clock.advance(5)
            handler.script.at_assistant_tick()
        usage = handler.status().usage
        first_prompt = server.counter.count_request(
            recording.requests[0]["messages"], recording.requests[0].get("tools", [])
        )
    # the first call has no predecessor: measure the ones that do
    prompt = usage.prompt_tokens - first_prompt
    share = usage.cached_tokens / prompt if prompt else 0.0
    return Result(
        f"prompt prefix stability over {turns} turns",
        f"{share:.2f} of prompt tokens",
        ">= 0.80",
        share >= 0.8,
        [
            f"{usage.calls} calls, {usage.prompt_tokens} prompt tokens, "
            f"{usage.cached_tokens} reusable as cached prefix"
        ],
    )


def reference_fifty_message_shape() -> tuple[list[dict], list[dict]]:
    """The reference example: 50 messages of about 70,000 tokens whose last 20 hold about 15,000
    (30 older messages of ~1,800 tokens, 20 recent of ~680)."""

    def messages(prefix: str, count: int, words: int) -> list[dict]:
        return [
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": " ".join(f"{prefix}{i}w{j}" for j in range(words)),
            }
            for i in range(count)
        ]

    return messages("old", 30, 450), messages("new", 20, 170)


def compaction_reduction(world: World) -> Result:
    """7. Token reduction of compaction on the reference 50-message example shape."""
    from ai_assistant.context.compaction import compact_history
    from ai_assistant.driver import drive

    class Summariser:
        def __call__(self):
            return self

        def complete(self, request):
            summary = {"summary": "A summary of the old conversation. " * 20}
            return ChatReply(
                content=json.dumps(summary),
                tool_calls=[],
                finish_reason="stop",
                usage=TokenUsage(100, 140),
            )

    _, handler = world.assistant()
    assistant = handler.brain
    assistant.client_factory = Summariser()
    old, recent = reference_fifty_message_shape()
    assistant.history.extend(old + recent)
    before, messages = assistant.history.tokens(), len(assistant.history)
    drive(compact_history(assistant, START, force=True), inline)
    after = assistant.history.tokens()
    reduction = 1 - after / before
    return Result(
        "compaction on the reference 50-message shape",
        f"{reduction:.1%} reduction",
        ">= 78%",
        reduction >= 0.78,
        [
            f"{messages} messages, {before} tokens -> {len(assistant.history)} messages, "
            f"{after} tokens"
        ],
    )


def standalone(prog: str, quick_help: str, measure, argv=None) -> int:
    """Run one of the benchmarks outside `make bench`'s numbered set (`python -m bench.NAME`):
    a fresh game database, the offline model off (each brings its own on 127.0.0.1), the
    result's details and line printed.

    Args:
        prog (str): Its command, for `--help`.
        quick_help (str): What `--quick` makes smaller.
        measure (callable): `measure(world, quick)` -> `Result`.
        argv (list, optional): The arguments (default: the command line's).

    Returns:
        int: 0 when it passed, else 1 (the exit status).

    """
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args(argv)
    from world.headless import create_home_room, setup_evennia

    with tempfile.TemporaryDirectory(prefix="ai-assistant-bench-") as folder:
        setup_evennia(os.path.join(folder, "bench.db3"))
        settings.AI_ASSISTANT_REHEARSAL = False
        result = measure(World(create_home_room("Bench Hall")), args.quick)
    for detail in result.details:
        print(f"  {result.name}: {detail}")
    print(result.line())
    return 0 if result.passed else 1
