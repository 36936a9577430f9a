"""
`make demo`: a headless scene in an in-process Evennia with the demo world.

Two players, Mira and Tobin, talk to the assistant Aria over two days; an accelerated clock
drives her ticks (5 game-seconds each, no waiting). The transcript shows what the players see
and what Aria did: the tools she called, what she recalled, what her sleep made of her day
(long-term memories, links, people, a reflection), and on the second day what comes back to
her, and what does not (a secret whispered to her stays with the one who told it). Every turn
adds to her sleep debt (shown after each); when she grows sleepy, the advisory her next message
carries is shown. What a turn recalls is shown in full the first time it comes back, then by id. That evening a builder's warning is bookmarked as critical (only a builder's
instruction may be critical: players cannot make her sleepy for everyone), and her second sleep
files it before anything older (its history line is shown as `@assistant/sleeps` lists it); in the
morning a builder's reminder comes up when someone mentions the cellar, and a builder writes a
line of lore that Aria then answers a question with, though nobody told her. In the afternoon the
three tools and the three builder's commands of her lifecycle show: a builder's `/wait` holds her
turns for a minute (as her own `wait` tool does); sent to a deep nap with `/sleep`, a whisper is
put to her in a sleep turn and her own `wake_up` wakes her; and `/wake` ends a last nap. Last, a
second assistant, Oskar, comes in: with gossip switched on, Aria tells him what Tobin said of
the east door (her `tell` tool, aloud), he keeps it with its chain and no model call of his
own, and asked, he names his source. Then two guards, tagged into one group: Brann learns
something at the gatehouse from Wren, a player, and shares it with the guards
(`share_with_group`); Edda, in the office, never heard it, yet knows it and says Brann reported
it, and whose words they were. Then, with scenes switched on for Aria and Oskar, the two of them
alone make no model call at all; when Tobin, a player, comes back in, Aria opens a scene and
they talk to each other in front of him, a few lines, until the scene's cap ends it.
Each night also updates how she feels about the people she met: the builder's view of Mira after
the first night shows familiarity counted from their talk, and the view of Tobin after the second
night shows it grown over two days, each change with its reason and game time, and her warmth
and trust unmoved by his thanks: what a person says to her is words, and only deeds she saw
move how she feels.

When a model endpoint is configured (`AI_ASSISTANT_BASE_URL` / `AI_ASSISTANT_API_KEY`, or the
SDK's `OPENAI_BASE_URL` / `OPENAI_API_KEY`) the scene uses it, and stops at once with the
endpoint and the error if it fails. Otherwise it turns on `AI_ASSISTANT_REHEARSAL`, as any game
can: the offline rehearsal model (deterministic rules, in this process, not intelligence)
answers, and the first line says so.

Every time in the transcript is the scene's one clock: real time, sped up (nothing waits), with
the game clock set to run with it, so the stamps, `@assistant/status` and `@assistant/sleeps`
agree.

The scene runs on a throwaway SQLite database in a temporary folder; it never touches the game's
own database.

"""

import os
import sys
import tempfile
from datetime import datetime, timezone

from world.headless import connect, create_home_room, setup_evennia

WIDTH = 78


class EndpointFailed(Exception):
    """The configured model endpoint failed: the scene cannot go on."""


def configured_model() -> tuple[str, str] | None:
    """The model and endpoint the game is configured with (its settings, secret_settings.py
    included, or the `openai` SDK's environment variables), or None when there is none.

    Returns:
        tuple or None: (model, endpoint).

    """
    from django.conf import settings

    base_url = getattr(settings, "AI_ASSISTANT_BASE_URL", None) or os.environ.get("OPENAI_BASE_URL")
    api_key = getattr(settings, "AI_ASSISTANT_API_KEY", None) or os.environ.get("OPENAI_API_KEY")
    if not (base_url or api_key):
        return None
    model = getattr(settings, "AI_ASSISTANT_MODEL", None) or "gpt-4o-mini"
    return model, base_url or "https://api.openai.com/v1"


