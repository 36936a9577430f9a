"""
Shared lore in the pure core: the book (storage, bounds, errors that change nothing), who may
know an entry, the one shared index kept current on edits, and recall: lore ranked with an
assistant's own memories, marked as lore, never as someone's words, never carrying a whisper.

The builder's command and the import of files are tested in `test_lore_shell.py`.

"""

import pytest

from ai_assistant.memory import lore as lore_module
from ai_assistant.memory.lore import (
    MAX_TAGS,
    MAX_TEXT_CHARS,
    MAX_TITLE_CHARS,
    Knower,
    LoreBook,
    LoreError,
    merged,
)
from ai_assistant.memory.recall_weights import RecallWeights
from ai_assistant.conf import AssistantConfig
from ai_assistant.memory.store import DictStore

from .core_fakes import T0, FakeWorld, ScriptedModel, hear, make_assistant, reply, run_tick

FOUNDING = "Millbrook was founded by the river smith Oda in the year of the long frost."
WEIGHTS = RecallWeights.from_config(AssistantConfig())
ARIA = Knower.of("Aria", aliases=["librarian"], dbref="#7", room="Reading Room", room_dbref="#2")


def book_with_founding(who=None, store=None) -> LoreBook:
    book = LoreBook(store or DictStore())
    book.add("The founding of Millbrook", FOUNDING, tags=["history"], who=who, by="Builder")
    return book


def lore_for(book: LoreBook, knower: Knower):
    return lambda query, limit, weights: book.recall(query, knower, limit, weights)


# ---- the book ---------------------------------------------------------------------------------


def test_entries_are_stored_once_and_read_back_by_another_book_over_the_same_store():
    store = DictStore()
    book = book_with_founding(store=store)
    entry = book.add(
        "The bell", "The bell rings at dusk.", tags="town, Bells", who="Aria, room:Hall"
    )
    assert entry["id"] == "L2" and entry["tags"] == ["town", "bells"]
    assert entry["who"] == ["aria", "room:hall"]
    again = LoreBook(store)
    assert [e["id"] for e in again.entries()] == ["L1", "L2"]
    assert again.get("l2")["text"] == "The bell rings at dusk."
    # one stored value holds a hundred entries: the book is not one value per entry
    assert {key for key in store.data} == {"lore_meta", "lore_0"}


@pytest.mark.parametrize(
    "fields, wrong",
    [
        ({"title": "", "text": "x"}, "title is 1 to"),
        ({"title": "t" * (MAX_TITLE_CHARS + 1), "text": "x"}, f"title is 1 to {MAX_TITLE_CHARS}"),
        ({"title": "t", "text": "x" * (MAX_TEXT_CHARS + 1)}, f"text is 1 to {MAX_TEXT_CHARS}"),
        ({"title": "t", "text": "x", "tags": [f"t{i}" for i in range(MAX_TAGS + 1)]}, "tags"),
        ({"title": "t", "text": "x", "tags": ["no|pipes"]}, "is not a tag"),
        ({"title": "t", "text": "x", "who": ["castle:keep"]}, "cannot say who may know"),
        ({"title": "t", "text": "x", "who": ["everyone", "Aria"]}, "'everyone' stands alone"),
        ({"title": "t", "text": "x", "author": "Bob"}, "Unknown lore field"),
    ],
)
def test_a_bad_entry_is_refused_with_what_is_allowed_and_changes_nothing(fields, wrong):
    store = DictStore()
    book = book_with_founding(store=store)
    before = dict(store.data)
    with pytest.raises(LoreError, match=wrong):
        book.add_many([fields])
    assert store.data == before and len(book) == 1


def test_a_batch_with_one_bad_entry_adds_none_and_names_it():
    book = book_with_founding()
    with pytest.raises(LoreError, match="Entry 2: A lore text is 1 to"):
        book.add_many([{"title": "Good", "text": "fine"}, {"title": "Bad", "text": ""}])
    assert [e["id"] for e in book.entries()] == ["L1"]


def test_the_book_is_bounded(monkeypatch):
    monkeypatch.setattr(lore_module, "MAX_ENTRIES", 2)
    book = book_with_founding()
    book.add("Two", "second")
    with pytest.raises(LoreError, match="at most 2 entries"):
        book.add("Three", "third")
    assert len(book) == 2


