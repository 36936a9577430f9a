"""
Budgets and limits: what an assistant may spend on the model, and how fast one player may make
assistants think.

- `TokenBudget`: tokens per game day (`token_budget_per_day`) and per real hour
  (`token_budget_per_hour`), counted from every reply's usage. When either is spent, the
  assistant stops calling the model: it keeps hearing (events wait in its queue, nothing is
  lost), says so once in character (`budget_spent_message`, if set), and goes on when the next
  day or hour begins.
- `TurnRateLimiter`: how many turns one player's lines may start per minute, across all
  assistants (the game-wide setting `AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE`). Lines beyond it
  are heard, as context for the next turn, but start none; the player is told once a minute.

"""

from collections import deque
from datetime import datetime, timedelta

from .memory.store import KeyValueStore
from .state import TOKEN_SPEND


class TokenBudget:
    """Tokens spent per game day and real hour, against the configured budgets.

    Args:
        state (KeyValueStore): The script's store (spend is kept under `token_spend`).
        per_day (int): Tokens per game day; 0 for no limit.
        per_hour (int): Tokens per real hour; 0 for no limit.

    """

    def __init__(self, state: KeyValueStore, per_day: int, per_hour: int):
        self.state = state
        self.per_day = per_day
        self.per_hour = per_hour

    @staticmethod
    def _periods(now: datetime, game_now: datetime) -> tuple[str, str]:
        return game_now.strftime("%Y-%m-%d"), now.strftime("%Y-%m-%dT%H")

    def spent(self, now: datetime, game_now: datetime) -> dict:
        """{"day": tokens this game day, "hour": tokens this real hour} (0 once a new one
        began).

        Args:
            now (datetime): The real time (picks the hour).
            game_now (datetime): The game time (picks the day).

        Returns:
            dict: {"day": int, "hour": int}.

        """
        spend = self.state.get(TOKEN_SPEND) or {}
        day, hour = self._periods(now, game_now)
        return {
            "day": spend.get("day_tokens", 0) if spend.get("day") == day else 0,
            "hour": spend.get("hour_tokens", 0) if spend.get("hour") == hour else 0,
        }

    def add(self, tokens: int, now: datetime, game_now: datetime) -> None:
        """Count tokens just spent, against the current game day and real hour.

        Args:
            tokens (int): How many tokens; 0 changes nothing.
            now (datetime): The real time.
            game_now (datetime): The game time.

        """
        if not tokens:
            return
        spend = dict(self.state.get(TOKEN_SPEND) or {})
        spent = self.spent(now, game_now)
        day, hour = self._periods(now, game_now)
        spend.update(
            day=day, day_tokens=spent["day"] + tokens, hour=hour, hour_tokens=spent["hour"] + tokens
        )
        self.state.set(TOKEN_SPEND, spend)

    def exhausted(self, now: datetime, game_now: datetime) -> str | None:
        """Why no more model calls may be made now, or None.

        Args:
            now (datetime): The real time.
            game_now (datetime): The game time.

        Returns:
            str or None: Which budget is spent, or None when calls may go on.

        """
        spent = self.spent(now, game_now)
        if self.per_day and spent["day"] >= self.per_day:
            return f"the day's budget of {self.per_day} tokens is spent"
        if self.per_hour and spent["hour"] >= self.per_hour:
            return f"the hour's budget of {self.per_hour} tokens is spent"
        return None

    def first_telling(self, now: datetime, game_now: datetime) -> bool:
        """True the first time this is asked while spent, once per day or hour spent.

        Used to say "the budget is spent" only once. Records that it was told.

        Args:
            now (datetime): The real time.
            game_now (datetime): The game time.

        Returns:
            bool: True when a budget is spent and this period was not yet told.

        """
        reason = self.exhausted(now, game_now)
        if reason is None:
            return False
        day, hour = self._periods(now, game_now)
        period = f"day:{day}" if "day's" in reason else f"hour:{hour}"
        spend = dict(self.state.get(TOKEN_SPEND) or {})
        if spend.get("told") == period:
            return False
        spend["told"] = period
        self.state.set(TOKEN_SPEND, spend)
        return True


class TurnRateLimiter:
    """Turns started per player per minute, across every assistant of the server.

    Held in memory by the shell (one for the whole server); a reload starts it afresh.

    """

    WINDOW = timedelta(minutes=1)

    def __init__(self):
        self._turns: dict[str, deque] = {}
        self._told: dict[str, datetime] = {}

    def allow(self, player: str, now: datetime, per_minute: int) -> bool:
        """Whether `player` may start one more turn now; counts it when they may.

        Args:
            player (str): The player's key (their character's dbref).
            now (datetime): The time.
            per_minute (int): The limit; 0 for none.

        Returns:
            bool: True when the turn is allowed (and counted).

        """
        if per_minute <= 0:
            return True
        turns = self._turns.setdefault(player, deque())
        while turns and now - turns[0] >= self.WINDOW:
            turns.popleft()
        if len(turns) >= per_minute:
            return False
        turns.append(now)
        return True

    def tell_once(self, player: str, now: datetime) -> bool:
        """True once a minute per player: whether to tell them they are being held back.

        Args:
            player (str): The player's key.
            now (datetime): The time.

        Returns:
            bool: True when they were not told in the last minute (now recorded as told).

        """
        told = self._told.get(player)
        if told is not None and now - told < self.WINDOW:
            return False
        self._told[player] = now
        if len(self._told) > 10000:  # forget the oldest when many players came and went
            self._told = dict(list(self._told.items())[-5000:])
        return True


__all__ = ["TokenBudget", "TurnRateLimiter"]
