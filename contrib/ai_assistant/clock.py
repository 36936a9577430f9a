"""
Injectable time. The shell uses the real clock; tests and the demo pass a clock they drive, so a
simulated day runs in seconds.

"""

from datetime import datetime, timedelta, timezone


def utcnow() -> datetime:
    """The current time, timezone-aware UTC.

    Returns:
        datetime: Now, in UTC.

    """
    return datetime.now(timezone.utc)


class SystemClock:
    """The real time."""

    time_factor = 1.0

    def now(self) -> datetime:
        """The current real time.

        Returns:
            datetime: Now, timezone-aware UTC.

        """
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
        """The clock's time, which changes only through `advance`.

        Returns:
            datetime: The current time of this clock.

        """
        return self._now

    def advance(self, seconds: float) -> datetime:
        """Move the clock forward and return the new time.

        Args:
            seconds (float): How far to move it.

        Returns:
            datetime: The new time.

        """
        self._now += timedelta(seconds=seconds)
        return self._now


def to_iso(moment: datetime | None) -> str | None:
    """Serialize a time for an Attribute (ISO 8601), keeping None.

    Args:
        moment (datetime or None): The time.

    Returns:
        str or None: The ISO 8601 string, or None when there is no time.

    """
    return moment.isoformat() if moment else None


def from_iso(text: str | None) -> datetime | None:
    """Parse a time written by `to_iso`, keeping None.

    Args:
        text (str or None): An ISO 8601 string.

    Returns:
        datetime or None: The time, or None when the text is empty or None.

    """
    return datetime.fromisoformat(text) if text else None
