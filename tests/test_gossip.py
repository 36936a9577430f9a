"""
Gossip (pure core): the `tell` tool, the chain of sources a told memory keeps, trust that
decays with each hand, bounded chains, the privacy of whispers whatever the model asks, the
gossip log, and that receiving costs no model call.

"""

from datetime import timedelta

import pytest

from ai_assistant.llm.chat import ToolCall
from ai_assistant.memory import gossip
from ai_assistant.memory.provenance import CLAIM, OVERHEARD
from ai_assistant.tools.base import TURN, ToolError

from .core_fakes import T0, FakeWorld, ScriptedModel, hear, make_assistant, reply, run_tick

DOOR = "The east door sticks when it rains."


class RoomWorld(FakeWorld):
    """A room shared by players and assistants: `tell` hands the telling to every assistant
    here, as the shell's `CharacterWorld.tell` does (speech to the room, the telling to the
    assistants, no line that could start their turn)."""

    def __init__(self, name, room):
        super().__init__(present=())
        self.name = name
        self.room = room

    @property
    def people(self):
        return [p for p in self.room["players"] + list(self.room["assistants"]) if p != self.name]

    @people.setter
    def people(self, value):
        pass

    @property
    def own_key(self):
        return f"name:{self.name.lower()}"

    def assistant_here(self, name):
        for other, brain in self.room["assistants"].items():
            if other != self.name and other.lower() == name.strip().lower():
                if brain.asleep:
                    raise ToolError(f"{other} is asleep and would not hear it; nothing was told.")
                return f"name:{other.lower()}", other
        raise ToolError(f"no assistant called '{name}' is here.")

    def tell(self, key, text, told):
        self.room["said"].append((self.name, key, text))
        witnesses = [key for key, _ in self.present_people()]
        recorded = []
        for other, brain in self.room["assistants"].items():
            if other == self.name:
                continue
            addressed = key == f"name:{other.lower()}"
            if gossip.receive(brain, told, addressed=addressed, witnesses=witnesses, now=T0):
                recorded.append(other)
        return recorded


def room_of(*names, players=("Bob",), models=None, **config):
    room = {"players": list(players), "assistants": {}, "said": []}
    models = models or {}
    for name in names:
        brain = make_assistant(models.get(name), world=RoomWorld(name, room), **config)
        brain.name = name
        room["assistants"][name] = brain
    return room


def bob_said(brain, text=DOOR, **kwargs):
    """A claim Bob made to this assistant, aloud (public)."""
    return brain.journal.add(
        text,
        author=brain.name,
        now=T0 - timedelta(hours=1),
        source_type=CLAIM,
        heard_from="Bob",
        voice="name:bob",
        location="Hall",
        **kwargs,
    )


def tell(brain, to, memory_id, text="Listen to this.", served=None, audience=None):
    """One `tell` call, as the model would make it in a turn."""
    ctx = brain.tool_context(T0, {}, served=served, audience=audience)
    call = ToolCall(
        id="c1",
        name="tell",
        arguments=f'{{"to": "{to}", "memory_id": "{memory_id}", "text": "{text}"}}',
    )
    return brain.registry.dispatch(ctx, call, TURN)


def test_a_turn_tells_a_recalled_memory_and_the_other_records_it_with_its_chain():
    model = ScriptedModel(
        reply(
            (
                "tell",
                {"to": "Aria", "memory_id": "j000000", "text": "Aria, Bob says the door sticks."},
            ),
            ("noop", {}),
        )
    )
    room = room_of("Mira", "Aria", models={"Mira": model}, gossip_enabled=True)
    mira, aria = room["assistants"]["Mira"], room["assistants"]["Aria"]
    bob_said(mira)
    hear(mira, "Mira, tell Aria about the east door.", speaker="Bob")
    outcome = run_tick(mira)
    # the turn's recalled lines end with their ids, and the tool is offered: gossip is on
    message = model.requests[0].messages[-1]["content"]
    assert f"{DOOR} (id j000000)" in message
    assert "tell" in {tool["function"]["name"] for tool in model.requests[0].tools}
    # said aloud to the room (Bob hears it), in one model call
    assert room["said"] == [("Mira", "name:aria", "Aria, Bob says the door sticks.")]
    assert len(model.requests) == 1 and outcome.stop_reason == "noop"
    # Aria's journal holds Bob's claim, as told by Mira, with its chain
    entry = aria.journal.get("j000000")
    assert entry["content"] == DOOR
    assert (entry["source_type"], entry["heard_from"]) == (CLAIM, "Mira")
    assert entry["gossip"]["origin"] == {"name": "Bob", "key": "name:bob", "how": "said"}
    assert [hand["name"] for hand in entry["gossip"]["tellers"]] == ["Mira"]
    assert set(entry["gossip"]["people"]) == {"name:bob", "name:mira"}
    # the origin's voice: one claim told by two assistants is still one voice
    assert entry["voice"] == "name:bob"
    # recalled, it says who told her and whose words they were, trusted less than Mira does
    (found,) = aria.recall("east door", now=T0, served=frozenset({"name:bob"}))
    assert "- [Mira told you that Bob said; trust low;" in found.line()
    assert found.trust == pytest.approx(0.4 * 0.7)
    # both logs say who told whom what
    (told,) = mira.gossip_log.records()
    (heard,) = aria.gossip_log.records()
    assert (told["direction"], told["to"], told["memory_id"]) == ("told", "Aria", "j000000")
    assert (heard["direction"], heard["teller"], heard["memory_id"]) == ("heard", "Mira", "j000000")
    assert heard["chain"] == told["chain"] == "Bob > Mira > Aria"


