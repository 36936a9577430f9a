"""
Export and import of one assistant's whole memory (`ai_assistant.memory.transfer`): a round trip
gives the same memory and the same recall; a bad file is refused, naming what and where, and
changes nothing; no secret is written; a whisper keeps its audience, and a file from another
game is re-keyed so that a stranger with the same dbref learns nothing.

"""

import copy
import json
from datetime import timedelta

import pytest

from ai_assistant.conf import config_keys
from ai_assistant.errors import Refused
from ai_assistant.memory import transfer
from ai_assistant.memory.forget_person import PersonMatch, forget_person
from ai_assistant.memory_api import AssistantMemory

from .core_fakes import T0

GAME = {"id": "game-one", "name": "One"}
SECRET = "sk-live-abcdefghijklmnop0123456789"
WHISPER = "Bob whispers that the vault code is hidden under the loose brick."


def remembering() -> AssistantMemory:
    """An assistant with a day of memory of every kind: talk, a whisper, people, a night."""
    memory = AssistantMemory("Aria")
    memory.add_entry("Carol says the east door sticks in the rain.", time=T0, speaker="Carol")
    memory.add_entry(
        WHISPER, time=T0 + timedelta(minutes=1), speaker="#12", audience=["#12"], importance=8
    )
    memory.add_entry(
        "Carol says the harbour fish market opens at dawn.",
        time=T0 + timedelta(minutes=2),
        speaker="Carol",
        importance=6,
    )
    memory.observe("Carol", "Carol smiles at every customer.", time=T0 + timedelta(minutes=3))
    brain = memory.brain
    brain.entities.observe(
        "#12", "Bob", "Bob fears the dark.", now=T0, author="Aria", audience=["#12"]
    )
    memory.admin.kind("core_notes").set("motto", "books first", by="Builder")
    memory.admin.kind("reminders").add(
        "festival", "Tell them about the harvest festival.", 3, "Builder"
    )
    memory.consolidate(T0 + timedelta(hours=1))
    return memory


def export(memory: AssistantMemory, game=GAME, settings=None, secrets=()) -> str:
    data = memory.admin.export_data(
        {"name": "Aria", "dbref": "#5", "persona": "A librarian.", "settings": settings or {}},
        game,
        list(secrets),
        config_keys(),
    )
    return json.dumps(data)


def import_into(memory: AssistantMemory, raw, game_id=GAME["id"], replace=False) -> dict:
    plan = memory.admin.import_plan(raw, game_id, replace)
    return memory.admin.import_memory(plan, list(memory.brain.memory_store.inner.data))


def stored(memory: AssistantMemory) -> dict:
    """The memory store's values, as stored, embeddings aside (a file leaves them out)."""
    return {
        key: value
        for key, value in memory.brain.memory_store.inner.data.items()
        if value is not None and not key.startswith("journal_vectors")
    }


def recalled(memory: AssistantMemory, query: str, audience=None) -> list[tuple]:
    at = T0 + timedelta(hours=2)
    return [
        (item.id, item.text, round(item.score, 6))
        for item in memory.recall(query, k=8, at=at, audience=audience)
    ]


# ---- the round trip ---------------------------------------------------------------------------


def test_round_trip_gives_the_same_memory_and_the_same_recall():
    original = remembering()
    raw = export(original)
    data = json.loads(raw)
    assert data["format"] == "evennia-ai-assistant-memory" and data["schema_version"] == 1
    found = transfer.counts(data)
    assert found["journal"] >= 3 and found["long_term"] >= 1 and found["profiles"] == 2
    assert found["core_notes"] == 1 and found["reminders"] == 1 and found["sleep_history"] == 1

    copy_of = AssistantMemory("Aria")
    written = import_into(copy_of, raw)
    assert written == found
    assert stored(copy_of) == stored(original)
    # every kind the store holds is in the file
    assert transfer.uncovered(original.brain.memory_store.inner.data) == []
    assert transfer.uncovered(["journal:meta", "relationship:cursor", "dreams:000000"]) == [
        "dreams:000000"
    ]
    for query in ("east door", "vault code brick", "fish market", "Carol"):
        assert recalled(copy_of, query) == recalled(original, query)
        assert recalled(copy_of, query, ["Carol"]) == recalled(original, query, ["Carol"])
    # a second export of the copy is the first, but for when it was made
    again = json.loads(export(copy_of))
    assert {**again, "exported_at": ""} == {**data, "exported_at": ""}


