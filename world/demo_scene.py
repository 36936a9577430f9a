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

WIDTH = 78


def _configured_endpoint() -> bool:
    keys = ("AI_ASSISTANT_BASE_URL", "AI_ASSISTANT_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY")
    return any(os.environ.get(key) for key in keys)


def _setup_evennia(db_path: str) -> None:
    os.environ["TEST_DB_PATH"] = db_path  # read by Evennia's default DATABASES setting
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "server.conf.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    import evennia

    evennia._init()


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
    from ai_assistant.llm.local_server import LocalModelServer
    from ai_assistant.llm.rehearsal import RehearsalResponder
    from ai_assistant.llm.runner import inline

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
        _setup_evennia(os.path.join(folder, "demo.db3"))
        try:
            run_scene(ManualClock, inline)
        finally:
            if rehearsal:
                rehearsal.stop()
    return 0


def run_scene(clock_class, runner) -> None:
    from django.conf import settings
    from evennia.utils import create

    from world.build import build_demo_world

    room = create.create_object("typeclasses.rooms.Room", key="Reading Room", nohome=True)
    settings.DEFAULT_HOME = room.dbref
    room, aria = build_demo_world(room)
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
    script = aria.assistant_script
    script.ndb.clock = clock
    script.ndb.runner = runner
    show = Transcript(clock, start)
    for character in (mira, tobin):
        show.watch(character)

    def on_turn(_script, outcome):
        for call in outcome.tool_calls:
            mark = "ok" if call["ok"] else "REFUSED"
            show.line(
                f"{call['name']}({crop(call['arguments'])}) -> {mark}: " f"{crop(call['result'])}",
                "  Aria  did | ",
            )
        show.line(
            f"turn: {len(outcome.events)} events, {outcome.model_calls} model calls, "
            f"{outcome.prompt_tokens} prompt + {outcome.completion_tokens} completion tokens, "
            f"ended by {outcome.stop_reason}" + (f" ({outcome.error})" if outcome.error else ""),
            "  Aria  did | ",
        )

    script.ndb.on_turn = on_turn

    def tick(count: int = 1) -> None:
        for _ in range(count):
            clock.advance(5)
            before = script.db.usage or {}
            script.at_assistant_tick()
            if (script.db.usage or {}) == before and not script.ndb.in_flight:
                show.line(
                    f"tick: nothing needs the model ({len(script.assistant().events)} "
                    "events waiting, 0 tokens)",
                    "  Aria  did | ",
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

    print()
    print("=" * WIDTH)
    print("What Aria wrote down, and what it cost (the builder's view):")
    print("=" * WIDTH)
    for entry in script.assistant().journal.all():
        source = entry["source_type"] + (
            f" from {entry['heard_from']}" if entry["heard_from"] else ""
        )
        print(
            f"  journal {entry['id']} (importance {entry['importance']}, {source}, "
            f"{entry['location']}): {entry['content']}"
        )
    entities = script.assistant().entities
    for key, name in entities.index().items():
        for note in entities.profile(key)["observations"]:
            print(f"  about {name}: {note['text']}")
    # a builder (created out of the way, after the scene) checks on her
    office = create.create_object("typeclasses.rooms.Room", key="Office", nohome=True)
    builder = create.create_object(
        "typeclasses.characters.Character", key="Builder", location=office, home=office
    )
    builder.permissions.add("Builder")
    show.watch(builder)
    act(builder, "@assistant/status Aria")


def crop(text: str, width: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 3] + "..."


if __name__ == "__main__":
    sys.exit(main())
