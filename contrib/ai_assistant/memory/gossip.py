"""
Gossip: what one assistant tells another, with its chain of sources.

An assistant that meets another (both awake, in the same room) may tell it something it
remembers (the `tell` tool, `tools.gossip`). What is told is a memory named by its id, so the
code, not the model, knows where it came from:

- **Only what is public travels.** Telling is speech said aloud: everyone present hears it. A
  memory whose audience does not hold everyone present (a whisper, a page, anything drawn from
  one: `memory.audience.narrowest` gives a derived memory the narrowest audience of what it
  rests on) is refused, whatever the model asks, and nothing is said (`may_tell`).
- **The chain is kept.** The receiver's journal entry records whose words these are: the
  origin (who first said, saw or concluded it) and every hand it passed through, oldest
  first. Recalled, it reads "Mira told you that Bob said" (`chain_label`). The chain holds the
  people's keys too (`people`), so forgetting a person finds the gossip about them.
- **Trust decays with each hand.** The receiver trusts a telling no more than the teller
  trusted the memory, no more than its own trust in a claim (or in speech overheard), times
  `gossip_trust_decay` (`received_trust`). The entry rests on a claim at best, so what sleep
  draws from it is never trusted more either.
- **Chains are bounded.** A memory that has passed through `gossip_max_hops` hands is not
  passed on (`Refused` from `check_hops`).
- **Receiving costs no model call.** The receiver writes its journal entry in code
  (`record_telling`); the telling starts no turn of its own (assistants do not answer each
  other: `respond_to_assistants`), so two assistants alone never talk each other into calls.

Each assistant keeps a short log of what it told and was told (`GossipLog`, newest first,
bounded), which builders read with `@assistant/memory <name>/gossip`.

"""

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ..clock import to_iso
from ..errors import Refused
from .audience import Audience, within
from .provenance import CLAIM, CLAIMS, DEFAULT_TRUSTS, INSTRUCTION, OVERHEARD, weakest
from .provenance import told_label as chain_label
from .store import KeyValueStore

# the journal entry's tag, and the key of the log in the character's memory store
TAG = "gossip"
LOG_KEY = "gossip_log"
# the most records a log keeps (the oldest go first), and how much of a memory's text a
# record and a told entry carry
MAX_LOG = 50
LOG_TEXT_CHARS = 200
MAX_TOLD_CHARS = 500
# how the origin of a memory came to know it, by the memory's source
_HOW = {INSTRUCTION: "instructed", "observed": "saw", "inferred": "concluded"}


def hops_of(record: dict) -> int:
    """How many hands a memory has passed through (0: the teller's own).

    Args:
        record (dict): A memory's provenance (or a journal entry), with `gossip` when told.

    Returns:
        int: The number of tellers in its chain.

    """
    return len((record.get("gossip") or {}).get("tellers") or [])


def origin_of(record: dict, teller: dict) -> dict:
    """Who a memory first came from, and how they knew it.

    Args:
        record (dict): The memory's provenance: `source_type`, `heard_from`, `claims_of`,
            `voice`, and `gossip` when it was itself told.
        teller (dict): The teller, `{"name", "key"}`: the origin when the memory is its own.

    Returns:
        dict: `{"name", "key", "how"}`; `how` is "said", "saw", "concluded" or "instructed".

    """
    told = record.get("gossip")
    if told and told.get("origin"):
        return dict(told["origin"])
    source = record.get("source_type") or "observed"
    if source in CLAIMS and record.get("heard_from"):
        return {"name": record["heard_from"], "key": record.get("voice"), "how": "said"}
    if source == INSTRUCTION:
        return {"name": record.get("heard_from") or "a builder", "key": None, "how": "instructed"}
    claimants = [name for name in record.get("claims_of") or [] if name]
    if claimants:
        return {"name": _names(claimants[:3]), "key": None, "how": "said"}
    return {"name": teller["name"], "key": teller.get("key"), "how": _HOW.get(source, "saw")}


def tellers_of(record: dict, teller: dict) -> list[dict]:
    """The hands a memory passes through when `teller` tells it, oldest first.

    Args:
        record (dict): The memory's provenance (with `gossip` when it was itself told).
        teller (dict): Who tells it now, `{"name", "key"}`.

    Returns:
        list: `{"name", "key"}` per hand, the teller last.

    """
    earlier = list((record.get("gossip") or {}).get("tellers") or [])
    return [*earlier, {"name": teller["name"], "key": teller.get("key")}]


