"""
Scenes' model calls per hour, on a real Evennia database with the offline rehearsal model on
127.0.0.1: two assistants with scenes on (`scene_chance` 0.05, the default caps) stand in one
room for an hour of ticks each (every 5 s), first with no player there (a character no one
plays is present), then for another hour with a player connected and listening.

Target: with no player, 0 calls; with one, at most the caps' worth: each assistant takes part
in at most `scenes_per_hour` scenes of at most `scene_max_lines` lines, a line a turn.

Run alone: `python -m bench.scenes` (`--quick` for a quarter of an hour each).

"""

import random
import sys

from bench.cases import Recording, Result, World, _use_server, standalone

TICK = 5


def scene_calls(world: World, minutes: int = 60) -> Result:
    """Model calls and tokens of two assistants with scenes on, without and with a player."""
    from ai_assistant.conf import AssistantConfig
    from ai_assistant.offline.rehearsal import RehearsalResponder
    from ai_assistant.shell.scenes import SCENES
    from ai_assistant.testing.server import LocalModelServer
    from ai_assistant.text import counted
    from world.headless import connect

    SCENES.__init__(rng=random.Random(38))  # the same rolls every run
    recording = Recording(RehearsalResponder())
    overrides = {"scenes_enabled": True}
    defaults = AssistantConfig()
    ticks = minutes * 60 // TICK
    with LocalModelServer(recording) as server:
        _use_server(server)
        _, aria = world.assistant(overrides, name="Aria")
        _, bram = world.assistant(overrides, name="Bram")
        bram.clock = aria.clock
        world.speaker.msg = lambda *args, **kwargs: None

        def hour() -> tuple[int, int, int]:
            calls = [h.status().usage for h in (aria, bram)]
            lines_before = len(said)
            for _ in range(ticks):
                aria.clock.advance(TICK)
                aria.script.at_assistant_tick()
                bram.script.at_assistant_tick()
            after = [h.status().usage for h in (aria, bram)]
            spent = sum(a.calls - b.calls for a, b in zip(after, calls))
            tokens = sum(a.total_tokens - b.total_tokens for a, b in zip(after, calls))
            return spent, tokens, len(said) - lines_before

        said = []
        for handler in (aria, bram):
            handler.on_turn = lambda h, outcome: said.extend(
                c for c in outcome.tool_calls if c["name"] == "say" and c["ok"]
            )
        alone = hour()  # the Visitor is there, but no one plays it
        opened_alone = SCENES.opened
        connect(world.speaker)
        heard = hour()
        opened = SCENES.opened - opened_alone
    most_lines = 2 * defaults.scenes_per_hour * defaults.scene_max_lines
    passed = alone == (0, 0, 0) and opened >= 1 and heard[2] <= most_lines
    return Result(
        "scenes: model calls per hour, two assistants",
        f"no player {alone[0]}; a player listening {heard[0]} ({heard[2]} lines)",
        f"no player 0; lines <= {most_lines}",
        passed,
        [
            f"{ticks} ticks each with no player: {alone[0]} calls, {alone[1]} tokens, "
            f"{counted(opened_alone, 'scene')}",
            f"{ticks} ticks each with a player listening: {counted(opened, 'scene')}, "
            f"{heard[2]} lines said, {heard[0]} calls, {heard[1]} tokens (rehearsal model: a line "
            "is a say, "
            "then noop after its result)",
        ],
    )


def main(argv=None) -> int:
    return standalone(
        "python -m bench.scenes",
        "a quarter of an hour each",
        lambda world, quick: scene_calls(world, 15 if quick else 60),
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
