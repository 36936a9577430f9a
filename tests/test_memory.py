"""
Memory that comes back, in the pure core: the lexical index, recall's scoring and fusion,
audiences from hearing to recall, the entry point `AssistantMemory`, attribution of claims.

"""

from datetime import timedelta

import pytest

from ai_assistant.conf import AssistantConfig
from ai_assistant.errors import Refused
from ai_assistant.memory.audience import NOBODY, narrowest, served_by, visible
from ai_assistant.sleep.prompts import attributed
from ai_assistant.memory.lexical import MAX_WORD_CHARS, LexicalIndex, terms
from ai_assistant.memory.recall_weights import RecallWeights
from ai_assistant.memory.store import DictStore
from ai_assistant.memory_api import AssistantMemory
from ai_assistant.testing.scripted import ScriptedModel

from .core_fakes import T0, hear, make_assistant, reply, run_tick

# ---- the lexical index ---------------------------------------------------------------------


def test_terms_stem_and_drop_stop_words():
    assert terms("Bob's sisters are living in Riverton") == ["bob", "sister", "live", "riverton"]


def test_characters_that_do_not_show_split_no_word():
    sister = terms("sister")
    assert terms("sis\u200bter") == terms("sis\u00adter") == terms("\ufeffsis\u2060ter") == sister
    # a Persian prefix, parted by a zero-width non-joiner, still lets the word be found alone
    assert terms("\u062e\u0648\u0627\u0647\u0645")[0] in terms(
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    )


def test_a_word_counts_only_its_first_letters():
    (long,) = terms("q" * 2000)
    assert len(long) <= MAX_WORD_CHARS
    assert terms("q" * 2000 + "z") == [long]


@pytest.mark.parametrize("hide", ["groups", "usable"])
def test_a_word_found_only_where_the_caller_may_not_look_hides_nothing_else(hide):
    index = LexicalIndex()
    for i in range(300):  # "tavern" in more than a quarter: a common word
        index.add(f"t{i}", f"The tavern is busy tonight, round {i}.")
    index.add("secret", "The emerald is in the cellar.", group=1)
    allowed = {"groups": [0]} if hide == "groups" else {"usable": lambda doc: doc != "secret"}
    found = [doc for doc, _ in index.search("tavern emerald", limit=3, **allowed)]
    # the tavern's lines, as though the hidden line were not there at all
    assert len(found) == 3 and all(doc.startswith("t") for doc in found)


def test_a_flood_of_hidden_lines_makes_no_word_common_for_those_who_may_not_see_them():
    index = LexicalIndex()
    for i in range(200):
        index.add(f"t{i}", f"The tavern is busy tonight, round {i}.")
    index.add("dragon", "A dragon sleeps on the hill.")
    index.add("emerald", "An emerald ring was sold.")
    for i in range(100):  # "dragon" in more than a quarter of all the lines: Bob's whispers
        index.add(f"w{i}", f"Bob whispers of the dragon, {i}.", group=1)
    found = {doc for doc, _ in index.search("dragon emerald", limit=5, groups=[0])}
    assert found == {"dragon", "emerald"}


def test_lexical_index_is_incremental():
    index = LexicalIndex()
    index.add("a", "The east door sticks when it rains.")
    index.add("b", "Mira likes green tea.")
    assert [hit[0] for hit in index.search("door")] == ["a"]
    index.add("a", "The west window is broken.")  # replaced, not added twice
    assert index.search("door") == [] and len(index) == 2
    index.remove("b")
    assert index.search("tea") == [] and len(index) == 1
    index.remove("nothing")  # no error


def test_lexical_ranking_prefers_rarer_matching_terms():
    index = LexicalIndex()
    for i in range(20):
        index.add(f"common{i}", f"The weather was fine on day {i}.")
    index.add("rare", "The weather turned and the lighthouse keeper fell ill.")
    hits = index.search("lighthouse weather")
    assert hits[0][0] == "rare" and hits[0][1] > hits[1][1]