def test_edit_and_remove_check_the_id_and_the_field():
    book = book_with_founding()
    with pytest.raises(LoreError, match="no lore entry L9"):
        book.edit("L9", "text", "x")
    with pytest.raises(LoreError, match="not a lore id"):
        book.remove("m000001")
    with pytest.raises(LoreError, match="'colour' is not a lore field"):
        book.edit("L1", "colour", "red")
    with pytest.raises(LoreError, match="text is 1 to"):
        book.edit("L1", "text", "")
    assert book.get("L1")["text"] == FOUNDING
    edited = book.edit("L1", "who", "tag:guards", by="Ann")
    assert edited["who"] == ["tag:guards"] and edited["edited_by"] == "Ann"
    assert book.remove("L1")["id"] == "L1"
    assert len(book) == 0 and book.entries() == []


# ---- who may know it --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "who, known",
    [
        (None, True),
        ("everyone", True),
        ("Aria", True),
        ("librarian", True),  # an alias
        ("#7", True),
        ("room:Reading Room", True),
        ("room:#2", True),
        ("tag:scholars", True),
        ("Bob", False),
        ("room:Hall", False),
        ("tag:guards", False),
        ("#8, tag:guards", False),
    ],
)
def test_only_those_allowed_know_an_entry(who, known):
    book = book_with_founding(who=who)
    aria = Knower.of(
        "Aria", ["librarian"], "#7", "Reading Room", "#2", tags=["scholars", "ai_assistant"]
    )
    found = book.search("founding of Millbrook", aria)
    assert bool(found) is known
    # a builder (no knower) sees every entry
    assert book.search("founding of Millbrook", None)


def test_visibility_is_filtered_after_scoring_even_when_most_hits_are_someone_elses():
    book = LoreBook(DictStore())
    book.add_many(
        [{"title": f"Guard post {i}", "text": "the river gate", "who": "Bob"} for i in range(80)]
    )
    book.add("Aria's river", "the river gate is hers", who="Aria")
    found = book.search("river gate", ARIA, limit=3)
    assert [entry["id"] for entry, _ in found] == ["L81"]


# ---- one index, kept current ------------------------------------------------------------------


def test_the_one_index_follows_adds_edits_and_removals_without_a_rebuild():
    book = book_with_founding()
    assert book.search("frost", ARIA)
    builds = book.builds
    book.edit("L1", "text", "Millbrook was founded in the year of the great flood.")
    assert not book.search("frost", ARIA)
    assert book.search("flood", ARIA)
    book.add("The mill", "The old mill grinds barley.")
    assert book.search("barley", ARIA)[0][0]["id"] == "L2"
    book.remove("L2")
    assert not book.search("barley", ARIA)
    assert book.builds == builds  # every change went into the index as it was made


def test_a_change_made_through_another_book_is_seen_by_the_version():
    store = DictStore()
    mine = book_with_founding(store=store)
    assert not mine.search("barley", ARIA)
    theirs = LoreBook(store)
    version = theirs.version
    theirs.add("The mill", "The old mill grinds barley.")
    assert theirs.version == version + 1
    assert mine.search("barley", ARIA)[0][0]["title"] == "The mill"


# ---- recall ------------------------------------------------------------------------------------


def test_recalled_lore_is_marked_as_lore_trusted_as_a_builders_word_and_names_no_one():
    book = book_with_founding()
    [item] = book.recall("who founded Millbrook?", ARIA, 5, WEIGHTS)
    assert item.kind == "lore" and item.provenance == {"source_type": "lore", "lore_id": "L1"}
    assert item.audience is None and item.trust == 1.0
    line = item.line()
    assert line.startswith("- [lore; trust high] You know that: The founding of Millbrook: ")
    assert FOUNDING in line
    # the builder who wrote it is no one's word in the assistant's mind
    assert "Builder" not in line and "told you" not in line and "heard_from" not in item.provenance


def test_lore_takes_at_most_half_of_a_recall_and_ranks_with_memories():
    book = LoreBook(DictStore())
    book.add_many([{"title": f"Bell {i}", "text": f"bell tale {i}"} for i in range(10)])
    lore = book.recall("bell", ARIA, 8, WEIGHTS)
    assert len(lore) == 8
    assert len(merged([], lore, 8)) == 4
    assert merged([], lore, 0) == []


