"""
What a database other than SQLite changes for the contrib, checked on the database of the run.

`make test` runs this module on SQLite with the whole suite, then again on a real PostgreSQL
server (`tests/settings_postgres.py`) with the storage, lifecycle and command tests. The direct
UPDATE of a stored value (`ai_assistant.shell.storage`) must write what Evennia's own save writes, join
and respect the caller's transaction, and keep the Attribute cache and the monitors right. A
failed statement aborts a PostgreSQL transaction, so the tick and the turn must report a
database error without another query in it. The checks that need a second connection to the
database run on PostgreSQL only (the SQLite test database lives in one connection's memory).

"""

import threading
from datetime import datetime, timezone

import pytest
from django.db import DatabaseError, connection, connections, transaction
from django.test import TransactionTestCase
from evennia.typeclasses.attributes import Attribute
from evennia.utils import create
from evennia.utils.idmapper.models import flush_cache
from evennia.utils.test_resources import BaseEvenniaTest
from twisted.internet import defer

from ai_assistant.testing.server import tool_call, tool_reply
from ai_assistant.shell.storage import MEMORY_CATEGORY, AttributeStore
from ai_assistant.tools.memory import AddJournalEntryTool

from . import postgres_server
from .helpers import AssistantTestCase

ON_POSTGRES = connection.vendor == "postgresql"

VALUES = {
    "nested": {"journal": [{"id": "j000001", "tags": ["map"], "importance": 6}], "n": 3},
    "tuple and set": ((1, "two", 3.5), {"a", "b"}),
    "text": "Ünïcödé, emoji 🗺, quotes ' \" and a NUL \x00 byte, which PostgreSQL text refuses",
    "big and small": [2**80, -(2**63), 1e-300, float("inf"), True, None],
    "time": datetime(2026, 11, 22, 10, 30, tzinfo=timezone.utc),
    "bytes": b"\x00\xffraw",
    "long": "x" * 200_000,
}