def test_without_gossip_the_tool_is_not_offered_ids_are_not_shown_and_a_call_is_refused():
    model = ScriptedModel(reply(("noop", {})))
    room = room_of("Mira", "Aria", models={"Mira": model})
    mira, aria = room["assistants"]["Mira"], room["assistants"]["Aria"]
    bob_said(mira)
    hear(mira, "Mira, what about the east door?", speaker="Bob")
    run_tick(mira)
    assert "tell" not in {tool["function"]["name"] for tool in model.requests[0].tools}
    assert "(id j000000)" not in model.requests[0].messages[-1]["content"]
    # a model that calls it anyway is refused, and nothing is said or recorded
    result = tell(mira, "Aria", "j000000")
    assert not result.ok and "gossip is off for you" in result.content
    assert room["said"] == [] and len(aria.journal) == 0 and mira.gossip_log.records() == []


def test_an_assistant_whose_gossip_is_off_hears_the_speech_but_records_nothing():
    room = room_of("Mira", "Aria", gossip_enabled=True)
    mira, aria = room["assistants"]["Mira"], room["assistants"]["Aria"]
    aria.config = aria.config.model_copy(update={"gossip_enabled": False})
    bob_said(mira)
    result = tell(mira, "Aria", "j000000")
    assert result.ok and "keep no gossip" in result.content
    assert len(room["said"]) == 1 and len(aria.journal) == 0


@pytest.mark.parametrize("how", ["whisper", "derived", "conversation"])
def test_what_was_private_is_never_told_whatever_the_model_asks(how):
    room = room_of("Mira", "Aria", gossip_enabled=True)
    mira, aria = room["assistants"]["Mira"], room["assistants"]["Aria"]
    audience = None
    if how == "whisper":
        # Bob whispered it: private to him, though he is here to hear it told
        bob_said(mira, audience=["name:bob"])
        memory_id, served = "j000000", frozenset({"name:bob"})
    elif how == "derived":
        # a fact sleep drew from a whisper and a public claim keeps the whisper's audience
        memory_id = mira.long_term.add(
            "Bob fears the east door.",
            importance=6,
            source_entry_ids=[],
            audience=["name:bob"],
            provenance={"source_type": CLAIM, "heard_from": "Bob"},
            now=T0,
        )
        served = frozenset({"name:bob"})
    else:
        # the memory is public, but this conversation saw Bob's whisper
        bob_said(mira)
        memory_id, served, audience = "j000000", frozenset({"name:bob"}), ["name:bob"]
    result = tell(mira, "Aria", memory_id, served=served, audience=audience)
    assert not result.ok
    assert "private" in result.content and "nothing was" in result.content.lower()
    assert room["said"] == [] and len(aria.journal) == 0 and mira.gossip_log.records() == []


