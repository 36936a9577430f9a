"""
The sleep history: one record per sleep, kept in the script's store as a chunked list.

A record opens when the assistant falls asleep (`Lifecycle.go_to_sleep`) and closes when it
wakes (`Lifecycle.wake_up`); in between, each sleep tick's report is added to its counts
(`tally`). Model calls and tokens are the difference of the usage stats between the two ends,
so every call the sleep made is counted wherever it was made.

A record: "id" (s1, s2, ...), "start" and "end" (game time, ISO), "real_start" and "real_end"
(real time, ISO: the dashboard's sleep table lines up with its timeline), "began" (tool, builder,
schedule, debt), "depth", "quiet" (nothing new to consolidate), "phases" (done), "debt_before",
"debt_after", "counts" (scored, consolidated, memories, links, profiles, reflections, core notes
changed, pruned, digests, removed), "calls", "tokens", "errors", "summary" (one line: what it did,
then each public digest it made of a day, in the model's words: `summarise`);
"compacting_rested" (why compacting gave up for that sleep, when it did); "rolled_back"
({"at", "by"}) once a builder rolled it back.

Records older than `sleep_history_retention_days` are removed by sleep's housekeeping
(`remove_ended_before`); the newest is always kept (a quiet day is measured against it), and ids
are never reused.

"""

from ..llm.usage import UsageStats
from .store import ChunkedList, KeyValueStore
from ..records import SleepRecord
from ..state import (
    CURRENT_SLEEP,
    DREAMING_PROGRESS,
    PROGRESS,
    SLEEP_HISTORY,
    SLEEP_HISTORY_CHUNK,
    USAGE,
    WAKE_TIME,
)
from ..text import counted

# the phase `Lifecycle.wake_up` records when compacting consolidated everything (the lifecycle
# imports this module, so its constant is not imported here)
COMPACTING_PHASE = "compacting"

