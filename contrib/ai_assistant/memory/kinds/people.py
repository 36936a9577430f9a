"""Profiles and relationships as kinds of memory: one record a person, under their key, with an
index of their names (`memory.entities`, `memory.relationships`)."""

from collections.abc import Callable
from datetime import datetime
from typing import ClassVar

from pydantic import Field

from ...errors import Refused
from ...records import MAX_REASON_CHARS, Profile, RelationshipChange, check_record
from .. import entities, relationships
from ..relationships import DIMENSIONS, Relationships, parse_value
from ..store import KeyValueStore
from .base import MAX_ITEMS, Kind, check_people


class BuildersProfiles:
    """People's profiles (observations and attributes: `memory.entities`) as a builder reads
    them (`MemoryAdmin.kind("profiles")`).

    Args:
        brain (Brain): The assistant's brain (its people's store).
        now (callable): `now()` -> the current real time.

    """

    def __init__(self, brain, now: Callable[[], datetime]):
        self.brain = brain
        self.now = now

    def index(self) -> list[tuple[str, str]]:
        """(key, name) of everyone the assistant knows, by name: one read (the index).

        Returns:
            list: The pairs, sorted by name.

        """
        index = self.brain.entities.index()
        return sorted(index.items(), key=lambda item: (str(item[1]).lower(), str(item[0])))

    def profile(self, key: str) -> Profile | None:
        """One person's profile, by their key; only a key of the index is a person (a crafted
        key never reaches another stored value).

        Args:
            key (str): The person's key (`#12`, `name:bob`).

        Returns:
            dict or None: The profile, or None for nobody known by that key.

        """
        entities = self.brain.entities
        if entities.index().get(key) is None:
            return None
        profile = entities.profile(key)
        return profile if isinstance(profile, dict) else None

    def find(self, name: str | None = None) -> list[Profile]:
        """Profiles (observations and attributes), or those whose name or key is `name`.

        Args:
            name (str, optional): A name or key to match, case-insensitively; all when empty.

        Returns:
            list: The profiles, as dicts.

        Raises:
            Refused: Nobody of that name is known.

        """
        if not name:
            return self.brain.entities.profiles()
        wanted = name.strip().lower()
        matches = [
            key
            for key, known in self.index()
            if str(known).lower() == wanted or str(key).lower() == wanted
        ]
        found = [profile for key in matches if (profile := self.profile(key)) is not None]
        if not found:
            known = ", ".join(sorted(str(n) for _, n in self.index())[:30]) or "nobody yet"
            raise Refused(f"{self.brain.name} knows no one called '{name[:60]}'. Known: {known}.")
        return found


class BuildersRelationships:
    """The relationships (familiarity, warmth, trust: `memory.relationships`) a builder reads
    and sets (`MemoryAdmin.kind("relationships")`); each setting is recorded in the reviews.

    Args:
        brain (Brain): The assistant's brain (its people's store and review).
        now (callable): `now()` -> the current real time.

    """

    def __init__(self, brain, now: Callable[[], datetime]):
        self.brain = brain
        self.now = now

    def all(self) -> list[dict]:
        """Every relationship it has, by name (what a dashboard lists).

        Returns:
            list: The states (`memory.relationships`), reasons and their audiences included.

        """
        return Relationships(self.brain.entities.store).all()

    def find(self, person: str) -> tuple[str, str, dict | None]:
        """One person's relationship, by their name or key.

        Args:
            person (str): A name or key, matched case-insensitively among the people it has a
                profile or a relationship for.

        Returns:
            tuple: (their key, their name, the state or None when it has none yet).

        Raises:
            Refused: Nobody of that name or key is known.

        """
        known_relationships = Relationships(self.brain.entities.store)
        wanted = person.strip().lower()
        known = {**known_relationships.index(), **self.brain.entities.index()}
        for key, name in sorted(known.items(), key=lambda item: str(item[0])):
            if wanted in (str(name).lower(), str(key).lower()):
                return key, str(name), known_relationships.get(key)
        names = ", ".join(sorted(str(n) for n in known.values())[:30]) or "nobody yet"
        raise Refused(f"{self.brain.name} knows no one called '{person[:60]}'. Known: {names}.")

    def check(self, person: str, dimension: str, value: str, reason: str) -> tuple:
        """A builder's setting of one dimension, checked (nothing is written): what `set`
        would set, for it and for a page that asks first.

        Args:
            person (str): Their name or key.
            dimension (str): familiarity (0 to 1), warmth or trust (-1 to 1).
            value (str): The value as typed.
            reason (str): Why.

        Returns:
            tuple: (their key, their name, the dimension, the new value, the reason made one
                line, their relationship state now or None).

        Raises:
            Refused: An unknown person or dimension, a value out of range or a reason too
                long.

        """
        dimension = dimension.strip().lower()
        if dimension not in DIMENSIONS:
            raise Refused(
                f"'{dimension[:30]}' is not a relationship dimension: use {', '.join(DIMENSIONS)}."
            )
        try:
            number = parse_value(dimension, value.strip())
        except ValueError as err:
            raise Refused(str(err)) from None
        reason = " ".join(reason.split())
        if len(reason) > MAX_REASON_CHARS:
            raise Refused(f"The reason is {len(reason)} characters; at most {MAX_REASON_CHARS}.")
        key, name, state = self.find(person)
        return key, name, dimension, number, reason, state

    def set(
        self, person: str, dimension: str, value: str, reason: str, by: str
    ) -> tuple[str, float, float]:
        """Set one dimension of a relationship (a builder's edit, recorded in the reviews).

        Args:
            person (str): Their name or key.
            dimension (str): familiarity (0 to 1), warmth or trust (-1 to 1).
            value (str): The value as typed.
            reason (str): Why (at most `MAX_REASON_CHARS`); "set by <builder>" when empty.
            by (str): Who set it.

        Returns:
            tuple: (their name, the new value, the value before).

        Raises:
            Refused: An unknown person or dimension, a value out of range or a reason too
                long; nothing is changed.

        """
        key, name, dimension, number, reason, _ = self.check(person, dimension, value, reason)
        now = self.now()
        after, before = Relationships(self.brain.entities.store).change(
            key,
            name,
            dimension,
            value=number,
            reason=reason or f"set by {by}",
            at=self.brain.game_now(now),
            by=by,
        )
        self.brain.review.record_relationship(key, dimension, after, before, reason, now, by)
        return name, after, before


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

    def stored(self, memory: KeyValueStore, state: KeyValueStore) -> int:
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

    def builder(self, brain, now: Callable[[], datetime]) -> BuildersProfiles:
        return BuildersProfiles(brain, now)


class RelationshipsKind(PersonKind):
    name = "relationships"
    label = "relationships"
    one = "relationship"
    prefix = relationships.PREFIX
    index = relationships.INDEX_KEY
    forgotten_label = "relationships"

    def builder(self, brain, now: Callable[[], datetime]) -> BuildersRelationships:
        return BuildersRelationships(brain, now)

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