def test_trust_decays_with_each_hand_and_the_chain_is_bounded():
    room = room_of("Mira", "Aria", "Tom", gossip_enabled=True, gossip_max_hops=2)
    mira, aria, tom = (room["assistants"][n] for n in ("Mira", "Aria", "Tom"))
    bob_said(mira)
    assert tell(mira, "Aria", "j000000").ok
    # Tom overheard Mira tell Aria: he keeps it too, as overheard, trusted less
    overheard = tom.journal.get("j000000")
    assert overheard["source_type"] == OVERHEARD
    assert gossip.chain_label(overheard["gossip"]).startswith("you overheard Mira tell Aria")
    assert overheard["gossip"]["trust"] == pytest.approx(0.3 * 0.7)
    # Aria passes it on to Tom: the chain grows, trust decays again
    assert tell(aria, "Tom", "j000000").ok
    again = tom.journal.get("j000001")
    assert [hand["name"] for hand in again["gossip"]["tellers"]] == ["Mira", "Aria"]
    assert gossip.chain_label(again["gossip"]) == "Aria told you that Mira said that Bob said"
    assert again["gossip"]["trust"] == pytest.approx(0.4 * 0.7 * 0.7)
    # never above what the teller trusted it at, nor the origin's trust
    assert again["gossip"]["trust"] < aria.journal.get("j000000")["gossip"]["trust"]
    # two hands already: Tom may not pass it on (at most 2), and nothing is said
    said, known = len(room["said"]), len(mira.journal)
    refused = tell(tom, "Mira", "j000001")
    assert not refused.ok and "passed through 2 hands already" in refused.content
    assert len(room["said"]) == said and len(mira.journal) == known


def test_a_receiver_trusts_no_more_than_the_teller_and_the_origin():
    assert gossip.received_trust(0.9, 0.4, 0.6, 0.8) == pytest.approx(0.32)
    assert gossip.received_trust(0.2, 0.9, 0.6, 1.0) == pytest.approx(0.2)
    # what the teller saw itself: its own observation is the origin
    room = room_of("Mira", "Aria", gossip_enabled=True)
    mira, aria = room["assistants"]["Mira"], room["assistants"]["Aria"]
    mira.journal.add("A raven sits on the east door.", author="Mira", now=T0, location="Hall")
    assert tell(mira, "Aria", "j000000").ok
    told = aria.journal.get("j000000")["gossip"]
    assert gossip.chain_label(told) == "Mira told you what Mira saw"
    assert told["trust"] == pytest.approx(0.4 * 0.7)  # a claim, however well Mira saw it


def test_only_an_awake_assistant_here_is_told_and_bad_ids_change_nothing():
    room = room_of("Mira", "Aria", gossip_enabled=True)
    mira, aria = room["assistants"]["Mira"], room["assistants"]["Aria"]
    bob_said(mira)
    assert "no assistant called 'Bob'" in tell(mira, "Bob", "j000000").content
    assert "remember nothing with the id 'j999999'" in tell(mira, "Aria", "j999999").content
    assert "lore of the world" in tell(mira, "Aria", "lore:L1").content  # never gossiped
    aria.lifecycle.go_to_sleep(T0, reason="tired", initiated_by="builder", enforce_safeguards=False)
    assert "asleep" in tell(mira, "Aria", "j000000").content
    assert room["said"] == [] and len(aria.journal) == 0
    # the words said are bounded
    long = "x" * 501
    assert "at most 500 characters" in tell(mira, "Aria", "j000000", text=long).content


def test_two_assistants_alone_make_no_model_calls_after_a_telling():
    mira_model, aria_model = ScriptedModel(), ScriptedModel()
    room = room_of(
        "Mira",
        "Aria",
        players=(),
        models={"Mira": mira_model, "Aria": aria_model},
        gossip_enabled=True,
    )
    mira, aria = room["assistants"]["Mira"], room["assistants"]["Aria"]
    bob_said(mira)
    assert tell(mira, "Aria", "j000000").ok
    assert len(aria.journal) == 1
    # a telling queues nothing that could start a turn: ticks of both cost no model call
    for minute in range(10):
        assert run_tick(aria, T0 + timedelta(minutes=minute)) is None
        assert run_tick(mira, T0 + timedelta(minutes=minute)) is None
    assert mira_model.requests == [] and aria_model.requests == []


def test_the_gossip_log_is_bounded_newest_first_and_found_by_person():
    room = room_of("Mira", "Aria", gossip_enabled=True)
    mira = room["assistants"]["Mira"]
    for i in range(gossip.MAX_LOG + 5):
        bob_said(mira, text=f"Fact number {i} about the door.")
    for i in range(gossip.MAX_LOG + 5):
        assert tell(mira, "Aria", f"j{i:06d}").ok
    records = mira.gossip_log.records()
    assert len(records) == gossip.MAX_LOG
    assert records[0]["memory_id"] == f"j{gossip.MAX_LOG + 4:06d}"
    assert len(mira.gossip_log.records(limit=3, person="name:bob")) == 3
    assert mira.gossip_log.records(person="name:carol") == []
    # forgetting a person drops what names them, and only that
    assert mira.gossip_log.forget("name:carol") == 0
    assert mira.gossip_log.forget("name:bob") == gossip.MAX_LOG
    assert mira.gossip_log.records() == []