def test_embeddings_are_left_out_and_made_again_by_the_next_sleep():
    original = remembering()
    original.brain.journal.entries.extra["embedded"] = {"model": "e5", "through": 3}
    data = json.loads(export(original))
    assert "embedded" not in data["memory"]["journal"]["state"]
    assert all(item["vector"] is None for item in data["memory"]["long_term"]["items"])
    copy_of = AssistantMemory("Aria")
    import_into(copy_of, json.dumps(data))
    # nothing is marked embedded: the embeddings step starts from the first entry
    entries, through = copy_of.brain.journal.unembedded("e5", 10)
    assert [entry["id"] for entry in entries][:1] == ["j000000"]


# ---- refusals -----------------------------------------------------------------------------------


def _mutated(raw: str, change) -> str:
    data = json.loads(raw)
    change(data)
    return json.dumps(data)


def _long_content(data):
    data["memory"]["journal"]["items"][0]["content"] = "x" * (transfer.MAX_TEXT_CHARS + 1)


def _duplicate_id(data):
    data["memory"]["digests"]["items"] = [
        {"id": "d000001", "entry_ids": []},
        {"id": "d000001", "entry_ids": []},
    ]


def _broken_reference(data):
    data["memory"]["long_term"]["items"][0]["source_entry_ids"] = ["j999999"]


def _bad_audience(data):
    data["memory"]["journal"]["items"][1]["audience"] = "everyone"


def _out_of_order(data):
    items = data["memory"]["journal"]["items"]
    items[0], items[1] = items[1], items[0]


def _set(kind, field, value, number=0):
    def change(data):
        data["memory"][kind]["items"][number][field] = value

    return change