def _stored_column(attr_id: int) -> str:
    """The db_value column as the database holds it (no cache, no decoding)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT db_value FROM {Attribute._meta.db_table} WHERE id = %s", [attr_id])
        return cursor.fetchone()[0]


def _in_database(attr_id: int):
    """The stored value as the database holds it: read past Evennia's instance cache (which
    `Attribute.objects.get` returns from, even in another thread)."""
    return Attribute.objects.filter(id=attr_id).values_list("db_value", flat=True)[0]


def _failing_statement(*args, **kwargs):
    """A statement the database refuses, as a failed ORM write would meet one."""
    with transaction.mark_for_rollback_on_error(), connection.cursor() as cursor:
        cursor.execute("SELECT * FROM no_such_table")


class TestStoredValueUpdate(BaseEvenniaTest):
    def test_every_kind_of_value_survives_the_update_and_a_fresh_load(self):
        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        for key, value in VALUES.items():
            store.set(key, "placeholder")
            store.set(key, value)  # replaces: the direct UPDATE
        self.char1.attributes.reset_cache()
        for key, value in VALUES.items():
            assert store.get(key) == value, key

    def test_the_row_holds_exactly_what_evennias_save_writes(self):
        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        store.set("usage", {"calls": 1})
        store.set("usage", VALUES["nested"])
        attr = self.char1.attributes.get("usage", category=MEMORY_CATEGORY, return_obj=True)
        written = _stored_column(attr.id)
        attr.save(update_fields=["db_value"])  # Evennia's own write of the same value
        assert _stored_column(attr.id) == written

    def test_the_cached_attribute_is_the_one_updated(self):
        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        store.set("queue", [1])
        cached = self.char1.attributes.get("queue", category=MEMORY_CATEGORY, return_obj=True)
        store.set("queue", [1, 2])
        again = self.char1.attributes.get("queue", category=MEMORY_CATEGORY, return_obj=True)
        assert again is cached and cached.value == [1, 2]

    def test_a_rolled_back_transaction_takes_the_update_with_it(self):
        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        store.set("queue", [1])
        attr = self.char1.attributes.get("queue", category=MEMORY_CATEGORY, return_obj=True)
        with pytest.raises(RuntimeError):
            with transaction.atomic():
                store.set("queue", [1, 2])
                assert _in_database(attr.id) == [1, 2]  # inside: seen
                raise RuntimeError("the caller gives up")
        assert _in_database(attr.id) == [1]
        # as after Evennia's own save: its caches do not follow a rollback
        assert attr.value == [1, 2]

    def test_a_steps_updates_go_in_one_batch_at_its_end(self):
        from ai_assistant.shell.storage import step_transaction

        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        store.set("queue", [1])
        store.set("usage", {"calls": 1})
        queue = self.char1.attributes.get("queue", category=MEMORY_CATEGORY, return_obj=True)
        usage = self.char1.attributes.get("usage", category=MEMORY_CATEGORY, return_obj=True)
        with step_transaction():
            store.set("queue", [1, 2])
            store.set("usage", {"calls": 2})
            assert _in_database(queue.id) == [1]
        # the driver's row count for executemany decides whether the batch stood: both rows
        assert _in_database(queue.id) == [1, 2] and _in_database(usage.id) == {"calls": 2}

    def test_a_refused_update_marks_the_transaction_for_rollback(self):
        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        store.set("queue", [1])

        def refuse_updates(execute, sql, params, many, context):
            if sql.startswith("UPDATE"):
                sql = sql.replace(Attribute._meta.db_table, "no_such_table")
            return execute(sql, params, many, context)

        with transaction.atomic():
            with connection.execute_wrapper(refuse_updates):
                with pytest.raises(DatabaseError):
                    store.set("queue", [1, 2])
            # as after a failed save: no further query may run in this transaction (on
            # PostgreSQL it would fail with "current transaction is aborted")
            assert transaction.get_rollback()
        attr = self.char1.attributes.get("queue", category=MEMORY_CATEGORY, return_obj=True)
        assert _in_database(attr.id) == [1]


@pytest.mark.skipif(not ON_POSTGRES, reason="needs a second connection (PostgreSQL)")
class TestWhatOtherConnectionsSee(TransactionTestCase):
    """Committed or not, seen from another connection, as another process would see it.

    Evennia's server writes in autocommit mode (no request wraps its reactor's work), which
    Django's `TestCase` never shows: it wraps each test in a transaction.

    """

    def setUp(self):
        self.obj = create.create_object("evennia.objects.objects.DefaultObject", key="box")
        self.store = AttributeStore(self.obj, MEMORY_CATEGORY)
        self.store.set("queue", [1])
        self.attr_id = self.obj.attributes.get(
            "queue", category=MEMORY_CATEGORY, return_obj=True
        ).id

    def tearDown(self):
        flush_cache()
        super().tearDown()

    def seen_elsewhere(self):
        seen = []

        def read():
            try:
                seen.append(_in_database(self.attr_id))
            finally:
                connections.close_all()  # this thread's own connection

        worker = threading.Thread(target=read)
        worker.start()
        worker.join()
        return seen[0]

    def test_outside_a_transaction_the_update_is_committed_at_once(self):
        self.store.set("queue", [1, 2])
        assert self.seen_elsewhere() == [1, 2]

    def test_inside_a_transaction_the_update_is_committed_with_it(self):
        with transaction.atomic():
            self.store.set("queue", [1, 2])
            assert self.seen_elsewhere() == [1]
        assert self.seen_elsewhere() == [1, 2]


class TestDatabaseErrorsInTheLifecycle(AssistantTestCase):
    def test_a_database_error_in_a_tick_is_recorded_not_raised(self):
        self.handler.hearing.flush = _failing_statement
        self.tick()  # must not raise (on PostgreSQL the tick's transaction is aborted)
        assert self.script.db.tick_errors == 1
        assert "no_such_table" in self.script.db.last_error
        del self.handler.hearing.flush
        # the next tick works as ever
        self.responder.add(
            tool_reply(tool_call("say", {"text": "Still here."})), tool_reply(tool_call("noop"))
        )
        self.char1.execute_cmd("say Aria, are you there?")
        self.tick()
        assert 'Aria says, "Still here."' in self.received(self.char1)
        assert self.script.db.tick_errors == 1

    def test_a_database_error_in_a_turn_is_recorded_after_its_transaction(self):
        def run(original, tool, ctx, args):
            _failing_statement()
            return original(tool, ctx, args)

        # the turn ends with the failed stretch: no second reply is asked for
        self._turn_whose_journaling_does(run)
        assert not self.handler.in_flight
        assert self.script.db.tick_errors == 1
        assert self.script.db.last_error.startswith("turn: ")

    def _live_runner(self):
        pending = []

        def later(work):
            # as on a live server: the model's answer arrives after the tick has returned
            deferred = defer.Deferred()
            pending.append((work, deferred))
            return deferred

        self.handler.runner = later
        return pending

    def _turn_whose_journaling_does(self, run):
        """A whispered turn, on a live runner, whose `add_journal_entry` runs `run(original,
        tool, ctx, args)`; returns what is still pending after the tool's stretch ran."""
        original = AddJournalEntryTool.run
        AddJournalEntryTool.run = lambda tool, ctx, args: run(original, tool, ctx, args)
        self.addCleanup(setattr, AddJournalEntryTool, "run", original)
        pending = self._live_runner()
        self.responder.add(
            tool_reply(tool_call("add_journal_entry", {"content": "Char asked for the map."}))
        )
        self.char1.execute_cmd("whisper Aria = where is the map?")
        self.tick()
        work, deferred = pending.pop()
        deferred.callback(work())  # the stretch that runs the tool
        return pending

    def test_a_tool_cannot_swallow_a_database_error(self):
        def run(original, tool, ctx, args):
            original(tool, ctx, args)
            _failing_statement()

        pending = self._turn_whose_journaling_does(run)
        # the turn failed with the database's error, not with a tool result the model reads
        assert self.script.db.last_error.startswith("turn: ")
        assert "no_such_table" in self.script.db.last_error
        assert not pending  # no second model call over a transaction that cannot stand
        assert not [e for e in self.handler.brain.journal.all() if "map" in e["content"]]
        assert self.handler.brain.events.peek()  # what was heard waits for the next turn

    def test_a_step_rolled_back_in_silence_fails_its_turn_and_leaves_no_stale_memory(self):
        def run(original, tool, ctx, args):
            result = original(tool, ctx, args)  # the entry is written...
            # ...then game code swallows an error of a save, which marks the step's
            # transaction for rollback (Django does so for a failed save inside it)
            transaction.set_rollback(True)
            return result

        brain_before = self.handler.brain
        self._turn_whose_journaling_does(run)
        # the turn fails (at its next query, or as the step ends when there is none)
        assert self.script.db.last_error.startswith("turn: ")
        assert not self.handler.in_flight
        # the brain is built again from what is stored: the entry was never kept
        assert self.handler.brain is not brain_before
        assert not [e for e in self.handler.brain.journal.all() if "map" in e["content"]]
        fresh = AttributeStore(self.char1, MEMORY_CATEGORY)
        self.char1.attributes.reset_cache()
        from ai_assistant.memory.journal import Journal

        assert not [e for e in Journal(fresh).all() if "map" in e["content"]]
        assert self.handler.brain.events.peek()


def test_the_server_programs_are_found_where_postgres_bindir_points(tmp_path, monkeypatch):
    for name in ("initdb", "pg_ctl"):
        program = tmp_path / name
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
    monkeypatch.setenv("POSTGRES_BINDIR", str(tmp_path))
    assert postgres_server.find_bindir() == tmp_path


def test_without_postgresql_the_run_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("POSTGRES_BINDIR", str(tmp_path))  # empty
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(postgres_server.glob, "glob", lambda pattern: [])
    with pytest.raises(postgres_server.PostgresUnavailable, match="apt-get install postgresql"):
        postgres_server.find_bindir()
    assert postgres_server.main(["check"]) == 3  # skipped: make test goes on
    assert "PostgreSQL tests SKIPPED" in capsys.readouterr().err
    assert postgres_server.main(["check", "--required"]) == 1  # CI: an error
    assert "PostgreSQL tests FAILED" in capsys.readouterr().err
