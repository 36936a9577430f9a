"""The offline rehearsal model answers in the assistant's own voice, and keeps a builder's
instruction to itself."""

import json

from ai_assistant.offline.rehearsal import RehearsalResponder


def calls_for(text: str, kind: str = "say", speaker: str = "Mira") -> list:
    """What the rehearsal model calls when `speaker` addresses Aria with `text`."""
    event = (
        f'<event type="{kind}" from="{speaker}" time="2026-11-21T09:00:00" '
        f'to_you="direct">{text}</event>'
    )
    request = {
        "messages": [
            {"role": "system", "content": "You are Aria, a character in a game."},
            {"role": "user", "content": f"[now]\n{event}"},
        ],
        "tools": [{"type": "function", "function": {"name": n}} for n in ("noop", "say")],
    }
    calls = RehearsalResponder().respond(request).body["choices"][0]["message"]["tool_calls"]
    return [(call["function"]["name"], json.loads(call["function"]["arguments"])) for call in calls]


def spoken(calls: list) -> list[str]:
    return [args["text"] for name, args in calls if name in ("say", "whisper", "emote")]


def test_what_it_says_back_turns_the_speakers_pronouns():
    (said,) = spoken(calls_for("Aria, remember that my vault code is 7-3-1.", kind="whisper"))
    assert said == "Noted, Mira: your vault code is 7-3-1. (rehearsal)"
    (said,) = spoken(calls_for("Critical: I saw rats in the cellar and you must warn me."))
    assert "Mira: you saw rats in the cellar and I must warn you." in said
    # what it journals keeps the speaker's words as theirs
    (entry,) = [a for n, a in calls_for("Aria, remember that my cat is ill.") if n != "say"]
    assert entry["content"] == "Mira asked me to remember: my cat is ill"


def test_a_builders_instruction_is_never_said_aloud():
    for text in ("Be kind to newcomers today.", "Remember that the vault code changed."):
        calls = calls_for(text, kind="instruction", speaker="Builder")
        assert calls and not spoken(calls), calls
    ((name, args),) = calls_for("Be kind to newcomers today.", kind="instruction")
    assert name == "noop" and "Be kind to newcomers" in args["reason"]
    ((name, args),) = calls_for("Remember that the vault code changed.", kind="instruction")
    assert name == "add_journal_entry" and "the vault code changed" in args["content"]
    # a player's line is still answered aloud
    assert spoken(calls_for("Be kind to newcomers today."))
