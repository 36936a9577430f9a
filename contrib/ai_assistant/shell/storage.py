"""
The core's `KeyValueStore` over Evennia Attributes.

Script state uses the default category, so builders see it with `examine` and `script.db.<key>`
(`operating_mode`, `activity_since_wake`, ...; see `ai_assistant.state`). The memory kept on the
character (journal chunks, entity profiles) uses the `ai_assistant` category, so it never
collides with the game's own Attributes on that character.

"""

import threading
from contextlib import contextmanager

from django.db import DatabaseError, connections, router, transaction
from evennia.scripts.monitorhandler import MONITOR_HANDLER
from evennia.typeclasses.attributes import Attribute
from evennia.utils.dbserialize import from_pickle, to_pickle

MEMORY_CATEGORY = "ai_assistant"

# the Attributes changed in the open step (see `step_transaction`), by primary key; None when
# no step is open. Only the reactor thread opens steps and writes through them.
_changed: dict | None = None
# the stores written in the open step, told when the step's writes are rolled back
_written: dict | None = None


class StepRolledBack(DatabaseError):
    """A step ended with its transaction marked for rollback: nothing it wrote was kept."""


@contextmanager
def step_transaction():
    """One step of an assistant on the reactor thread: a transaction whose Attribute updates
    are sent together when the step ends.

    A turn's step changes about ten stored values. Inside a step `AttributeStore.set` changes
    the cached Attribute at once (readers see the new value) and leaves the UPDATE to the end
    of the step, where all of them go in one `executemany`, each value once however often it
    changed. Nothing is written when the step raised or marked its transaction for rollback.
    A step opened inside another joins it.

    When the step's writes do not stand (it raised, its transaction was marked for rollback,
    or its writes were refused as it ended), the caches of everything it wrote would hold
    values the database does not: each store written in the step is told
    (`AttributeStore.rolled_back`), which empties the Attribute cache of its object and calls
    its `on_rollback`. A step marked for rollback that raised nothing raises `StepRolledBack`
    as it ends, so losing its writes is never silent.

    """
    global _changed, _written
    if _changed is not None:
        yield
        return
    kept = False
    written = {}
    try:
        with transaction.atomic():
            _changed, _written = {}, written
            try:
                yield
                changed = _changed
            finally:
                _changed, _written = None, None
            if transaction.get_rollback():
                raise StepRolledBack(
                    "the step's transaction was marked for rollback: nothing it wrote was kept"
                )
            if changed:
                # an Attribute deleted since it changed has no row (and no pk) to write
                _update_values([attr for attr in changed.values() if attr.pk is not None])
        kept = True
    finally:
        if not kept:
            for store, keys in written.values():
                store.rolled_back(keys)


def _update_value(attr) -> None:
    """Write `attr.db_value` to its row in one UPDATE statement.

    What `attr.save(update_fields=["db_value"])` does in the end, without the savepoint and the
    query building around it: measured at 13 to 37 microseconds against 118, and a turn writes
    several values in each of its steps on the reactor thread. The value goes through the
    field's own `pre_save` and `get_db_prep_save`, as in Django's save, so the row holds what a
    save would write, on SQLite and PostgreSQL alike. Evennia's monitors (`MONITOR_HANDLER`)
    are told, as a save would tell them. The write joins the caller's transaction, if any, and
    a database error marks that transaction for rollback as Django's save does: on PostgreSQL a
    failed statement has aborted it, and any later query in it would fail.

    """
    alias = attr._state.db or router.db_for_write(Attribute, instance=attr)
    connection = connections[alias]
    field = Attribute._meta.get_field("db_value")
    quote = connection.ops.quote_name
    sql = (
        f"UPDATE {quote(Attribute._meta.db_table)} SET {quote(field.column)} = %s "
        f"WHERE {quote(Attribute._meta.pk.column)} = %s"
    )
    value = field.get_db_prep_save(field.pre_save(attr, False), connection)
    with transaction.mark_for_rollback_on_error(alias), connection.cursor() as cursor:
        cursor.execute(sql, [value, attr.pk])
        updated = cursor.rowcount
    if updated != 1:
        # the row is gone (deleted under us): let Django's save report or recreate it
        attr.save()
        return
    MONITOR_HANDLER.at_update(attr, "db_value")


