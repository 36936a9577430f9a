"""
`make demo`: a headless scene in an in-process Evennia with the demo world.

Two players, Mira and Tobin, talk to the assistant Aria; an accelerated clock drives her ticks
(5 game-seconds each, no waiting); the transcript shows what the players see and what Aria did:
the tools she called, the journal entries she wrote and the tokens each turn used.

When a model endpoint is configured (`AI_ASSISTANT_BASE_URL` / `AI_ASSISTANT_API_KEY`, or the
SDK's `OPENAI_BASE_URL` / `OPENAI_API_KEY`) the scene uses it. Otherwise it starts the built-in
offline rehearsal model (deterministic rules on 127.0.0.1, not intelligence) and says so first.

The scene runs on a throwaway SQLite database in a temporary folder; it never touches the game's
own database.

"""

import os
import sys
import tempfile
from datetime import datetime, timezone

from world.headless import create_home_room, setup_evennia

WIDTH = 78


def _configured_endpoint() -> bool:
    keys = ("AI_ASSISTANT_BASE_URL", "AI_ASSISTANT_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY")
    return any(os.environ.get(key) for key in keys)


class Transcript:
    """Prints the scene: clock, speech as players see it, and the assistant's actions."""

    def __init__(self, clock, start):
        self.clock = clock
        self.start = start

    def stamp(self) -> str:
        seconds = int((self.clock.now() - self.start).total_seconds())
        return f"[{seconds // 60:02d}:{seconds % 60:02d}]"

    def line(self, text: str, indent: str = "") -> None:
        print(f"{self.stamp()} {indent}{text}")

    def watch(self, character) -> None:
        """Print what `character` is sent, as they would see it."""
        from evennia.utils.ansi import strip_ansi

        def msg(text=None, from_obj=None, **kwargs):
            if isinstance(text, (tuple, list)):
                text = text[0]
            if text:
                for row in strip_ansi(str(text)).splitlines():
                    self.line(row, f"{character.key:>6} sees | ")

        character.msg = msg


def main() -> int:
    from ai_assistant.clock import ManualClock
    from ai_assistant.testing.server import LocalModelServer
    from ai_assistant.testing.rehearsal import RehearsalResponder
    from ai_assistant.driver import inline

    rehearsal = None
    if _configured_endpoint():
        print(
            "Model: the configured endpoint "
            f"({os.environ.get('AI_ASSISTANT_MODEL') or 'default model'})."
        )
    else:
        rehearsal = LocalModelServer(RehearsalResponder()).start()
        os.environ["AI_ASSISTANT_BASE_URL"] = rehearsal.base_url
        os.environ["AI_ASSISTANT_API_KEY"] = "rehearsal"
        print(
            "No model endpoint configured: using the offline REHEARSAL model (deterministic "
            "rules on 127.0.0.1, not intelligence)."
        )
        print(
            "Set AI_ASSISTANT_API_KEY (and AI_ASSISTANT_MODEL / AI_ASSISTANT_BASE_URL) to "
            "use a real model."
        )
    with tempfile.TemporaryDirectory(prefix="ai-assistant-demo-") as folder:
        print("Setting up an in-process Evennia on a throwaway database...")
        setup_evennia(os.path.join(folder, "demo.db3"))
        try:
            run_scene(ManualClock, inline)
        finally:
            if rehearsal:
                rehearsal.stop()
    return 0


