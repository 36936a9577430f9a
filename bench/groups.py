"""
Recalling what a group shares, as the group grows: on a real Evennia database, groups of 2, 20
and 100 assistants hold the same 200 shares (the most a group keeps), spread over their
members; one member recalls a question about them again and again
(`AssistantGroups.recall`: the group's members found by their tag, their shares' Attributes
compared by identity, one search of the group's one index). The first recall after a share
builds the index again; that is timed too.

Target: recall stays flat with many members: 100 members' recall within 3 times 2 members'
(the shares are searched through one index a group, never member by member), and under 20 ms.

Run alone: `python -m bench.groups` (`--quick` for fewer recalls).

"""

import statistics
import sys
import time

from bench.cases import Result, World, standalone

SHARES = 200
SIZES = (2, 20, 100)
QUERY = "who left the east gate unlocked at midnight"


def _told(number: int, member) -> dict:
    words = ("gate", "well", "mill", "bridge", "tower", "cellar", "market", "chapel")
    place = words[number % len(words)]
    return {
        "memory_id": f"j{number:06d}",
        "text": f"Someone left the {place} {'east' if number % 3 else 'west'} door open at "
        f"{number % 24} o'clock, said Tobin ({number}).",
        "origin": {"name": "Tobin", "key": "name:tobin", "how": "said"},
        "tellers": [{"name": member.key, "key": member.dbref}],
        "teller": {"name": member.key, "key": member.dbref},
        "trust": 0.4,
        "origin_trust": 0.4,
        "rests_on": "claim",
        "importance": 5,
        "about": [],
        "people": ["name:tobin", member.dbref],
        "location": "Gate",
        "at": "2026-11-21T12:00:00+00:00",
    }


def group_recall(world: World, recalls: int = 200) -> Result:
    """Median time of one member's recall of its group's shares, by the group's size."""
    from ai_assistant.conf import AssistantConfig
    from ai_assistant.memory.groups import GroupShares
    from ai_assistant.memory.recall_weights import RecallWeights
    from ai_assistant.shell.groups import GROUP_CATEGORY, AssistantGroups
    from ai_assistant.shell.storage import MEMORY_CATEGORY, AttributeStore

    config = AssistantConfig(group_sharing_enabled=True)
    weights = RecallWeights.from_config(config)
    medians, rebuilds, found = {}, {}, {}
    for size in SIZES:
        group = f"watch{size}"
        members = []
        for _ in range(size):
            character, _handler = world.assistant({"group_sharing_enabled": True})
            character.tags.add(group, category=GROUP_CATEGORY)
            members.append(character)
        for number in range(SHARES):
            member = members[(number // 8) % size]  # each place's shares spread over members
            GroupShares(AttributeStore(member, MEMORY_CATEGORY)).add(_told(number, member), group)
        groups = AssistantGroups(members[0])
        started = time.perf_counter()
        found[size] = len(groups.recall(QUERY, 8, weights, config))  # builds the index
        rebuilds[size] = (time.perf_counter() - started) * 1000
        times = []
        for _ in range(recalls):
            started = time.perf_counter()
            groups.recall(QUERY, 8, weights, config)
            times.append((time.perf_counter() - started) * 1000)
        medians[size] = statistics.median(times)
    small, large = medians[SIZES[0]], medians[SIZES[-1]]
    passed = large <= 3 * small and large < 20 and all(found.values())
    return Result(
        "groups: one member's recall of its group's 200 shares",
        ", ".join(f"{size} members {medians[size]:.2f} ms" for size in SIZES),
        f"{SIZES[-1]} members within 3x {SIZES[0]} members', under 20 ms",
        passed,
        [
            f"{size} members: recall median {medians[size]:.2f} ms over {recalls}, "
            f"first recall (index built) {rebuilds[size]:.1f} ms, {found[size]} found"
            for size in SIZES
        ],
    )


def main(argv=None) -> int:
    return standalone(
        "python -m bench.groups",
        "fewer recalls",
        lambda world, quick: group_recall(world, 20 if quick else 200),
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
