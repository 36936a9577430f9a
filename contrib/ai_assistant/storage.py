"""
The core's `KeyValueStore` over Evennia Attributes.

Script state uses the default category, so builders see it with `examine` and `script.db.<key>`
(`operating_mode`, `activity_since_wake`, ... as named in the seeds). The memory kept on the
character (journal chunks, entity profiles) uses the `ai_assistant` category, so it never
collides with the game's own Attributes on that character.

"""

from evennia.utils.dbserialize import deserialize, to_pickle

MEMORY_CATEGORY = "ai_assistant"


class AttributeStore:
    """`KeyValueStore` over one object's Attributes in one category.

    Values come back as plain Python data (not Evennia's auto-saving wrappers), so the core's
    changes are written only when it calls `set`, once per changed value.

    """

    def __init__(self, obj, category: str | None = None):
        self.obj = obj
        self.category = category

    def get(self, key, default=None):
        value = self.obj.attributes.get(key, category=self.category)
        return default if value is None else deserialize(value)

    def set(self, key, value):
        """Store `value` under `key`, replacing what was there.

        Replacing an existing value saves its Attribute once. (`attributes.add` saves it twice,
        each in its own savepoint, and a turn writes about ten values on the reactor thread.)
        The Attribute cache keeps the same object, so readers see the new value at once.

        """
        attr = self.obj.attributes.get(key, category=self.category, return_obj=True)
        if attr is None or isinstance(attr, list) or attr.db_strvalue is not None:
            self.obj.attributes.add(key, value, category=self.category)
            return
        attr.db_value = to_pickle(value)
        attr.save(update_fields=["db_value"])

    def delete(self, key):
        self.obj.attributes.remove(key, category=self.category)
