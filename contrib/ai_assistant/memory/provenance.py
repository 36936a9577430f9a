"""
Where a memory came from: its source, and how that is said back to the model.

Every memory keeps how it was learned. The sources:

| source | meaning |
| --- | --- |
| `instruction` | a builder's instruction (`@assistant/instruct`) |
| `observed` | the assistant saw it: what the game showed (an arrival, a `look`), no player's text |
| `self_claim` | what a person said about themselves ("I am the king's cousin") |
| `claim` | what a person said about someone else or the world |
| `overheard` | speech not addressed to the assistant |
| `inferred` | the model's own conclusion |
| `reflection` | an insight drawn in sleep from several memories |
| `summary` | a summary of past conversation (context compaction) |

What a person says is always kept as *their* claim: recalled, it reads "Bob told you: ...",
never as a bare fact about Bob or the world.

This holds on every path that turns words into memory, in code and not only in the prompts:
compacting (`sleep.consolidating`), people's profiles, reflection, the daily digest and core
memory (`sleep.dreaming`, `sleep.digest`, `sleep.core_memory`). A memory drawn from other
memories (`derived`) keeps:

| field | meaning |
| --- | --- |
| `rests_on` | the least trusted source among what it rests on: its trust is never above that |
| `claims_of` | the people whose claims it rests on (their names): its text says they said it |
| `voices` | who those people are, counted once each (`voice`) |

What another assistant told (`gossip` on a journal entry, `memory.gossip`) is said back with
its chain, newest hand first: "Mira told you that Bob said" (`told_label`).

Two people who say the same thing independently corroborate it (`trust_corroborated`); one
person speaking through two characters does not: a claim is counted by its *voice*, the
speaker's account when it is known, else the speaker's own key (`voice_of`).

"""

INSTRUCTION = "instruction"
OBSERVED = "observed"
SELF_CLAIM = "self_claim"
CLAIM = "claim"
OVERHEARD = "overheard"
INFERRED = "inferred"
REFLECTION = "reflection"
SUMMARY = "summary"
SOURCES = (INSTRUCTION, OBSERVED, SELF_CLAIM, CLAIM, OVERHEARD, INFERRED, REFLECTION, SUMMARY)
SPOKEN = frozenset({INSTRUCTION, SELF_CLAIM, CLAIM, OVERHEARD})
# what a player said (not a builder's instruction): kept as theirs wherever it goes
CLAIMS = frozenset({SELF_CLAIM, CLAIM, OVERHEARD})
# the trust of each source when no configuration is at hand (`conf.AssistantConfig.trusts`)
DEFAULT_TRUSTS = {
    INSTRUCTION: 1.0,
    OBSERVED: 0.9,
    SELF_CLAIM: 0.6,
    REFLECTION: 0.6,
    INFERRED: 0.5,
    SUMMARY: 0.5,
    CLAIM: 0.4,
    OVERHEARD: 0.3,
    "corroborated": 0.8,  # a claim two voices made independently
}
# the most people a derived memory names as its sources
MAX_CLAIMANTS = 10


# the shortest cut copy of forgotten words looked for at the end of kept talk: shorter ones
# could be any line's ending
MIN_CUT_COPY = 12


def talk_without(talk: str, words: list[str]) -> str | None:
    """Kept talk (`provenance["talk"]`, the words around a fact) with forgotten words taken out,
    whole or as the cut copy that ends it (talk is kept to a bound, so a forgotten line may be
    there only in part).

    Args:
        talk (str): The kept talk.
        words (list): The forgotten texts.

    Returns:
        str or None: The talk without them (whitespace made single), or None when none of
            them was in it.

    """
    kept = " ".join(talk.split())
    touched = False
    for text in sorted(words, key=len, reverse=True):  # the longest first, as `words_out`
        text = " ".join(text.split())
        if not text:
            continue
        if text in kept:
            kept, touched = kept.replace(text, " "), True
            continue
        for length in range(min(len(text), len(kept)) - 1, MIN_CUT_COPY - 1, -1):
            if kept.endswith(text[:length]):
                kept, touched = kept[: len(kept) - length], True
                break
    return " ".join(kept.split()) if touched else None