def test_context_counts_less_than_a_document_own_words():
    index = LexicalIndex()
    index.add("own", "The lighthouse keeper fell ill.")
    index.add("beside", "The keeper fell ill.", context=[("The lighthouse is dark.", 0.5)])
    for n in range(10):
        index.add(f"other{n}", f"Fish were sold on day {n}.")
    hits = dict(index.search("lighthouse"))
    assert set(hits) == {"own", "beside"}, "context words are searched"
    assert hits["own"] > hits["beside"], "but count less than the document's own"


@pytest.mark.parametrize("weight", [0, -0.5, 1.5])
def test_a_context_weight_outside_zero_to_one_is_refused(weight):
    index = LexicalIndex()
    index.add("a", "The mill wheel broke.")
    with pytest.raises(ValueError, match="within \\(0, 1\\]"):
        index.add("a", "The east door sticks.", context=[("rain", weight)])
    assert [hit[0] for hit in index.search("mill")] == ["a"], "nothing changed"


def test_expanding_a_search_finds_what_its_best_hits_share_words_with():
    index = LexicalIndex()
    index.add("asked", "Where did you spend your holiday? Paris, with my sister.")
    index.add("also", "My holiday in Paris was rainy.")
    index.add("later", "Paris in spring: we saw the cathedral and my sister cried.")
    for n in range(20):
        index.add(f"chatter{n}", f"The weather was fine on day {n}.")
    assert "later" not in dict(index.search("holiday"))
    found = index.search("holiday", expand=True)
    assert "later" in dict(found), "it shares Paris and sister with the holiday's hits"
    assert [hit[0] for hit in found][:2] == ["asked", "also"], "the query's own hits lead"
    assert not any(hit[0].startswith("chatter") for hit in found)


# ---- audiences -----------------------------------------------------------------------------


def test_visibility_rules():
    bob, alice = "#2", "#3"
    assert visible(None, served_by([alice]))
    assert visible([bob], served_by([bob]))
    assert not visible([bob], served_by([bob, alice]))  # Alice may not know it
    assert not visible([bob], served_by([]))  # serving nobody shows only what is public
    assert served_by([]) == frozenset({NOBODY})
    assert visible([bob], None)  # a builder's view
    assert narrowest([None, [bob, alice], [bob]]) == [bob]
    assert narrowest([None, None]) is None
    assert narrowest([[bob], [alice]]) == []


# ---- recall --------------------------------------------------------------------------------


def memory_with(*entries, **config) -> AssistantMemory:
    memory = AssistantMemory("Aria", config=AssistantConfig(**config) if config else None)
    for i, (text, kwargs) in enumerate(entries):
        memory.add_entry(text, time=kwargs.pop("time", T0 + timedelta(minutes=i)), **kwargs)
    return memory


def test_recall_ranks_relevance_first_and_names_its_entries():
    memory = memory_with(
        ("Bob says his sister lives in Riverton.", {"speaker": "Bob"}),
        ("The weather was fine.", {}),
        ("Carol sells fish at the harbour.", {"speaker": "Carol"}),
    )
    best, *_ = memory.recall("Where does Bob's sister live?", k=3)
    assert best.entry_ids == ["j000000"] and best.kind == "entry"
    assert best.scores["relevance"] == 1.0 and best.scores["person"] == 1.0
    assert best.provenance["heard_from"] == "Bob"


def test_recency_and_importance_weigh_in():
    old = T0
    new = T0 + timedelta(days=30)
    memory = memory_with(
        ("The east door sticks.", {"time": old, "importance": 3}),
        ("The east door sticks again.", {"time": new, "importance": 3}),
    )
    first = memory.recall("east door sticks", k=2, at=new)
    assert first[0].id == "j000001"  # as relevant, and newer
    heavy = memory_with(
        ("The east door sticks.", {"time": new, "importance": 2}),
        ("The east door sticks!", {"time": new, "importance": 10}),
    )
    assert heavy.recall("east door sticks", k=2, at=new)[0].id == "j000001"


