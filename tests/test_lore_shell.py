"""
Shared lore in the Evennia shell: `@assistant/lore` (list, show, search, add, edit, remove after
asking, import of text and JSON files: a bad file changes nothing), the book kept once for the
game on a global script, and an assistant's recall reaching the lore its name, room or tags
allow, where it stands when it recalls.

"""

import json
import tempfile
from pathlib import Path

from django.test import override_settings
from evennia.utils.test_resources import EvenniaCommandTest

from ai_assistant.lore_book import LORE_SCRIPT_KEY, game_lore, lore_script

from .helpers import AssistantTestCase

FOUNDING = "Millbrook was founded by the river smith Oda in the year of the long frost."


def commands():
    from ai_assistant import commands

    return commands


class TestLoreCommand(AssistantTestCase, EvenniaCommandTest):
    def setUp(self):
        super().setUp()
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)
        games = override_settings(GAME_DIR=self.folder.name)
        games.enable()
        self.addCleanup(games.disable)

    def cmd(self, args, inputs=None):
        return self.call(commands().CmdAssistant(), args, caller=self.char1, inputs=inputs)

    def write(self, name: str, text: str) -> str:
        (Path(self.folder.name) / name).write_text(text, encoding="utf-8")
        return name

    def test_add_list_show_search_and_edit(self):
        text = self.cmd(
            f"/lore add The founding of Millbrook;history, town;Aria, room:Hall={FOUNDING}"
        )
        assert "Added lore L1: The founding of Millbrook." in text
        entry = game_lore().get("L1")
        assert entry["tags"] == ["history", "town"] and entry["who"] == ["aria", "room:hall"]
        assert entry["by"] == "Char"
        listing = self.cmd("/lore")
        assert "The game's lore (1 entry)" in listing and "L1" in listing
        assert "aria, room:hall" in listing
        shown = self.cmd("/lore L1")
        assert "Lore L1: The founding of Millbrook" in shown and "river smith Oda" in shown
        assert "added" in shown and "by Char" in shown
        assert "L1" in self.cmd("/lore =who founded Millbrook")
        assert "No lore entry here" in self.cmd("/lore =dragons")
        assert "who changed" in self.cmd("/lore edit L1/who=everyone")
        assert game_lore().get("L1")["who"] == []
        # stored once for the game, on one global script
        assert lore_script(make=False).key == LORE_SCRIPT_KEY

    def test_bad_input_says_what_is_allowed_and_changes_nothing(self):
        self.cmd(f"/lore add The founding={FOUNDING}")
        version = game_lore().version
        assert "title is 1 to 120" in self.cmd("/lore add =text")
        assert "Usage: @assistant/lore add" in self.cmd("/lore add Title only")
        assert "cannot say who may know" in self.cmd("/lore add T;;castle:keep=x")
        assert "not a lore field" in self.cmd("/lore edit L1/colour=red")
        assert "no lore entry L7" in self.cmd("/lore edit L7/text=x")
        assert "Not changed" in self.cmd("/lore frobnicate L1")
        assert game_lore().version == version and len(game_lore()) == 1

    def test_remove_asks_first(self):
        self.cmd(f"/lore add The founding={FOUNDING}")
        text = self.cmd("/lore remove L1", inputs=["n"])
        assert "Lore L1: The founding" in text and "Removal cancelled" in text
        assert len(game_lore()) == 1
        text = self.cmd("/lore remove L1", inputs=["y"])
        assert "Removed lore L1: The founding." in text
        assert len(game_lore()) == 0
        (record,) = game_lore().removals()  # who removed what, kept (never the text)
        assert record["id"] == "L1" and record["by"] == self.char1.key and record["at"]
        assert FOUNDING not in str(record)
        assert "no lore entry L1" in self.cmd("/lore remove L1")

    def test_import_of_a_text_file(self):
        path = self.write(
            "lore.txt",
            "# the town\ntitle: The founding of Millbrook\ntags: history\nwho: room:Hall\n"
            f"{FOUNDING}\nIt was a cold year.\n---\ntitle: The bell\nThe bell rings at dusk.\n",
        )
        text = self.cmd(f"/lore import {path}")
        assert "Imported 2 lore entries (L1 to L2)" in text
        first, second = game_lore().entries()
        assert first["text"] == FOUNDING + "\nIt was a cold year."
        assert first["who"] == ["room:hall"] and second["who"] == [] and second["tags"] == []

    def test_import_of_a_json_file(self):
        entries = [
            {"title": "The bell", "text": "The bell rings at dusk.", "tags": ["town"]},
            {"title": "The mill", "text": "The mill grinds barley.", "who": ["tag:millers"]},
        ]
        path = self.write("lore.json", json.dumps({"entries": entries}))
        assert "Imported 2 lore entries" in self.cmd(f"/lore import {path}")
        assert [e["who"] for e in game_lore().entries()] == [[], ["tag:millers"]]

    def test_a_bad_file_changes_nothing(self):
        self.cmd(f"/lore add The founding={FOUNDING}")
        version = game_lore().version
        good = {"title": "Good", "text": "fine"}
        bad_json = self.write("bad.json", json.dumps([good, {"title": "Bad", "text": ""}]))
        assert "Entry 2: A lore text is 1 to" in self.cmd(f"/lore import {bad_json}")
        assert "not JSON" in self.cmd(f"/lore import {self.write('broken.json', '[{')}")
        bad_text = self.write("bad.txt", "title: Good\nfine\n---\ntags: x\nno title here\n")
        assert "Entry 2: A lore title is 1 to" in self.cmd(f"/lore import {bad_text}")
        assert "only from files in the game's folder" in self.cmd("/lore import ../../etc/x.txt")
        assert "a .txt or a .json file" in self.cmd(f"/lore import {self.write('x.py', 'x')}")
        assert "There is no file" in self.cmd("/lore import missing.txt")
        assert game_lore().version == version and len(game_lore()) == 1

    def test_recall_reaches_the_lore_its_room_allows_where_it_stands(self):
        self.cmd(f"/lore add The founding;history;room:{self.room1.dbref}={FOUNDING}")
        self.cmd("/lore add The guard roster;;tag:guards=The night watch starts at ten.")
        brain = self.handler.brain
        now = self.clock.now()
        found = brain.recall("who founded Millbrook", now=now, served=frozenset())
        assert [item.id for item in found if item.kind == "lore"] == ["lore:L1"]
        assert "You know that: The founding: " + FOUNDING in found[0].line()
        assert not [
            i for i in brain.recall("night watch", now=now, served=None) if i.kind == "lore"
        ]
        self.aria.tags.add("guards")
        assert [i.id for i in brain.recall("night watch", now=now, served=None)] == ["lore:L2"]
        # in another room, the room's lore is not hers to know
        self.aria.location = self.room2
        found = brain.recall("who founded Millbrook", now=now, served=frozenset())
        assert not [item for item in found if item.kind == "lore"]
        # the dashboard's read: what she may know where she stands
        assert [entry["id"] for entry in self.handler.lore.known()] == ["L2"]

    def test_a_game_without_lore_has_no_lore_script_and_its_recalls_make_none(self):
        assert lore_script(make=False) is None
        found = self.handler.brain.recall(
            "who founded Millbrook", now=self.clock.now(), served=None
        )
        assert not [item for item in found if item.kind == "lore"]
        assert self.handler.lore.known() == []  # a read (the dashboard's) makes none either
        assert "The game has no lore yet" in self.cmd("/lore")  # nor a builder's listing
        assert "The game has no lore yet" in self.cmd("/lore L1")
        assert lore_script(make=False) is None
        # the first lore written makes it, and recall finds the lore from then on
        self.cmd(f"/lore add The founding={FOUNDING}")
        assert lore_script(make=False).key == LORE_SCRIPT_KEY
        found = self.handler.brain.recall(
            "who founded Millbrook", now=self.clock.now(), served=None
        )
        assert [item.id for item in found if item.kind == "lore"] == ["lore:L1"]

    def test_a_server_start_builds_the_lore_index_before_any_turn_recalls(self):
        from unittest.mock import patch

        from ai_assistant import lore_book, scripts

        self.cmd(f"/lore add The founding={FOUNDING}")
        with (
            patch.object(scripts, "reactor") as fake,
            patch.object(scripts, "model_queue"),
            patch.object(scripts, "_warmed_up", False),
        ):
            fake.running = True
            self.script.at_server_start()
        fake.callLater.assert_any_call(0, lore_book.warm_lore)
        # a start: the process reads the book again, in the warm-up and not in the turn
        with patch.object(lore_book, "_book", None):
            lore_book.warm_lore()
            book = game_lore(make=False)
            assert book.builds == 1
            found = self.handler.brain.recall(
                "who founded Millbrook", now=self.clock.now(), served=None
            )
            assert [item.id for item in found if item.kind == "lore"] == ["lore:L1"]
            assert book.builds == 1