FORGOTTEN_MARK = "[forgotten]"


def words_out(value, words: list[str]):
    """A stored value (text, or lists and dicts of them, as messages and turn records are)
    with every whole copy of forgotten words replaced by a mark.

    Args:
        value: The value.
        words (list): The forgotten texts (blank ones are ignored).

    Returns:
        tuple: (the value, changed or not; True when any copy was found).

    """
    # the longest first: a shorter text inside a longer one, taken out first, would leave the
    # rest of the longer one behind
    words = sorted({text for text in words if text and text.strip()}, key=len, reverse=True)
    return _words_out(value, words)


def _words_out(value, words: list[str]):
    if isinstance(value, str):
        kept = value
        for text in words:
            kept = kept.replace(text, FORGOTTEN_MARK)
        return kept, kept != value
    if isinstance(value, list):
        items = [_words_out(item, words) for item in value]
        return [item for item, _ in items], any(changed for _, changed in items)
    if isinstance(value, dict):
        items = {key: _words_out(item, words) for key, item in value.items()}
        return {key: item for key, (item, _) in items.items()}, any(
            changed for _, changed in items.values()
        )
    return value, False


def voice_of(record: dict) -> str | None:
    """Who a claim counts as, for corroboration: one person however many characters they play.

    Args:
        record (dict): A journal entry, observation or memory provenance: `voice` (the
            speaker's account, or their key, kept when the words were heard), else
            `heard_from` (their name).

    Returns:
        str or None: The voice, lower-case; None when no one said it.

    """
    voice = record.get("voice") or record.get("heard_from")
    return voice.strip().lower() if isinstance(voice, str) and voice.strip() else None


def weakest(sources, trusts: dict | None = None) -> str | None:
    """The least trusted of some sources.

    Args:
        sources (iterable): Source names (`SOURCES`); None and unknown ones are skipped.
        trusts (dict, optional): Trust by source (`AssistantConfig.trusts`); the defaults
            otherwise.

    Returns:
        str or None: The source, or None when none is given.

    """
    table = {**DEFAULT_TRUSTS, **(trusts or {})}
    known = [source for source in sources if source in table]
    return min(known, key=lambda source: table[source]) if known else None


def derived(records: list[dict], trusts: dict | None = None) -> dict:
    """The provenance a memory drawn from `records` inherits (see the module doc).

    Args:
        records (list): What it rests on: journal entries, observations or memories, each
            with `source_type` (or a `rests_on` of its own), and `heard_from`/`claims_of` and
            `voice`/`voices` for what people said.
        trusts (dict, optional): Trust by source, to find the least trusted.

    Returns:
        dict: `rests_on` (the least trusted source), `claims_of` (names, in order, at most
            `MAX_CLAIMANTS`) and `voices`; empty lists when it rests on no one's words.

    """
    sources, names, voices = [], [], []
    for record in records:
        if record.get("corroborated"):
            # two voices said it independently: a fact now, trusted as corroborated
            sources.append("corroborated")
            continue
        sources += [record.get("source_type") or OBSERVED, record.get("rests_on")]
        said = record.get("source_type") in CLAIMS and record.get("heard_from")
        for name in [said] + list(record.get("claims_of") or []):
            if name and name not in names:
                names.append(name)
        for voice in [voice_of(record) if said else None] + list(record.get("voices") or []):
            if voice and voice not in voices:
                voices.append(voice)
    return {
        "rests_on": weakest(sources, trusts),
        "claims_of": names[:MAX_CLAIMANTS],
        "voices": voices[:MAX_CLAIMANTS],
    }