def _update_values(attrs: list) -> None:
    """`_update_value` for many Attributes in one `executemany` per database."""
    by_alias: dict[str, list] = {}
    for attr in attrs:
        alias = attr._state.db or router.db_for_write(Attribute, instance=attr)
        by_alias.setdefault(alias, []).append(attr)
    field = Attribute._meta.get_field("db_value")
    for alias, group in by_alias.items():
        connection = connections[alias]
        quote = connection.ops.quote_name
        sql = (
            f"UPDATE {quote(Attribute._meta.db_table)} SET {quote(field.column)} = %s "
            f"WHERE {quote(Attribute._meta.pk.column)} = %s"
        )
        rows = [
            (field.get_db_prep_save(field.pre_save(attr, False), connection), attr.pk)
            for attr in group
        ]
        with transaction.mark_for_rollback_on_error(alias), connection.cursor() as cursor:
            cursor.executemany(sql, rows)
            updated = cursor.rowcount
        if updated != len(rows):
            # a row is gone (deleted under us), or the driver does not count: one at a time,
            # as a single write does it (`save` reports or recreates a missing row)
            for attr in group:
                _update_value(attr)
            continue
        for attr in group:
            MONITOR_HANDLER.at_update(attr, "db_value")


class AttributeStore:
    """`KeyValueStore` over one object's Attributes in one category.

    Values come back as plain Python data (not Evennia's auto-saving wrappers), so the core's
    changes are written only when it calls `set`, once per changed value.

    Args:
        obj: The object whose Attributes hold the values.
        category (str, optional): Their Attribute category.
        on_rollback (callable, optional): Called with no arguments when a step that wrote
            through this store was rolled back (see `step_transaction`): whoever keeps values
            read from it drops them.

    """

    def __init__(self, obj, category: str | None = None, on_rollback=None):
        self.obj = obj
        self.category = category
        self.on_rollback = on_rollback

    def rolled_back(self, keys) -> None:
        """What a step wrote under `keys` through this store was rolled back.

        The Attributes written are dropped from Evennia's caches (which would otherwise keep
        the values that were not kept), so the next reads come from the database, and
        `on_rollback` is called.

        Args:
            keys (set): The keys written in the step.

        """
        for key in keys:
            attr = self.obj.attributes.get(key, category=self.category, return_obj=True)
            if attr is not None and not isinstance(attr, list):
                # Evennia keeps one instance per row, and a reload returns that same instance:
                # it is dropped, so the next read builds one from the row (if any is left)
                attr.flush_from_cache(force=True)
        self.obj.attributes.reset_cache()
        if self.on_rollback is not None:
            self.on_rollback()

    def get(self, key, default=None):
        """Read the value stored under `key`, as plain Python data.

        Args:
            key (str): The Attribute key.
            default: What to return when nothing (or None) is stored.

        Returns:
            The stored value, or `default`.

        """
        attr = self.obj.attributes.get(key, category=self.category, return_obj=True)
        if attr is None or isinstance(attr, list):
            return default
        # one pass over the stored data into plain Python (`attr.value` would wrap every
        # container in Evennia's auto-saving types, and `deserialize` unwrap them again)
        value = from_pickle(attr.db_value)
        return default if value is None else value

    def set(self, key, value):
        """Store `value` under `key`, replacing what was there.

        Replacing an existing value is one UPDATE of its row (`attributes.add` saves it twice,
        each in its own savepoint, and a turn writes about ten values on the reactor thread).
        The Attribute cache keeps the same object, so readers see the new value at once.
        New values, string Attributes and writes from other threads go through Evennia.

        Args:
            key (str): The Attribute key.
            value: The value to store.

        """
        if _written is not None:
            _written.setdefault(id(self), (self, set()))[1].add(key)
        attr = self.obj.attributes.get(key, category=self.category, return_obj=True)
        if attr is None or isinstance(attr, list) or attr.db_strvalue is not None:
            self.obj.attributes.add(key, value, category=self.category)
            return
        attr.db_value = to_pickle(value)
        if threading.current_thread() is not threading.main_thread():
            # Evennia's save hands writes from other threads to the reactor thread
            attr.save(update_fields=["db_value"])
            return
        if _changed is not None:
            _changed[attr.pk] = attr  # written when the step ends (`step_transaction`)
            return
        _update_value(attr)

    def delete(self, key):
        """Remove the value stored under `key`.

        Args:
            key (str): The Attribute key.

        """
        if _changed is not None:
            _written.setdefault(id(self), (self, set()))[1].add(key)
            # a value changed earlier in this step must not be written after its row is gone
            attr = self.obj.attributes.get(key, category=self.category, return_obj=True)
            if attr is not None and not isinstance(attr, list):
                _changed.pop(attr.pk, None)
        self.obj.attributes.remove(key, category=self.category)
