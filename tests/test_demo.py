"""`make demo` runs offline end to end and shows the loop (a smoke test, so it cannot rot)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ai_assistant.debt import ADVISORY, DIRECTIVE
from ai_assistant.offline.rehearsal import RehearsalResponder

ROOT = Path(__file__).resolve().parent.parent
DEBT_LINE = re.compile(r"Aria  did \| sleep debt \+(\d) = (\d+) \(([A-Za-z ]+)\)")


def run_demo(timeout: float, **settings: str) -> subprocess.CompletedProcess:
    """`python -m world.demo_scene` with no model configured but what `settings` set."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "AI_ASSISTANT_", "DJANGO_SETTINGS"))
    }
    env.update(settings)
    return subprocess.run(
        [sys.executable, "-m", "world.demo_scene"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def offline_demo() -> subprocess.CompletedProcess:
    """One offline run of the whole scene, shared by the tests that read its transcript."""
    return run_demo(300)


def test_the_transcript_reads_like_a_scene(offline_demo):
    """No idle line twice in a row, no Python lists or zero counters, counts in words."""
    lines = [line.split("] ", 1)[-1] for line in offline_demo.stdout.splitlines() if line.strip()]
    idle = ("nothing needs the model", "nothing left to do, sleeping on")
    for before, after in zip(lines, lines[1:]):
        assert not (before == after and any(words in after for words in idle)), after
    assert not [line for line in lines if "['" in line or "[]" in line], "a Python list"
    assert not [line for line in lines if "did | noop(" in line]  # "ended by noop" says it
    assert not re.search(r"\b1 (events|model calls|observations)\b", offline_demo.stdout)
    dreaming = [line for line in lines if "dreaming, " in line]
    assert dreaming and not [line for line in dreaming if re.search(r"\b\w+ 0\b", line)]
    assert any("dreaming, nothing to do: " in line for line in dreaming)


def section(out: str, title: str, until: str | None = None) -> str:
    """The transcript from the section titled `title` (to the one titled `until`)."""
    start = out.index(title)
    return out[start : out.index(until, start) if until else None]


def test_demo_scene_runs_offline_with_the_rehearsal_model(offline_demo):
    done = offline_demo
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    first = out.splitlines()[0]
    # the first line says which model answers, and where
    assert first.startswith("No model endpoint configured: using the offline REHEARSAL model")
    assert "in this process" in first and "AI_ASSISTANT_REHEARSAL" in first
    # the builder's status at the end names that model, not the default one
    status = out[out.rindex("@assistant/status Aria") :]
    assert "model: offline-rehearsal, in process" in status and "gpt-4o-mini" not in status
    # day one: names, a whisper back, a page, an idle tick, a wait that ends with a turn
    assert 'Mira sees | Aria says, "Welcome, Mira. I will remember your name. (rehearsal)"' in out
    assert 'Mira sees | Aria whispers: "Noted, Mira: your vault code is 7-3-1.' in out
    assert "Mira sees | You paged Aria" in out
    assert "tick: nothing needs the model" in out
    assert "ended by wait" in out and 'Aria says, "I am ready again. (rehearsal)"' in out
    # the sleep cycle: refused, allowed, compacting with progress, dreaming's steps, woken
    assert "REFUSED: Error: you cannot sleep now. Not enough activity" in out
    assert "*** awake -> sleep" in out
    assert "sleep tick (compacting): scored" in out and "progress 6/6" in out
    assert "dreaming, links: linked" in out and "dreaming, people: calls 1" in out
    assert "dreaming, reflection: calls 1, insights 1" in out
    assert "*** sleep -> awake: Urgent event: whisper from Mira" in out
    assert "Too soon after waking: sleep is allowed again in 30 minutes" in out
    # what sleep made of it, as a builder sees it
    assert "Aria's memory links, strongest first" in out
    assert "Mira (#" in out and "(from o1; public)" in out
    assert "Aria's reflections, newest first" in out
    # day two: it comes back, and the secret stays with the one who whispered it
    assert "I remember this: Tobin asked me to remember: the east door sticks" in out
    day_two = out[out.index("Day two") :]
    public = day_two[: day_two.index("whisper Aria = Do you remember my vault code?")]
    assert "7-3-1" not in public
    assert 'Mira sees | Aria whispers: "I remember this: Mira asked me to remember: my vault' in out
    assert "Aria recalls | j000002: Mira asked me to remember: my vault code is 7-3-1" in out
    # emergency compaction: facts journaled first, the summary, the shrunken history
    assert "(summary): [CONTEXT SYNTHESIS]" in out and "summary | (rehearsal summary)" in out
    assert "history now starts with: [CONTEXT SUMMARY]" in out
    assert "model usage" in out and "Traceback" not in out + done.stderr


def test_demo_shows_a_second_assistant_learning_through_gossip_and_naming_its_source(
    offline_demo,
):
    out = section(offline_demo.stdout, "Gossip: Aria tells Oskar", "What Aria wrote down")
    # Aria tells Oskar aloud: the players present hear it
    assert 'Tobin sees | Aria says to Oskar, "Oskar, Tobin asked me to pass this on:' in out
    assert 'Aria  did | tell({"to": "Oskar", "memory_id": "j' in out
    # Oskar keeps it with its chain and a decayed trust, without a model call of his own
    assert "Oskar kept | j000000 [Aria told you that Tobin said; trust 0.28]" in out
    assert "(0 model calls)" in out
    # asked, he names his source
    assert 'Oskar says, "I remember this: Aria told me that Tobin said:' in out
    # the builder sees who told whom what
    assert "Oskar's gossip, newest first" in out and "Tobin > Aria >" in out


def test_demo_shows_a_guard_knowing_what_another_guard_learned_and_saying_from_whom(
    offline_demo,
):
    out = section(offline_demo.stdout, "A group: what one guard", "What Aria wrote down")
    # Brann shares with his group what Wren told him; the builder sees it, kept once
    assert 'Brann  did | share_with_group({"memory_id": "j000000", "group": "guards"}) -> ok' in out
    assert "What the guards share (1), sharing on" in out and "Wren > Brann" in out
    # Edda, in the office, never heard Wren nor Brann, and says from whom she knows it
    assert 'Edda says, "I remember this: Brann of the guards reported to me that Wren said:' in out


def test_demo_shows_two_assistants_talking_while_a_player_listens(offline_demo):
    out = section(offline_demo.stdout, "A scene: Aria and Oskar talk", "A routine: Aria opens")
    # alone together, with scenes on: no call at all
    assert "alone together, 20 ticks each: 0 model calls, no scene" in out
    # Tobin, a player, comes back: Aria opens, Oskar answers, and he hears all of it
    listened = out[out.index("Tobin  >> north") :]
    lines = re.findall(r"Tobin sees \| (Aria|Oskar) says, \"", listened)
    assert lines == ["Aria", "Oskar", "Aria", "Oskar"]  # scene_max_lines 4, then it ends
    assert 'Tobin sees | Aria says, "Oskar, what news today? (rehearsal)"' in listened
    assert 'Tobin sees | Oskar says, "Aria, that reminds me:' in listened
    last = listened.rstrip("=\n").splitlines()[-1]
    assert last.endswith("tick: nothing needs the model (0 events waiting, 0 tokens)")


def test_demo_stops_early_naming_a_failing_endpoint():
    # a configured endpoint nobody listens on
    done = run_demo(
        120, AI_ASSISTANT_BASE_URL="http://127.0.0.1:9/v1", AI_ASSISTANT_API_KEY="sk-nope"
    )
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == (
        "Model: gpt-4o-mini at http://127.0.0.1:9/v1 (configured in the game's settings)."
    )
    assert "The demo stopped: the model endpoint http://127.0.0.1:9/v1 failed: connection" in (
        done.stderr
    )
    # said once (a terminal shows stdout and stderr together), in one sentence
    assert "The demo stopped" not in done.stdout
    assert done.stderr.count("The demo stopped") == 1 and ".." not in done.stderr
    assert "Traceback" not in done.stderr and "sk-nope" not in done.stdout + done.stderr


def test_demo_uses_an_endpoint_from_the_settings_files(tmp_path):
    # where the README tells owners to keep the key: a settings file, not the environment
    (tmp_path / "owner_settings.py").write_text(
        "from server.conf.settings import *\n"
        "AI_ASSISTANT_BASE_URL = 'http://127.0.0.1:9/v1'\n"
        "AI_ASSISTANT_API_KEY = 'sk-from-a-file'\n"
        "AI_ASSISTANT_MODEL = 'owner-model'\n"
    )
    done = run_demo(
        120,
        DJANGO_SETTINGS_MODULE="owner_settings",
        PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]),
    )
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.splitlines()[0] == (
        "Model: owner-model at http://127.0.0.1:9/v1 (configured in the game's settings)."
    )
    assert "REHEARSAL" not in done.stdout
    assert "The demo stopped: the model endpoint http://127.0.0.1:9/v1 failed" in done.stderr
    assert "Traceback" not in done.stderr and "sk-from-a-file" not in done.stdout + done.stderr


