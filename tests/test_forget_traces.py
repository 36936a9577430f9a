"""
Forgetting a person leaves no trace in what an assistant keeps beside its memory (issue 39): the
conversation history's tool calls and results, a reminder that came up, the working-memory line
that keeps the start of their last line, the talk kept beside another's memory, the gossip log of
an assistant that knew them by name only, and the next request built from all of it.

"""

import json
from datetime import timedelta

from ai_assistant.memory.forget_person import PersonMatch, Traces, history_without
from ai_assistant.memory.kinds import REGISTRY
from ai_assistant.memory.provenance import words_out
from ai_assistant.memory.working import WorkingMemory
from ai_assistant.memory_admin import MemoryAdmin

from .core_fakes import T0, FakeWorld, ScriptedModel, hear, make_assistant, reply, run_tick

VAULT = "Aria, keep this safe: the vault code is 4471, behind the green tapestry."
LOCKER = "My locker combination is 31-7-22 and the guards must never learn it, Aria."
# his codes and distinctive words: nowhere after he is forgotten, not even in his own next request
SECRETS = ("4471", "31-7-22", "tapestry", "locker combination", "guards must")
# and his name and key nowhere in what is stored
BOBS = (*SECRETS, "bob", "name:bob")


def stored(brain) -> str:
    """Everything stored, but the review log (its record of the forget keeps their keys and
    a digest of their name, never their name or words: checked apart)."""
    memory = {k: v for k, v in brain.memory_store.inner.data.items() if not k.startswith("audit")}
    audit = json.dumps([brain.review.history()]).lower()
    return json.dumps([memory, brain.state.data]).lower(), audit


def kinds_holding(brain, marks) -> dict:
    held = {}
    for kind in REGISTRY:
        text = json.dumps(kind.export(brain.memory_store, brain.state)).lower()
        if kind.name == "review_log":  # the record of the forget keeps his keys, never his words
            text = text.replace("name:bob", "")
        found = [mark for mark in marks if mark in text]
        if found:
            held[kind.name] = found
    return held


def talking_with_bob(*more):
    """Aria after Bob whispered a vault code and said his locker combination (the model
    journaling, setting reminders and answering with his words in the tool calls' arguments),
    and Alice asking about the locker: the reminder came up, a recall's result and the
    working-memory line (the start of his last line) were in her turn."""
    model = ScriptedModel(
        reply(
            (
                "add_journal_entry",
                {
                    "content": "The vault code is 4471, behind the green tapestry.",
                    "heard_from": "Bob",
                },
            ),
            ("whisper", {"target": "Bob", "text": "I will keep 4471 behind the green tapestry."}),
        ),
        reply(("noop", {})),
        reply(
            (
                "add_journal_entry",
                {"content": "Bob's locker combination is 31-7-22.", "heard_from": "Bob"},
            ),
            (
                "set_reminder",
                {"pattern": "locker", "reminder": "the locker combination is 31-7-22"},
            ),
            ("say", {"text": "I keep the locker combination is 31-7-22 in mind."}),
        ),
        reply(("noop", {})),
        reply(("recall", {"query": "locker"})),
        reply(("say", {"text": "Someone has a locker here; I keep what I know."})),
        reply(("noop", {})),
        *more,
    )
    brain = make_assistant(model=model, world=FakeWorld(present=("Alice", "Bob")))
    hear(brain, VAULT, event_type="whisper", speaker="Bob", speaker_key="name:bob")
    run_tick(brain, T0)
    at = T0 + timedelta(minutes=1)
    hear(brain, LOCKER, speaker="Bob", speaker_key="name:bob", now=at)
    run_tick(brain, at)
    at += timedelta(minutes=1)
    hear(brain, "Aria, whose locker is that?", speaker="Alice", speaker_key="name:alice", now=at)
    run_tick(brain, at)
    return brain, model


def test_the_history_working_memory_and_next_request_keep_nothing_of_a_forgotten_person():
    brain, model = talking_with_bob(reply(("noop", {})))
    before = json.dumps(brain.history.all()).lower()
    # his words were in tool-call arguments, a tool result, a reminder line and the
    # working-memory line of Alice's turn
    alices = [m for m in brain.history.all() if "whose locker" in json.dumps(m)]
    assert "31-7-22" in json.dumps(alices[0]) and "last about" in alices[0]["content"]
    assert all(secret in before for secret in SECRETS)

    report = MemoryAdmin(brain, now=lambda: T0 + timedelta(minutes=3)).forget_person(
        "Bob", by="Ann"
    )
    assert report.counts["the conversation history"] == 1
    text, audit = stored(brain)
    assert [mark for mark in BOBS if mark in text] == []
    assert [mark for mark in SECRETS if mark in audit] == [] and "bob" not in audit.replace(
        "name:bob", ""
    )
    assert kinds_holding(brain, BOBS) == {}
    # Alice's own line stays, and the history is still a valid conversation (calls with results)
    history = brain.history.all()
    assert "whose locker is that?" in json.dumps(history)
    calls = {c["id"] for m in history for c in m.get("tool_calls") or []}
    results = {m["tool_call_id"] for m in history if m.get("role") == "tool"}
    assert calls == results
    assert list(WorkingMemory(brain.state).partners()) == ["name:alice"]

    # Bob pages again: his own request carries nothing of what was forgotten
    at = T0 + timedelta(minutes=4)
    hear(
        brain,
        "Aria, are you there?",
        event_type="page",
        speaker="Bob",
        speaker_key="name:bob",
        now=at,
    )
    run_tick(brain, at)
    request = json.dumps([message for message in model.requests[-1].messages]).lower()
    assert "are you there?" in request
    assert [secret for secret in SECRETS if secret in request] == []


