"""
Whether `make serve` can start the game without asking for an admin account.

Evennia's launcher asks for a superuser (on the terminal) whenever the database has none, and
`make serve` has no terminal to answer it: unless `EVENNIA_SUPERUSER_USERNAME` and
`EVENNIA_SUPERUSER_PASSWORD` are set, the launcher asks again and again until it fails. That is
the case on the first start, and also with a database that was made (by `evennia migrate`, or a
start that was stopped) before any superuser existed.

    python -m world.first_start          # with DJANGO_SETTINGS_MODULE=server.conf.settings

Exits with status 2 and what to do when a superuser is needed and not given; 0 otherwise.
Only an SQLite database is looked into; with another one the launcher is left to ask.

"""

import os
import sqlite3
import sys


def needs_superuser(database: dict) -> bool:
    """Whether the game's database has no superuser yet (or does not exist).

    Args:
        database (dict): The default entry of Django's `DATABASES`.

    Returns:
        bool: True when the launcher would ask for one; False when one exists, or when the
            database is not SQLite (it cannot be looked into without Django).

    """
    if "sqlite3" not in database.get("ENGINE", ""):
        return False
    path = database.get("NAME")
    if not path or not os.path.exists(path):
        return True
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            row = db.execute("SELECT 1 FROM accounts_accountdb WHERE is_superuser = 1 LIMIT 1")
            return row.fetchone() is None
    except sqlite3.DatabaseError:
        return True  # no accounts table yet: the first migrate makes it, then it asks


def main() -> int:
    """Say what to do when the launcher would ask for a superuser with no one to answer.

    Returns:
        int: 2 when a superuser is needed and the environment does not give one, else 0.

    """
    from django.conf import settings

    given = os.environ.get("EVENNIA_SUPERUSER_USERNAME") and os.environ.get(
        "EVENNIA_SUPERUSER_PASSWORD"
    )
    if given or not needs_superuser(settings.DATABASES["default"]):
        return 0
    print(
        "The game has no admin account yet: set EVENNIA_SUPERUSER_USERNAME and\n"
        "EVENNIA_SUPERUSER_PASSWORD (the admin account to create), e.g.\n"
        "  EVENNIA_SUPERUSER_USERNAME=admin EVENNIA_SUPERUSER_PASSWORD=secret make serve"
    )
    return 2


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "server.conf.settings")
    sys.exit(main())
