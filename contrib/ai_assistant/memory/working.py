"""
Working memory: who the assistant is talking with right now, about what, since when.

A small value on the script (`working_memory`), one line per conversation partner, updated by
every awake turn and shown in the next ones ("You are talking with: Bob, since 14:02, last about
'the east door'"). A conversation that has been quiet for `working_memory_stale_minutes` is
dropped: while awake when the next turn looks, and in the dreaming phase of sleep.

What someone said in private stays private here too: a partner's line is shown only to
conversations that may know it (`memory.audience`).

"""

from datetime import datetime, timedelta

from ..clock import from_iso, to_iso
from ..text import for_prompt
from ..state import WORKING_MEMORY as KEY
from .audience import Audience, visible
from .store import KeyValueStore

TOPIC_CHARS = 80
MAX_PARTNERS = 12


class WorkingMemory:
    """The conversations of the moment.

    Args:
        state (KeyValueStore): The script's store.

    """

    def __init__(self, state: KeyValueStore):
        self.state = state

    def partners(self) -> dict[str, dict]:
        """The current conversation partners.

        Returns:
            dict: Per person key, their `name`, `since`, `last_at`, `topic` and `audience`.

        """
        return dict(self.state.get(KEY) or {})

    def note(self, said: list[tuple[str, str, str, list | None]], now: datetime) -> None:
        """Remember who spoke and what about.

        Args:
            said (list): (person key, name, their last words, audience) for each speaker.
            now (datetime): When.

        """
        if not said:
            return
        partners = self.partners()
        for key, name, words, audience in said:
            partner = partners.get(key) or {"name": name, "since": to_iso(now)}
            partner.update(
                name=name, last_at=to_iso(now), topic=words[:TOPIC_CHARS], audience=audience
            )
            partners[key] = partner
        if len(partners) > MAX_PARTNERS:
            keep = sorted(partners, key=lambda k: partners[k]["last_at"])[-MAX_PARTNERS:]
            partners = {key: partners[key] for key in keep}
        self.state.set(KEY, partners)

    def lines(self, served: frozenset[str] | None, now: datetime, stale_minutes: int) -> list[str]:
        """Lines for the prompt (escaped), freshest first, only what `served` may know.

        Partners quiet for longer than `stale_minutes` are left out (but not removed).

        Args:
            served (frozenset or None): Who the conversation serves; None sees every partner.
            now (datetime): The current time.
            stale_minutes (int): How long a conversation may be quiet and still be shown.

        Returns:
            list: One line per partner: name, since when, and the last topic.

        """
        return [line for line, _ in self.shown(served, now, stale_minutes)]

    def shown(
        self, served: frozenset[str] | None, now: datetime, stale_minutes: int
    ) -> list[tuple[str, Audience]]:
        """The lines `lines` gives, each with the audience of its topic: a turn that shows a
        line is known only to those who may know it (`memory.audience.narrowest`).

        Args:
            served (frozenset or None): Who the conversation serves; None sees every partner.
            now (datetime): The current time.
            stale_minutes (int): How long a conversation may be quiet and still be shown.

        Returns:
            list: (line, audience) per partner, freshest first.

        """
        cutoff = now - timedelta(minutes=stale_minutes)
        shown = []
        partners = sorted(self.partners().values(), key=lambda p: p["last_at"], reverse=True)
        for partner in partners:
            audience = partner.get("audience")
            if from_iso(partner["last_at"]) < cutoff or not visible(audience, served):
                continue
            since = from_iso(partner["since"]).strftime("%H:%M")
            line = (
                f"- {for_prompt(partner['name'])}, since {since}, last about: "
                f"'{for_prompt(partner.get('topic') or '')}'"
            )
            shown.append((line, audience))
        return shown

    def clear_stale(self, now: datetime, stale_minutes: int) -> int:
        """Drop the conversations quiet for `stale_minutes`; returns how many.

        Args:
            now (datetime): The current time.
            stale_minutes (int): How long a conversation may be quiet and still be kept.

        Returns:
            int: The number of partners dropped.

        """
        partners = self.partners()
        cutoff = now - timedelta(minutes=stale_minutes)
        fresh = {k: p for k, p in partners.items() if from_iso(p["last_at"]) >= cutoff}
        if len(fresh) != len(partners):
            self.state.set(KEY, fresh)
        return len(partners) - len(fresh)