def run_scene(clock_class, runner) -> None:
    from evennia.utils import create

    from world.build import build_demo_world

    room, aria = build_demo_world(create_home_room())
    hall = create.create_object("typeclasses.rooms.Room", key="Hallway", nohome=True)
    mira = create.create_object(
        "typeclasses.characters.Character", key="Mira", location=hall, home=hall
    )
    tobin = create.create_object(
        "typeclasses.characters.Character", key="Tobin", location=room, home=room
    )
    create.create_object(
        "evennia.objects.objects.DefaultExit",
        key="north",
        aliases=["n"],
        location=hall,
        destination=room,
    )

    start = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)
    clock = clock_class(start)
    handler = aria.assistant
    script = handler.script
    handler.clock = clock
    handler.runner = runner
    # small numbers so the whole cycle fits in a short scene
    script.db.config_overrides = {
        "min_activity_before_sleep": 8,
        "scoring_batch_size": 2,
        "sleep_cooldown_minutes": 30,
    }
    show = Transcript(clock, start)
    for character in (mira, tobin):
        show.watch(character)
    did = "  Aria  did | "

    def on_turn(_script, outcome):
        if outcome.stop_reason == "compaction_only":
            return  # reported below, with the compaction's own numbers
        for call in outcome.tool_calls:
            mark = "ok" if call["ok"] else "REFUSED"
            show.line(
                f"{call['name']}({crop(call['arguments'])}) -> {mark}: {crop(call['result'])}", did
            )
        show.line(
            f"turn: {len(outcome.events)} events, {outcome.model_calls} model calls, "
            f"{outcome.prompt_tokens} prompt + {outcome.completion_tokens} completion tokens, "
            f"ended by {outcome.stop_reason}" + (f" ({outcome.error})" if outcome.error else ""),
            did,
        )

    phase_before = [""]

    def on_sleep_tick(_script, report):
        progress = script.db.consolidation_progress or {}
        done = f"{progress.get('processed_entries', 0)}/{progress.get('total_entries', 0)}"
        if report:
            show.line(
                f"sleep tick ({phase_before[0]}): scored {report['scored']}, consolidated "
                f"{report['consolidated']} into {report['memories']} memories, skipped "
                f"{report['skipped']}; progress {done}",
                did,
            )
        else:
            show.line(f"sleep tick ({phase_before[0]}): nothing to do yet", did)

    handler.on_turn = on_turn
    handler.on_sleep_tick = on_sleep_tick

    def tick(count: int = 1) -> None:
        for _ in range(count):
            clock.advance((script.db.ticker_subscription or {}).get("interval", 5))
            mode = script.db.operating_mode
            phase_before[0] = script.db.sleep_phase or mode
            usage_before = script.db.usage or {}
            script.at_assistant_tick()
            if script.db.operating_mode != mode:
                show.line(
                    f"*** {mode} -> {script.db.operating_mode}: "
                    f"{script.db.mode_transition_reason}",
                    did,
                )
            elif mode == "awake" and (script.db.usage or {}) == usage_before:
                show.line(
                    f"tick: nothing needs the model ({len(handler.brain.events)} "
                    "events waiting, 0 tokens)",
                    did,
                )

    def act(character, command: str) -> None:
        print()
        show.line(f"{command}", f"{character.key:>6}  >> ")
        character.execute_cmd(command)

    print("=" * WIDTH)
    print(f"{room.key}: {room.db.desc}")
    print("=" * WIDTH)
    act(tobin, "say Nice and quiet in here today.")
    tick()
    act(mira, "north")
    tick()
    act(mira, "say Hello Aria! My name is Mira.")
    tick()
    act(tobin, "whisper Aria = Remember that the east door sticks when it rains.")
    tick()
    act(mira, "page Aria = are you still keeping notes?")
    tick()
    act(tobin, "say Aria, give me a minute to find my notes.")
    tick()
    act(tobin, "say Still looking, sorry.")
    tick(2)
    act(mira, "say Aria, thank you for your help.")
    tick()
    act(tobin, "say Aria, you have worked hard. Go get some rest.")
    tick()
    act(mira, "say Aria, remember that I will be back tomorrow at noon.")
    tick()
    act(tobin, "say Aria, go to sleep now, we will be fine.")
    tick()
    print()
    show.line("(Aria sleeps: a sleep tick every 60 s, compacting first, then dreaming)")
    tick(4)
    act(mira, "whisper Aria = Sorry to wake you, where is the east door key?")
    tick(2)
    act(tobin, "say Aria, you can go to sleep again.")
    tick()

    print()
    print("=" * WIDTH)
    print("Emergency compaction: a builder shrinks Aria's context budget")
    print("=" * WIDTH)
    assistant = handler.brain
    messages_before, tokens_before = len(assistant.history), assistant.context_tokens()
    journal_before = len(assistant.journal)
    budget = max(int(tokens_before / 0.85), assistant.fixed_tokens() + 500)
    script.db.config_overrides = {**script.db.config_overrides, "max_context_tokens": budget}
    show.line(
        f"history: {messages_before} messages, next request {tokens_before} tokens; budget now "
        f"{budget} ({100 * tokens_before / budget:.0f}% used, emergency at 80%)"
    )
    tick()
    assistant = handler.brain
    report = handler.last_outcome.compaction
    for entry in assistant.journal.all()[journal_before:]:
        first_line = entry["content"].splitlines()[0]
        show.line(f"journal {entry['id']} ({entry['source_type']}): {first_line}", did)
        if entry["source_type"] == "compaction":
            show.line(crop(entry["content"].split("\n", 1)[1], 150), "    summary | ")
    show.line(
        f"history: {messages_before} -> {len(assistant.history)} messages "
        f"({report['compaction']['compacted']} summarised, extraction journaled "
        f"{report['extraction']['facts_recorded']} facts in {report['extraction']['iterations']} "
        f"iterations); tokens {tokens_before} -> {assistant.context_tokens()}",
        did,
    )
    first = assistant.history.all()[0]
    show.line(f"history now starts with: {crop(first['content'], 70)}", did)

    print()
    print("=" * WIDTH)
    print("What Aria wrote down, and what it cost (the builder's view):")
    print("=" * WIDTH)
    assistant = handler.brain
    for entry in assistant.journal.all():
        source = entry["source_type"]
        if entry["heard_from"]:
            source += f" from {entry['heard_from']}"
        state = "consolidated" if entry.get("consolidated") else "pending"
        if entry.get("skipped"):
            state = "skipped (low importance)"
        print(
            f"  journal {entry['id']} (importance {entry['importance']} by "
            f"{entry['scoring_method']}, {source}, {state}): {entry['content']}"
        )
    for memory in reversed(assistant.long_term.recent(50)):
        print(f"  memory {memory['id']} (from {memory['source_entry_ids'][0]}): {memory['text']}")
    for key, name in assistant.entities.index().items():
        for note in assistant.entities.profile(key)["observations"]:
            print(f"  about {name}: {note['text']}")
    # a builder (created out of the way, after the scene) checks on her
    office = create.create_object("typeclasses.rooms.Room", key="Office", nohome=True)
    builder = create.create_object(
        "typeclasses.characters.Character", key="Builder", location=office, home=office
    )
    builder.permissions.add("Builder")
    show.watch(builder)
    act(builder, "@assistant/memory Aria=east door")
    act(builder, "@assistant/status Aria")


def crop(text: str, width: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 3] + "..."


if __name__ == "__main__":
    sys.exit(main())