def trust_of(record: dict, trusts: dict | None = None) -> float:
    """How far a memory is trusted: its source's trust, never above what it rests on.

    Args:
        record (dict): Its provenance: `source_type`, optionally `rests_on`, `corroborated`.
        trusts (dict, optional): Trust by source (and `corroborated`).

    Returns:
        float: 0-1.

    """
    table = {**DEFAULT_TRUSTS, **(trusts or {})}
    source = "corroborated" if record.get("corroborated") else record.get("source_type")
    trust = table.get(source or OBSERVED, table.get(INFERRED, 0.5))
    if record.get("rests_on") in table:
        trust = min(trust, table[record["rests_on"]])
    return trust


def spoken_source(*, instruction: bool, addressed: bool, about_speaker: bool) -> str:
    """The source of something a person said.

    Args:
        instruction (bool): It was a builder's instruction.
        addressed (bool): It was said to the assistant (else overheard).
        about_speaker (bool): It is about the speaker themselves.

    Returns:
        str: INSTRUCTION, OVERHEARD, SELF_CLAIM or CLAIM.

    """
    if instruction:
        return INSTRUCTION
    if not addressed:
        return OVERHEARD
    return SELF_CLAIM if about_speaker else CLAIM


def source_label(record: dict) -> str:
    """How a memory's source is said in a prompt, in a few words ("Bob told you").

    Args:
        record (dict): A memory's provenance: `source_type`, and optionally `heard_from`
            and `sources` (several people who each said it).

    Returns:
        str: The words, such as "you overheard Bob" or "Ann and Bob each told you".

    """
    if record.get("gossip"):
        # told by another assistant: its chain, newest hand first
        return told_label(record["gossip"])
    source = record.get("source_type") or OBSERVED
    who = record.get("heard_from")
    sources = record.get("sources") or []
    if len(sources) > 1:
        return " and ".join([", ".join(sources[:-1]), sources[-1]]) + " each told you"
    if source == INSTRUCTION:
        return f"builder {who} instructed" if who else "a builder instructed"
    if source == SELF_CLAIM:
        return f"{who} said of themselves" if who else "said of themselves"
    if source == CLAIM:
        return f"{who} told you" if who else "you were told"
    if source == OVERHEARD:
        return f"you overheard {who}" if who else "you overheard"
    claimants = [name for name in record.get("claims_of") or [] if name]
    heard = f" of what {_names(claimants)} said" if claimants else ""
    if source == INFERRED:
        return f"you inferred from what {_names(claimants)} said" if claimants else "you inferred"
    if source == REFLECTION:
        return f"your reflection{heard}"
    if source == SUMMARY:
        return f"a summary{heard}" if claimants else "a summary of past talk"
    return "you observed"


def told_label(gossip: dict, first: str | None = None) -> str:
    """How a told memory's source is said back: "Mira told you that Bob said".

    Args:
        gossip (dict): A told entry's `gossip`: `origin`, `tellers`, `overheard`.
        first (str, optional): How the newest hand is said, instead of "Mira told you"
            ("Mira of the guards reported": `memory.groups`).

    Returns:
        str: The words, newest hand first.

    """
    tellers = [hand.get("name") or "someone" for hand in gossip.get("tellers") or []]
    origin = gossip.get("origin") or {}
    if not tellers:
        return "you were told"
    last = tellers[-1]
    if first:
        words = [first]
    elif gossip.get("overheard"):
        words = [f"you overheard {last} tell {gossip.get('to') or 'someone'}"]
    else:
        words = [f"{last} told you"]
    words += [f"that {name} said" for name in reversed(tellers[:-1])]
    name, how = origin.get("name") or "someone", origin.get("how") or "said"
    if how == "said":
        words.append(f"that {name} said")
    elif how == "instructed":
        words.append(f"that {name} instructed")
    else:
        words.append(f"what {name} {how}")
    return " ".join(words)


def _names(names: list[str]) -> str:
    """Names in words: "Bob", "Ann and Bob", "Ann, Bob and Cid"."""
    if len(names) < 2:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]