def test_recall_never_sees_the_future_and_weights_are_configurable():
    memory = memory_with(
        ("The bridge is out.", {"time": T0}),
        ("The bridge was repaired.", {"time": T0 + timedelta(days=2)}),
    )
    found = memory.recall("bridge", k=5, at=T0 + timedelta(days=1))
    assert [item.id for item in found] == ["j000000"]
    weights = memory.brain.recall_weights()
    assert weights == RecallWeights(1.0, 0.1, 0.1, 0.3, 0.999, 0.3, weights.trusts, 0.4)
    assert dict(weights.trusts)["claim"] == 0.4


def test_semantic_relevance_fuses_with_lexical():
    # with embeddings, a paraphrase without shared words can still be found
    model = ScriptedModel()
    memory = AssistantMemory("Aria", model=model, embedding_model="embed-test")
    brain = memory.brain
    brain.long_term.add(
        "The harbour master keeps the spare keys.",
        importance=5,
        now=T0,
        source_entry_ids=["j000000"],
        provenance={},
        vector=[1.0, 0.0, 0.0],
    )
    brain.long_term.add(
        "Fish are sold at dawn.",
        importance=5,
        now=T0,
        source_entry_ids=["j000001"],
        provenance={},
        vector=[0.0, 1.0, 0.0],
    )
    found = brain.recall(
        "who has the extra key", now=T0, served=None, semantic=[("m000000", 0.9)], limit=2
    )
    assert found[0].id == "m000000" and found[0].scores["relevance"] == 1.0


def test_a_hit_pulls_in_its_strongest_linked_neighbour():
    # hours apart: not one conversation, so only the link joins them
    memory = memory_with(
        ("The lighthouse keeper fell ill.", {"time": T0}),
        ("Nobody lit the lamp last night.", {"time": T0 + timedelta(hours=3)}),
        ("Fish are sold at dawn.", {"time": T0 + timedelta(hours=6)}),
    )
    brain = memory.brain
    brain.links.link([("j000000", "j000001", 0.9)], max_per_memory=5)
    found = memory.recall("lighthouse keeper", k=2)
    assert [item.id for item in found] == ["j000000", "j000001"]
    assert found[1].via == "j000000" and found[1].scores == {"link": 0.9}


def test_links_to_what_a_recall_may_not_show_take_no_linked_memorys_place():
    memory = memory_with(
        ("The lighthouse keeper fell ill.", {"time": T0}),
        ("Nobody lit the lamp last night.", {"time": T0 + timedelta(hours=3)}),
        *(
            (
                f"Bob's secret number {i}.",
                {"time": T0 + timedelta(hours=6 + i), "audience": ["Bob"]},
            )
            for i in range(3)
        ),
    )
    memory.brain.links.link(
        [("j000000", "j000001", 0.5)] + [("j000000", f"j00000{i}", 0.9) for i in (2, 3, 4)],
        max_per_memory=5,
    )
    found = memory.recall("lighthouse keeper", k=2, audience=["Alice"])
    # the whispers are linked more strongly, and Alice may not see them: the public link stands
    assert [item.id for item in found] == ["j000000", "j000001"]
    assert found[1].via == "j000000"


def test_index_follows_the_stores_without_rebuilding():
    memory = memory_with(("The east door sticks.", {}))
    index = memory.brain.index
    assert len(index) == 1
    lexical = index._lexical
    memory.add_entry("Mira likes green tea.", time=T0)
    assert index._lexical is lexical and len(index) == 2  # added, not rebuilt
    assert memory.recall("tea", k=1)[0].id == "j000001"


# ---- audiences through hearing, turns and consolidation -------------------------------------


