"""
Refusals: what was not done, and why.

Every operation a builder's (or a player's) words can reach either does what it was asked or
raises `Refused`, with a message fit for a builder that names what was wrong and what is
allowed; nothing is changed when it raises. The core's own kinds of refusal subclass it (a
configuration value, a trust level, a reminder, a core note, a sleep, a rollback), so the door,
the builder command and the dashboard catch them all with one `except Refused`.

"""


class Refused(ValueError):
    """An operation that was refused. The message says why, and what is allowed; nothing was
    changed."""
