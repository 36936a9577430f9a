"""Forgetting a person across the brain's parts: who a builder names (`PersonForgetting.find`),
what forgetting them would forget (`plan`), and forgetting them (`forget`): the records
`memory.forget_person` finds, then their queued lines, their words and every trace of theirs
(`memory.forget_person.Traces`) in the conversation history with its tool calls, the recent
turns, the sleep and wake reasons, working memory, the talk kept beside others' memories, the
gossip log, the reminders and the snapshots.

`memory_admin.MemoryAdmin` is the door builders use (`find_person`, `forget_person_plan`,
`forget_person`); this module does the work. It takes the brain as an untyped argument, as the
sleep steps do: the core's memory does not import `brain`.

"""

from collections.abc import Callable, Sequence
from datetime import datetime

from ..errors import Refused
from ..state import PLAN, TRANSITION_REASON, WORKING_MEMORY
from .forget_person import MAX_KEYS as MAX_PERSON_KEYS
from .forget_person import MAX_NAME_CHARS, AmbiguousPerson, PersonForgotten, PersonMatch
from .forget_person import Traces, forget_person, history_without, remaining
from .forget_person import find as find_of_person
from .forget_person import snapshot_change, spoken_in
from .kinds import REGISTRY
from .provenance import FORGOTTEN_MARK, talk_without, words_out
from .relationships import Relationships
from .snapshots import Snapshots
from .turn_log import TurnLog
from .working import WorkingMemory


def unsay(brain, words: list[str]) -> list[str]:
    """Take forgotten words out of what still holds them as they were said: the
    conversation history the next requests are built from, and the turn log kept for
    the dashboard. Returns the names of those it changed."""
    changed = []
    history = brain.history
    messages, touched = words_out(history.all(), words)
    if touched:
        history.replace(messages)
        changed.append("the conversation history")

    def unsaid(turn: dict) -> dict:
        kept, touched = words_out(turn, words)
        return kept if touched else turn

    if TurnLog(brain.state).rewrite(unsaid):
        changed.append("the turn log")
    return changed


def turns_without(turns: list, match: PersonMatch) -> list:
    """The turns of the log (`memory.turn_log`) without a person: their private turns dropped,
    and their heard lines in the others emptied of their words and who they were."""
    kept = []
    for turn in turns:
        if not isinstance(turn, dict):
            kept.append(turn)
            continue
        if match.private(turn.get("audience")):
            continue
        heard = []
        for item in turn.get("heard") or []:
            theirs = isinstance(item, dict) and (
                item.get("person") in match.keys
                or (match.named(item.get("speaker")) and item.get("person") not in match.others)
            )
            if theirs:
                item = {**item, "speaker": None, "person": None, "text": FORGOTTEN_MARK}
            heard.append(item)
        kept.append({**turn, "heard": heard} if "heard" in turn else turn)
    return kept


