"""
Heuristic importance: an immediate 1-10 score for what the assistant
hears and writes, later refined by LLM scoring during sleep.

    base 3; direct message +3; addressed by name (@mention) +2;
    each keyword (goal, quest, name, ...) +1, at most 3; sender bonus (builders +2); clamp 1-10

"""

import re

KEYWORDS = ("goal", "quest", "name", "remember", "promise", "secret", "important", "help")
_KEYWORD_RE = re.compile(r"\b(" + "|".join(KEYWORDS) + r")\w*", re.IGNORECASE)
BASE = 3
MAX_KEYWORD_BONUS = 3


def heuristic_importance(
    text: str, *, direct: bool = False, mentioned: bool = False, sender_bonus: int = 0
) -> int:
    """Score `text` from 1 to 10 by the heuristic above.

    Args:
        text (str): What was said or written.
        direct (bool): It was a direct message (whisper, page, builder instruction).
        mentioned (bool): The assistant was addressed by name.
        sender_bonus (int): Extra weight for who said it.

    Returns:
        int: The score.

    """
    score = BASE + sender_bonus
    if direct:
        score += 3
    if mentioned:
        score += 2
    keywords = {match.group(1).lower() for match in _KEYWORD_RE.finditer(text)}
    score += min(len(keywords), MAX_KEYWORD_BONUS)
    return max(1, min(10, score))
