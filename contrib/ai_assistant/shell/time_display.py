"""
How builders read times, one rule for every screen (the command's and the dashboard's): a real
time is shown in the game's zone (`settings.TIME_ZONE`, read when shown), unlabelled; a game
time always says "game time" (the game's clock runs at its own pace, `TIME_FACTOR`), never
unlabelled beside a real one.

"""

from datetime import datetime, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def game_zone():
    """The zone real times are shown in: the game's `TIME_ZONE` (UTC when it names none).

    Returns:
        tzinfo: The zone.

    """
    from django.conf import settings

    try:
        return ZoneInfo(getattr(settings, "TIME_ZONE", None) or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return timezone.utc


def _real(iso: str | None) -> str:
    """A real time (ISO, stored in UTC) as `YYYY-MM-DD HH:MM` in the game's zone."""
    try:
        moment = datetime.fromisoformat(iso) if iso else None
    except (TypeError, ValueError):
        return str(iso)[:16].replace("T", " ")
    if moment is None:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(game_zone()).strftime("%Y-%m-%d %H:%M")


def when(iso: str | None) -> str:
    """A real time as `YYYY-MM-DD HH:MM`, in the game's zone."""
    return _real(iso) or "-"


def short_when(iso: str | None) -> str:
    """A real time as `MM-DD HH:MM`, in the game's zone, for table columns."""
    return _real(iso)[5:] or "-"


def game_when(iso: str | None) -> str:
    """A game time as `YYYY-MM-DD HH:MM`, as the game's clock has it (label it "game time")."""
    return (iso or "")[:16].replace("T", " ") or "-"


def short_game_when(iso: str | None) -> str:
    """A game time as `MM-DD HH:MM`, for a table column headed "game time"."""
    return (iso or "")[5:16].replace("T", " ") or "-"