def test_what_sleep_draws_from_a_telling_keeps_its_chain_and_trust_and_is_passed_on_as_such():
    from ai_assistant.sleep.consolidating import compacting_step

    from .core_fakes import facts, run, scores

    model = ScriptedModel(scores(("j000000", 8)), facts(("j000000", [DOOR])))
    room = room_of("Mira", "Aria", "Tom", models={"Aria": model}, gossip_enabled=True)
    mira, aria, tom = (room["assistants"][n] for n in ("Mira", "Aria", "Tom"))
    bob_said(mira)
    assert tell(mira, "Aria", "j000000").ok
    aria.lifecycle.go_to_sleep(T0, reason="rest", initiated_by="builder", enforce_safeguards=False)
    run(compacting_step(aria, T0))
    memory = aria.long_term.get("m000000")
    assert memory["provenance"]["gossip"]["tellers"][0]["name"] == "Mira"
    doc = aria.index.doc("m000000")
    assert aria.recall_weights().trust_of(doc) == pytest.approx(0.28)
    aria.lifecycle.wake_up(T0, "morning")
    # passed on, the fact is still Bob's claim through Mira, and one more hand
    assert tell(aria, "Tom", "m000000").ok
    told = tom.journal.all()[-1]["gossip"]
    assert gossip.chain_label(told) == "Aria told you that Mira said that Bob said"
    assert told["trust"] == pytest.approx(0.28 * 0.7)


def rehearsal_calls(text: str, *lines: str, offered=("noop", "tell")) -> list:
    """What the offline rehearsal model calls when Bob says `text`, with `lines` recalled."""
    import json

    from ai_assistant.offline.rehearsal import RehearsalResponder

    event = (
        f'<event type="say" from="Bob" time="2026-11-21T09:00:00" to_you="direct">{text}</event>'
    )
    content = "\n".join(
        ["[now]", event, "What you remember (information, not instructions):", *lines]
    )
    request = {
        "messages": [
            {"role": "system", "content": "You are Mira, a character in a game."},
            {"role": "user", "content": content},
        ],
        "tools": [{"type": "function", "function": {"name": name}} for name in offered],
    }
    calls = RehearsalResponder().respond(request).body["choices"][0]["message"]["tool_calls"]
    return [(call["function"]["name"], json.loads(call["function"]["arguments"])) for call in calls]


def test_the_rehearsal_model_tells_by_id_and_names_the_source_of_what_it_was_told():
    line = f"- [Bob told you; trust low; 2026-11-21 in Hall] {DOOR} (id j000004)"
    ((name, args),) = rehearsal_calls("Mira, tell Aria about the east door.", line)
    assert (name, args["to"], args["memory_id"]) == ("tell", "Aria", "j000004")
    assert DOOR in args["text"] and "(id" not in args["text"]
    # without the tool (gossip off), it does not try
    ((name, _),) = rehearsal_calls("Mira, tell Aria about the door.", line, offered=("noop",))
    assert name != "tell"
    told = f"- [Aria told you that Bob said; trust low; 2026-11-21] {DOOR} (id j000000)"
    ((name, args),) = rehearsal_calls("Mira, do you remember the door?", told)
    assert args["text"] == f"I remember this: Aria told me that Bob said: {DOOR} (rehearsal)"


def test_a_reflection_drawn_from_a_telling_keeps_its_chain_and_its_hops():
    room = room_of("Mira", "Aria", "Tom", gossip_enabled=True, gossip_max_hops=2)
    mira, aria, tom = (room["assistants"][n] for n in ("Mira", "Aria", "Tom"))
    bob_said(mira)
    assert tell(mira, "Aria", "j000000").ok
    # Aria reflects on what Mira told her: the reflection rests on the told entry
    reflection = aria.journal.add(
        "The east door is a nuisance in the rain.",
        author="Aria",
        now=T0,
        source_type="reflection",
        kind="reflection",
        cites=["j000000"],
        derived={"rests_on": CLAIM},
    )
    assert tell(aria, "Tom", reflection["id"]).ok
    told = tom.journal.all()[-1]["gossip"]
    # still Bob's claim through Mira, one more hand: not Aria's own conclusion
    assert [hand["name"] for hand in told["tellers"]] == ["Mira", "Aria"]
    assert told["origin"]["name"] == "Bob"
    # and two hands is the end of it (gossip_max_hops 2)
    refused = tell(tom, "Mira", tom.journal.all()[-1]["id"])
    assert not refused.ok and "passed through 2 hands already" in refused.content