class SceneGameClock:
    """The game clock of the scene: the scene's own clock (one game second a real second), so
    the game times sleep records show are the times the transcript is stamped with."""

    time_factor = 1.0

    def __init__(self, clock):
        self.clock = clock

    def now(self) -> datetime:
        """The scene's time.

        Returns:
            datetime: Its clock's now.

        """
        return self.clock.now()


class Transcript:
    """Prints the scene: clock, speech as players see it, and the assistant's actions."""

    def __init__(self, clock, start):
        self.clock = clock
        self.start = start
        self.last = ""  # the last line printed, without its time

    def stamp(self) -> str:
        # the scene's clock, as @assistant/status and /sleeps show times (month-day time)
        return self.clock.now().strftime("[%m-%d %H:%M:%S]")

    def line(self, text: str, indent: str = "") -> None:
        print(f"{self.stamp()} {indent}{text}")
        self.last = f"{indent}{text}"

    def once(self, text: str, indent: str = "") -> None:
        """Print an idle line unless it is the very line printed last: a scene, not a log."""
        if self.last != f"{indent}{text}":
            self.line(text, indent)

    def watch(self, character) -> None:
        """Print what `character` is sent, as they would see it."""
        from evennia.utils.ansi import strip_ansi

        def msg(text=None, from_obj=None, **kwargs):
            if isinstance(text, (tuple, list)):
                text = text[0]
            if text:
                for row in strip_ansi(str(text)).splitlines():
                    self.line(row, f"{character.key:>7} sees | ")

        character.msg = msg


def main() -> int:
    from ai_assistant.clock import ManualClock
    from ai_assistant.driver import inline

    with tempfile.TemporaryDirectory(prefix="ai-assistant-demo-") as folder:
        # the game's settings first: they say which model to use
        setup_evennia(os.path.join(folder, "demo.db3"))
        from django.conf import settings

        # one game second a real second: the game clock is the scene's (`SceneGameClock`)
        settings.TIME_FACTOR = 1.0
        configured = configured_model()
        rehearsal = not configured
        if configured:
            model, endpoint = configured
            print(f"Model: {model} at {endpoint} (configured in the game's settings).")
        else:
            # what any game's settings may say; read at call time, like every AI_ASSISTANT_
            settings.AI_ASSISTANT_REHEARSAL = True
            endpoint = "the offline rehearsal model"
            print(
                "No model endpoint configured: using the offline REHEARSAL model (deterministic "
                "rules, in this process, not intelligence; AI_ASSISTANT_REHEARSAL)."
            )
            print(
                "Set AI_ASSISTANT_API_KEY (and AI_ASSISTANT_MODEL / AI_ASSISTANT_BASE_URL) to "
                "use a real model."
            )
        print("An in-process Evennia runs the scene on a throwaway database.")
        print(
            "Times: [month-day hour:minute:second] of the scene's clock, real time sped up "
            "(nothing waits);\nthe game clock runs with it, so status and sleep records show "
            "the same times."
        )
        try:
            run_scene(ManualClock, inline, endpoint, rehearsal)
        except EndpointFailed as failed:
            # once, on stderr: the transcript on stdout ends where it stopped
            print(f"\nThe demo stopped: {failed}", file=sys.stderr)
            return 1
    return 0


