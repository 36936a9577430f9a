"""
Budgets and limits: what an assistant may spend on the model, and how fast one player may make
assistants think.

What a budget counts is what costs (`billed_tokens`): a call's prompt tokens less those the
provider served from its prompt cache (billed at a fraction, or not at all), plus its completion
tokens; the offline rehearsal model's calls cost nothing.

- `TokenBudget`: tokens per game day (`token_budget_per_day`) and per real hour
  (`token_budget_per_hour`), counted from every reply's usage. When either is spent, the
  assistant stops calling the model: it keeps hearing (events wait in its queue, nothing is
  lost), says so once in character (`budget_spent_message`, if set), and goes on when the next
  day or hour begins.
- `TurnRateLimiter`: how many turns one player's lines may start per minute, across all
  assistants (the game-wide setting `AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE`). A line beyond it
  is deferred, not dropped: it is given the first moment the player's minute has room again
  (in the order spoken) and starts its turn then; the player is told once a minute when they
  will be answered. At most `MAX_WAIT` ahead: a player who speaks faster still is refused a
  deferral (that line is heard as context for the next turn, but starts none, and they are
  told), so earlier promises stand and the waiting lines stay bounded.
- `PlayerTokenBudget`: the tokens the turns each player's lines started have spent, per game
  day and real hour, across all assistants, keyed by account (the game-wide settings
  `AI_ASSISTANT_PLAYER_TOKENS_PER_HOUR` and `AI_ASSISTANT_PLAYER_TOKENS_PER_DAY`). A turn's
  tokens are shared evenly among the players whose lines started it, so what the players are
  charged adds up to what was spent. A player whose budget is spent is heard, as context, but
  starts no turn until the next hour or game day, and is told once. Builders' own lines are not
  limited by it, nor by the turns a minute (`hearing`).

"""

from collections import deque
from datetime import datetime, timedelta

from .llm.chat import TokenUsage
from .memory.store import KeyValueStore
from .offline.rehearsal import REHEARSAL_MODEL
from .state import TOKEN_SPEND


def billed_tokens(usage: TokenUsage, model: str) -> int:
    """The tokens of one model call that count against a budget: those that cost.

    Args:
        usage (TokenUsage): The call's token counts, as the server reported them.
        model (str): The chat model that was called.

    Returns:
        int: The prompt tokens not served from the provider's cache plus the completion
            tokens; 0 for the offline rehearsal model, which costs nothing.

    """
    if model == REHEARSAL_MODEL:
        return 0
    return usage.prompt - usage.cached + usage.completion


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
    """Turns started per player per minute, across every assistant of the server, and the
    lines deferred until a player's minute has room.

    Held in memory by the shell (one for the whole server); a reload starts it afresh (deferred
    lines keep the moment they were given: it is stored with them in each assistant's queue).
    Players silent for a minute are forgotten, at most once a minute, so it stays as small as
    the number of players speaking.

    """

    WINDOW = timedelta(minutes=1)
    # how far ahead a line may be deferred: beyond it, it is refused (see `slot`)
    MAX_WAIT = timedelta(minutes=5)

    def __init__(self):
        self._turns: dict[str, deque] = {}
        self._told: dict[str, datetime] = {}
        self._swept: datetime | None = None

    def slot(self, player: str, now: datetime, per_minute: int) -> datetime | None:
        """When one more line of `player` may start a turn, counted against their minute then.

        Lines are given moments in the order they are heard, so a player's deferred lines are
        answered in the order spoken.

        Args:
            player (str): The player's key (their character's dbref).
            now (datetime): The time.
            per_minute (int): The limit; 0 for none.

        Returns:
            datetime or None: `now` when it may start one at once; a later moment when it is
                deferred until then; None when that moment would be more than `MAX_WAIT`
                away (refused: nothing is counted).

        """
        if per_minute <= 0:
            return now
        self._sweep(now)
        turns = self._turns.setdefault(player, deque())
        while turns and now - turns[0] >= self.WINDOW:
            turns.popleft()
        when = now
        if turns:
            # never before a line heard earlier; and the window ending at `when` must hold
            # fewer than `per_minute` (the moments are in order, so that is the per_minute-th
            # last one leaving it)
            when = max(when, turns[-1])
            if len(turns) >= per_minute:
                when = max(when, turns[-per_minute] + self.WINDOW)
        if when - now > self.MAX_WAIT:
            return None
        turns.append(when)
        return when

    def deferred(self, now: datetime) -> int:
        """How many lines wait for a moment still to come, all players together.

        Args:
            now (datetime): The time.

        Returns:
            int: The count.

        """
        return sum(1 for turns in self._turns.values() for when in turns if when > now)

    def _sweep(self, now: datetime) -> None:
        """Forget the players whose last line left the window (once a minute at most)."""
        if self._swept is not None and now - self._swept < self.WINDOW:
            return
        self._swept = now
        self._turns = {
            player: turns
            for player, turns in self._turns.items()
            if turns and now - turns[-1] < self.WINDOW
        }
        self._told = {
            player: told for player, told in self._told.items() if now - told < self.WINDOW
        }

    def tell_once(self, player: str, now: datetime) -> bool:
        """True once a minute per player: whether to tell them they are being held back.

        Args:
            player (str): The player's key (or any key of what they are told).
            now (datetime): The time.

        Returns:
            bool: True when they were not told in the last minute (now recorded as told).

        """
        told = self._told.get(player)
        if told is not None and now - told < self.WINDOW:
            return False
        self._told[player] = now
        return True