def test_a_question_is_answered_with_lore_marked_as_lore_and_only_where_it_may_be_known():
    book = book_with_founding(who="Aria, room:Reading Room")
    answer = "Oda the river smith founded Millbrook."
    model = ScriptedModel(reply(("say", {"text": answer})), reply(("noop", {})))
    world = FakeWorld(present=["Bob"])
    aria = make_assistant(model, world=world)
    aria.lore = lore_for(book, ARIA)
    hear(aria, "Aria, who founded Millbrook?", speaker="Bob")
    outcome = run_tick(aria)
    sent = model.requests[0].messages[-1]["content"]
    assert "[lore; trust high] You know that: The founding of Millbrook: " + FOUNDING in sent
    assert "told you" not in sent.split("You know that")[0].splitlines()[-1]
    assert world.said == [answer] and "lore:L1" in outcome.recalled
    # another assistant, elsewhere, that the entry does not name, is not given it
    other_model = ScriptedModel(reply(("noop", {})))
    brann = make_assistant(other_model, world=FakeWorld(present=["Bob"]))
    brann.name = "Brann"
    brann.lore = lore_for(book, Knower.of("Brann", dbref="#9", room="Hall", room_dbref="#3"))
    hear(brann, "Brann, who founded Millbrook?", speaker="Bob")
    run_tick(brann)
    assert FOUNDING not in str(other_model.requests[0].messages)
    assert "You know that" not in str(other_model.requests[0].messages)


def test_lore_recall_never_brings_a_whisper_along():
    secret = "the vault code is 7-3-1"
    book = book_with_founding()
    model = ScriptedModel(
        reply(("noop", {})),
        reply(("recall", {"query": "founding of Millbrook, vault code"})),
        reply(("noop", {})),
    )
    world = FakeWorld(present=["Mira", "Bob"])
    aria = make_assistant(model, world=world)
    aria.lore = lore_for(book, ARIA)
    aria.journal.add(
        f"Mira whispered that in Millbrook {secret}.",
        author="Aria",
        now=T0,
        source_type="claim",
        heard_from="Mira",
        audience=["name:mira"],
    )
    hear(aria, f"Millbrook: {secret}", event_type="whisper", speaker="Mira")
    run_tick(aria)
    # Bob asks in public: lore comes, the whisper does not (not in recall, not in the tool)
    hear(aria, "Aria, who founded Millbrook? Any vault code?", speaker="Bob")
    outcome = run_tick(aria)
    public = "\n".join(str(m.get("content")) for m in model.requests[1].messages[-1:])
    assert "You know that: The founding of Millbrook" in public and "7-3-1" not in public
    result = outcome.tool_calls[0]["result"]
    assert "You know that: The founding of Millbrook" in result and "7-3-1" not in result
    found = aria.recall("Millbrook founded, vault code", now=T0, served=frozenset({"name:bob"}))
    assert "lore" in [item.kind for item in found]
    for item in found:
        assert "7-3-1" not in item.text
        if item.kind == "lore":
            assert item.audience is None and "heard_from" not in item.provenance


def test_one_shared_word_is_not_what_a_question_is_about():
    book = book_with_founding()
    assert not book.recall("the river is high today, Aria", ARIA, 5, WEIGHTS)
    assert book.recall("who founded Millbrook?", ARIA, 5, WEIGHTS)
    assert book.recall("Millbrook", ARIA, 5, WEIGHTS)  # a one-word question: its one word


# ---- files to import ---------------------------------------------------------------------------


def test_the_text_and_json_formats_parse_and_a_bad_file_is_refused():
    text = (
        "# the town\ntitle: The founding\ntags: history, town\nwho: room:Hall\nOda founded it.\n"
        "It was cold.\n---\n\ntitle: The bell\nThe bell rings at dusk.\n"
    )
    first, second = lore_module.parse_lore_text(text)
    assert first == {
        "title": "The founding",
        "tags": "history, town",
        "who": "room:Hall",
        "text": "Oda founded it.\nIt was cold.",
    }
    assert second == {"title": "The bell", "text": "The bell rings at dusk."}
    with pytest.raises(LoreError, match="no lore entry"):
        lore_module.parse_lore_text("# only a comment\n---\n")
    entries = [{"title": "The bell", "text": "It rings.", "tags": ["town"]}]
    assert lore_module.parse_lore_json('{"entries": %s}' % str(entries).replace("'", '"')) == (
        entries
    )
    with pytest.raises(LoreError, match="not JSON"):
        lore_module.parse_lore_json("[{")
    with pytest.raises(LoreError, match="Entry 1: an object with title and text"):
        lore_module.parse_lore_json('[{"title": 3, "text": "x"}]')
    with pytest.raises(LoreError, match="a list of entries"):
        lore_module.parse_lore_json('{"lore": []}')


def test_the_offline_rehearsal_model_answers_from_lore_as_what_it_knows():
    from ai_assistant.offline.rehearsal import rehearsal_client

    book = book_with_founding()
    world = FakeWorld(present=["Tobin"])
    aria = make_assistant(rehearsal_client, world=world)
    aria.lore = lore_for(book, ARIA)
    hear(aria, "Aria, what do you know about the founding of Millbrook?", speaker="Tobin")
    run_tick(aria)
    assert world.said == [
        f"I know this of our world: The founding of Millbrook: {FOUNDING} (rehearsal)"
    ]