BAD_FILES = [
    ("broken json", lambda raw: raw[:-20], "not valid JSON"),
    # a hostile file: deeper than any parser's stack, wrong types that would break recall
    # after the import, terminal escapes that would act on a builder's screen
    ("nested too deep", lambda raw: "[" * 100_000 + "]" * 100_000, "nests deeper than 10"),
    (
        "importance not a number",
        lambda raw: _mutated(raw, _set("journal", "importance", "high")),
        "memory.journal.items[0].importance: a number from 1 to 10",
    ),
    (
        "time not a time",
        lambda raw: _mutated(raw, _set("journal", "created_at", 5)),
        "memory.journal.items[0].created_at: a time (ISO 8601",
    ),
    (
        "provenance not an object",
        lambda raw: _mutated(raw, _set("long_term", "provenance", "x")),
        "memory.long_term.items[0].provenance: an object",
    ),
    (
        "about not a list",
        lambda raw: _mutated(raw, _set("journal", "about", "#12")),
        "memory.journal.items[0].about: a list of texts",
    ),
    (
        "terminal escape",
        lambda raw: _mutated(raw, _set("journal", "content", "hi \x1b[2J\x1b]0;pwned\x07")),
        "memory.journal.items[0].content: a control character (U+001B)",
    ),
    (
        "not a finite number",
        lambda raw: _mutated(raw, _set("long_term", "importance", float("nan"))),
        "memory.long_term.items[0].importance: nan is not a finite number",
    ),
    (
        "a vector",
        lambda raw: _mutated(raw, _set("long_term", "vector", "AAAA")),
        "memory.long_term.items[0].vector: null (embeddings are made again",
    ),
    (
        "a next id given already",
        lambda raw: _mutated(
            raw, lambda d: d["memory"]["sleep_history"]["state"].update(next_id=1)
        ),
        "memory.sleep_history.state.next_id: 1 is an id given already",
    ),
    (
        "a bookmark's salience not a whole number",
        lambda raw: _mutated(raw, _set("journal", "salience", 2.5)),
        "memory.journal.items[0].salience: a whole number from 1 to 3 or null",
    ),
    (
        "a counter not a number",
        lambda raw: _mutated(raw, lambda d: d["memory"]["reminders"][0].update(max_fires="x")),
        "memory.reminders[0].max_fires: a whole number",
    ),
    (
        "markup in what a refusal quotes",
        lambda raw: _mutated(
            raw, _set("long_term", "source_entry_ids", ["|lc@assistant/delete Aria|ltj1|le"])
        ),
        "source_entry_ids: \N{BROKEN BAR}lc@assistant/delete Aria\N{BROKEN BAR}ltj1",
    ),
    (
        "huge number",
        lambda raw: _mutated(raw, lambda d: d["memory"]["links"].update(cursor=10**30)),
        "memory.links.cursor: a number beyond",
    ),
    (
        "wrong version",
        lambda raw: _mutated(raw, lambda d: d.update(schema_version=99)),
        "schema_version: 99 is not supported",
    ),
    (
        "not a memory file",
        lambda raw: _mutated(raw, lambda d: d.update(format="lore")),
        "format:",
    ),
    (
        "unknown kind",
        lambda raw: _mutated(raw, lambda d: d["memory"].update(dreams=[])),
        "memory.dreams: unknown kind of memory (known: journal,",
    ),
    (
        "overlong text",
        lambda raw: _mutated(raw, _long_content),
        f"memory.journal.items[0].content: a text of {transfer.MAX_TEXT_CHARS + 1} characters "
        f"(at most {transfer.MAX_TEXT_CHARS})",
    ),
    ("duplicate ids", lambda raw: _mutated(raw, _duplicate_id), "d000001 appears twice"),
    (
        "broken reference",
        lambda raw: _mutated(raw, _broken_reference),
        "memory.long_term.items[0].source_entry_ids: j999999 is not in the file",
    ),
    (
        "bad audience",
        lambda raw: _mutated(raw, _bad_audience),
        "memory.journal.items[1].audience: an audience is null (public) or a list",
    ),
    (
        "ids out of order",
        lambda raw: _mutated(raw, _out_of_order),
        "memory.journal.items[0].id: j000001 at position 0",
    ),
    (
        "overlong persona",
        lambda raw: _mutated(raw, lambda d: d["assistant"].update(persona="p" * 2001)),
        "assistant.persona:",
    ),
]