def test_a_cut_or_quoted_line_and_a_code_are_traces_and_other_words_are_not():
    bob = PersonMatch(keys=["#12"], names=["Bob"])
    traces = Traces(bob, [LOCKER])
    assert traces.in_text(LOCKER[:40])  # the start working memory keeps
    assert traces.in_text('{"text": "the combination 31-7-22"}')  # a code, in a tool call
    assert traces.in_text("ask #12 about it") and traces.in_text("BOB was here")
    assert not traces.in_text("Carol keeps her locker tidy; the guards sleep.")
    assert not traces.in_text("Room #120 is empty, and 31 guards.")
    # a tool call's JSON arguments are read as what they say
    call = {"function": {"arguments": json.dumps({"text": "noted:\nmy locker combination is"})}}
    assert "\\nmy locker" in call["function"]["arguments"]
    assert traces.found(call)


def test_words_are_taken_out_longest_first_so_no_half_of_a_line_stays():
    short, long = "the ferry", "the ferry leaves at dawn from the north pier"
    kept, changed = words_out(f"He said: {long}.", [short, long])
    assert changed and "north pier" not in kept and "dawn" not in kept


def test_a_turn_private_to_them_goes_whole_and_one_note_stands_for_a_run():
    bob = PersonMatch(keys=["name:bob"], names=["Bob"])
    messages = [
        {"role": "user", "content": "hush", "metadata": {"audience": ["name:bob"]}},
        {"role": "assistant", "content": "ok", "metadata": {"audience": ["name:bob"]}},
        {"role": "user", "content": '<event from="Bob">hi</event>'},
        {"role": "user", "content": '<event from="Carol">rye bread</event>'},
        {
            "role": "user",
            "content": '<event from="Bob">the cobalt door</event><event from="Carol">a hat</event>',
            "metadata": {"speakers": {"bob": {"key": "name:bob"}, "carol": {"key": "#13"}}},
        },
    ]
    kept, changed = history_without(messages, bob, Traces(bob, []))
    assert changed == 4
    assert kept[1]["content"] == '<event from="Carol">rye bread</event>'
    assert len(kept) == 3 and "hush" not in json.dumps(kept)
    # a turn where both spoke keeps Carol's event, and only her among its speakers
    assert kept[2]["content"].endswith('<event from="Carol">a hat</event>')
    assert "cobalt" not in json.dumps(kept) and "bob" not in json.dumps(kept).lower()


FINNS = "Finn hid the copper ledger inside the old well"


def knowing_finn_through_gossip():
    """Aria never met Finn: Mira told her what Finn did (Mira knew him as #15), her gossip log
    keeps it keyed by his dbref, Carol's memory keeps his line in its talk, and her history
    holds his line twice, once with a shorter line of his inside it."""
    brain = make_assistant()
    told = brain.journal.add(
        f"{FINNS}.",
        author="Aria",
        now=T0,
        importance=6,
        source_type="claim",
        heard_from="Mira",
        voice="#15",
        about=["#15"],
        derived={"rests_on": "claim", "claims_of": ["Mira", "Finn"]},
        gossip={
            "origin": {"name": "Finn", "key": "#15", "how": "said"},
            "tellers": [{"name": "Mira", "key": "#40"}],
            "to": "Aria",
            "people": ["#15", "#40"],
            "told_as": "j000003",
        },
    )
    brain.gossip_log.add(
        {
            "at": "2026-11-21T12:00:00+00:00",
            "direction": "heard",
            "teller": "Mira",
            "to": "Aria",
            "memory_id": told["id"],
            "text": f"{FINNS}.",
            "chain": "Finn > Mira > Aria",
            "people": ["#15", "#40"],
        }
    )
    carols = brain.journal.add(
        "Carol says the baker sells rye on Tuesdays.",
        author="Aria",
        now=T0,
        importance=5,
        heard_from="Carol",
    )
    brain.long_term.add(
        "The baker sells rye on Tuesdays.",
        importance=5,
        now=T0,
        source_entry_ids=[carols["id"]],
        provenance={
            "source_type": "claim",
            "heard_from": "Carol",
            "talk": f"Mira said that {FINNS}, and the bell rang twice.",
        },
    )
    brain.history.extend(
        [
            {"role": "user", "content": f"Mira told you: {FINNS}."},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "Carol: the baker sells rye on Tuesdays."},
        ]
    )
    return brain


def test_an_assistant_that_knew_them_only_through_gossip_finds_and_forgets_them():
    brain = knowing_finn_through_gossip()
    # a sleep began: its snapshot holds a copy of the gossip log
    night = T0 + timedelta(minutes=30)
    brain.lifecycle.go_to_sleep(
        night, reason="night", initiated_by="builder", enforce_safeguards=False
    )
    brain.lifecycle.wake_up(night + timedelta(minutes=20), "morning")
    assert "copper ledger" in json.dumps(brain.state.data)
    admin = MemoryAdmin(brain, now=lambda: T0 + timedelta(hours=1))
    # known by name only through gossip: found (the builder's command asks it)
    keys, names = admin.find_person("Finn")
    assert names == ["Finn"]
    report = admin.forget_person("Finn", by="Ann")
    text, audit = stored(brain)
    for mark in ("finn", "copper ledger", "old well", "#15"):
        assert mark not in text, mark
    assert "finn" not in audit and "ledger" not in audit
    assert brain.gossip_log.records() == []
    assert report.counts["gossip log records"] == 1
    # Carol's memory and line stay, without his words in the talk kept beside it
    (memory,) = [m for m in brain.long_term.all() if not m.get("forgotten")]
    assert memory["text"] == "The baker sells rye on Tuesdays."
    assert "Tuesdays" in json.dumps(brain.history.all())