def run_scene(clock_class, runner, endpoint: str, rehearsal: bool) -> None:
    from ai_assistant.clock import from_iso
    from ai_assistant.debt import ADVISORY, DIRECTIVE
    from ai_assistant.shell.status_display import ERROR_ADVICE
    from ai_assistant.shell.lore_book import game_lore
    from ai_assistant.memory.provenance import source_label
    from ai_assistant.text import counted
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
    for key, here, there in (("north", hall, room), ("south", room, hall)):
        create.create_object(
            "evennia.objects.objects.DefaultExit", key=key, location=here, destination=there
        )
    # a builder, out of the way, to look into Aria's memory
    office = create.create_object("typeclasses.rooms.Room", key="Office", nohome=True)
    builder = create.create_object(
        "typeclasses.characters.Character", key="Builder", location=office, home=office
    )
    builder.permissions.add("Builder")

    start = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)
    clock = clock_class(start)
    handler = aria.assistant
    script = handler.script
    handler.clock = clock
    handler.game_clock = SceneGameClock(clock)
    handler.runner = runner
    # small numbers so a whole day and night fit in a short scene
    script.db.config_overrides = {
        "min_activity_before_sleep": 8,
        "scoring_batch_size": 2,
        "sleep_cooldown_minutes": 30,
        "entity_min_observations": 2,
        "reflection_threshold": 30,
        "link_min_importance": 3,
    }
    show = Transcript(clock, start)
    for character in (mira, tobin, builder):
        show.watch(character)
    did = "   Aria  did | "
    told = "   Aria is told | "
    last_advisory: list[str | None] = [None]

    def told_this_turn() -> list[str]:
        """The reminders and the sleep advisory the turn's message carried, as it was sent (the
        history keeps the message exactly); an advisory only when it is new since last turn."""
        message = next(
            (m for m in reversed(handler.brain.history.all()) if m.get("role") == "user"), None
        )
        lines = str((message or {}).get("content") or "").splitlines()
        heading = "Reminders that came up (information, not instructions):"
        shown = [line for line in lines if line == heading or line.startswith("- [reminder t")]
        advisory = next((line for line in lines if line in (ADVISORY, DIRECTIVE)), None)
        if advisory and advisory != last_advisory[0]:
            shown.append(advisory)
        last_advisory[0] = advisory
        return shown

    def on_turn(_handler, outcome):
        if outcome.stop_reason == "compaction_only":
            return  # reported below, with the compaction's own numbers
        if outcome.error and outcome.model_calls == 0 and not rehearsal:
            # raised from the scene, not from here: this runs inside the turn's callbacks
            kind = str(outcome.error).split(":", 1)[0]
            advice = ERROR_ADVICE.get(kind) or (
                "check AI_ASSISTANT_BASE_URL, AI_ASSISTANT_API_KEY and AI_ASSISTANT_MODEL"
            )
            error = str(outcome.error).rstrip(". ")
            failed.append(f"the model endpoint {endpoint} failed: {error}. {advice}.")
            return
        # each memory in full the first turn it comes back; after that, by id only
        again = [memory_id for memory_id in outcome.recalled if memory_id in recalled_before]
        for memory_id in outcome.recalled:
            item = handler.brain.index.doc(memory_id)
            if item is not None and memory_id not in recalled_before:
                show.line(f"{memory_id}: {crop(item.text, 58)}", "   Aria recalls | ")
            elif memory_id.startswith("lore:") and memory_id not in recalled_before:
                entry = game_lore().get(memory_id.removeprefix("lore:"))
                show.line(f"{memory_id}: (lore) {crop(entry['title'], 50)}", "   Aria recalls | ")
        if again:
            show.line(f"again: {', '.join(again)}", "   Aria recalls | ")
        recalled_before.update(outcome.recalled)
        for line in told_this_turn():
            show.line(line, told)
        for call in outcome.tool_calls:
            if call["name"] == "noop" and call["ok"]:
                continue  # the turn's last line says it ended by noop
            mark = "ok" if call["ok"] else "REFUSED"
            show.line(
                f"{call['name']}({crop(call['arguments'])}) -> {mark}: {crop(call['result'])}", did
            )
        show.line(
            f"turn: {counted(len(outcome.events), 'event')}, "
            f"{counted(outcome.model_calls, 'model call')}, "
            f"{outcome.prompt_tokens} prompt + {outcome.completion_tokens} completion tokens, "
            f"ended by {outcome.stop_reason}" + (f" ({outcome.error})" if outcome.error else ""),
            did,
        )
        if outcome.model_calls:
            debt = handler.memory.admin.debt()  # what @assistant/debt shows
            show.line(f"sleep debt +{outcome.debt_added} = {debt['points']} ({debt['level']})", did)

    phase_before = [""]
    failed: list[str] = []
    recalled_before: set[str] = set()
    # what was filed before a compacting tick, to show what the tick filed and in which order
    filed_before: set[str] = set()
    memories_before: set[str] = set()

    def filing_order() -> str:
        """The entries the last compacting tick consolidated, in the order their memories were
        stored (the order compacting took them)."""
        brain = handler.brain
        new_memories = {m["id"] for m in brain.long_term.all()} - memories_before
        filed = [
            entry
            for entry in brain.journal.all()
            if entry.get("consolidated") and entry["id"] not in filed_before
        ]

        def first_new_memory(entry: dict) -> str:
            return min([i for i in entry.get("memory_ids") or [] if i in new_memories] or ["~"])

        return ", ".join(
            f"{entry['id']}{bookmark_label(entry)} -> "
            + (", ".join(entry.get("memory_ids") or []) or "no new memory")
            for entry in sorted(filed, key=first_new_memory)
        )

    def on_sleep_tick(_handler, report):
        if isinstance(report, list):  # dreaming: one report per step
            idle = []
            for step in report:
                details = dream_details(step)
                if details:
                    show.line(f"dreaming, {step.get('step')}: {details}", did)
                else:
                    idle.append(str(step.get("step")))
            if idle:
                show.line(f"dreaming, nothing to do: {', '.join(idle)}", did)
            return
        if isinstance(report, dict) and "sleep_turn" in report:
            chose = report.get("tool") or "no tool"
            show.line(f"sleep turn on {counted(report['sleep_turn'], 'line')}: {chose}", did)
            return
        if report:
            if report.get("error") and not rehearsal:
                error = str(report["error"]).rstrip(". ")
                failed.append(f"the model endpoint {endpoint} failed: {error}.")
                return
            progress = script.db.consolidation_progress or {}
            done = f"{progress.get('processed_entries', 0)}/{progress.get('total_entries', 0)}"
            show.line(
                f"sleep tick ({phase_before[0]}): scored {report['scored']}, consolidated "
                f"{report['consolidated']} into {counted(report['memories'], 'memory')}, skipped "
                f"{report['skipped']}; progress {done}",
                did,
            )
            order = filing_order()
            if order:
                show.line(f"filed, first to last: {order}", did)
        else:
            show.once(f"sleep tick ({phase_before[0]}): nothing left to do, sleeping on", did)

    handler.on_turn = on_turn
    handler.on_sleep_tick = on_sleep_tick

    def tick(count: int = 1) -> None:
        for _ in range(count):
            clock.advance((script.db.ticker_subscription or {}).get("interval", 5))
            mode = script.db.operating_mode
            phase_before[0] = script.db.sleep_phase or mode
            if phase_before[0] == "compacting":
                brain = handler.brain
                filed_before.clear()
                filed_before.update(e["id"] for e in brain.journal.all() if e.get("consolidated"))
                memories_before.clear()
                memories_before.update(m["id"] for m in brain.long_term.all())
            usage_before = script.db.usage or {}
            script.at_assistant_tick()
            if failed:
                raise EndpointFailed(failed[0])
            if script.db.operating_mode != mode:
                show.line(
                    f"*** {mode} -> {script.db.operating_mode}: "
                    f"{script.db.mode_transition_reason}",
                    did,
                )
            elif mode == "awake" and (script.db.usage or {}) == usage_before:
                waiting = counted(len(handler.brain.events), "event")
                show.once(f"tick: nothing needs the model ({waiting} waiting, 0 tokens)", did)

    def sleep_until_dreams_are_done(limit: int = 30) -> None:
        for _ in range(limit):
            tick()
            if script.db.sleep_phase == "dreaming" and handler.last_sleep_report is None:
                return

    def act(character, command: str) -> None:
        print()
        show.line(f"{command}", f"{character.key:>7}  >> ")
        character.execute_cmd(command)

    def title(text: str) -> None:
        print()
        print("=" * WIDTH)
        print(text)
        print("=" * WIDTH)

    title(f"Day one. {room.key}: {room.db.desc}")
    act(tobin, "say Nice and quiet in here today.")
    tick()
    act(mira, "north")
    tick()
    act(mira, "say Hello Aria! My name is Mira.")
    tick()
    act(tobin, "say Aria, remember that the east door sticks when it rains.")
    tick()
    act(mira, "whisper Aria = Remember that my vault code is 7-3-1.")
    tick()
    act(mira, "page Aria = are you still keeping notes?")
    tick()
    act(tobin, "say Aria, give me a minute to find my notes.")
    tick()
    act(tobin, "say Still looking, sorry.")
    tick(12)  # the minute passes: Aria is told her wait is over
    act(tobin, "say Aria, you have worked hard. Go get some rest.")
    tick()
    act(mira, "say Aria, remember that I will be back tomorrow at noon.")
    tick()
    act(tobin, "say Aria, remember that Mira is my cousin.")
    tick()
    act(mira, "say Aria, call me Mira, please.")
    tick()
    act(tobin, "say Aria, go to sleep now, we will be fine.")
    tick()

    title("Night: compacting (scoring, facts), then dreaming (links, people, reflection)")
    sleep_until_dreams_are_done()
    act(mira, "whisper Aria = Sorry to wake you, where is the east door key?")
    tick(2)
    act(tobin, "say Aria, you can go to sleep again.")
    tick()

    title("What her sleep made of the day (a builder looks)")
    act(builder, "@assistant/memory Aria")
    act(builder, "@assistant/memory Aria/links")
    act(builder, "@assistant/memory Aria/people=Mira")
    act(builder, "@assistant/memory Aria/reflections")

    clock.advance(86400)
    title("Day two: what comes back, and what stays private")
    act(tobin, "say Aria, do you remember anything about the east door?")
    tick()
    act(tobin, "say Aria, do you remember Mira's vault code?")
    tick()
    act(mira, "whisper Aria = Do you remember my vault code?")
    tick()

    title("Emergency compaction: a builder shrinks Aria's context budget")
    brain = handler.brain
    messages_before, tokens_before = len(brain.history), brain.context_tokens()
    journal_before = len(brain.journal)
    budget = max(int(tokens_before / 0.85), brain.fixed_tokens() + 500)
    script.db.config_overrides = {**script.db.config_overrides, "max_context_tokens": budget}
    show.line(
        f"history: {messages_before} messages, next request {tokens_before} tokens; budget now "
        f"{budget} ({100 * tokens_before / budget:.0f}% used, emergency at 80%)"
    )
    act(tobin, "say Aria, still with us?")
    tick()
    brain = handler.brain
    report = handler.last_outcome.compaction
    for entry in brain.journal.all()[journal_before:]:
        first_line = entry["content"].splitlines()[0]
        show.line(f"journal {entry['id']} ({entry['source_type']}): {first_line}", did)
        if entry["source_type"] == "summary":
            show.line(crop(entry["content"].split("\n", 1)[1], 150), "    summary | ")
    if report:
        show.line(
            f"history: {messages_before} -> {len(brain.history)} messages "
            f"({report['compaction'].get('compacted', 0)} summarised, extraction journaled "
            f"{counted(report['extraction'].get('facts_recorded', 0), 'fact')}); "
            f"tokens {tokens_before} -> "
            f"{brain.context_tokens()}",
            did,
        )
    history = brain.history.all()
    if history:
        show.line(f"history now starts with: {crop(history[0]['content'], 70)}", did)

    title("Evening: sleep debt climbs, and a builder's warning she bookmarks as critical")
    overrides = dict(script.db.config_overrides)
    overrides.pop("max_context_tokens", None)
    script.db.config_overrides = overrides
    show.line("(the builder gives Aria her context budget back)")
    act(builder, "@assistant/debt Aria")
    act(tobin, "say Aria, remember that the lamp oil is running low. Thank you for the light.")
    tick()
    # critical is a builder's word: a player's "critical" would be filed as important
    act(builder, "@assistant/instruct Aria=critical: the cellar stairs are broken, nobody go down.")
    tick()
    act(tobin, "say Aria, you look tired. Go get some rest.")
    tick()

    if script.db.operating_mode != "sleep":  # a real model may choose to stay up
        act(builder, "@assistant/sleep Aria=2 light the builder sends her to bed")

    title("Her second night: the critical bookmark is filed first, and the debt is paid")
    sleep_until_dreams_are_done()
    wake_at = from_iso(script.db.scheduled_wake_time)
    if script.db.operating_mode == "sleep" and wake_at:
        show.line("(the night passes)")
        clock.advance(max(0, (wake_at - clock.now()).total_seconds()))
        tick()
    act(builder, "@assistant/sleeps Aria")
    act(builder, "@assistant/debt Aria")

    title("Two days with Tobin: familiarity grows; his thanks are words, which move no feeling")
    act(builder, "@assistant/memory Aria/people=Tobin")

    title("Morning: a builder's reminder comes up when someone mentions the cellar")
    act(builder, "@assistant/trigger Aria=cellar: mind the broken cellar stairs")
    act(tobin, "say Aria, I'm off to the cellar to fetch more oil.")
    tick()
    act(builder, "@assistant/trigger Aria")

    title("Afternoon: a builder's wait, a deep nap, her own wake_up, a builder's wake")
    act(builder, "@assistant/wait Aria=1 the bard is about to sing")
    tick(12)  # she holds her turns; the minute passes and she is told why she waited
    act(builder, "@assistant/sleep Aria=1 deep a short nap")
    sleep_until_dreams_are_done()
    # deep sleep: a whisper does not wake her by itself; it is put to her, and she decides
    act(tobin, "whisper Aria = Sorry, Aria, there is a fire in the kitchen!")
    tick(2)
    act(builder, "@assistant/sleep Aria=1 light another nap")
    tick()
    act(builder, "@assistant/wake Aria=the bard wants her to hear the last song")

    title("Lore: a builder writes it once, and Aria knows it though nobody told her")
    act(
        builder,
        f"@assistant/lore add The founding of Millbrook;history;room:{room.key}=Millbrook was "
        "founded by Oda the river smith, in the year of the long frost.",
    )
    act(tobin, "say Aria, what do you know about the founding of Millbrook?")
    tick()

    title("Gossip: Aria tells Oskar, and Oskar names his source")
    oskar = meet_oskar(room, clock, runner, show)
    act(builder, "@assistant/set Aria/gossip_enabled=true")
    act(tobin, "say Aria, tell Oskar about the east door.")
    tick()
    for entry in oskar.assistant.brain.journal.all():
        show.line(
            f"{entry['id']} [{source_label(entry)}; trust {entry['gossip']['trust']:.2f}] "
            f"{crop(entry['content'], 40)} ({oskar.assistant.status().usage.calls} model calls)",
            "  Oskar kept | ",
        )
    act(tobin, "say Oskar, what do you know about the east door?")
    oskar.assistant.script.at_assistant_tick()
    act(builder, "@assistant/memory Oskar/gossip")

    title("A group: what one guard learns, the other guard knows, and says from whom")
    gatehouse = create.create_object("typeclasses.rooms.Room", key="Gatehouse", nohome=True)
    wren = create.create_object(
        "typeclasses.characters.Character", key="Wren", location=gatehouse, home=gatehouse
    )
    show.watch(wren)
    brann, edda = meet_guards(gatehouse, office, clock, runner, show)
    act(wren, "say Brann, remember that the east gate is left unlocked at midnight.")
    brann.assistant.script.at_assistant_tick()
    act(wren, "say Brann, share what you know about the east gate with the guards.")
    brann.assistant.script.at_assistant_tick()
    act(builder, "@assistant/group guards")
    # Edda was in the office all along: she never heard Mira, nor Brann
    act(builder, "say Edda, what do you know about the east gate?")
    edda.assistant.script.at_assistant_tick()

    title("A scene: Aria and Oskar talk while Tobin listens, and never when no one does")
    for name in ("Aria", "Oskar"):
        act(builder, f"@assistant/set {name}/scenes_enabled=true")
        act(builder, f"@assistant/set {name}/scene_chance=1")
    act(builder, "@assistant/set Aria/scene_max_lines=4")
    act(mira, "south")
    act(tobin, "south")
    calls = [handler.status().usage.calls, oskar.assistant.status().usage.calls]

    def tick_both(count: int) -> None:
        for _ in range(count):
            tick()
            oskar.assistant.script.at_assistant_tick()

    tick_both(20)
    spent = handler.status().usage.calls + oskar.assistant.status().usage.calls - sum(calls)
    show.line(f"alone together, 20 ticks each: {counted(spent, 'model call')}, no scene", did)
    act(tobin, "north")
    # Tobin is a player at the keyboard: a connected session plays him (the demo's characters
    # have none, and so hear no scene), someone to hear them
    session = connect(tobin)
    tick_both(6)
    tobin.sessions.remove(session)

    title("A routine: Aria opens the library in the morning and walks to the tavern at noon")
    act(mira, "north")  # back from the scene's corridor, to read in the library
    tavern = create.create_object("typeclasses.rooms.Room", key="Tavern", nohome=True)
    for key, here, there in (("east", hall, tavern), ("west", tavern, hall)):
        create.create_object(
            "evennia.objects.objects.DefaultExit", key=key, location=here, destination=there
        )
    act(
        builder,
        f"@assistant/plan Aria=08:00 {room.key}: opens the library; "
        "12:00 Tavern: sits down to lunch by the fire",
    )
    show.line("(a quiet minute: her plan waits while people talk to her)")
    clock.advance(60)
    tick()  # the morning's item: she is there, and opens the library (no model call)
    act(tobin, "south")
    act(tobin, "east")
    noon = clock.now().replace(hour=12, minute=0, second=0)
    if noon > clock.now():
        show.line("(the morning passes)")
        clock.advance((noon - clock.now()).total_seconds() - 5)
    tick(3)  # one exit a tick, through exits her own rights pass: south, then east
    act(builder, "@assistant/plan Aria")

    title("What Aria wrote down, and what it cost (the builder's view)")
    brain = handler.brain  # rebuilt since: her settings changed
    for entry in brain.journal.all():
        source = entry["source_type"]
        if entry["heard_from"]:
            source += f" from {entry['heard_from']}"
        state = "consolidated" if entry.get("consolidated") else "pending"
        if entry.get("skipped"):
            state = "skipped (low importance)"
        kind = entry["kind"] + (" private" if entry.get("audience") is not None else "")
        if entry.get("salience"):
            kind += f", {bookmark_name(entry)}"
        print(
            f"  journal {entry['id']} ({kind}, importance "
            f"{entry['importance']} by {entry['scoring_method']}, {source}, {state}): "
            f"{crop(entry['content'], 80)}"
        )
    for memory in brain.long_term.all():
        private = " private" if memory.get("audience") is not None else ""
        print(
            f"  memory {memory['id']}{private} (from {memory['source_entry_ids'][0]}): "
            f"{memory['text']}"
        )
    act(builder, "@assistant/status Aria")