def test_a_whisper_stays_with_the_whisperer():
    model = ScriptedModel(
        reply(
            ("add_journal_entry", {"content": "Bob's vault code is 4-1-7.", "heard_from": "Bob"})
        ),
        reply(("noop", {})),
        reply(("noop", {})),
        reply(("noop", {})),
    )
    brain = make_assistant(model)
    hear(brain, "the vault code is 4-1-7", event_type="whisper", speaker="Bob")
    run_tick(brain)
    entry = brain.journal.all()[0]
    assert entry["audience"] == ["name:bob"] and entry["source_type"] == "claim"
    # asked in the room (Alice and Bob present): not recalled, not even in the history
    hear(brain, "Aria, what is the vault code?", speaker="Alice")
    run_tick(brain)
    public = model.requests[-1].messages
    assert all("4-1-7" not in str(m.get("content")) for m in public)
    assert any("private conversation with someone else" in str(m.get("content")) for m in public)
    # asked by Bob in private: recalled
    hear(brain, "and the code?", event_type="whisper", speaker="Bob")
    run_tick(brain)
    assert "4-1-7" in model.requests[-1].messages[-1]["content"]


def test_turns_answer_one_thread_at_a_time():
    model = ScriptedModel(reply(("noop", {})), reply(("noop", {})))
    brain = make_assistant(model)
    hear(brain, "psst, the password is swordfish", event_type="whisper", speaker="Bob")
    hear(brain, "Aria, hello!", speaker="Alice")
    first = run_tick(brain)
    assert [e.speaker for e in first.events] == ["Bob"]
    assert "swordfish" in model.requests[0].messages[-1]["content"]
    assert "Aria, hello" not in model.requests[0].messages[-1]["content"]
    second = run_tick(brain)
    assert [e.speaker for e in second.events] == ["Alice"]
    assert all("swordfish" not in str(m.get("content")) for m in model.requests[1].messages)


def test_consolidation_keeps_the_audience_and_never_mixes_batches():
    memory = memory_with(
        ("Bob says the vault code is 4-1-7.", {"speaker": "Bob", "audience": ["Bob"]}),
        ("Alice says the harbour floods in spring.", {"speaker": "Alice"}),
    )
    reports = memory.consolidate(now=T0 + timedelta(hours=1))
    extraction_batches = [r for r in reports if isinstance(r, dict) and r.get("consolidated")]
    assert len(extraction_batches) == 2  # one batch per audience
    by_text = {m["text"]: m for m in memory.memories()}
    vault = next(m for text, m in by_text.items() if "4-1-7" in text)
    assert vault["audience"] == ["name:bob"]
    assert memory.recall("vault code", k=5, audience=["Alice"]) == [] or all(
        "4-1-7" not in item.text for item in memory.recall("vault code", k=5, audience=["Alice"])
    )
    assert any("4-1-7" in item.text for item in memory.recall("vault code", k=5, audience=["Bob"]))


def test_a_word_only_someone_elses_whisper_holds_changes_nothing_anyone_else_recalls():
    def tavern(whisper: bool) -> list[str]:
        memory = AssistantMemory("Aria")
        for hour in range(300):
            memory.add_entry(
                f"The tavern is busy tonight, round {hour}.",
                speaker="Carol",
                time=T0 + timedelta(hours=hour),
            )
        if whisper:
            memory.add_entry(
                "The emerald is in the cellar.",
                speaker="Bob",
                time=T0 + timedelta(hours=300),
                audience=["Bob"],
            )
        found = memory.recall(
            "tavern emerald", k=3, at=T0 + timedelta(hours=400), audience=["Alice"]
        )
        return [item.text for item in found]

    assert tavern(whisper=True) == tavern(whisper=False) != []


def test_entry_point_rejects_bad_input():
    memory = AssistantMemory("Aria")
    with pytest.raises(Refused, match="source must be one of"):
        memory.add_entry("x", time=T0, source="rumour")
    with pytest.raises(Refused, match="importance must be from 1 to 10"):
        memory.add_entry("x", time=T0, importance=11)
    assert memory.recall("anything", k=3) == []


def test_a_recall_without_a_moment_finds_an_observation_newer_than_the_journal():
    store = DictStore()
    memory = AssistantMemory("Aria", store=store)
    memory.add_entry("Bob says hello.", speaker="Bob", time=T0)
    memory.observe("Bob", "Bob drinks green tea every morning.", time=T0 + timedelta(hours=1))
    (found,) = memory.recall("green tea", k=5)
    assert "green tea" in found.text
    # a moment before the observation still leaves it out
    assert memory.recall("green tea", k=5, at=T0 + timedelta(minutes=30)) == []
    # and the same memory read again (a restart) finds it too
    again = AssistantMemory("Aria", store=store)
    assert [item.text for item in again.recall("green tea", k=5)] == [found.text]


