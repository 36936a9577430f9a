"""`AttributeStore`: the core's key-value store over Evennia Attributes."""

import threading

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from evennia.typeclasses.attributes import Attribute
from evennia.utils.test_resources import BaseEvenniaTest

from ai_assistant.shell.storage import MEMORY_CATEGORY, AttributeStore


class TestAttributeStore(BaseEvenniaTest):
    def test_values_round_trip_as_plain_data(self):
        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        store.set("chunk:0", [{"content": "a"}])
        value = store.get("chunk:0")
        assert value == [{"content": "a"}] and type(value) is list and type(value[0]) is dict
        assert store.get("missing", default=7) == 7
        # kept apart from the game's own Attributes of the same name
        assert self.char1.attributes.get("chunk:0") is None

    def test_replacing_a_value_is_seen_at_once_and_stored(self):
        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        store.set("queue", [1])
        store.set("queue", [1, 2])
        assert store.get("queue") == [1, 2]
        assert self.char1.attributes.get("queue", category=MEMORY_CATEGORY) == [1, 2]
        stored = Attribute.objects.get(db_key="queue", db_category=MEMORY_CATEGORY)
        stored.refresh_from_db()  # what the database holds, not the cached object
        assert stored.value == [1, 2]

    def test_replacing_a_value_is_one_update(self):
        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        store.set("usage", {"calls": 1})
        with CaptureQueriesContext(connection) as queries:
            store.set("usage", {"calls": 2})
        updates = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
        assert len(updates) == 1, queries.captured_queries

    def test_a_replaced_value_is_what_the_database_returns_to_a_fresh_load(self):
        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        store.set("history:000000", '[{"role":"user"}]')
        store.set("history:000000", '[{"role":"user"},{"role":"assistant"}]')
        self.char1.attributes.reset_cache()  # as after a reload: read from the database
        assert store.get("history:000000") == '[{"role":"user"},{"role":"assistant"}]'

    def test_evennias_attribute_monitors_still_hear_of_the_change(self):
        from evennia.scripts.monitorhandler import MONITOR_HANDLER

        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        store.set("usage", {"calls": 1})
        MONITOR_HANDLER.add(self.char1, "usage", _record_change, category=MEMORY_CATEGORY)
        try:
            store.set("usage", {"calls": 2})
        finally:
            MONITOR_HANDLER.remove(self.char1, "usage", category=MEMORY_CATEGORY)
        assert CHANGES and CHANGES[-1] == {"calls": 2}

    def test_a_write_from_another_thread_goes_through_evennias_save(self):
        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        store.set("usage", {"calls": 1})
        saved = []
        attr = self.char1.attributes.get("usage", category=MEMORY_CATEGORY, return_obj=True)
        attr.save = lambda **kwargs: saved.append(kwargs)  # Evennia's save, observed
        try:
            worker = threading.Thread(target=store.set, args=("usage", {"calls": 2}))
            worker.start()
            worker.join()
        finally:
            del attr.save
        assert saved == [{"update_fields": ["db_value"]}]
        assert store.get("usage") == {"calls": 2}

    def test_a_string_attribute_is_replaced_as_evennia_does(self):
        self.char1.attributes.add("note", "plain", category=MEMORY_CATEGORY, strattr=True)
        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        store.set("note", {"now": "data"})
        assert store.get("note") == {"now": "data"}

    def test_delete(self):
        store = AttributeStore(self.char1)
        store.set("wait_until", "2026-11-22T10:00:00+00:00")
        store.delete("wait_until")
        assert store.get("wait_until") is None


CHANGES = []


def _record_change(obj=None, fieldname=None, **kwargs):
    CHANGES.append(obj.value)


def _stored(attr) -> object:
    from evennia.utils.dbserialize import from_pickle

    # what the database holds, not the cached object (the idmapper returns that one)
    (raw,) = Attribute.objects.filter(pk=attr.pk).values_list("db_value", flat=True)
    return from_pickle(raw)


