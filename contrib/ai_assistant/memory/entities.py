"""
Entity profiles: what the assistant has observed about people (and things).

Each profile is one stored value (`entity:<key>`), so an observation about one person never
re-writes the others; an index maps keys to display names. A person's key is their dbref
(`#12`) when known, else `name:<lower-case name>`. One person has one profile: an observation
by name finds the profile of the person of that name, and a profile started by name is merged
into the dbref's profile as soon as the person is known by dbref.

A profile holds:

- observations (`o1`, `o2`, ...): what was noticed or told, each with its provenance and
  audience, marked `consolidated` once sleep has drawn attributes from it;
- attributes (`a1`, ...): stable knowledge synthesised in sleep (a preference, a trait, a
  relationship, a fact), each citing the observations it rests on, with the narrowest audience
  of those, and what it inherits from them (`provenance.derived`): drawn from what someone
  told the assistant, it says so ("Carol says: ...") and is trusted no more than their claim.

"""

from collections.abc import Callable
from datetime import datetime

from ..clock import to_iso
from ..records import Profile
from .audience import Audience
from .provenance import OBSERVED
from .store import KeyValueStore

PREFIX = "entity:"  # a profile is stored under its person key after it
INDEX_KEY = f"{PREFIX}index"
ATTRIBUTE_TYPES = ("preference", "trait", "relationship", "fact")


def name_key(name: str) -> str:
    """The key of someone known only by name.

    Args:
        name (str): Their name; surrounding spaces and a leading "@" are dropped.

    Returns:
        str: `name:` followed by the name in lower case.

    """
    return f"name:{name.strip().lstrip('@').lower()}"