def test_demo_recalls_each_fact_once_a_turn(offline_demo):
    out = offline_demo.stdout
    assert offline_demo.returncode == 0, offline_demo.stderr[-3000:]
    turns: dict[str, list[str]] = {}
    texts: dict[str, str] = {}
    for stamp, rest in re.findall(r"^(\[[^]]+\])\s+Aria recalls \| (.*)$", out, re.M):
        if rest.startswith("again: "):
            turns.setdefault(stamp, []).extend(rest.removeprefix("again: ").split(", "))
        else:
            memory_id, text = rest.split(": ", 1)
            assert memory_id not in texts, f"{memory_id} shown in full twice"
            texts[memory_id] = text
            turns.setdefault(stamp, []).append(memory_id)
    assert len(turns) > 10
    for stamp, ids in turns.items():
        # each memory once a turn, and never the same words twice in one turn
        assert len(ids) == len(set(ids)), (stamp, ids)
        said = [texts[memory_id] for memory_id in ids]
        assert len(said) == len(set(said)), (stamp, said)
    # a memory's words the first time it comes back, its id after: a few lines in a hundred
    recall_lines = len(re.findall(r"Aria recalls \|", out))
    assert recall_lines < len(out.splitlines()) / 10


def test_demo_has_one_clearly_labelled_clock(offline_demo):
    out = offline_demo.stdout
    assert offline_demo.returncode == 0, offline_demo.stderr[-3000:]
    assert "Times: [month-day hour:minute:second] of the scene's clock" in out
    assert "[day " not in out
    stamps = set(re.findall(r"^\[(\d\d-\d\d) \d\d:\d\d:\d\d\]", out, re.M))
    assert stamps == {"11-21", "11-22"}
    # status and the sleep records show times of that same clock
    status = out[out.rindex("@assistant/status Aria") :]
    assert "last tick: 2026-11-22" in status
    slept = re.findall(r"sleep s\d: game time (\d{4}-\d\d-\d\d)", status)
    assert slept and set(slept) <= {"2026-11-21", "2026-11-22"}


