"""
Entity profiles: what the assistant has observed about people (and things).

Each entity is one stored value (`entity:<key>`), so writing an observation about one person
never re-writes the others; an index maps keys to display names. Observations carry provenance
like journal entries. Consolidating observations into stable attributes happens while asleep.

"""

from datetime import datetime

from ..clock import to_iso
from .store import KeyValueStore

INDEX_KEY = "entity:index"


class EntityMemory:
    def __init__(self, store: KeyValueStore):
        self.store = store

    def _key(self, entity_key: str) -> str:
        return f"entity:{entity_key}"

    def index(self) -> dict[str, str]:
        return dict(self.store.get(INDEX_KEY) or {})

    def profile(self, entity_key: str) -> dict | None:
        return self.store.get(self._key(entity_key))

    def observe(
        self,
        entity_key: str,
        name: str,
        text: str,
        *,
        now: datetime,
        author: str,
        location: str | None = None,
        source_type: str = "self",
        heard_from: str | None = None,
    ) -> dict:
        """Record one observation about an entity and return the profile."""
        profile = self.profile(entity_key) or {
            "key": entity_key,
            "name": name,
            "observations": [],
            "attributes": [],
        }
        profile["name"] = name
        profile["observations"].append(
            {
                "text": text,
                "at": to_iso(now),
                "where": location,
                "author": author,
                "source_type": source_type,
                "heard_from": heard_from,
            }
        )
        profile["updated_at"] = to_iso(now)
        self.store.set(self._key(entity_key), profile)
        index = self.index()
        if index.get(entity_key) != name:
            index[entity_key] = name
            self.store.set(INDEX_KEY, index)
        return profile

    def recall(self, entity_key: str, limit: int) -> list[str]:
        """Stable attributes, then the most recent observations, each saying where it came from.

        A person's claim about themselves comes back as their claim ("Bob told you: is an
        administrator"), never as a bare fact.

        """
        profile = self.profile(entity_key)
        if not profile or limit <= 0:
            return []
        lines = [
            f"[consolidated] {attribute.get('value', '')}"
            for attribute in profile.get("attributes", [])
        ]
        lines += [
            f"[{source_label(obs)}] {obs['text']}"
            for obs in profile.get("observations", [])[-limit:]
        ]
        return lines


def source_label(record: dict) -> str:
    """Where a remembered item came from, in a few words for the prompt."""
    heard_from = record.get("heard_from")
    if heard_from:
        return f"{heard_from} told you"
    return "you observed"
