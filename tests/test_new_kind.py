"""
Issue 36's proof that a new kind of memory is one module and one line in the registry: the kind
in `new_kind_script.py` (places visited, and with whom) is known to no other module, and yet the
memory file exports, checks and imports it, a status counts it, forgetting a person removes their
share of it, and a builder's `admin.kind(name)` answers for it by name. The script runs in a
process of its own, so that its registry line comes before anything imports the registry, as a
line in `memory/kinds/__init__.py` does.

"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent / "new_kind_script.py"


@pytest.fixture(scope="module")
def found() -> dict:
    done = subprocess.run(
        [sys.executable, str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=SCRIPT.parent.parent,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


WELL = {"id": "p000000", "name": "the well", "visited_with": ["name:bob"]}
TAVERN = {"id": "p000001", "name": "the tavern", "visited_with": ["name:carol"]}


def test_the_memory_file_exports_and_imports_a_kind_no_other_module_names(found):
    assert found["exported"] == {"state": {}, "items": [WELL, TAVERN]}
    assert found["imported"] == [WELL, TAVERN]


def test_the_file_check_refuses_a_bad_record_of_it_naming_where_and_changes_nothing(found):
    assert "memory.places.items[1].name" in found["bad_refused"]
    assert "nothing was changed" in found["bad_refused"]
    assert found["bad_changed"] == 0


def test_a_status_counts_it(found):
    assert found["counts"]["places"] == 2 and found["counts"]["journal"] == 1


def test_forgetting_a_person_removes_their_share_of_it(found):
    assert found["after_forget"] == [TAVERN]
    assert "'places visited with them': 1" in found["report"]


def test_a_builder_names_it_and_a_kind_without_edits_is_refused_by_name(found):
    assert "'places' is not a kind builders edit here" in found["builder"]
    assert "reminders" in found["builder"]