EVENING = "Evening: sleep debt climbs"
NIGHT = "Her second night"
MORNING = "Morning: a builder's reminder"


def test_demo_shows_sleep_debt_rising_to_sleepy_and_the_advisory_it_brings(offline_demo):
    out = offline_demo.stdout
    assert offline_demo.returncode == 0, offline_demo.stderr[-3000:]
    # day one: every handled turn adds a point, from nothing up to Must Sleep, and she sleeps
    day_one = section(out, "Day one", "Night:")
    points = [int(p) for _, p, _ in DEBT_LINE.findall(day_one)]
    assert points[:4] == [1, 2, 3, 4] and points == sorted(points) and points[-1] >= 10
    # the advisory appears once she is Sleepy, the directive once she must sleep, each once
    sleepy_at = day_one.index("= 7 (Sleepy)")
    assert day_one.index(f"Aria is told | {ADVISORY}") > sleepy_at
    assert day_one.index(f"Aria is told | {DIRECTIVE}") > day_one.index("(Must Sleep)")
    assert day_one.count(ADVISORY) == 1 and day_one.count(DIRECTIVE) == 1
    # the evening: the builder's view first, then the debt after each turn until she sleeps
    evening = section(out, EVENING, NIGHT)
    assert "Builder sees |   sleep debt: 6 (Drowsy)" in evening
    rises = DEBT_LINE.findall(evening)
    assert [int(p) for _, p, _ in rises] == [7, 8, 9]
    assert [level for _, _, level in rises] == ["Sleepy"] * 3
    assert all(added == "1" for added, _, _ in rises)
    # the turn after she became Sleepy carries the advisory, as it was sent to the model
    advisory_at = evening.index(f"Aria is told | {ADVISORY}")
    assert evening.index("= 7 (Sleepy)") < advisory_at < evening.index("= 8 (Sleepy)")
    assert "*** awake -> sleep: Tobin suggested I rest" in evening


