"""
Gossip's model calls per meeting, on a real Evennia database with the offline rehearsal model
on 127.0.0.1: a builder's instruction (which only she hears) asks Aria to tell Oskar what she
knows of the east door, with a visitor in the room; Aria's turn tells him (her `tell` tool),
Oskar records it; then the visitor leaves and the two assistants
stay together, hearing each other (`respond_to_assistants` on: the worst case), for `ticks`
ticks each.

Target: the meeting costs the teller's one turn and nothing more: the receiver makes no model
call, and two assistants alone make none after a telling.

Run alone: `python -m bench.gossip` (`--quick` for fewer ticks).

"""

import sys

from bench.cases import Recording, Result, World, _use_server, standalone

DOOR = "Tobin said the east door sticks when it rains."


def gossip_meeting(world: World, ticks: int = 200) -> Result:
    """Model calls of a meeting where one assistant tells another something."""
    from evennia.utils import create

    from ai_assistant.memory.provenance import CLAIM
    from ai_assistant.offline.rehearsal import RehearsalResponder
    from ai_assistant.testing.server import LocalModelServer

    recording = Recording(RehearsalResponder())
    overrides = {"gossip_enabled": True, "respond_to_assistants": True}
    with LocalModelServer(recording) as server:
        _use_server(server)
        aria, teller = world.assistant(overrides, name="Aria")
        oskar, receiver = world.assistant(overrides, name="Oskar")
        receiver.clock = teller.clock
        teller.brain.journal.add(
            DOOR, author="Aria", now=teller.clock.now(), source_type=CLAIM, heard_from="Tobin"
        )

        def tick_both():
            teller.clock.advance(5)
            teller.script.at_assistant_tick()
            receiver.script.at_assistant_tick()

        # a builder's instruction reaches Aria alone: whatever Oskar does, the telling did
        teller.instruct(world.speaker, "tell Oskar about the east door.")
        tick_both()
        met = (teller.status().usage.calls, receiver.status().usage.calls)
        recorded = [e for e in receiver.brain.journal.all() if e.get("gossip")]
        # the visitor leaves: the two assistants are alone together
        elsewhere = create.create_object("typeclasses.rooms.Room", key="Elsewhere", nohome=True)
        world.speaker.move_to(elsewhere, quiet=True)
        for _ in range(ticks):
            tick_both()
        after = (teller.status().usage.calls - met[0], receiver.status().usage.calls - met[1])
        world.speaker.move_to(world.room, quiet=True)
    passed = bool(recorded) and met[1] == 0 and after == (0, 0)
    return Result(
        "gossip: model calls per meeting",
        f"teller {met[0]}, receiver {met[1]}; alone {ticks} ticks: {sum(after)}",
        "receiver 0; alone 0",
        passed,
        [
            f"the teller's one turn: {met[0]} calls (tell, then noop after its result)",
            f"the receiver recorded {len(recorded)} told memory with no model call: "
            + (f"trust {recorded[0]['gossip']['trust']:.2f}" if recorded else "none"),
            f"alone together for {ticks} ticks each (hearing each other): {sum(after)} calls",
        ],
    )


def main(argv=None) -> int:
    return standalone(
        "python -m bench.gossip",
        "fewer ticks",
        lambda world, quick: gossip_meeting(world, 20 if quick else 200),
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