def chain_names(gossip: dict) -> str:
    """A told memory's hands in order, for builders: "Bob > Mira > Aria".

    Args:
        gossip (dict): A telling or a told entry's `gossip`: `origin`, `tellers`, `to`.

    Returns:
        str: The names, the origin first and whom it was told to last.

    """
    names = [(gossip.get("origin") or {}).get("name") or "someone"]
    for hand in gossip.get("tellers") or []:
        if hand.get("name") and hand["name"] != names[-1]:
            names.append(hand["name"])
    to = gossip.get("to")
    to = to.get("name") if isinstance(to, dict) else to
    return " > ".join([*names, to] if to else names)


def received_trust(
    told_trust: float, origin_trust: float, listener_trust: float, decay: float
) -> float:
    """How far the receiver trusts a telling: never above the teller's trust in the memory,
    the origin's, or its own trust in what it is told (a claim) or overhears, times the decay.

    Args:
        told_trust (float): How far the teller trusted the memory.
        origin_trust (float): The trust of the memory's original source.
        listener_trust (float): The receiver's trust in a claim (or in speech overheard).
        decay (float): `gossip_trust_decay`, the share kept per hand.

    Returns:
        float: 0-1, rounded to 4 places.

    """
    return round(max(0.0, min(told_trust, origin_trust, listener_trust) * decay), 4)


def may_tell(audience: Audience, hearers: Iterable[str]) -> bool:
    """Whether a memory with `audience` may be said aloud before `hearers`.

    Args:
        audience (list or None): The memory's audience (None: public).
        hearers (iterable): The keys of everyone who would hear it (the receiver included).

    Returns:
        bool: True when it is public, or every hearer is in its audience.

    """
    return within(hearers, audience)


def check_hops(record: dict, max_hops: int) -> int:
    """Refuse to pass on what has passed through `max_hops` hands already.

    Args:
        record (dict): The memory's provenance.
        max_hops (int): `gossip_max_hops` of the teller.

    Returns:
        int: How many hands it will have passed through once told.

    Raises:
        Refused: When that would be more than `max_hops`.

    """
    hops = hops_of(record) + 1
    if hops > max_hops:
        raise Refused(
            f"this has passed through {hops - 1} hands already; it goes no further "
            f"(at most {max_hops})."
        )
    return hops


def telling(
    *,
    memory_id: str,
    text: str,
    record: dict,
    audience: Audience,
    trust: float,
    importance: int,
    about: list[str],
    teller: dict,
    to: dict,
    location: str | None,
    now: datetime,
    trusts: dict | None = None,
) -> dict:
    """What travels from the teller to those who hear it: plain data, public only.

    Args:
        memory_id (str): The teller's memory (`j000012`, `m000003`, `#12/o3`).
        text (str): What it says (clipped to `MAX_TOLD_CHARS`).
        record (dict): Its provenance (`source_type`, `heard_from`, `claims_of`, `voice`,
            `rests_on`, `gossip`).
        audience (list or None): Its audience; only a public memory makes a telling.
        trust (float): How far the teller trusts it.
        importance (int): 1-10.
        about (list): Keys of the people it is about.
        teller (dict): `{"name", "key"}` of the teller.
        to (dict): `{"name", "key"}` of the assistant it is told to.
        location (str or None): Where.
        now (datetime): When.
        trusts (dict, optional): The teller's trust by source, for the origin's trust.

    Returns:
        dict: The telling (`record_telling` reads it).

    Raises:
        Refused: If the memory is not public.

    """
    if audience is not None:
        raise Refused("only what anyone may know is told; this memory is not.")
    origin = origin_of(record, teller)
    tellers = tellers_of(record, teller)
    table = {**DEFAULT_TRUSTS, **(trusts or {})}
    sources = [record.get("source_type"), record.get("rests_on")]
    origin_trust = min([table[s] for s in sources if s in table] or [table["inferred"]])
    people = sorted(
        {key for key in [origin.get("key"), *(h.get("key") for h in tellers), *about] if key}
    )
    return {
        "memory_id": memory_id,
        "text": text[:MAX_TOLD_CHARS],
        "origin": origin,
        "tellers": tellers,
        "trust": round(min(trust, origin_trust), 4),
        "origin_trust": origin_trust,
        "rests_on": weakest(sources, trusts),
        "importance": max(1, min(10, int(importance or 3))),
        "about": sorted(set(about)),
        "people": people,
        "voice": origin.get("key"),
        "teller": dict(teller),
        "to": dict(to),
        "location": location,
        "at": to_iso(now),
    }


