"""The server plugin that gives every new SQLite connection the game's SQLITE3_PRAGMAS."""

from types import SimpleNamespace

import pytest
from django.db import connection, connections
from django.db.backends.signals import connection_created
from django.test import override_settings

from ai_assistant import sqlite_pragmas

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "sqlite", reason="the plugin only acts on SQLite connections"
    ),
]


def synchronous(conn) -> int:
    with conn.cursor() as cursor:
        cursor.execute("PRAGMA synchronous")
        return cursor.fetchone()[0]


@pytest.fixture
def fresh_connection():
    """A second connection to the test database, made when the test asks for it."""
    made = []

    def make():
        conn = connections.create_connection("default")
        made.append(conn)
        conn.ensure_connection()
        return conn

    yield make
    for conn in made:
        conn.close()
    connection_created.disconnect(dispatch_uid=sqlite_pragmas.DISPATCH_UID)


def test_a_new_connection_gets_the_games_pragmas_once_the_plugin_runs(
    fresh_connection, monkeypatch
):
    open_before = fresh_connection()
    # the test's own connection is inside the test's transaction, where SQLite refuses them
    monkeypatch.setattr(
        sqlite_pragmas,
        "connections",
        SimpleNamespace(all=lambda initialized_only=False: [connection, open_before]),
    )
    with override_settings(SQLITE3_PRAGMAS=("PRAGMA synchronous=OFF", "PRAGMA cache_size=5000")):
        assert synchronous(open_before) == 2  # SQLite's own default (FULL): what Evennia 6 leaves
        sqlite_pragmas.start_plugin_services(server=None)
        # a connection open when it starts gets them, and so does every new one
        assert synchronous(open_before) == 0
        made_after = fresh_connection()
        assert synchronous(made_after) == 0
        with made_after.cursor() as cursor:
            cursor.execute("PRAGMA cache_size")
            assert cursor.fetchone()[0] == 5000


def test_nothing_is_run_without_pragmas_or_on_another_database():
    with override_settings(SQLITE3_PRAGMAS=()):
        assert not sqlite_pragmas.apply_pragmas(connection=connection)
    postgres = SimpleNamespace(vendor="postgresql", cursor=None)  # a cursor would fail: unused
    with override_settings(SQLITE3_PRAGMAS=("PRAGMA synchronous=OFF",)):
        assert not sqlite_pragmas.apply_pragmas(connection=postgres)
        assert not sqlite_pragmas.apply_pragmas(connection=None)