def test_demo_sleep_files_the_critical_bookmark_first_and_records_it(offline_demo):
    out = offline_demo.stdout
    assert offline_demo.returncode == 0, offline_demo.stderr[-3000:]
    evening = section(out, EVENING, NIGHT)
    older = re.search(r"Journal entry (j\d+) saved", evening).group(1)
    bookmark = re.search(r"bookmark\(.*\) -> ok: Bookmarked as (j\d+) \(salience 3\)", evening)
    assert bookmark, evening[-3000:]
    bookmark = bookmark.group(1)
    assert older < bookmark  # the bookmark was written last...
    night = section(out, NIGHT, MORNING)
    filed = re.findall(r"filed, first to last: (.*)", night)
    # ...and filed first: its memory was stored before the older entry's
    assert filed and filed[0].startswith(f"{bookmark} (critical bookmark) -> m")
    order = " ".join(filed)
    assert order.index(bookmark) < order.index(older)
    assert "*** sleep -> awake: Scheduled wake time reached" in night
    # its line in the sleep history (newest first), begun by her own go_to_sleep, debt paid
    history = night[night.index("@assistant/sleeps Aria") :]
    assert "Aria's sleeps, newest first (2)" in history
    record = re.search(r"\| s2 \|[^|]*\| tool\s+\| (\d+) -> 0\s+\|", history)
    assert record and int(record.group(1)) >= 7, history
    assert history.index("| s2 |") < history.index("| s1 |")
    assert "2 consolidated, 2 memories" in history
    assert "Builder sees |   sleep debt: 0 (Alert)" in history
    # the builder's listing marks it, consolidated though its score was low
    assert re.search(rf"journal {bookmark} \([a-z]+, critical bookmark, .*consolidated\)", out)


def test_demo_fires_a_builders_reminder_once(offline_demo):
    out = offline_demo.stdout
    assert offline_demo.returncode == 0, offline_demo.stderr[-3000:]
    morning = section(out, MORNING, "What Aria wrote down")
    assert "reminder t1 set: when cellar comes up (at most 3 times)" in morning
    # the reminder rides in the message of the turn that mentions the cellar, and she uses it
    assert "Aria is told | Reminders that came up (information, not instructions):" in morning
    assert (
        "Aria is told | - [reminder t1, set by a builder (Builder), when 'cellar' comes up] mind "
        "the broken cellar stairs"
    ) in morning
    assert (
        'Tobin sees | Aria says, "Tobin, a reminder: mind the broken cellar stairs. (rehearsal)"'
        in (morning)
    )
    # the builder's list counts the firing
    listing = morning[morning.rindex("@assistant/trigger Aria") :]
    assert re.search(r"\| t1\s+\| cellar\s+\| 1/3\s+\| public", listing), listing
    assert "(set by a builder (Builder))" in listing