class TestStepTransaction(BaseEvenniaTest):
    """A step's updates are seen at once and sent together when the step ends."""

    def _store_with(self, **values):
        store = AttributeStore(self.char1, MEMORY_CATEGORY)
        for key, value in values.items():
            store.set(key, value)
        attrs = {
            key: self.char1.attributes.get(key, category=MEMORY_CATEGORY, return_obj=True)
            for key in values
        }
        return store, attrs

    def test_updates_are_seen_at_once_and_sent_together_at_the_end(self):
        from ai_assistant.shell.storage import step_transaction

        store, attrs = self._store_with(queue=[1], usage={"calls": 1})
        with CaptureQueriesContext(connection) as queries:
            with step_transaction():
                store.set("queue", [1, 2])
                store.set("usage", {"calls": 2})
                store.set("queue", [1, 2, 3])  # the later value wins, written once
                assert store.get("queue") == [1, 2, 3]  # readers see it before the end
                assert _stored(attrs["queue"]) == [1]  # the database not yet
        assert _stored(attrs["queue"]) == [1, 2, 3] and _stored(attrs["usage"]) == {"calls": 2}
        updates = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
        # one executemany (Django logs each of its rows), two rows: queue once, usage once
        assert len(updates) <= 2, updates

    def test_a_step_that_raises_writes_nothing(self):
        from ai_assistant.shell.storage import step_transaction

        store, attrs = self._store_with(queue=[1])
        with pytest.raises(RuntimeError):
            with step_transaction():
                store.set("queue", [1, 2])
                raise RuntimeError("the step gives up")
        assert _stored(attrs["queue"]) == [1]

    def test_a_step_marked_for_rollback_writes_nothing_and_says_so(self):
        from ai_assistant.shell.storage import StepRolledBack, step_transaction

        store, attrs = self._store_with(queue=[1])
        told = []
        store.on_rollback = lambda: told.append(True)
        with pytest.raises(StepRolledBack, match="marked for rollback"):
            with step_transaction():
                store.set("queue", [1, 2])
                store.set("fresh", {"new": True})  # created in the step
                transaction.set_rollback(True)
        assert _stored(attrs["queue"]) == [1]
        # what readers see follows the database, not the writes that were not kept
        assert store.get("queue") == [1]
        assert store.get("fresh") is None
        assert told == [True]

    def test_a_step_whose_writes_are_refused_leaves_no_stale_cache(self):
        from django.db import DatabaseError

        from ai_assistant.shell.storage import step_transaction

        store, attrs = self._store_with(queue=[1])

        def refuse_updates(execute, sql, params, many, context):
            if sql.startswith("UPDATE"):
                sql = sql.replace(Attribute._meta.db_table, "no_such_table")
            return execute(sql, params, many, context)

        with connection.execute_wrapper(refuse_updates):
            with pytest.raises(DatabaseError):
                with step_transaction():
                    store.set("queue", [1, 2])
        assert _stored(attrs["queue"]) == [1]
        assert store.get("queue") == [1]

    def test_a_step_that_stands_tells_no_one(self):
        from ai_assistant.shell.storage import step_transaction

        store, attrs = self._store_with(queue=[1])
        told = []
        store.on_rollback = lambda: told.append(True)
        with step_transaction():
            store.set("queue", [1, 2])
        assert store.get("queue") == [1, 2] and told == []

    def test_a_step_inside_a_step_joins_it(self):
        from ai_assistant.shell.storage import step_transaction

        store, attrs = self._store_with(queue=[1])
        with step_transaction():
            with step_transaction():
                store.set("queue", [1, 2])
            assert _stored(attrs["queue"]) == [1]  # sent when the outer step ends
        assert _stored(attrs["queue"]) == [1, 2]

    def test_monitors_hear_of_a_batched_change(self):
        from evennia.scripts.monitorhandler import MONITOR_HANDLER

        from ai_assistant.shell.storage import step_transaction

        store, _ = self._store_with(usage={"calls": 1})
        MONITOR_HANDLER.add(self.char1, "usage", _record_change, category=MEMORY_CATEGORY)
        try:
            with step_transaction():
                store.set("usage", {"calls": 5})
        finally:
            MONITOR_HANDLER.remove(self.char1, "usage", category=MEMORY_CATEGORY)
        assert CHANGES and CHANGES[-1] == {"calls": 5}

    def test_a_row_deleted_under_the_step_is_written_again(self):
        from ai_assistant.shell.storage import step_transaction

        store, attrs = self._store_with(queue=[1], usage={"calls": 1})
        with step_transaction():
            store.set("queue", [1, 2])
            store.set("usage", {"calls": 2})
            Attribute.objects.filter(pk=attrs["queue"].pk).delete()  # gone under the step
        assert _stored(attrs["usage"]) == {"calls": 2}
        assert self.char1.attributes.get("queue", category=MEMORY_CATEGORY) == [1, 2]

    def test_a_value_changed_then_deleted_in_a_step_leaves_no_row(self):
        from ai_assistant.shell.storage import step_transaction

        store, attrs = self._store_with(current_sleep={"id": "s1"}, usage={"calls": 1})
        rows = Attribute.objects.count()
        with step_transaction():
            store.set("current_sleep", {"id": "s1", "end": "later"})
            store.set("usage", {"calls": 2})
            store.delete("current_sleep")
        assert Attribute.objects.count() == rows - 1  # gone, and not written back as an orphan
        assert store.get("current_sleep") is None
        assert _stored(attrs["usage"]) == {"calls": 2}
