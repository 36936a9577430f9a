"""
The core's `KeyValueStore` over Evennia Attributes.

Script state uses the default category, so builders see it with `examine` and `script.db.<key>`
(`operating_mode`, `activity_since_wake`, ...; see `ai_assistant.state`). The memory kept on the
character (journal chunks, entity profiles) uses the `ai_assistant` category, so it never
collides with the game's own Attributes on that character.

"""

import threading

from django.db import connections, router, transaction
from evennia.scripts.monitorhandler import MONITOR_HANDLER
from evennia.typeclasses.attributes import Attribute
from evennia.utils.dbserialize import deserialize, to_pickle

MEMORY_CATEGORY = "ai_assistant"


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
        _update_value(attr)

    def delete(self, key):
        """Remove the value stored under `key`.

        Args:
            key (str): The Attribute key.

        """
        self.obj.attributes.remove(key, category=self.category)