@pytest.mark.parametrize("label,spoil,message", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_a_bad_file_is_refused_and_changes_nothing(label, spoil, message):
    raw = spoil(export(remembering()))
    target = remembering()
    target.brain.journal.add("what the target knew", author="Aria", now=T0)
    before = copy.deepcopy(target.brain.memory_store.inner.data)
    state_before = copy.deepcopy(target.brain.state.data)
    with pytest.raises(transfer.TransferError) as err:
        import_into(target, raw, replace=True)
    assert message in str(err.value) and "|" not in str(err.value)
    assert "nothing was changed" in str(err.value) or label in (
        "broken json",
        "nested too deep",
        "not a memory file",
        "wrong version",
    )
    assert target.brain.memory_store.inner.data == before
    assert target.brain.state.data == state_before


def test_a_file_too_large_is_refused_before_it_is_parsed(monkeypatch):
    raw = export(remembering())
    monkeypatch.setattr(transfer, "MAX_FILE_BYTES", len(raw) - 1)
    target = AssistantMemory("Aria")
    with pytest.raises(transfer.TransferError, match=f"at most {len(raw) - 1} bytes"):
        import_into(target, raw)
    assert stored(target) == {}


def test_memory_held_is_replaced_only_when_asked():
    raw = export(remembering())
    target = AssistantMemory("Aria")
    target.add_entry("The well is dry.", time=T0)
    before = copy.deepcopy(target.brain.memory_store.inner.data)
    with pytest.raises(Refused, match="already remembers 1 journal entry;.*Use /replace"):
        import_into(target, raw)
    assert target.brain.memory_store.inner.data == before
    import_into(target, raw, replace=True)
    assert not any("well is dry" in item.text for item in target.recall("well dry", k=5))


def test_memory_learned_between_the_question_and_the_answer_is_not_replaced_unasked():
    target = AssistantMemory("Aria")
    plan = target.admin.import_plan(export(remembering()), GAME["id"])
    target.add_entry("The well is dry.", time=T0)
    before = copy.deepcopy(target.brain.memory_store.inner.data)
    with pytest.raises(Refused, match="learned something since you were asked"):
        target.admin.import_memory(plan, list(before))
    assert target.brain.memory_store.inner.data == before


# ---- secrets and privacy ----------------------------------------------------------------------


def test_no_secret_reaches_the_file():
    memory = remembering()
    memory.add_entry(f"Someone shouted the key {SECRET} across the room.", time=T0)
    settings = {
        "temperature": 0.5,
        "api_key": SECRET,  # a stale override of a key the configuration does not know
        "compact_prompt": f"Summarise. Use {SECRET}.",  # a known key holding a secret
        "model": "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX",  # shaped like an API key
    }
    raw = export(memory, settings=settings, secrets=[SECRET])
    assert SECRET not in raw and "sk-proj-ABCDEFGH" not in raw
    assert json.loads(raw)["assistant"]["settings"] == {"temperature": 0.5}


def test_a_whisper_keeps_its_audience_through_the_file():
    copy_of = AssistantMemory("Aria")
    import_into(copy_of, export(remembering()))
    whisper = copy_of.brain.journal.get("j000001")
    assert whisper["content"] == WHISPER and whisper["audience"] == ["#12"]
    assert any("vault" in item.text for item in copy_of.recall("vault code", k=5, audience=["#12"]))
    for other in (["Carol"], ["#13"], ["#12", "Carol"]):
        assert not any("vault" in i.text for i in recalled_items(copy_of, "vault code", other))


def recalled_items(memory, query, audience):
    return memory.recall(query, k=8, at=T0 + timedelta(hours=2), audience=audience)


def test_a_file_from_another_game_is_rekeyed_so_a_stranger_with_the_dbref_learns_nothing():
    raw = export(remembering())
    elsewhere = AssistantMemory("Aria")
    plan = elsewhere.admin.import_plan(raw, "game-two")
    assert plan["rekey"]["#12"] == "name:bob"
    elsewhere.admin.import_memory(plan, [])
    # whoever has #12 in this game is a stranger: the whisper is not theirs
    assert not any("vault" in i.text for i in recalled_items(elsewhere, "vault code", ["#12"]))
    everything = json.dumps(stored(elsewhere))
    assert '"#12"' not in everything and "#12/" not in everything
    assert elsewhere.brain.journal.get("j000001")["audience"] == ["name:bob"]
    assert elsewhere.admin.kind("profiles").profile("name:bob")["name"] == "Bob"
    # a builder still sees it, and it keeps its words
    assert any("vault" in item.text for item in elsewhere.recall("vault code", k=5))


def test_an_accounts_key_from_another_game_is_no_account_here():
    data = json.loads(export(remembering()))
    data["memory"]["journal"]["items"][1]["voice"] = "account#3"
    elsewhere = AssistantMemory("Aria")
    plan = elsewhere.admin.import_plan(json.dumps(data), "game-two")
    assert plan["rekey"]["account#3"] == "account#3@game-one"
    elsewhere.admin.import_memory(plan, [])
    assert elsewhere.brain.journal.get("j000001")["voice"] == "account#3@game-one"
    # this game's account#3 is a stranger: forgetting them leaves the whisper's words
    report = forget_person(elsewhere.brain.review, PersonMatch(keys=["account#3"]), T0, by="Ann")
    assert "j000001" not in report.forgotten
    # in the same game the key stays (it is the same account)
    same = AssistantMemory("Aria")
    plan = same.admin.import_plan(json.dumps(data), GAME["id"])
    assert plan["rekey"] == {}


def test_a_dbref_without_a_name_is_rekeyed_to_no_one():
    data = json.loads(export(remembering()))
    data["people"].pop("#12")
    for kind in ("profiles", "relationships"):
        data["memory"][kind] = [p for p in data["memory"][kind] if p["key"] != "#12"]
    parsed = transfer.parse_file(json.dumps(data))
    assert transfer.rekey_map(parsed)["#12"] == "name:unknown #12"