COUNTS = (
    "scored",
    "consolidated",
    "memories",
    "links",
    "profiles",
    "reflections",
    "core notes",
    "pruned",
    "digests",
    "removed",
)
# what each dreaming step's report calls the count the history keeps
STEP_COUNTS = {
    "links": ("links", "links"),
    "people": ("people", "profiles"),
    "reflection": ("insights", "reflections"),
    "core memory": ("changed", "core notes"),
    "pruning": ("pruned", "pruned"),
    "digest": ("digests", "digests"),
    "housekeeping": ("removed", "removed"),
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


def summarise(record: dict, digests: list[str]) -> str:
    """One line saying what a sleep did: its counts in words, then the summary of each day it
    digested (the model's structured digest, public ones only).

    Args:
        record (dict): The sleep's record, its counts complete.
        digests (list): "day: summary" of the public digests it made.

    Returns:
        str: At most 600 characters.

    """
    counts = record.get("counts") or {}
    said = []
    if counts.get("consolidated") or counts.get("memories"):
        said.append(
            f"filed {counted(counts.get('consolidated', 0), 'journal entry')} into "
            f"{counted(counts.get('memories', 0), 'memory')}"
        )
    for name, one, many in (
        ("links", "link made", "links made"),
        ("profiles", "person profiled", "people profiled"),
        ("reflections", "insight", "insights"),
        ("core notes", "core note changed", "core notes changed"),
        ("pruned", "entry pruned", "entries pruned"),
        ("removed", "old record removed", "old records removed"),
    ):
        if counts.get(name):
            said.append(counted(counts[name], one, many))
    if record.get("compacting_rested"):
        said.append(f"compacting rested {record['compacting_rested']}")
    if record.get("quiet"):
        said.append("nothing new to sleep on")
    text = "; ".join(said) or "rested"
    text = text[0].upper() + text[1:] + "."
    if digests:
        text += " The day: " + " | ".join(digests)
    return text[:600]


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
        self.records = ChunkedList(state, SLEEP_HISTORY, SLEEP_HISTORY_CHUNK)

    def current(self) -> SleepRecord | None:
        """The record of the sleep under way.

        Returns:
            dict or None: A copy, or None while awake.

        """
        return self.state.get(CURRENT_SLEEP)

    def start(
        self,
        game_now: str,
        *,
        began: str,
        depth: str,
        debt_before: int,
        quiet: bool,
        real_now: str | None = None,
    ) -> dict:
        """Open the record of a sleep that begins now.

        Args:
            game_now (str): The game time (ISO).
            began (str): How it began: "tool", "builder", "schedule" or "debt".
            depth (str): "light" or "deep".
            debt_before (int): The sleep debt as it fell asleep.
            quiet (bool): Nothing new to consolidate since the last sleep.
            real_now (str, optional): The real time (ISO).

        Returns:
            dict: The record.

        """
        calls, tokens = _usage_totals(self.state)
        # numbered on from the last id given (records removed by retention leave no gap to
        # fill); written at once, so a reload before waking does not give the id again
        number = self.records.extra.get("next_id", len(self.records) + 1)
        self.records.extra["next_id"] = number + 1
        self.records.save_meta()
        record = {
            "id": f"s{number}",
            "start": game_now,
            "end": None,
            "real_start": real_now,
            "real_end": None,
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

    def in_progress(self) -> SleepRecord | None:
        """The sleep under way as its record will read so far: the phases done, the counts,
        calls and tokens up to now, marked "in_progress" with the real time it is due to wake
        ("wakes_at"), so a builder sees what a sleep did as soon as it did it (its work is
        often done long before it wakes).

        Returns:
            dict or None: A copy, or None while awake.

        """
        record = self.current()
        if record is None:
            return None
        record = dict(record)
        calls, tokens = _usage_totals(self.state)
        start_calls, start_tokens = record.pop("_usage_at_start", [calls, tokens])
        progress = self.state.get(PROGRESS) or {}
        phases = (
            [COMPACTING_PHASE]
            if progress.get("completed") and progress.get("total_entries")
            else []
        )
        phases += (self.state.get(DREAMING_PROGRESS) or {}).get("done", [])
        record.update(
            phases=phases,
            calls=calls - start_calls,
            tokens=tokens - start_tokens,
            in_progress=True,
            wakes_at=self.state.get(WAKE_TIME),
        )
        digests = record.pop("digests_made", [])
        # before any phase is done there is nothing to sum up ("Rested." would be wrong)
        record["summary"] = summarise(record, digests) if phases else None
        return record

    def tally(self, report) -> None:
        """Add one sleep tick's report to the current record's counts.

        Args:
            report (dict or list): A compacting report (dict), a list of dreaming step reports
                (dicts with "step"), a sleep turn's report, or None.

        """
        record = self.current()
        if record is None or not report:
            return
        counts = record["counts"]
        if isinstance(report, dict):
            for name in ("scored", "consolidated", "memories"):
                counts[name] = counts.get(name, 0) + int(report.get(name) or 0)
            record["errors"] += 1 if report.get("error") else 0
            if report.get("rested"):
                record["compacting_rested"] = report["rested"]
            # sleep work that fell back from a batch to direct calls (`sleep.batch`)
            record["errors"] += 1 if (report.get("batch") or {}).get("error") else 0
        else:
            for step in report:
                if step.get("error"):
                    record["errors"] += 1
                    continue
                for summary in step.get("summaries") or []:
                    # the day's public digest: what this sleep made of the day, in its words
                    record["digests_made"] = [*record.get("digests_made", []), summary][-3:]
                key, name = STEP_COUNTS.get(step.get("step"), (None, None))
                value = step.get(key) if key else None
                if isinstance(value, int) and not isinstance(value, bool):
                    # .get: a record opened by an earlier version lacks the newer counts
                    counts[name] = counts.get(name, 0) + value
        self.state.set(CURRENT_SLEEP, record)

    def add_debt_before(self, points: int) -> None:
        """Count `points` of debt into the current sleep's "debt before": the debt of the turn
        that began the sleep is added as that turn ends, after the record opened.

        Args:
            points (int): The debt the turn added.

        """
        record = self.current()
        if record is not None:
            record["debt_before"] += points
            self.state.set(CURRENT_SLEEP, record)

    def finish(
        self, game_now: str, *, phases: list[str], debt_after: int, real_now: str | None = None
    ) -> SleepRecord | None:
        """Close the current record and keep it in the history.

        Args:
            game_now (str): The game time it woke (ISO).
            phases (list): The phases and dreaming steps done.
            debt_after (int): The sleep debt as it woke.
            real_now (str, optional): The real time it woke (ISO).

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
            real_end=real_now,
            phases=list(phases),
            debt_after=debt_after,
            calls=calls - start_calls,
            tokens=tokens - start_tokens,
        )
        record["summary"] = summarise(record, record.pop("digests_made", []))
        self.records.append(record)
        self.state.delete(CURRENT_SLEEP)
        return record

    def mark(self, sleep_id: str, **fields) -> bool:
        """Add fields to a past sleep's record (e.g. that it was rolled back).

        Args:
            sleep_id (str): The sleep's id, such as "s3".
            **fields: What to add.

        Returns:
            bool: False when no past sleep has that id.

        """
        # found by id: housekeeping removes old records, so "s3" need not be the third
        for position, record in enumerate(self.records.all()):
            if record.get("id") == sleep_id:
                self.records.update({position: {**record, **fields}})
                return True
        return False

    def recent(self, limit: int = 20) -> list[SleepRecord]:
        """The last sleeps, newest first.

        Args:
            limit (int): How many at most.

        Returns:
            list: Records.

        """
        if limit <= 0:
            return []
        return list(reversed(self.records.tail(limit)))

    def remove_ended_before(self, cutoff: str) -> int:
        """Remove the records of sleeps that ended before `cutoff`, keeping the newest.

        Args:
            cutoff (str): A game time (ISO), as the records' `end`.

        Returns:
            int: How many records were removed (the history is rewritten once, if any).

        """
        records = self.records.all()
        kept = [
            record
            for position, record in enumerate(records)
            if position == len(records) - 1 or not (record.get("end") or "") < cutoff
        ]
        removed = len(records) - len(kept)
        if removed:
            self.records.extra.setdefault("next_id", len(records) + 1)
            self.records.replace_all(kept)
        return removed

    def __len__(self) -> int:
        return len(self.records)
