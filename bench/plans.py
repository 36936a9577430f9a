"""
A village's game day: 20 assistants with routines and no player anywhere, on a real Evennia
database, with the model on 127.0.0.1 (a planner that answers every planning call with two
items).

Each assistant has a routine of three rooms of a ring of six (a walk of up to three exits
between items) and a sleep at 22:00. One game day runs in `ticks` ticks of every assistant
(the game clock moves 24 h / `ticks` a tick): once with no routines (the baseline), then with
routines without planning, then with `planning_enabled`, then with planning and scenes on and
one player standing in the Tavern all day. Measured: model calls and tokens
(targets: 0 without planning, at most one call per assistant per game day with it; with the
player, scenes only in the player's room, within the game's cap); the items
carried out; and the game loop's lag while they walk: how long one assistant's tick holds the
reactor (on a live server each tick is a reactor step of its own, at its own offset), mean,
p50, p99 and worst, side by side with ticks without a routine.

Run alone: `python -m bench.plans` (`--quick` for a shorter day); in `make bench` it is 15.

"""

import json
import math
import random
import statistics
import sys
import time

from bench.cases import Recording, Result, START, World, _use_server, standalone

RING = ("Square", "Well", "Library", "Tavern", "Mill", "Chapel")
ASSISTANTS = 20
WARM_UP = 2


class Planner:
    """Answers a planning call with two items; a turn (a request offering tools: a scene's
    lines) as the offline rehearsal model does."""

    def __init__(self):
        from ai_assistant.offline.rehearsal import RehearsalResponder

        self.turns = RehearsalResponder()

    def respond(self, request):
        from ai_assistant.offline.replies import text_reply

        if any(tool["function"]["name"] == "say" for tool in request.get("tools") or []):
            return self.turns.respond(request)

        items = [
            {"at": "19:00", "room": "Well", "activity": "draws water"},
            {"at": "20:00", "room": "Chapel", "activity": "lights a candle"},
        ]
        return text_reply(json.dumps({"items": items}))


def _ring():
    from evennia.utils import create

    rooms = [create.create_object("typeclasses.rooms.Room", key=name) for name in RING]
    for index, room in enumerate(rooms):
        after = rooms[(index + 1) % len(rooms)]
        create.create_object(
            "evennia.objects.objects.DefaultExit", key="on", location=room, destination=after
        )
        create.create_object(
            "evennia.objects.objects.DefaultExit", key="back", location=after, destination=room
        )
    return rooms


def _day(
    world: World, rooms, planning: bool, ticks: int, routines: bool = True, player=None
) -> dict:
    """One game day of the village; with `player` (a room), scenes are on for everyone and a
    connected player stands in that room all day."""
    from ai_assistant.clock import ManualClock
    from ai_assistant.shell.scenes import SCENES
    from ai_assistant.testing.server import LocalModelServer
    from world.headless import connect

    recording = Recording(Planner())
    game = ManualClock(START.replace(hour=0, minute=0), time_factor=24 * 3600 / (ticks * 5))
    handlers = []
    with LocalModelServer(recording) as server:
        _use_server(server)
        for number in range(ASSISTANTS):
            overrides = {"planning_enabled": planning}
            if player is not None:
                overrides.update(scenes_enabled=True)
            character, handler = world.assistant(overrides)
            character.move_to(rooms[number % len(rooms)], quiet=True)
            handler.game_clock = game
            if routines:
                first = number % len(rooms)
                stops = [rooms[(first + step * 2) % len(rooms)].key for step in range(1, 4)]
                handler.plans.set_routine(
                    f"07:00 {stops[0]}: opens up; 11:00 {stops[1]}: has lunch; "
                    f"15:00 {stops[2]}: works; 22:00 sleep"
                )
            handlers.append(handler)
        session = None
        if player is not None:
            SCENES.__init__(rng=random.Random(38))  # the same rolls every run
            world.speaker.move_to(player, quiet=True)
            world.speaker.msg = lambda *args, **kwargs: None
            session = connect(world.speaker)
        scene_rooms = set()
        took = []  # each assistant's tick: on a live server, a reactor step of its own
        for number in range(ticks - 1):  # the day's last tick is at 23:xx
            game.advance(24 * 3600 / ticks)
            for handler in handlers:
                handler.clock.advance(5)
                began = time.perf_counter()
                handler.script.at_assistant_tick()
                if number >= WARM_UP:
                    took.append(time.perf_counter() - began)
            scene_rooms.update(scene.room for scene in SCENES.rooms.values())
        if session is not None:
            world.speaker.sessions.remove(session)
        calls = len(recording.requests)
        tokens = sum(handler.status().usage.total_tokens for handler in handlers)
        items = [item for h in handlers for item in h.plans.today()[0]["items"]]
        done = sum(1 for item in items if item.get("status") in ("arrived", "slept"))
        for handler in handlers:
            handler.obj.delete()
    # the first ticks build each assistant's brain (once per server start): not the walk's lag
    took_ms = sorted(seconds * 1000 for seconds in took)
    return {
        "calls": calls,
        "tokens": tokens,
        "scenes": SCENES.opened if player is not None else 0,
        "scene_rooms": scene_rooms,
        "items": len(items),
        "done": done,
        "mean": statistics.fmean(took_ms),
        "p50": statistics.median(took_ms),
        "p99": took_ms[min(len(took_ms) - 1, int(len(took_ms) * 0.99))],
        "worst": took_ms[-1],
    }


