"""
The walls of issue 36: memory written by version 1 of the code stays readable, with no
migration. `tests/fixtures/` keeps the stores of an assistant holding every kind of memory, as
that code wrote them, and the memory file it exported (`tests/memory_fixture.py` made both);
the code of the day must write the same keys and values, read the stores back into the same
records, and import the file with the same records, audiences and recall.

"""

import json
from datetime import timedelta

import pytest

from ai_assistant.memory.kinds import BY_NAME
from ai_assistant.memory.store import DictStore
from ai_assistant.memory_api import AssistantMemory

from .core_fakes import T0
from .memory_fixture import (
    AUDIENCES,
    EXPORTED_AT,
    GAME,
    MEMORY_FILE,
    QUERIES,
    STORE_FILE,
    exported,
    plain,
    remembering,
    stores,
)


@pytest.fixture(scope="module")
def kept() -> dict:
    return json.loads(STORE_FILE.read_text())


@pytest.fixture(scope="module")
def kept_file() -> dict:
    return json.loads(MEMORY_FILE.read_text())


def loaded(kept: dict) -> AssistantMemory:
    """A fresh assistant over the stores version 1 wrote (as a game's Attributes hold them)."""
    store = DictStore()
    store.data.update(kept["memory"])
    memory = AssistantMemory("Aria", store=store)
    memory.brain.state.data.update(kept["state"])
    return memory


def recalled(memory: AssistantMemory) -> dict:
    at = T0 + timedelta(hours=3)
    return {
        (query, str(audience)): [
            (item.id, item.text, round(item.score, 6))
            for item in memory.recall(query, k=8, at=at, audience=audience)
        ]
        for query in QUERIES
        for audience in AUDIENCES
    }


# token counts measure the prompts of the day (their wording changes with the code), not the
# layout of what is stored: they are compared by their keys, not their numbers
TOKEN_COUNTS = {
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "day_tokens",
    "hour_tokens",
    "prompt",
    "completion",
    "cached",
    "tokens",
}


# what the code of the day writes otherwise on purpose, by (store, key): a fact's talk (the
# words of the lines around its entry) passes over a whisper said between two public lines
# since 2026-11-29, where version 1 stopped at it
CHANGED_ON_PURPOSE = {
    ("memory", "ltm:000000"): {
        "m000000": {"talk": "Carol says the harbour fish market opens at dawn."},
        "m000001": {
            "talk": "Carol says the east door sticks in the rain. Bob lent you his lantern for "
            "the night walk."
        },
    }
}


def as_written_today(store: str, key: str, value):
    """What version 1 wrote under `key`, with the changes made on purpose since."""
    changes = CHANGED_ON_PURPOSE.get((store, key))
    if not changes:
        return value
    records = json.loads(value)
    for record in records:
        record["provenance"].update(changes.get(record["id"], {}))
    return json.dumps(records)


# fields later versions add to a record (old records, without them, still read): a sleep's
# record keeps its real start and end beside its game times (issue 40's one clock)
ADDED_FIELDS = {"real_start", "real_end"}


def layout(value):
    """`value` with its token counts zeroed and the fields added since version 1 left out
    (everything else as it is)."""
    if isinstance(value, dict):
        return {
            key: 0 if key in TOKEN_COUNTS and isinstance(item, int) else layout(item)
            for key, item in value.items()
            if key not in ADDED_FIELDS
        }
    if isinstance(value, list):
        return [layout(item) for item in value]
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.dumps(layout(json.loads(value)))
        except ValueError:
            return value
    return value


def test_every_key_and_value_is_written_as_version_1_wrote_it(kept):
    written = stores(remembering())
    # the fixture's model is the offline rehearsal model, whose calls cost nothing since the
    # budgets count what costs (issue 40): no spend is recorded for them
    free = {"token_spend"}
    for store in ("memory", "state"):
        assert sorted(written[store]) == sorted(set(kept[store]) - free), store
        for key, value in kept[store].items():
            if key in free:
                continue
            # byte for byte: the order of a dict's keys too (an index lists people in order)
            assert json.dumps(layout(written[store][key])) == json.dumps(
                layout(as_written_today(store, key, value))
            ), f"{store} {key}"


def test_the_kept_stores_hold_every_kind_of_memory(kept, kept_file):
    # the fixture itself must keep covering every kind, or the walls guard nothing
    for kind, value in kept_file["memory"].items():
        items = value["items"] if isinstance(value, dict) and "items" in value else value
        assert items, f"the fixture holds no {kind}"
    assert any(key.startswith("memory_snapshot:") for key in kept["state"])
    journal = kept_file["memory"]["journal"]["items"]
    assert any(entry["audience"] for entry in journal)  # a private entry among them


def since_version_1(data: dict) -> dict:
    """A file without the sections of kinds added since version 1 wrote the fixtures, once
    checked empty: version 1's stores hold nothing of theirs (an older file without them still
    imports)."""
    kept_kinds = json.loads(MEMORY_FILE.read_text())["memory"]
    added = {name: data["memory"][name] for name in data["memory"] if name not in kept_kinds}
    assert all(BY_NAME[name].count(section) == 0 for name, section in added.items()), added
    return {**data, "memory": {k: v for k, v in data["memory"].items() if k in kept_kinds}}


def test_stores_written_by_version_1_read_back_as_the_same_records(kept, kept_file):
    memory = loaded(kept)
    data = plain(
        {
            **memory.admin.export_data(dict(kept_file["assistant"]), GAME, [], []),
            "exported_at": EXPORTED_AT,
        }
    )
    assert since_version_1(data) == kept_file
    assert recalled(memory) == recalled(remembering())


def test_a_file_exported_by_version_1_imports_with_the_same_records_audiences_and_recall(
    kept, kept_file
):
    memory = AssistantMemory("Aria")
    plan = memory.admin.import_plan(json.dumps(kept_file), GAME["id"], False)
    memory.admin.import_memory(plan, [])
    brain = memory.brain
    imported = plain(brain.memory_store.inner.data)
    # the same records under the same keys; embeddings are left out of a file, and none were
    assert imported == kept["memory"]
    for key in ("triggers", "sleep_history:meta", "sleep_history:000000"):
        assert plain(brain.state.data[key]) == kept["state"][key]
    whisper = next(e for e in brain.journal.all() if e["audience"])
    assert whisper["audience"] == ["#12"]
    assert recalled(memory) == recalled(loaded(kept))
    # and it exports as the same file
    assert since_version_1(exported(memory)) == kept_file


def test_the_record_tables_in_the_docs_are_made_from_the_records():
    from pathlib import Path

    from ai_assistant.records import markdown_tables

    doc = (Path(__file__).resolve().parent.parent / "docs" / "memory.md").read_text()
    assert markdown_tables() in doc, "regenerate with: python -m ai_assistant.records"
