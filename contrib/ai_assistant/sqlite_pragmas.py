"""
The game's SQLite pragmas on every database connection (optional, recommended on SQLite).

Evennia runs the `SQLITE3_PRAGMAS` setting (by default `synchronous=OFF`, a larger page cache,
temporary tables in memory) on the database connection it has when the server starts. Evennia 6
then closes every connection as it starts its services (a connection inherited across a fork is
unsafe on Python 3.14), and the server goes on with a new connection that has none of them:
SQLite's own defaults, `synchronous=FULL`, so every commit waits for the disk. Evennia saves
an object as each change is made, and an assistant's turn commits once per step (about eight
times a turn), each commit on the reactor thread while players wait. On an ordinary disk that
is a few tenths of a millisecond a commit, several milliseconds a turn.

This server plugin gives every new SQLite connection of the server the game's own
`SQLITE3_PRAGMAS`, as Evennia gave the first one. It changes nothing else, and nothing on
another database. Use it in `server/conf/settings.py`:

```python
SERVER_SERVICES_PLUGIN_MODULES = [
    *SERVER_SERVICES_PLUGIN_MODULES,
    "ai_assistant.sqlite_pragmas",
]
```

What the pragmas are stays the game's choice: Evennia's default `synchronous=OFF` trades
durability on a power cut for speed. A game that wants it durable sets, for instance,
`SQLITE3_PRAGMAS = (*SQLITE3_PRAGMAS, "PRAGMA synchronous=NORMAL", "PRAGMA journal_mode=WAL")`.

"""

from django.conf import settings
from django.db import DatabaseError, connections
from django.db.backends.signals import connection_created
from evennia.utils import logger

DISPATCH_UID = "ai_assistant.sqlite_pragmas"


def apply_pragmas(sender=None, connection=None, **kwargs) -> bool:
    """Run the game's `SQLITE3_PRAGMAS` on a new SQLite connection (Django's
    `connection_created` signal).

    Args:
        sender: The database backend's class (unused).
        connection (BaseDatabaseWrapper): The connection just made.
        **kwargs: The signal's other arguments.

    Returns:
        bool: True when pragmas were run (a SQLite connection, and the setting has some).

    """
    pragmas = tuple(getattr(settings, "SQLITE3_PRAGMAS", ()) or ())
    if connection is None or connection.vendor != "sqlite" or not pragmas:
        return False
    with connection.cursor() as cursor:
        for pragma in pragmas:
            cursor.execute(pragma)
    return True


def start_plugin_services(server):
    """Evennia's server-plugin hook (`SERVER_SERVICES_PLUGIN_MODULES`): run the game's
    SQLite pragmas on every connection made from now on, and on those already open.

    Args:
        server (EvenniaServerService): The server service (unused).

    """
    connection_created.connect(apply_pragmas, dispatch_uid=DISPATCH_UID)
    for connection in connections.all(initialized_only=True):
        if connection.connection is None or connection.in_atomic_block:
            continue  # SQLite refuses some pragmas inside a transaction: the next connection
        try:
            apply_pragmas(connection=connection)
        except DatabaseError as error:
            logger.log_warn(f"ai_assistant.sqlite_pragmas: not run on an open connection: {error}")
    if any(connection.vendor == "sqlite" for connection in connections.all()):
        logger.log_info(
            "ai_assistant.sqlite_pragmas: SQLITE3_PRAGMAS run on every new SQLite connection"
        )
