"""
Sleep debt: how much an assistant has lived through since it last slept.

Each handled conversation turn adds debt, the larger of two scores: one from its memory writes
(journal entries, observations, core memory edits) and one from its tool calls. Each score is
0 to 3, set by three thresholds in the configuration. The debt's level tells the model (in the
turn's user message, never the system prompt, so the cached prefix stays the same) that it
should sleep soon, and a builder (in `/status`) how tired it is. A completed sleep pays it off.

The debt lives in the script's store under `state.SLEEP_DEBT`, so it survives a reload. A turn
retried after a model failure keeps its id, and is counted once.

"""

from datetime import datetime

from .clock import to_iso
from .conf import AssistantConfig
from .errors import Refused
from .memory.store import KeyValueStore
from .state import LAST_SLEEP, SLEEP_DEBT

ALERT = "Alert"
DROWSY = "Drowsy"
SLEEPY = "Sleepy"
MUST_SLEEP = "Must Sleep"
# the least debt of each level, highest first
LEVELS = ((10, MUST_SLEEP), (7, SLEEPY), (4, DROWSY), (0, ALERT))
MIN_BUILDER_POINTS, MAX_BUILDER_POINTS = 1, 3
# turn ids remembered to count each turn once; a retry comes within a few ticks, not hundreds
COUNTED_KEPT = 20

ADVISORY = (
    "(You are getting sleepy: when the conversation allows, consider go_to_sleep to "
    "consolidate your memories.)"
)
DIRECTIVE = (
    "(You must sleep: as soon as the conversation allows, finish politely and use go_to_sleep "
    "to consolidate your memories.)"
)


def level_of(points: int) -> str:
    """The level of a debt.

    Args:
        points (int): The debt.

    Returns:
        str: "Alert" (0-3), "Drowsy" (4-6), "Sleepy" (7-9) or "Must Sleep" (10+).

    """
    for least, name in LEVELS:
        if points >= least:
            return name
    return ALERT


def banded(count: int, thresholds: tuple[int, int, int]) -> int:
    """Score a count 0-3 against three ascending thresholds.

    Args:
        count (int): What was counted.
        thresholds (tuple): The least counts scoring 1, 2 and 3.

    Returns:
        int: 0 below the first threshold, else the number of thresholds reached.

    """
    return sum(1 for threshold in thresholds if count >= threshold)


def turn_debt(tool_calls: list[dict], config: AssistantConfig) -> int:
    """The debt one turn adds: the larger of its memory-write score and its tool-call score.

    Args:
        tool_calls (list): The turn's tool calls (`TurnOutcome.tool_calls`: dicts with "ok"
            and "writes_memory", which the tool itself declares: `Tool.writes_memory`).
        config (AssistantConfig): The thresholds.

    Returns:
        int: 0 to 3.

    """
    # a refused write changed nothing, so it tired nothing either
    writes = sum(1 for call in tool_calls if call.get("writes_memory") and call.get("ok"))
    return max(
        banded(writes, config.debt_memory_thresholds()),
        banded(len(tool_calls), config.debt_tool_thresholds()),
    )


def turn_id(event_ids) -> str:
    """A turn's id: the ids of the events it answers, which a retry answers again.

    Args:
        event_ids (iterable): The queue ids of the turn's events.

    Returns:
        str: The ids, sorted, joined with commas.

    """
    return ",".join(str(event_id) for event_id in sorted(event_ids))


class SleepDebt:
    """The sleep debt of one assistant, kept in its script's store.

    Args:
        state (KeyValueStore): The script's store.

    """

    def __init__(self, state: KeyValueStore):
        self.state = state

    def _data(self) -> dict:
        data = self.state.get(SLEEP_DEBT) or {}
        return {
            "points": data.get("points", 0),
            "turns": data.get("turns", 0),
            "counted": list(data.get("counted") or []),
            "last_reason": data.get("last_reason"),
        }

    @property
    def points(self) -> int:
        """The debt now.

        Returns:
            int: 0 or more.

        """
        return self._data()["points"]

    @property
    def level(self) -> str:
        """The debt's level.

        Returns:
            str: See `level_of`.

        """
        return level_of(self.points)

    @property
    def turns_since_sleep(self) -> int:
        """Turns handled since the last completed sleep.

        Returns:
            int: The count.

        """
        return self._data()["turns"]

    def last_sleep(self) -> str | None:
        """When the last completed sleep ended.

        Returns:
            str or None: An ISO time; None before the first.

        """
        return self.state.get(LAST_SLEEP)

    def last_reason(self) -> str | None:
        """Why a builder last added debt.

        Returns:
            str or None: The reason, or None.

        """
        return self._data()["last_reason"]

    def add_turn(self, tool_calls: list[dict], config: AssistantConfig, turn: str) -> int:
        """Count one handled turn, once, however often it was retried.

        Args:
            tool_calls (list): The turn's tool calls.
            config (AssistantConfig): The thresholds.
            turn (str): The turn's id (`turn_id`).

        Returns:
            int: The debt added (0 when the turn was already counted).

        """
        data = self._data()
        if turn in data["counted"]:
            return 0
        points = turn_debt(tool_calls, config)
        data["counted"] = (data["counted"] + [turn])[-COUNTED_KEPT:]
        data["turns"] += 1
        data["points"] += points
        self.state.set(SLEEP_DEBT, data)
        return points

    def add(self, points: int, reason: str) -> int:
        """Add debt by hand (a builder's), 1 to 3 points with a reason.

        Args:
            points (int): 1 to 3.
            reason (str): Why; kept as the last reason.

        Returns:
            int: The debt after.

        Raises:
            Refused: Points outside 1-3 or an empty reason; nothing is changed.

        """
        if isinstance(points, bool) or not isinstance(points, int):
            raise Refused(f"Points must be a whole number from 1 to 3, not {points!r}.")
        if not MIN_BUILDER_POINTS <= points <= MAX_BUILDER_POINTS:
            raise Refused(f"Points must be from 1 to 3; {points} is not allowed.")
        if not reason or not reason.strip():
            raise Refused("A reason is required.")
        data = self._data()
        data["points"] += points
        data["last_reason"] = reason.strip()[:200]
        self.state.set(SLEEP_DEBT, data)
        return data["points"]

    def reset(self, now: datetime) -> int:
        """Pay the debt off after a completed sleep.

        Args:
            now (datetime): When the sleep ended.

        Returns:
            int: The debt before.

        """
        before = self.points
        self.state.set(SLEEP_DEBT, {"points": 0, "turns": 0, "counted": self._data()["counted"]})
        self.state.set(LAST_SLEEP, to_iso(now))
        return before

    def advisory(self, critical_bookmark: bool = False) -> str | None:
        """The line the turn's message carries at Sleepy and Must Sleep.

        Args:
            critical_bookmark (bool, optional): A critical bookmark waits for consolidation:
                the advisory is given whatever the debt.

        Returns:
            str or None: The advisory (Sleepy, or a critical bookmark), the directive (Must
                Sleep), else None.

        """
        level = self.level
        if level == MUST_SLEEP:
            return DIRECTIVE
        if level == SLEEPY or critical_bookmark:
            return ADVISORY
        return None