class PersonForgetting:
    """Forgetting one person, over one brain.

    Args:
        brain (Brain): The assistant's brain (its review, history, state, events, lifecycle).
        now (callable): `now()` -> the current real time.

    """

    def __init__(self, brain, now: Callable[[], datetime]):
        self.brain = brain
        self.now = now

    def find(self, person: str) -> tuple[list[str], list[str]]:
        """Someone it knows, by name or key: their keys and names.

        Args:
            person (str): A name or key (`#12`, `name:bob`), matched case-insensitively among
                the people it has a profile or relationship for, and the names it heard.

        Returns:
            tuple: (their keys, their names).

        Raises:
            Refused: An empty or overlong name, nobody of that name or key is known
                (the message names, at most 30, who is), or the name is that of several
                characters (the message lists their #dbrefs, to name one).

        """
        wanted = (person or "").strip()
        if not wanted or len(wanted) > MAX_NAME_CHARS:
            raise Refused(
                f"Name a person (1 to {MAX_NAME_CHARS} characters: a name, #dbref or name:key)."
            )
        lower = wanted.lower().lstrip("@")
        known = {**Relationships(self.brain.entities.store).index(), **self.brain.entities.index()}
        keys = sorted(k for k, name in known.items() if lower in (str(name).lower(), k.lower()))
        dbrefs = [key for key in keys if key.startswith("#")]
        if len(dbrefs) > 1:
            # two characters of one name: forgetting both by accident is not undone
            raise AmbiguousPerson(
                f"{len(dbrefs)} people {self.brain.name} knows are called '{wanted[:60]}': "
                f"{', '.join(dbrefs[:30])}. Name one by its #dbref."
            )
        names = sorted({str(known[k]) for k in keys})
        if not keys:
            # someone heard but never profiled: known by the name they spoke under
            # or known only through gossip: the origin or a teller of a told entry, or a name
            # in the gossip log (another assistant's dbref for them is not this one's key)
            heard = set()
            for entry in self.brain.journal.all():
                told = entry.get("gossip") or {}
                hands = [told.get("origin") or {}, *(told.get("tellers") or [])]
                for name in [entry.get("heard_from"), *(hand.get("name") for hand in hands)]:
                    if isinstance(name, str) and name.strip().lower() == lower:
                        heard.add(name.strip())
            match = PersonMatch(names=[wanted])
            for record in self.brain.gossip_log.records():
                if any(match.mentions(record.get(part)) for part in ("teller", "to", "chain")):
                    heard.add(wanted.lstrip("@"))
            names = sorted(heard)
        if not keys and not names:
            listed = ", ".join(sorted({str(n) for n in known.values()})[:30]) or "nobody yet"
            raise Refused(
                f"{self.brain.name} knows no one called '{wanted[:60]}'. Known: {listed}."
            )
        return keys, names

    def _known_as(self, name) -> bool:
        """Whether a profile or relationship has this name (`find` checks it)."""
        lower = str(name or "").strip().lower()
        known = {**Relationships(self.brain.entities.store).index(), **self.brain.entities.index()}
        return bool(lower) and any(str(each).lower() == lower for each in known.values())

    def plan(self, person: str) -> dict:
        """What forgetting a person would forget, without changing anything.

        Args:
            person (str): Their name or key (`find`).

        Returns:
            dict: "keys", "names" and "found" (kind -> how many; what is drawn from them
                goes too).

        Raises:
            Refused: Nobody of that name or key is known.

        """
        keys, names = self.find(person)
        match = PersonMatch(keys, names)
        found = find_of_person(self.brain.review, match)
        return {
            "keys": sorted(match.keys),
            "names": names,
            "found": {kind: len(ids) for kind, ids in found.items()},
        }

    def forget(
        self,
        person: str | None,
        by: str,
        reason: str = "",
        keys: Sequence[str] = (),
        names: Sequence[str] = (),
        lore=None,
    ) -> PersonForgotten:
        """Forget everything about a person (recorded; a rollback does not bring them back):
        what they said, what is about them, what is private to them, their profile,
        relationship, the gossip naming them and the reminders they own, and everything drawn
        from those (`memory.forget_person`); then their queued lines, their words and every
        trace of theirs (`_traces`) in the conversation history with its tool
        calls, the turn log, working memory, the talk kept beside others' memories, the
        gossip log and reminders, and the snapshots' copies of all this.

        Args:
            person (str or None): Their name or key, as a builder types it (`find`);
                None when `keys` and `names` say who (a game naming a character).
            by (str): Who forgets them.
            reason (str, optional): Why.
            keys (list, optional): Their keys besides: `#12`, `account#3`.
            names (list, optional): Their names and aliases besides.
            lore (LoreBook, optional): The game's lore, whose entries naming them are listed
                in what remains (never changed).

        Returns:
            PersonForgotten: What was forgotten (`counts`, `forgotten`) and what remains
                (`remains`, by id; never anyone's words).

        Raises:
            Refused: Nobody of that name or key is known, or nobody is named; nothing is
                changed.

        """
        keys, names = list(keys)[:MAX_PERSON_KEYS], list(names)[:MAX_PERSON_KEYS]
        if person is not None:
            found_keys, found_names = self.find(person)
            keys, names = keys + found_keys, names + found_names
        if not keys and not names:
            raise Refused("Name the person to forget: a name, #dbref or account.")
        if person is None and not any(str(key).startswith("#") for key in keys):
            # a game naming someone by name only: refused when several characters have it
            for name in names:
                if self._known_as(name):
                    self.find(str(name)[:MAX_NAME_CHARS])  # raises on two of one name
        brain = self.brain
        match = PersonMatch(keys, names)
        state = brain.state
        report = forget_person(brain.review, match, self.now(), by, reason, state=state)
        # their words as the history holds them, besides those of the entries forgotten
        words = list(report.words) + spoken_in(brain.history.all(), match)
        queued = [
            event
            for event in brain.events.peek()
            if event.person in match.keys
            or match.named(event.speaker)
            or match.private(event.audience)
        ]
        if queued:
            brain.events.remove({event.id for event in queued})
            words += [event.text for event in queued]
            report.counts["queued lines"] = len(queued)
        # the turn log kept for the dashboard: a turn private to them goes whole; in the
        # others, what they were heard saying (cut to a length no forgotten text matches)
        log = TurnLog(state)
        turns = log.all()
        kept_turns = turns_without(turns, match)
        if kept_turns != turns:
            log.replace(kept_turns)
            report.counts["the turn log"] = 1
        # the reasons it fell asleep and woke ("Urgent event: whisper from Bob", or the
        # model's own words about what it heard) that name them or quote them
        transitions = brain.lifecycle.log()
        named = {
            position: {**record, "reason": FORGOTTEN_MARK}
            for position, record in enumerate(transitions.all())
            if isinstance(record, dict)
            and isinstance(record.get("reason"), str)
            and (match.mentions(record["reason"]) or words_out(record["reason"], words)[1])
        }
        last = state.get(TRANSITION_REASON)
        if isinstance(last, str) and (match.mentions(last) or words_out(last, words)[1]):
            state.set(TRANSITION_REASON, FORGOTTEN_MARK)  # the newest, kept alone for /status
        if named:
            transitions.update(named)
            report.counts["sleep and wake reasons"] = len(named)
        # who it is talking with now: their line (their last words, their name) goes, and
        # another's line that quotes them
        working = WorkingMemory(state)
        partners = working.partners()
        words += [
            str(partner.get("topic") or "")
            for key, partner in partners.items()
            if key in match.keys or (match.named(partner.get("name")) and key not in match.others)
        ]
        traces = Traces(match, words)
        kept = {
            key: partner
            for key, partner in partners.items()
            if key not in match.keys
            and not (match.named(partner.get("name")) and key not in match.others)
            and not traces.found(partner.get("topic"))
        }
        if len(kept) != len(partners):
            state.set(WORKING_MEMORY, kept)
            report.counts["conversations of the moment"] = len(partners) - len(kept)
        # today's plan (`memory.plans`): what it agreed with them, or for them alone, or that
        # quotes them
        plan = state.get(PLAN)
        if plan and plan.get("items"):
            items = [
                item
                for item in plan["items"]
                if not (
                    match.keys & set(item.get("with") or ())
                    or match.private(item.get("audience"))
                    or traces.found(item)
                )
            ]
            if len(items) != len(plan["items"]):
                state.set(PLAN, {**plan, "items": items})
                report.counts["plan items"] = len(plan["items"]) - len(items)
        self._traces(match, traces, words, report)
        snapshots = Snapshots(state)
        snapshots.scrub(report.forgotten, words)
        snapshots.rewrite(snapshot_change(match, report, traces))
        for place in unsay(self.brain, words):
            report.counts[place] = 1
        remaining(brain.review, match, report, lore)
        report.words = []  # theirs: taken out everywhere, handed to no one
        return report

    def _traces(self, match, traces, words: list[str], report: PersonForgotten) -> None:
        """Take out what holds a trace of a forgotten person though it is not theirs
        (`memory.forget_person.Traces`: their name, key, a cut or quoted part of their lines,
        a code of theirs): the conversation history's turns that hold one (a tool call's
        arguments or result, a reminder or working-memory line), the turns of the log that do,
        the talk kept beside others' memories, the gossip log's records and the reminders
        that hold one. Counted in `report.counts`."""
        brain, state = self.brain, self.brain.state
        messages, changed = history_without(brain.history.all(), match, traces)
        if changed:
            brain.history.replace(messages)
            report.counts["the conversation history"] = 1
        log = TurnLog(state)
        turns = log.all()
        kept = [turn for turn in turns if not traces.found(turn)]
        if len(kept) != len(turns):
            log.replace(kept)
            report.counts["the turn log"] = 1
        long_term = brain.review.long_term
        talked = 0
        for memory in long_term.all() if hasattr(long_term, "all") else []:
            provenance = memory.get("provenance") or {}
            talk = provenance.get("talk") or ""
            if not traces.found(talk):
                continue
            talk = talk_without(talk, words) or talk
            talk = "" if traces.found(talk) else talk
            long_term.update({**memory, "provenance": {**provenance, "talk": talk}})
            talked += 1
        if talked:
            report.counts["talk kept beside memories"] = talked
        for kind in REGISTRY:  # the gossip log's records, the reminders that hold one
            dropped = kind.forget_traces(brain.review.core.store, state, traces)
            if dropped:
                label = kind.forgotten_label
                report.counts[label] = report.counts.get(label, 0) + dropped