def test_the_entry_point_takes_names_as_any_list_and_numbers_of_any_kind():
    import numpy

    memory = AssistantMemory("Aria")
    memory.add_entry("x", time=T0, about=None, audience=None, importance=numpy.int64(5))
    memory.add_entry("y", time=T0, about=("Bob",), audience=(n for n in ["Bob"]))
    entry, private = memory.brain.journal.all()
    assert entry["importance"] == 5 and type(entry["importance"]) is int
    assert private["audience"] == ["name:bob"] and private["about"] == ["name:bob"]
    assert memory.recall("x", k=numpy.int64(1))
    assert memory.recall("x", k=1, people=None, audience=None)


@pytest.mark.parametrize(
    "call, refusal",
    [
        (lambda m: m.add_entry("x", time=T0.replace(tzinfo=None)), "time must be a datetime with"),
        (lambda m: m.add_entry("x", time="2026-05-01"), "time must be a datetime with"),
        (lambda m: m.add_entry(None, time=T0), "content must be a string, not NoneType"),
        (lambda m: m.add_entry("x", time=T0, speaker=7), "speaker must be a string or None"),
        (lambda m: m.add_entry("x", time=T0, audience="Bob"), "audience must be a list of names"),
        (lambda m: m.add_entry("x", time=T0, about="Bob"), "about must be a list of names"),
        (lambda m: m.add_entry("x", time=T0, importance="7"), "importance must be from 1 to 10"),
        (lambda m: m.observe("Bob", "x", time=T0.replace(tzinfo=None)), "time must be a datetime"),
        (lambda m: m.observe("Bob", ["x"], time=T0), "text must be a string, not list"),
        (lambda m: m.consolidate(now=T0.replace(tzinfo=None)), "now must be a datetime with"),
        (lambda m: m.recall(None), "query must be a string, not NoneType"),
        (lambda m: m.recall("x", k="3"), "k must be a whole number, 0 or more, not '3'"),
        (lambda m: m.recall("x", k=True), "k must be a whole number"),
        (lambda m: m.recall("x", k=-1), "k must be a whole number"),
        (lambda m: m.recall("x", at=T0.replace(tzinfo=None)), "at must be a datetime with"),
        (lambda m: m.recall("x", audience="Bob"), "audience must be a list of names"),
        (lambda m: m.recall("x", people="Bob"), "people must be a list of names"),
    ],
)
def test_the_entry_point_refuses_what_it_cannot_use_and_changes_nothing(call, refusal):
    memory = AssistantMemory("Aria")
    memory.add_entry("The dragon sleeps.", time=T0)
    with pytest.raises(Refused, match=refusal):
        call(memory)
    # nothing was written, and recall still answers (a time without a timezone written to the
    # journal made every later recall fail)
    assert [entry["content"] for entry in memory.brain.journal.all()] == ["The dragon sleeps."]
    assert memory.brain.entities.profiles() == []
    assert [item.text for item in memory.recall("dragon", k=3)] == ["The dragon sleeps."]


def test_a_builder_reaches_a_kinds_edits_by_its_name_and_an_unknown_name_is_refused():
    memory = AssistantMemory("Aria")
    reminders = memory.admin.kind("reminders")
    added = reminders.add("festival", "Tell them about the harvest festival.", 3, "Ann")
    assert [r["id"] for r in memory.admin.kind("reminders").all()] == [added["id"]]
    memory.admin.kind("core_notes").set("motto", "Books first.", by="Ann")
    assert [n["value"] for n in memory.admin.kind("core_notes").notes()[0].values()] == [
        "Books first."
    ]
    for name in ("digests", "no such kind"):
        with pytest.raises(
            Refused,
            match="one of: journal, long_term, links, profiles, relationships, core_notes, review_log, gossip_log, reminders, sleep_history",
        ):
            memory.admin.kind(name)
    assert memory.admin.kind("reminders").all() == [added]