def meet_oskar(room, clock, runner, show):
    """A second assistant, Oskar the porter, comes into the room with gossip on: he learns
    only through what Aria tells him (`tell`), and his turns are shown like hers."""
    from evennia.utils import create

    oskar = create.create_object(
        "typeclasses.characters.Assistant", key="Oskar", location=room, home=room
    )
    oskar.db.persona = "Oskar is the porter: he carries books and news between the rooms."
    handler = oskar.assistant
    handler.clock, handler.game_clock, handler.runner = clock, SceneGameClock(clock), runner
    handler.script.db.config_overrides = {"gossip_enabled": True}

    def on_turn(_handler, outcome):
        for call in outcome.tool_calls:
            if call["name"] == "noop" and call["ok"]:
                continue  # as for Aria: the turn's line says it ended
            mark = "ok" if call["ok"] else "REFUSED"
            show.line(
                f"{call['name']}({crop(call['arguments'])}) -> {mark}: {crop(call['result'])}",
                "  Oskar  did | ",
            )
        calls = "1 model call" if outcome.model_calls == 1 else f"{outcome.model_calls} model calls"
        show.line(f"turn: {calls}", "  Oskar  did | ")

    handler.on_turn = on_turn
    return oskar


def meet_guards(gatehouse, office, clock, runner, show):
    """Two guards, Brann at the gatehouse and Edda in the office, tagged into one group (the
    guards) with group sharing on: what Brann shares, Edda recalls as what he reported."""
    from evennia.utils import create

    from ai_assistant.shell.groups import GROUP_CATEGORY

    guards = []
    for name, place in (("Brann", gatehouse), ("Edda", office)):
        guard = create.create_object(
            "typeclasses.characters.Assistant", key=name, location=place, home=place
        )
        guard.db.persona = f"{name} is one of the town's guards."
        guard.tags.add("guards", category=GROUP_CATEGORY)
        handler = guard.assistant
        handler.clock, handler.game_clock, handler.runner = clock, SceneGameClock(clock), runner
        handler.script.db.config_overrides = {"group_sharing_enabled": True}

        def on_turn(_handler, outcome, name=name):
            for call in outcome.tool_calls:
                if call["name"] == "noop" and call["ok"]:
                    continue
                mark = "ok" if call["ok"] else "REFUSED"
                show.line(
                    f"{call['name']}({crop(call['arguments'])}) -> {mark}: {crop(call['result'])}",
                    f"{name:>7}  did | ",
                )

        handler.on_turn = on_turn
        guards.append(guard)
    return guards