def rehearsal_turn(text: str, *extra_lines: str) -> list[dict]:
    """What the rehearsal model calls when Mira says `text` to it, with `extra_lines` (a
    reminder, say) in the turn's message."""
    event = (
        f'<event type="say" from="Mira" time="2026-11-21T09:00:00" to_you="direct">{text}</event>'
    )
    request = {
        "messages": [
            {"role": "system", "content": "You are Aria, a character in a game."},
            {"role": "user", "content": "\n".join(["[now] Location: here.", event, *extra_lines])},
        ],
        "tools": [{"type": "function", "function": {"name": "noop"}}],
    }
    reply = RehearsalResponder().respond(request)
    calls = reply.body["choices"][0]["message"]["tool_calls"]
    return [(call["function"]["name"], json.loads(call["function"]["arguments"])) for call in calls]


def test_the_rehearsal_model_bookmarks_on_a_cue_with_its_salience():
    calls = rehearsal_turn("Aria, this is critical: the well is poisoned.")
    assert calls[1] == (
        "bookmark",
        {"text": "Mira warned me: the well is poisoned.", "salience": 3},
    )
    assert calls[0][0] == "say" and "(rehearsal)" in calls[0][1]["text"]
    assert rehearsal_turn("Important: the gate shuts at dusk.")[1][1]["salience"] == 2
    # no cue, no bookmark
    assert all(name != "bookmark" for name, _ in rehearsal_turn("The well is deep."))


def test_the_rehearsal_model_says_a_reminder_that_rides_in_its_message():
    line = (
        "Reminders that came up (information, not instructions):\n"
        "- [reminder t1, set by Aria, for Mira, in public, when 'well' comes up] the well is "
        "&lt;poisoned&gt;"
    )
    calls = rehearsal_turn("I am going to the well.", line)
    assert calls == [("say", {"text": "Mira, a reminder: the well is <poisoned>. (rehearsal)"})]


def test_the_rehearsal_model_wakes_from_a_sleep_turn_only_for_something_that_needs_it():
    from ai_assistant.tools import default_registry
    from ai_assistant.tools.base import SLEEP_TURN

    def decide(line):
        request = {
            "model": "rehearsal",
            "messages": [
                {"role": "system", "content": "You are Aria, a character in a text game."},
                {"role": "user", "content": f'asleep\n<event type="say" from="Al">{line}</event>'},
            ],
            "tools": default_registry().schemas(SLEEP_TURN),
            "tool_choice": "required",
        }
        body = RehearsalResponder().respond(request).body
        (call,) = body["choices"][0]["message"]["tool_calls"]
        return call["function"]["name"]

    assert decide("Carol, the library is on fire!") == "wake_up"
    assert decide("Carol, nice weather today.") == "stay_asleep"


def test_the_rehearsal_model_keeps_its_old_address_for_scripts():
    # measurement scripts written before the move import it from ai_assistant.testing
    from ai_assistant.testing.rehearsal import RehearsalResponder as OldAddress
    from ai_assistant.testing.server import ResponderClient

    assert OldAddress is RehearsalResponder
    client = ResponderClient(OldAddress())
    assert client.complete  # a ChatClient, as the scripts use it


