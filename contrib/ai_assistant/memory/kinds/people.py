"""Profiles and relationships as kinds of memory: one record a person, under their key, with an
index of their names (`memory.entities`, `memory.relationships`)."""

from typing import ClassVar

from pydantic import Field

from ...records import RelationshipChange, check_record
from .. import entities, relationships
from ..store import KeyValueStore
from .base import MAX_ITEMS, Kind, check_people


class PersonKind(Kind):
    """A record a person, stored under `prefix` + their key, listed in `index`."""

    prefix: ClassVar[str]
    index: ClassVar[str]
    section = list[dict]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.first_read = (cls.index,)

    def field(self):
        return self.section, Field(default_factory=list, max_length=MAX_ITEMS)

    def owns(self, key: str) -> bool:
        return key.startswith(self.prefix)

    def people(self, memory: KeyValueStore) -> dict[str, str]:
        return dict(memory.get(self.index) or {})

    def export(self, memory: KeyValueStore, state: KeyValueStore) -> list[dict]:
        return [
            value
            for key in self.people(memory)
            if isinstance(value := memory.get(self.prefix + key), dict)
        ]

    def held(self, memory: KeyValueStore, state: KeyValueStore) -> int:
        return len(self.people(memory))

    def check(self, section: list[dict], known, problems) -> None:
        check_people(section, self.name, problems)

    def write(self, section: list[dict], memory: KeyValueStore, state: KeyValueStore) -> None:
        if section:
            for record in section:
                memory.set(self.prefix + record["key"], record)
            memory.set(self.index, {r["key"]: r.get("name") or r["key"] for r in section})


class ProfilesKind(PersonKind):
    name = "profiles"
    label = "people's profiles"
    one = "person's profile"
    prefix = entities.PREFIX
    index = entities.INDEX_KEY
    forgotten_label = "profiles"

    def forget_person(self, review, person, state=None) -> int:
        return review.entities.remove(sorted(person.keys))


class RelationshipsKind(PersonKind):
    name = "relationships"
    label = "relationships"
    one = "relationship"
    prefix = relationships.PREFIX
    index = relationships.INDEX_KEY
    forgotten_label = "relationships"

    def forget_person(self, review, person, state=None) -> int:
        known = relationships.Relationships(review.core.store)
        return sum(known.forget(key) for key in sorted(person.keys))

    def check(self, section: list[dict], known, problems) -> None:
        super().check(section, known, problems)
        for number, state in enumerate(section):
            for dimension, value in state.items():
                changes = value.get("changes") or [] if isinstance(value, dict) else []
                for change_number, change in enumerate(changes):
                    problems.extend(
                        check_record(
                            RelationshipChange,
                            change,
                            f"memory.relationships[{number}].{dimension}.changes[{change_number}]",
                        )
                    )


PROFILES = ProfilesKind()
RELATIONSHIPS = RelationshipsKind()