# ---- what people say stays theirs ----------------------------------------------------------


@pytest.mark.parametrize(
    "fact, source, expected",
    [
        ("Mira is my cousin.", "claim", "Tobin says: Mira is my cousin."),
        ("Tobin said the east door sticks.", "claim", "Tobin said the east door sticks."),
        ("The bridge is out.", "overheard", "Tobin says: The bridge is out."),
        ("The bridge is out.", "instruction", "The bridge is out."),
        ("The bridge is out.", "observed", "The bridge is out."),
    ],
)
def test_claims_are_kept_as_claims(fact, source, expected):
    assert attributed(fact, "Tobin", source) == expected


def test_consolidated_claims_keep_their_source():
    memory = memory_with(("Bob is the king's cousin.", {"speaker": "Bob", "about": ["Bob"]}))
    memory.consolidate(now=T0 + timedelta(hours=1))
    (stored,) = memory.memories()
    assert stored["text"].startswith("Bob says")
    assert stored["provenance"]["source_type"] == "self_claim"


def test_the_audiences_a_conversation_may_see_are_those_visible_to_it():
    from ai_assistant.memory.audience import AudienceGroups

    groups = AudienceGroups()
    audiences = [None, ["Ann"], ["Bob", "Ann"], ["Cy"], ["Ann", "Bob", "Cy"]]
    servings = [frozenset({"Ann"}), frozenset({"Ann", "Bob"}), frozenset({"Cy"}), frozenset()]

    def expected(served):
        return sorted({groups.number(a) for a in audiences[:known] if visible(a, served)})

    for known in range(1, len(audiences) + 1):
        # audiences numbered between two recalls are seen by the next
        groups.number(audiences[known - 1])
        for served in servings:
            assert sorted(groups.open_to(served)) == expected(served)
    assert groups.number(["Ann", "Bob"]) == groups.number(["Bob", "Ann"])
    assert groups.open_to(None) is None


def test_a_recall_asks_only_of_the_audiences_numbered_since_the_last(monkeypatch):
    # every audience asked again at every recall: 6.30 ms a recall among 9,900 (benchmark 10)
    from ai_assistant.memory import audience

    groups = audience.AudienceGroups()
    for number in range(50):
        groups.number([f"player{number}", "Ann"])
    asked = []
    real = audience.visible
    monkeypatch.setattr(audience, "visible", lambda a, s: asked.append(a) or real(a, s))
    served = frozenset({"Ann", "player3"})
    first = groups.open_to(served)
    assert len(asked) == 51  # the public audience and the 50
    assert groups.open_to(served) == first and len(asked) == 51
    groups.number(["player3", "Bob", "Ann"])  # all it serves are among them
    assert groups.open_to(served) == (*first, 51) and len(asked) == 52


def test_the_audiences_seen_are_remembered_for_a_bounded_number_of_conversations():
    from ai_assistant.memory.audience import AudienceGroups

    groups = AudienceGroups()
    groups.number(["Ann"])
    for number in range(AudienceGroups.REMEMBERED + 40):
        assert groups.open_to(frozenset({f"player{number}"})) == (0,)
    assert len(groups._open) == AudienceGroups.REMEMBERED
    assert groups.open_to(frozenset({"Ann"})) == (0, 1)


def test_the_conversation_asked_longest_ago_is_let_go_first():
    from ai_assistant.memory.audience import AudienceGroups

    groups = AudienceGroups()
    servings = [frozenset({f"player{n}"}) for n in range(AudienceGroups.REMEMBERED + 1)]
    for served in servings[:-1]:
        groups.open_to(served)
    groups.open_to(servings[0])  # asked again: now the newest
    groups.open_to(servings[-1])  # one too many
    assert servings[0] in groups._open and servings[-1] in groups._open
    assert servings[1] not in groups._open
