"""
Where a memory came from: its source, and how that is said back to the model.

Every memory keeps how it was learned. The sources:

| source | meaning |
| --- | --- |
| `instruction` | a builder's instruction (`@assistant/instruct`) |
| `observed` | the assistant saw it itself (an arrival, an emote, what `look` showed) |
| `self_claim` | what a person said about themselves ("I am the king's cousin") |
| `claim` | what a person said about someone else or the world |
| `overheard` | speech not addressed to the assistant |
| `inferred` | the model's own conclusion |
| `reflection` | an insight drawn in sleep from several memories |
| `summary` | a summary of past conversation (context compaction) |

What a person says is always kept as *their* claim: recalled, it reads "Bob told you: ...",
never as a bare fact about Bob or the world.

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
    if source == INFERRED:
        return "you inferred"
    if source == REFLECTION:
        return "your reflection"
    if source == SUMMARY:
        return "a summary of past talk"
    return "you observed"