def village_day(world: World, ticks: int = 288) -> Result:
    """15. Model calls, tokens and the game loop's lag over a village's game day."""
    from ai_assistant.conf import AssistantConfig
    from ai_assistant.shell import game_settings

    rooms = _ring()
    idle = _day(world, rooms, planning=False, ticks=ticks, routines=False)
    plain = _day(world, rooms, planning=False, ticks=ticks)
    planned = _day(world, rooms, planning=True, ticks=ticks)
    tavern = rooms[RING.index("Tavern")]
    heard = _day(world, rooms, planning=True, ticks=ticks, player=tavern)
    ratio = plain["mean"] / max(idle["mean"], 1e-9)
    # the game's cap on scenes a real hour, over the day's real minutes (5 s a tick), each
    # scene at most its lines, each line a turn of at most two calls (say, then noop)
    real_hours = ticks * 5 / 3600
    scene_cap = max(1, math.ceil(real_hours)) * game_settings.scenes_per_hour()
    most_heard = ASSISTANTS + scene_cap * AssistantConfig().scene_max_lines * 2
    passed = (
        plain["calls"] == 0
        and plain["tokens"] == 0
        and planned["calls"] <= ASSISTANTS
        and plain["done"] > 0
        and heard["scene_rooms"] <= {tavern.id}
        and heard["calls"] <= most_heard
    )

    def lag(run):
        return (
            f"mean {run['mean']:.2f} ms, p50 {run['p50']:.2f} ms, p99 {run['p99']:.1f} ms, "
            f"worst {run['worst']:.1f} ms"
        )

    return Result(
        f"a village's game day, {ASSISTANTS} assistants with routines",
        f"{plain['calls']} calls without planning, {planned['calls']} with; "
        f"tick {ratio:.2f}x idle, worst {plain['worst']:.0f} ms",
        f"0; <= {ASSISTANTS} (1 each); scenes only by a player",
        passed,
        [
            f"without planning: {plain['calls']} calls, {plain['tokens']} tokens; "
            f"{plain['done']} of {plain['items']} items carried out",
            f"with planning: {planned['calls']} calls, {planned['tokens']} tokens; "
            f"{planned['done']} of {planned['items']} items carried out",
            (
                f"with planning, scenes on and a player in the {tavern.key} all day: "
                f"{heard['calls']} calls (at most {most_heard}: one plan each, the game's scene "
                f"cap), {heard['tokens']} tokens, {heard['scenes']} scenes, all in the "
                f"{tavern.key}"
                if heard["scene_rooms"] <= {tavern.id}
                else "scenes where no player was"
            ),
            f"one assistant's tick while they walk (the reactor held): {lag(plain)}",
            f"one assistant's tick without a routine: {lag(idle)}",
            "the worst ticks are the 22:00 sleep item's falling asleep and first sleep tick, "
            "as for a scheduled sleep",
            f"{ticks} ticks a game day ({24 * 60 / ticks:.0f} game minutes a tick)",
        ],
    )


def main(argv=None) -> int:
    return standalone(
        "python -m bench.plans",
        "a shorter day (fewer ticks)",
        lambda world, quick: village_day(world, ticks=96 if quick else 288),
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