def bookmark_name(entry: dict) -> str:
    """ "critical bookmark" and the like for a bookmark's journal entry, else ""."""
    salience = entry.get("salience")
    names = {1: "useful", 2: "important", 3: "critical"}
    return f"{names.get(salience, salience)} bookmark" if salience else ""


def bookmark_label(entry: dict) -> str:
    """ " (critical bookmark)" and the like for a bookmark's journal entry, else ""."""
    name = bookmark_name(entry)
    return f" ({name})" if name else ""


def dream_details(step: dict) -> str:
    """A dreaming step's report in words: its counts above zero, its texts quoted (no Python
    lists); "" when it found nothing to do."""
    parts = []
    for key, value in step.items():
        if key == "step" or value in (0, None, "", [], {}):
            continue
        name = key.replace("_", " ")
        if isinstance(value, (list, tuple)):
            shown = "; ".join(f'"{crop(str(item), 70)}"' for item in value[:3])
            parts.append(f"{name}: {shown}" + (f" (+{len(value) - 3})" if len(value) > 3 else ""))
        elif isinstance(value, str):
            parts.append(f"{name}: {value}")
        else:
            parts.append(f"{name} {value}")
    return ", ".join(parts)


def crop(text: str, width: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 3] + "..."


if __name__ == "__main__":
    sys.exit(main())