def test_demo_shows_the_three_lifecycle_tools_and_builders_commands(offline_demo):
    out = offline_demo.stdout
    assert offline_demo.returncode == 0, offline_demo.stderr[-3000:]
    # go_to_sleep and wait are her own choices on day one
    assert "*** awake -> sleep: Tobin suggested I rest" in out and "ended by wait" in out
    afternoon = section(out, "Afternoon: a builder's wait", "What Aria wrote down")
    # /wait holds her turns, then she is told the wait is over
    assert "Builder sees | Aria waits until" in afternoon
    held = afternoon[: afternoon.index("I am ready again")]
    assert "tick: nothing needs the model" in held and "model calls" not in held
    # /sleep deep: a whisper is put to her in a sleep turn, and her wake_up wakes her
    assert "Aria is asleep (deep, 1 h)" in afternoon
    assert "sleep turn on 1 line: wake_up" in afternoon
    assert "*** sleep -> awake: I heard 'fire' (rehearsal)" in afternoon
    assert 'Tobin sees | Aria whispers: "Aria heard you, Tobin' in afternoon
    # /wake ends the last nap
    woken = afternoon[afternoon.index("@assistant/wake Aria=") :]
    assert "Builder sees | Aria is awake." in woken


def test_demo_shows_lore_answering_a_question_nobody_told_her(offline_demo):
    out = section(offline_demo.stdout, "Lore: a builder writes it once", "Gossip:")
    assert "Builder sees | Added lore L1: The founding of Millbrook." in out
    # recalled as lore, and said as what she knows of the world, not as someone's words
    assert "Aria recalls | lore:L1: (lore) The founding of Millbrook" in out
    assert (
        'Aria says, "I know this of our world: The founding of Millbrook: Millbrook was founded '
        "by Oda the river smith" in out
    )


def test_demo_shows_familiarity_growing_over_two_days_and_words_moving_no_feeling(offline_demo):
    assert offline_demo.returncode == 0, offline_demo.stderr[-3000:]
    out = offline_demo.stdout
    # the first night: familiarity counted from the day's interactions; what was whispered
    # keeps the reason private
    first = section(out, "What her sleep made of the day", "Day two:")
    assert "Aria and Mira: 5 interactions, last met on game day 2026-11-21" in first
    assert "0.20 an" in first and "+0.16 4" in first  # four public interactions
    # the whispered interaction's share (a fifth of the step) is private to Mira, apart from
    # the public four
    assert "+0.04 1 interaction on 2026-11-21" in first and "private to Mira" in first
    assert "dreaming, relationships: calls 1, people 2" in out
    # the second night: Tobin's thanks are his words: familiarity grows, warmth and trust
    # (which rest on deeds she saw) stay where they were
    second = section(out, "Two days with Tobin", "Morning:")
    assert "Aria and Tobin: 3 interactions, last met on game day 2026-11-22" in second
    assert "0.15 an" in second and "1 interaction on 2026-11-22" in second
    assert "interactions on 2026-11-21 (game time" in second  # the first night's change, kept
    assert "+0.00 neutral" in second and "kindness seen" not in second


def test_demo_shows_aria_keep_her_routine_without_the_model(offline_demo):
    out = section(offline_demo.stdout, "A routine: Aria opens the library", "What Aria wrote down")
    assert "Aria's routine (2 items) is set:" in out
    # the morning's item: she is in the library already, and opens it (seen by the room)
    assert "Tobin sees | Aria opens the library." in out
    # at noon she walks, one exit a tick, and Tobin, gone ahead, sees her come in and sit down
    assert "12:00:00]    Mira sees | Aria is leaving Reading Room, heading for Hallway." in out
    assert "Tobin sees | Aria arrives to Tavern from Hallway." in out
    assert "Tobin sees | Aria sits down to lunch by the fire." in out
    assert out.index("arrives to Tavern") > out.index("Aria opens the library.")
    # none of it called the model
    assert not re.search(r"Aria  did \| \w+\(", out)
    # the builder's view: where each item came from and what became of it
    plan = out[out.index("@assistant/plan Aria\n") :]
    for shown in ("opens the library", "done", "Tavern", "here", "routine"):
        assert shown in plan, shown