class EntityMemory:
    """The profiles of one assistant.

    Args:
        store (KeyValueStore): The assistant character's store.

    Attributes:
        watchers (list): Callables told of every changed profile (the recall index).

    """

    def __init__(self, store: KeyValueStore):
        self.store = store
        self.watchers: list[Callable[[dict], None]] = []

    def _key(self, entity_key: str) -> str:
        return PREFIX + entity_key

    def remove(self, keys: list[str]) -> int:
        """Remove whole profiles and their names from the index (forgetting a person).

        Args:
            keys (list): Person keys; those without a profile are skipped.

        Returns:
            int: How many profiles were removed.

        """
        index = self.index()
        removed = [key for key in keys if self.profile(key) is not None]
        for key in removed:
            self.store.delete(self._key(key))
            for watcher in self.watchers:
                watcher({"key": key, "removed": True})
            index.pop(key, None)
        if removed:
            self.store.set(INDEX_KEY, index)
        return len(removed)

    def index(self) -> dict[str, str]:
        """Every profile's key and display name.

        Returns:
            dict: Display names keyed by profile key.

        """
        return dict(self.store.get(INDEX_KEY) or {})

    def profile(self, entity_key: str) -> Profile | None:
        """Read one profile.

        Args:
            entity_key (str): The person's key (`#12` or `name:bob`).

        Returns:
            dict or None: The profile, or None if there is none.

        """
        return self.store.get(self._key(entity_key))

    def profiles(self) -> list[Profile]:
        """Every profile (one read each).

        Returns:
            list: The profiles listed in the index that exist.

        """
        return [p for key in self.index() if (p := self.profile(key)) is not None]

    def resolve(self, entity_key: str, name: str) -> str:
        """The key to file an observation about `name` under: a name key becomes the key of
        the one known person of that name.

        A dbref key is returned as it is. A name key is kept when no known person, or more
        than one, has that name.

        Args:
            entity_key (str): The key given (`#12` or `name:bob`).
            name (str): The person's name.

        Returns:
            str: The key to use.

        """
        if not entity_key.startswith("name:"):
            return entity_key
        wanted = name.strip().lstrip("@").lower()
        known = [key for key, shown in self.index().items() if shown.lower() == wanted]
        dbrefs = [key for key in known if not key.startswith("name:")]
        return dbrefs[0] if len(dbrefs) == 1 else entity_key

    def observe(
        self,
        entity_key: str,
        name: str,
        text: str,
        *,
        now: datetime,
        author: str,
        location: str | None = None,
        source_type: str = OBSERVED,
        heard_from: str | None = None,
        audience: Audience = None,
        importance: int = 5,
        keep: int = 200,
        voice: str | None = None,
    ) -> Profile:
        """Record one observation about an entity and return the profile.

        Args:
            entity_key (str): The person's key (`#12` or `name:bob`).
            name (str): Their display name.
            text (str): What was noticed or told.
            now (datetime): When.
            author (str): The assistant's name.
            location (str, optional): Where.
            source_type (str): How it was learned (`memory.provenance`).
            heard_from (str, optional): Who told it.
            audience (list, optional): Who may know it; None for public.
            importance (int): 1-10.
            keep (int): Observations kept per person: past it, the oldest consolidated one of
                the same audience goes, else the oldest consolidated, else the oldest of the
                same audience (so one audience's flood never pushes out another's).
            voice (str, optional): Who told it, counted once however many characters they
                play (`provenance.voice_of`).

        Returns:
            dict: The updated profile.

        """
        entity_key = self.resolve(entity_key, name)
        profile = self.profile(entity_key) or _new_profile(entity_key, name)
        merged = self._merge_name_profile(entity_key, name, profile)
        profile["name"] = name
        number = profile.get("next_id", len(profile["observations"]) + 1)
        profile["observations"].append(
            {
                "id": f"o{number}",
                "text": text,
                "at": to_iso(now),
                "where": location,
                "author": author,
                "source_type": source_type,
                "heard_from": heard_from,
                "audience": None if audience is None else sorted(set(audience)),
                "importance": importance,
                "consolidated": False,
                **({"voice": voice[:80]} if voice and heard_from else {}),
            }
        )
        profile["next_id"] = number + 1
        profile["updated_at"] = to_iso(now)
        observations = profile["observations"]
        mine = None if audience is None else sorted(set(audience))
        while len(observations) > keep:
            # what makes room shares the newcomer's audience where it can: a flood of one
            # audience never pushes out what another (a whisper) left
            same = [o for o in observations if o.get("audience") == mine] or observations
            done = next((o for o in same if o.get("consolidated")), None)
            if done is None:
                done = next((o for o in observations if o.get("consolidated")), same[0])
            observations.remove(done)
        self.save(profile)
        index = self.index()
        if index.get(entity_key) != name or merged:
            index[entity_key] = name
            if merged:
                index.pop(merged, None)
            self.store.set(INDEX_KEY, index)
        return profile

    def _merge_name_profile(self, entity_key: str, name: str, profile: dict) -> str | None:
        """Fold a profile started by name into the dbref profile of that person."""
        if entity_key.startswith("name:"):
            return None
        other_key = name_key(name)
        other = self.profile(other_key)
        if not other:
            return None
        number = profile.get("next_id", len(profile["observations"]) + 1)
        for observation in other.get("observations", []):
            profile["observations"].append({**observation, "id": f"o{number}"})
            number += 1
        for attribute in other.get("attributes", []):
            profile["attributes"].append({**attribute, "id": f"a{number}", "cites": []})
            number += 1
        profile["next_id"] = number
        self.store.delete(self._key(other_key))
        for watcher in self.watchers:
            watcher({"key": other_key, "removed": True})
        return other_key

    def save(self, profile: dict) -> None:
        """Write a changed profile back (one value) and tell the watchers.

        Args:
            profile (dict): The profile, with its `key`.

        """
        self.store.set(self._key(profile["key"]), profile)
        for watcher in self.watchers:
            watcher(profile)

    def add_attributes(
        self,
        entity_key: str,
        attributes: list[dict],
        consolidated: list[str],
        now: datetime,
        prune: bool = False,
    ) -> dict | None:
        """Store attributes synthesised from observations, and mark those observations.

        Args:
            entity_key (str): The person.
            attributes (list): Dicts with `type`, `value`, `cites` (observation ids) and
                `audience`.
            consolidated (list): Ids of the observations the synthesis covered.
            now (datetime): When.
            prune (bool): Drop the consolidated observations instead of marking them.

        Returns:
            dict or None: The profile, None when there is none.

        """
        profile = self.profile(entity_key)
        if profile is None:
            return None
        number = profile.get("next_id", 1)
        known = {
            (a.get("type"), a["value"].lower(), str(a.get("audience")))
            for a in profile["attributes"]
        }
        for attribute in attributes:
            key = (
                attribute.get("type"),
                attribute["value"].lower(),
                str(attribute.get("audience")),
            )
            if key in known:
                continue  # the same thing learned again adds nothing
            known.add(key)
            profile["attributes"].append({"id": f"a{number}", "at": to_iso(now), **attribute})
            number += 1
        profile["next_id"] = number
        done = set(consolidated)
        if prune:
            profile["observations"] = [o for o in profile["observations"] if o["id"] not in done]
        else:
            for observation in profile["observations"]:
                if observation["id"] in done:
                    observation["consolidated"] = True
        profile["consolidated_at"] = to_iso(now)
        self.save(profile)
        return profile

    def item(self, entity_key: str, item_id: str) -> dict | None:
        """One observation (`o3`) or attribute (`a5`) of a profile.

        Args:
            entity_key (str): The person's key.
            item_id (str): The observation's or attribute's id.

        Returns:
            dict or None: The item, or None if the profile or the item does not exist.

        """
        profile = self.profile(entity_key) or {}
        for item in profile.get("observations", []) + profile.get("attributes", []):
            if item["id"] == item_id:
                return item
        return None

    def change(self, entity_key: str, item_id: str, change) -> dict | None:
        """Apply `change(item)` to one observation or attribute (returning None drops it);
        returns the item as it was, or None when there is none.

        The profile is saved after the change.

        Args:
            entity_key (str): The person's key.
            item_id (str): The observation's or attribute's id.
            change (callable): Takes a copy of the item and returns the new item, or None
                to remove it.

        Returns:
            dict or None: The item before the change, or None if it was not found.

        """
        profile = self.profile(entity_key)
        if profile is None:
            return None
        for field in ("observations", "attributes"):
            for position, item in enumerate(profile.get(field, [])):
                if item["id"] == item_id:
                    changed = change(dict(item))
                    if changed is None:
                        del profile[field][position]
                    else:
                        profile[field][position] = changed
                    self.save(profile)
                    return item
        return None


def _new_profile(entity_key: str, name: str) -> Profile:
    return {
        "key": entity_key,
        "name": name,
        "observations": [],
        "attributes": [],
        "next_id": 1,
    }