class PlayerTokenBudget:
    """Tokens spent for each player (account), per game day and real hour, across every
    assistant of the server.

    Held in memory by the shell (one for the whole server): a reload starts the count afresh.
    A player with nothing spent this hour and game day is forgotten, so it stays as small as
    the number of players who spoke lately.

    """

    SWEEP = timedelta(minutes=1)

    def __init__(self):
        self._spend: dict[str, dict] = {}
        self._swept: datetime | None = None

    def spent(self, account: str, now: datetime, game_now: datetime) -> dict:
        """{"day": tokens this game day, "hour": tokens this real hour} for one player.

        Args:
            account (str): The player's account key.
            now (datetime): The real time (picks the hour).
            game_now (datetime): The game time (picks the day).

        Returns:
            dict: {"day": int, "hour": int}.

        """
        spend = self._spend.get(account) or {}
        day, hour = TokenBudget._periods(now, game_now)
        return {
            "day": spend.get("day_tokens", 0) if spend.get("day") == day else 0,
            "hour": spend.get("hour_tokens", 0) if spend.get("hour") == hour else 0,
        }

    def charge(self, players: dict, tokens: int, now: datetime, game_now: datetime) -> None:
        """Share the tokens of one turn among the players whose lines started it.

        Args:
            players (dict): Account key -> the name shown in status.
            tokens (int): The turn's tokens; 0 (or no players) changes nothing.
            now (datetime): The real time.
            game_now (datetime): The game time.

        """
        if not tokens or not players:
            return
        self._sweep(now, game_now)
        share, rest = divmod(tokens, len(players))
        day, hour = TokenBudget._periods(now, game_now)
        for index, (account, name) in enumerate(sorted(players.items())):
            spent = self.spent(account, now, game_now)
            charged = share + (1 if index < rest else 0)
            entry = self._spend.setdefault(account, {})
            entry.update(
                name=str(name)[:40],
                day=day,
                day_tokens=spent["day"] + charged,
                hour=hour,
                hour_tokens=spent["hour"] + charged,
            )

    def exhausted(
        self, account: str, now: datetime, game_now: datetime, per_hour: int, per_day: int
    ) -> str | None:
        """Why this player's lines may start no turn now, or None.

        Args:
            account (str): The player's account key.
            now (datetime): The real time.
            game_now (datetime): The game time.
            per_hour (int): Tokens per real hour; 0 for no limit.
            per_day (int): Tokens per game day; 0 for no limit.

        Returns:
            str or None: Which budget is spent ("hour" or "day"), or None.

        """
        spent = self.spent(account, now, game_now)
        if per_day and spent["day"] >= per_day:
            return "day"
        if per_hour and spent["hour"] >= per_hour:
            return "hour"
        return None

    def first_telling(self, account: str, period: str, now: datetime, game_now: datetime) -> bool:
        """True the first time this is asked for a spent period ("said once"); records it.

        Args:
            account (str): The player's account key.
            period (str): "hour" or "day", as `exhausted` said.
            now (datetime): The real time.
            game_now (datetime): The game time.

        Returns:
            bool: True when this player was not yet told of this hour or game day.

        """
        day, hour = TokenBudget._periods(now, game_now)
        told = f"day:{day}" if period == "day" else f"hour:{hour}"
        entry = self._spend.setdefault(account, {})
        if entry.get("told") == told:
            return False
        entry["told"] = told
        return True

    def top(self, now: datetime, game_now: datetime, most: int = 5) -> dict:
        """The players who spent the most this hour and this game day (names and tokens only).

        Args:
            now (datetime): The real time.
            game_now (datetime): The game time.
            most (int): How many of each.

        Returns:
            dict: {"hour": [(name, tokens)], "day": [(name, tokens)]}, most first.

        """
        rows = {"hour": [], "day": []}
        for account, entry in self._spend.items():
            spent = self.spent(account, now, game_now)
            for period in rows:
                if spent[period]:
                    rows[period].append((entry.get("name") or account, spent[period]))
        return {period: sorted(found, key=lambda r: -r[1])[:most] for period, found in rows.items()}

    def _sweep(self, now: datetime, game_now: datetime) -> None:
        """Forget the players with nothing spent this hour and game day (once a minute at most)."""
        if self._swept is not None and now - self._swept < self.SWEEP:
            return
        self._swept = now
        self._spend = {
            account: entry
            for account, entry in self._spend.items()
            if any(self.spent(account, now, game_now).values())
        }

    def __len__(self) -> int:
        return len(self._spend)


__all__ = ["PlayerTokenBudget", "TokenBudget", "TurnRateLimiter", "billed_tokens"]
