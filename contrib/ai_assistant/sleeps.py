"""
The sleep history: one record per sleep, kept in the script's store as a chunked list.

A record opens when the assistant falls asleep (`Lifecycle.go_to_sleep`) and closes when it
wakes (`Lifecycle.wake_up`); in between, each sleep tick's report is added to its counts
(`tally`). Model calls and tokens are the difference of the usage stats between the two ends,
so every call the sleep made is counted wherever it was made.

A record: "id" (s1, s2, ...), "start" and "end" (game time, ISO), "began" (tool, builder,
schedule, debt), "depth", "quiet" (nothing new to consolidate), "phases" (done), "debt_before",
"debt_after", "counts" (scored, consolidated, memories, links, profiles, reflections, pruned),
"calls", "tokens", "errors"; "rolled_back" ({"at", "by"}) once a builder rolled it back.

"""

from .llm.usage import UsageStats
from .memory.store import ChunkedList, KeyValueStore
from .state import CURRENT_SLEEP, SLEEP_HISTORY, USAGE

COUNTS = ("scored", "consolidated", "memories", "links", "profiles", "reflections", "pruned")
# what each dreaming step's report calls the count the history keeps
STEP_COUNTS = {
    "links": ("links", "links"),
    "people": ("people", "profiles"),
    "reflection": ("insights", "reflections"),
    "pruning": ("pruned", "pruned"),
}


def nothing_new(journal, entities) -> bool:
    """Whether there is nothing new to sleep on: no journal entry waits to be consolidated
    and no observation of a person is new.

    Args:
        journal (Journal): The journal.
        entities (EntityMemory or None): The people it knows (None: not checked).

    Returns:
        bool: True on a quiet day.

    """
    if journal.unconsolidated():
        return False
    if entities is None:
        return True
    return not any(
        not observation.get("consolidated")
        for profile in entities.profiles()
        for observation in profile.get("observations", [])
    )


def _usage_totals(state: KeyValueStore) -> tuple[int, int]:
    usage = UsageStats.load(state.get(USAGE))
    return usage.calls, usage.prompt_tokens + usage.completion_tokens


class SleepHistory:
    """Every sleep of one assistant, oldest first, and the one under way.

    Args:
        state (KeyValueStore): The script's store.

    """

    def __init__(self, state: KeyValueStore):
        self.state = state
        self.records = ChunkedList(state, SLEEP_HISTORY, 50)

    def current(self) -> dict | None:
        """The record of the sleep under way.

        Returns:
            dict or None: A copy, or None while awake.

        """
        return self.state.get(CURRENT_SLEEP)

    def start(
        self, game_now: str, *, began: str, depth: str, debt_before: int, quiet: bool
    ) -> dict:
        """Open the record of a sleep that begins now.

        Args:
            game_now (str): The game time (ISO).
            began (str): How it began: "tool", "builder", "schedule" or "debt".
            depth (str): "light" or "deep".
            debt_before (int): The sleep debt as it fell asleep.
            quiet (bool): Nothing new to consolidate since the last sleep.

        Returns:
            dict: The record.

        """
        calls, tokens = _usage_totals(self.state)
        record = {
            "id": f"s{len(self.records) + 1}",
            "start": game_now,
            "end": None,
            "began": began,
            "depth": depth,
            "quiet": quiet,
            "phases": [],
            "debt_before": debt_before,
            "debt_after": None,
            "counts": {name: 0 for name in COUNTS},
            "calls": 0,
            "tokens": 0,
            "errors": 0,
            "_usage_at_start": [calls, tokens],
        }
        self.state.set(CURRENT_SLEEP, record)
        return record

    def tally(self, report) -> None:
        """Add one sleep tick's report to the current record's counts.

        Args:
            report (dict or list): A compacting report (dict), a list of dreaming step reports
                (dicts with "step"), a triage report, or None.

        """
        record = self.current()
        if record is None or not report:
            return
        counts = record["counts"]
        if isinstance(report, dict):
            for name in ("scored", "consolidated", "memories"):
                counts[name] += int(report.get(name) or 0)
            record["errors"] += 1 if report.get("error") else 0
        else:
            for step in report:
                if step.get("error"):
                    record["errors"] += 1
                    continue
                key, name = STEP_COUNTS.get(step.get("step"), (None, None))
                value = step.get(key) if key else None
                if isinstance(value, int) and not isinstance(value, bool):
                    counts[name] += value
        self.state.set(CURRENT_SLEEP, record)

    def finish(self, game_now: str, *, phases: list[str], debt_after: int) -> dict | None:
        """Close the current record and keep it in the history.

        Args:
            game_now (str): The game time it woke (ISO).
            phases (list): The phases and dreaming steps done.
            debt_after (int): The sleep debt as it woke.

        Returns:
            dict or None: The record kept; None when no sleep was under way.

        """
        record = self.current()
        if record is None:
            return None
        calls, tokens = _usage_totals(self.state)
        start_calls, start_tokens = record.pop("_usage_at_start", [calls, tokens])
        record.update(
            end=game_now,
            phases=list(phases),
            debt_after=debt_after,
            calls=calls - start_calls,
            tokens=tokens - start_tokens,
        )
        self.records.append(record)
        self.state.delete(CURRENT_SLEEP)
        return record

    def mark(self, sleep_id: str, **fields) -> bool:
        """Add fields to a past sleep's record (e.g. that it was rolled back).

        Args:
            sleep_id (str): The sleep's id ("s3" is the third record).
            **fields: What to add.

        Returns:
            bool: False when no past sleep has that id.

        """
        number = sleep_id[1:]
        position = int(number) - 1 if sleep_id[:1] == "s" and number.isdigit() else -1
        if not 0 <= position < len(self.records):
            return False
        record = self.records.get(position)
        if record.get("id") != sleep_id:
            return False
        self.records.update({position: {**record, **fields}})
        return True

    def recent(self, limit: int = 20) -> list[dict]:
        """The last sleeps, newest first.

        Args:
            limit (int): How many at most.

        Returns:
            list: Records.

        """
        if limit <= 0:
            return []
        return list(reversed(self.records.tail(limit)))

    def __len__(self) -> int:
        return len(self.records)
