"""
The core's `KeyValueStore` over Evennia Attributes.

Script state uses the default category, so builders see it with `examine` and `script.db.<key>`
(`operating_mode`, `activity_since_wake`, ...; see `ai_assistant.state`). The memory kept on the
character (journal chunks, entity profiles) uses the `ai_assistant` category, so it never
collides with the game's own Attributes on that character.

"""

import threading
from contextlib import contextmanager

from django.db import connections, router, transaction
from evennia.scripts.monitorhandler import MONITOR_HANDLER
from evennia.typeclasses.attributes import Attribute
from evennia.utils.dbserialize import deserialize, to_pickle

MEMORY_CATEGORY = "ai_assistant"

# the Attributes changed in the open step (see `step_transaction`), by primary key; None when
# no step is open. Only the reactor thread opens steps and writes through them.
_changed: dict | None = None


@contextmanager
def step_transaction():
    """One step of an assistant on the reactor thread: a transaction whose Attribute updates
    are sent together when the step ends.

    A turn's step changes about ten stored values. Inside a step `AttributeStore.set` changes
    the cached Attribute at once (readers see the new value) and leaves the UPDATE to the end
    of the step, where all of them go in one `executemany`, each value once however often it
    changed. Nothing is written when the step raised or marked its transaction for rollback.
    A step opened inside another joins it.

    """
    global _changed
    if _changed is not None:
        yield
        return
    with transaction.atomic():
        _changed = {}
        try:
            yield
            changed = _changed
        finally:
            _changed = None
        if changed and not transaction.get_rollback():
            # an Attribute deleted since it changed has no row (and no pk) to write
            _update_values([attr for attr in changed.values() if attr.pk is not None])


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

    """

    def __init__(self, obj, category: str | None = None):
        self.obj = obj
        self.category = category

    def get(self, key, default=None):
        """Read the value stored under `key`, as plain Python data.

        Args:
            key (str): The Attribute key.
            default: What to return when nothing (or None) is stored.

        Returns:
            The stored value, or `default`.

        """
        value = self.obj.attributes.get(key, category=self.category)
        return default if value is None else deserialize(value)

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
            # a value changed earlier in this step must not be written after its row is gone
            attr = self.obj.attributes.get(key, category=self.category, return_obj=True)
            if attr is not None and not isinstance(attr, list):
                _changed.pop(attr.pk, None)
        self.obj.attributes.remove(key, category=self.category)
