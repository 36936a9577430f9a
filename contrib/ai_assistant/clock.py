"""
Injectable time. The shell uses the real clock; tests and the demo pass a clock they drive, so a
simulated day runs in seconds.

"""

from datetime import datetime, timedelta, timezone


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


class SystemClock:
    """The real time."""

    time_factor = 1.0

    def now(self) -> datetime:
        return utcnow()


class ManualClock:
    """A clock that only moves when told to.

    Args:
        start (datetime, optional): The starting time (UTC). Defaults to now.

    """

    def __init__(self, start: datetime | None = None, time_factor: float = 1.0):
        self._now = start or utcnow()
        self.time_factor = time_factor

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> datetime:
        """Move the clock forward and return the new time."""
        self._now += timedelta(seconds=seconds)
        return self._now


def to_iso(moment: datetime | None) -> str | None:
    """Serialize a time for an Attribute (ISO 8601), keeping None."""
    return moment.isoformat() if moment else None


def from_iso(text: str | None) -> datetime | None:
    """Parse a time written by `to_iso`, keeping None."""
    return datetime.fromisoformat(text) if text else None
