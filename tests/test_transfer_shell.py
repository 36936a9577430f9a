"""
`@assistant/export` and `@assistant/import` in a real (test) Evennia world: a round trip with its
confirmation, the file kept private and free of secrets, refusals that change nothing, and a
file from another game re-keyed so that whoever has the whisperer's dbref here learns nothing.

"""

import json
import os
import stat
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings
from evennia.server.models import ServerConfig
from evennia.utils import create
from evennia.utils.dbserialize import deserialize
from evennia.utils.test_resources import EvenniaCommandTest

from ai_assistant.shell.transfer_files import GAME_ID_KEY

from .helpers import AssistantTestCase

WHISPER = "the vault code is hidden under the loose brick"


def commands():
    from ai_assistant import commands

    return commands


def memory_attributes(obj) -> dict:
    """The assistant's memory as stored (its `ai_assistant` Attributes holding a value),
    embeddings aside."""
    return {
        attr.db_key: deserialize(attr.value)
        for attr in obj.db_attributes.filter(db_category="ai_assistant").order_by("db_key")
        if attr.value is not None and not attr.db_key.startswith("journal_vectors")
    }


class TestTransferCommand(AssistantTestCase, EvenniaCommandTest):
    def setUp(self):
        super().setUp()
        self.char1.permissions.add("Builder")
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)
        games = override_settings(GAME_DIR=self.folder.name)
        games.enable()
        self.addCleanup(games.disable)
        self.exports = Path(self.folder.name) / "server" / "assistant_memory"
        brain = self.handler.brain
        now = self.clock.now()
        brain.journal.add(
            "Carol says the east door sticks in the rain.",
            author="Aria",
            now=now,
            heard_from="Carol",
        )
        brain.journal.add(
            f"{self.char1.key} whispers that {WHISPER}.",
            author="Aria",
            now=now + timedelta(minutes=1),
            heard_from=self.char1.key,
            audience=[self.char1.dbref],
            source_type="claim",
            importance=8,
        )
        brain.entities.observe(
            self.char1.dbref,
            self.char1.key,
            "fears the dark",
            now=now,
            author="Aria",
            audience=[self.char1.dbref],
        )
        brain.core_memory.set("motto", "books first", now, 500, pinned=True)
        self.mira = create.create_object(
            "ai_assistant.characters.AssistantCharacter",
            key="Mira",
            location=self.room1,
            home=self.room1,
        )
        self.mira.assistant.clock = self.clock
        self.mira.assistant.runner = self.handler.runner

    def cmd(self, args, inputs=None):
        return self.call(commands().CmdAssistant(), args, caller=self.char1, inputs=inputs)

    def whisper_seen_by(self, obj, served) -> bool:
        found = obj.assistant.brain.recall(
            "vault code brick", now=self.clock.now() + timedelta(hours=1), served=served
        )
        return any("vault" in item.text for item in found)

    def test_export_then_import_with_confirmation(self):
        text = self.cmd("/export Aria=aria.json")
        assert (
            "Exported Aria's memory to server/assistant_memory/aria.json: 2 journal entries" in text
        )
        assert "1 person's profile, 1 core note" in text
        file = self.exports / "aria.json"
        # private words: readable by the server's user alone, and no secret in it
        assert stat.S_IMODE(os.stat(file).st_mode) == 0o600
        raw = file.read_text(encoding="utf-8")
        assert "sk-test-secret" not in raw and self.server.base_url not in raw
        data = json.loads(raw)
        assert data["assistant"]["persona"] == "A cheerful librarian."
        assert data["assistant"]["settings"] == self.overrides

        before = memory_attributes(self.mira)
        text = self.cmd("/import Mira=aria.json", inputs=["n"])
        assert "aria.json holds the memory of Aria" in text and "2 journal entries" in text
        # what it sets besides memory is said before the question
        given = ", ".join(sorted(self.overrides))
        assert f"Its own settings become the file's ({given})." in text
        assert "It takes the file's persona too." in text
        assert "Import cancelled; Mira is unchanged." in text
        assert memory_attributes(self.mira) == before

        text = self.cmd("/import Mira=aria.json", inputs=["y"])
        assert "Imported into Mira: 2 journal entries, 1 person's profile, 1 core note" in text
        assert memory_attributes(self.mira) == memory_attributes(self.aria)
        assert self.mira.db.persona == "A cheerful librarian."
        # the whisper is still the whisperer's alone
        assert self.whisper_seen_by(self.mira, frozenset({self.char1.dbref}))
        assert not self.whisper_seen_by(self.mira, frozenset({self.char2.dbref}))
        assert [item.id for item in self.mira.assistant.memory.admin.search("east door")] == [
            item.id for item in self.handler.memory.admin.search("east door")
        ]

    def test_import_over_memory_needs_replace_and_a_bad_file_changes_nothing(self):
        self.cmd("/export Aria=aria.json")
        before = memory_attributes(self.aria)
        text = self.cmd("/import Aria=aria.json", inputs=["y"])
        assert "Not changed." in text and "Use /replace" in text
        assert memory_attributes(self.aria) == before

        bad = json.loads((self.exports / "aria.json").read_text())
        bad["memory"]["journal"]["items"][0]["audience"] = "everyone"
        (Path(self.folder.name) / "bad.json").write_text(json.dumps(bad))
        text = self.cmd("/import/replace Aria=bad.json", inputs=["y"])
        assert "memory.journal.items[0].audience" in text and "nothing was changed" in text
        assert memory_attributes(self.aria) == before

        bad = json.loads((self.exports / "aria.json").read_text())
        bad["assistant"]["settings"] = {"tick_rate": "often"}
        (Path(self.folder.name) / "settings.json").write_text(json.dumps(bad))
        text = self.cmd("/import/replace Aria=settings.json", inputs=["y"])
        assert "assistant.settings:" in text and "tick_rate" in text
        assert memory_attributes(self.aria) == before
        assert self.handler.overrides() == self.overrides

        self.handler.sleep(hours=2)
        text = self.cmd("/import/replace Aria=aria.json", inputs=["y"])
        assert "Not changed." in text and "is asleep" in text
        self.handler.wake("test")
        assert self.handler.memory.admin.snapshots()  # the sleep's

        text = self.cmd("/import/replace Aria=aria.json", inputs=["y"])
        assert "It replaces all Aria remembers now: 2 journal entries" in text
        assert "Imported into Aria" in text
        assert memory_attributes(self.aria) == before
        # a rollback cannot reach behind an import
        assert self.handler.memory.admin.snapshots() == []
        assert not [key for key in self.script.attributes.all() if "memory_snapshot:" in key.key]

    def test_a_memory_file_nested_too_deep_is_refused_before_it_is_parsed(self):
        before = memory_attributes(self.aria)
        deep = '{"format": ' + "[" * 100_000 + "]" * 100_000 + "}"
        (Path(self.folder.name) / "deep.json").write_text(deep)
        text = self.cmd("/import/replace Aria=deep.json", inputs=["y"])
        assert "nested deeper than" in text and "Traceback" not in text
        assert memory_attributes(self.aria) == before

    def test_files_outside_the_game_folder_are_refused(self):
        outside = tempfile.TemporaryDirectory()
        self.addCleanup(outside.cleanup)
        target = Path(outside.name) / "aria.json"
        text = self.cmd(f"/export Aria={target}")
        assert "only in the game's folder" in text and not target.exists()
        text = self.cmd("/export Aria=../../../aria.json")
        assert "only in the game's folder" in text
        # inside the game, but out of the folder version control ignores: refused too
        text = self.cmd("/export Aria=../aria.json")
        assert "only in the game's server/assistant_memory folder" in text
        assert not (Path(self.folder.name) / "server" / "aria.json").exists()
        self.cmd("/export Aria=aria.json")
        target.write_text((self.exports / "aria.json").read_text())
        before = memory_attributes(self.mira)
        text = self.cmd(f"/import Mira={target}", inputs=["y"])
        assert "Not changed." in text and "only in the game's folder" in text
        assert memory_attributes(self.mira) == before
        # an export never writes over a file
        text = self.cmd("/export Aria=aria.json")
        assert "already exists" in text

    def test_an_export_never_goes_where_the_website_serves_it_to_everyone(self):
        for folder in ("static", "media", "more"):
            (self.exports / folder).mkdir(parents=True)
        # a game whose settings serve a folder under the memory folder: still refused
        served = override_settings(
            STATICFILES_DIRS=[str(self.exports / "more")],
            STATIC_ROOT=str(self.exports / "static"),
            MEDIA_ROOT=str(self.exports / "media"),
        )
        served.enable()
        self.addCleanup(served.disable)
        for path, setting in (
            ("more/aria.json", "STATICFILES_DIRS"),
            ("static/aria.json", "STATIC_ROOT"),
            ("media/aria.json", "MEDIA_ROOT"),
        ):
            text = self.cmd(f"/export Aria={path}")
            assert "serves to everyone" in text and setting in text, path
            assert not (self.exports / path).exists()
        assert "Exported" in self.cmd("/export Aria=aria.json")

    def test_a_file_from_another_game_keeps_the_whisper_from_whoever_has_the_dbref_here(self):
        self.cmd("/export Aria=aria.json")
        # this is now another game: the dbrefs of the file are other characters here
        ServerConfig.objects.conf(GAME_ID_KEY, "another-game")
        text = self.cmd("/import Mira=aria.json", inputs=["y"])
        assert "made in another game" in text and "Imported into Mira" in text
        assert not self.whisper_seen_by(self.mira, frozenset({self.char1.dbref}))
        name_key = f"name:{self.char1.key.lower()}"
        assert self.mira.assistant.memory.admin.kind("profiles").profile(name_key) is not None
        stored = json.dumps(memory_attributes(self.mira))
        assert f'"{self.char1.dbref}"' not in stored
        # a builder still sees it
        assert self.whisper_seen_by(self.mira, None)


class TestExportFolder(AssistantTestCase):
    """An export lands in a folder version control ignores, not as a new file of the game's
    repository."""

    def test_an_export_goes_into_a_folder_git_ignores(self):
        import shutil
        import subprocess

        if not shutil.which("git"):
            pytest.skip("git is not installed")
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        game = Path(folder.name)
        subprocess.run(["git", "init", "-q", str(game)], check=True)
        with override_settings(GAME_DIR=str(game)):
            self.handler.brain.journal.add("Bob likes tea.", author="Aria", now=self.clock.now())
            written, _ = self.handler.memory.export_to("aria.json")
        assert Path(written) == game / "server" / "assistant_memory" / "aria.json"
        untracked = subprocess.run(
            ["git", "-C", str(game), "status", "--porcelain", "--untracked-files=all"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert untracked == "", untracked
        assert stat.S_IMODE(os.stat(written).st_mode) == 0o600
