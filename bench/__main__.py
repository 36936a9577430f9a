"""
`make bench`: measure the assistant's cost side by side and guard the design.

Prints a table, then one line per benchmark: name, measured ratio or figure, target, PASS/FAIL.
Exit status 1 when a target fails. `--quick` runs the smallest sizes (what the test suite's
smoke test runs); `--only N[,N]` runs some of them.

"""

import argparse
import os
import sys
import tempfile


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[1])
    parser.add_argument("--quick", action="store_true", help="smallest sizes (smoke test)")
    parser.add_argument("--only", default="", help="comma-separated benchmark numbers, e.g. 1,3")
    args = parser.parse_args(argv)
    wanted = {int(n) for n in args.only.split(",") if n.strip()} or set(range(1, 16))
    results = []
    with tempfile.TemporaryDirectory(prefix="ai-assistant-bench-") as folder:
        if 1 in wanted:
            from bench.server import reactor_responsiveness

            results.append(reactor_responsiveness(folder, quick=args.quick))
        if 8 in wanted:
            from bench.latency import reply_latency

            latency_folder = os.path.join(folder, "latency")
            os.makedirs(latency_folder)
            results += reply_latency(latency_folder, quick=args.quick)
        if wanted & {*range(2, 8), 12, 13, 14, 15}:
            results += run_in_process(folder, wanted, args.quick)
        if wanted & {9, 10, 11}:
            results += run_memory(wanted, args.quick)
    width = max(len(r.name) for r in results)
    print()
    print(f"{'benchmark':<{width}}  {'measured':<48}  {'target':<30}  result")
    print("-" * (width + 90))
    for result in results:
        print(
            f"{result.name:<{width}}  {result.figure:<48}  {result.target:<30}  "
            f"{'PASS' if result.passed else 'FAIL'}"
        )
    print()
    for number, result in enumerate(results, 1):
        for detail in result.details:
            print(f"  {result.name}: {detail}")
    print()
    for result in results:
        print(result.line())
    return 0 if all(result.passed for result in results) else 1


def run_in_process(folder: str, wanted: set[int], quick: bool) -> list:
    from world.headless import create_home_room, setup_evennia

    setup_evennia(os.path.join(folder, "bench.db3"))
    from bench import cases

    world = cases.World(create_home_room("Bench Hall"))
    results = []
    if 2 in wanted:
        sizes = dict(small=(10, 100), large=(100, 1000), rounds=5) if quick else {}
        results.append(cases.tick_overhead(world, **sizes))
    if 3 in wanted:
        sizes = dict(small=100, large=1000, rounds=10, naive=0) if quick else {}
        results.append(cases.journal_write(world, **sizes))
    if 4 in wanted:
        results.append(cases.idle_cost(world, ticks=50 if quick else 1000))
    if 5 in wanted:
        results.append(cases.sleep_cost(world, entries=20 if quick else 200, batch=10))
    if 6 in wanted:
        results.append(cases.prompt_stability(world, turns=4 if quick else 15))
    if 7 in wanted:
        results.append(cases.compaction_reduction(world))
    if 12 in wanted:
        from bench.dashboard import dashboard_pages

        sizes = dict(small=20, large=500, few=5, many=20, rounds=3) if quick else {}
        results.append(dashboard_pages(world, **sizes))
    if 13 in wanted:
        sizes = dict(lines=8) if quick else {}
        results.append(cases.day_cost(world, **sizes))
    if 14 in wanted:
        from bench.snapshots import snapshot_cost

        sizes = dict(small=100, large=1000, rounds=3) if quick else {}
        results.append(snapshot_cost(world, **sizes))
    if 15 in wanted:
        from bench.plans import village_day

        results.append(village_day(world, ticks=96 if quick else 288))
    return results


def run_memory(wanted: set[int], quick: bool) -> list:
    """Benchmarks 9-11: the memory through its pure core (no Evennia, no database)."""
    from bench import memory

    results = []
    if 9 in wanted:
        from bench.languages import recall_in_languages
        from bench.locomo import locomo_recall

        results += memory.recall_quality(quick=quick)
        results += locomo_recall(quick=quick)
        results.append(recall_in_languages())
    if 10 in wanted:
        results += memory.recall_at_scale(quick=quick)
        results.append(memory.recall_among_whispers(quick=quick))
        results += memory.lore_at_scale(quick=quick)
    if 11 in wanted:
        results.append(memory.dreaming_cost(quick=quick))
    return results


if __name__ == "__main__":
    sys.exit(main())