def record_telling(
    journal,
    log: "GossipLog",
    told: dict,
    *,
    config: Any,
    receiver: str,
    addressed: bool,
    witnesses: list[str],
    now: datetime,
) -> dict:
    """Write what an assistant heard told into its journal, with its chain: no model call.

    Args:
        journal (Journal): The receiver's journal.
        log (GossipLog): The receiver's gossip log.
        told (dict): The telling (`telling`).
        config (AssistantConfig): The receiver's configuration (decay, trust in claims).
        receiver (str): The receiver's name.
        addressed (bool): It was told to the receiver (else overheard).
        witnesses (list): Keys of who was present.
        now (datetime): When.

    Returns:
        dict: The journal entry written.

    """
    trusts = config.trusts()
    source = CLAIM if addressed else OVERHEARD
    teller = told["teller"]
    gossip = {
        "origin": told["origin"],
        "tellers": told["tellers"],
        "to": told["to"]["name"],
        "overheard": not addressed,
        "trust": received_trust(
            told["trust"], told["origin_trust"], trusts.get(source, 0.3), config.gossip_trust_decay
        ),
        "people": told["people"],
        "told_as": told["memory_id"],
    }
    origin_name = told["origin"].get("name")
    claims = [teller["name"]] + ([origin_name] if origin_name != teller["name"] else [])
    entry = journal.add(
        told["text"],
        author=receiver,
        now=now,
        location=told.get("location"),
        source_type=source,
        heard_from=teller["name"],
        importance=told["importance"],
        scoring_method="heuristic",
        tags=[TAG],
        audience=None,
        witnesses=witnesses,
        about=told["about"],
        # corroboration counts the origin's voice: one claim told by two assistants is still
        # one voice
        voice=told.get("voice") or teller.get("key"),
        derived={
            "rests_on": weakest([source, told.get("rests_on")], trusts),
            "claims_of": [name for name in claims if name],
        },
        gossip=gossip,
    )
    log.add(
        {
            "at": to_iso(now),
            "direction": "heard" if addressed else "overheard",
            "teller": teller["name"],
            "to": told["to"]["name"],
            "memory_id": entry["id"],
            "text": told["text"][:LOG_TEXT_CHARS],
            "chain": chain_names(gossip),
            "trust": gossip["trust"],
            "people": told["people"],
            "location": told.get("location"),
        }
    )
    return entry


class GossipLog:
    """Who told whom what, as one assistant saw it: newest first, at most `MAX_LOG` records.

    A record: `at`, `direction` ("told", "heard" or "overheard"), `teller`, `to`,
    `memory_id` (the teller's memory when told; the entry written when heard), `text`
    (clipped), `chain` (how it is said back), `trust`, `people` (keys of everyone in the chain
    and whom it is about), `location`.

    Args:
        store (KeyValueStore): The assistant character's memory store.

    """

    def __init__(self, store: KeyValueStore):
        self.store = store

    def records(self, limit: int | None = None, person: str | None = None) -> list[dict]:
        """The records, newest first.

        Args:
            limit (int, optional): The most to return.
            person (str, optional): Only those whose chain holds or is about this key.

        Returns:
            list: The records.

        """
        records = list(self.store.get(LOG_KEY) or [])
        if person is not None:
            records = [r for r in records if person in (r.get("people") or [])]
        return records[:limit] if limit is not None else records

    def add(self, record: dict) -> None:
        """Add a record at the front, dropping the oldest beyond `MAX_LOG`.

        Args:
            record (dict): The record.

        """
        records = list(self.store.get(LOG_KEY) or [])
        self.store.set(LOG_KEY, [record, *records][:MAX_LOG])

    def forget(self, person: str) -> int:
        """Drop the records whose chain holds, or is about, this person (forgetting them).

        Args:
            person (str): The person's key.

        Returns:
            int: How many records were dropped.

        """
        records = list(self.store.get(LOG_KEY) or [])
        kept = [r for r in records if person not in (r.get("people") or [])]
        if len(kept) != len(records):
            self.store.set(LOG_KEY, kept)
        return len(records) - len(kept)


def _names(names: list[str]) -> str:
    if len(names) < 2:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def receive(brain, told: dict, *, addressed: bool, witnesses: list[str], now: datetime):
    """What an assistant does on hearing a telling: record it, in code, when it may.

    An assistant asleep does not hear it; one whose gossip is off does not record it (the
    speech reached it as any other line would). Nothing here calls the model or starts a turn.

    Args:
        brain (Brain): The hearing assistant (its `config`, `journal`, `gossip_log`, `name`,
            `asleep`).
        told (dict): The telling (`telling`).
        addressed (bool): It was told to this assistant (else overheard).
        witnesses (list): Keys of who was present.
        now (datetime): When.

    Returns:
        dict or None: The journal entry written, or None when nothing was recorded.

    """
    if not brain.config.gossip_enabled or brain.asleep:
        return None
    return record_telling(
        brain.journal,
        brain.gossip_log,
        told,
        config=brain.config,
        receiver=brain.name,
        addressed=addressed,
        witnesses=witnesses,
        now=now,
    )
