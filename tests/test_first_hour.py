"""The first hour in a fresh game (issue 30): help text that renders, one assistant per name
and a /delete that asks first, the settings overview by topic, a sleep's record as soon as it
begins, private entries marked in the listings, and the README's install lines."""

from datetime import datetime, timezone

from evennia.scripts.tickerhandler import TICKER_HANDLER
from evennia.typeclasses.attributes import Attribute
from evennia.utils.ansi import parse_ansi
from evennia.utils.test_resources import EvenniaCommandTest

from .helpers import AssistantTestCase

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def commands():
    # Evennia's default commands can be imported only once its API is initialised
    from ai_assistant import commands

    return commands


def rendered(text: str) -> str:
    """What a player's screen shows of `text`: Evennia's markup parsed, colours dropped."""
    return parse_ansi(text, strip_ansi=True)


class CommandCase(AssistantTestCase, EvenniaCommandTest):
    def cmd(self, args, inputs=None):
        return self.call(commands().CmdAssistant(), args, caller=self.char1, inputs=inputs)


class TestHelpRenders(CommandCase):
    def test_every_documented_value_survives_evennias_markup(self):
        help_text = rendered(commands().CmdAssistant.__doc__)
        assert "<low|medium|high|0-1>" in help_text
        assert "[light|deep]" in help_text
        assert "lowediumigh" not in help_text

    def test_usage_lines_render(self):
        text = self.cmd("/memory Aria/trust=m000001")
        assert "<low|medium|high|0-1>" in text
        text = self.cmd("/sleep Aria=soon")
        assert "[light|deep]" in text

    def test_allowed_values_of_a_choice_render(self):
        from ai_assistant.conf import describe_key

        for key, values in (
            ("plain_text_reply", ("say", "remind", "drop")),
            ("tool_choice", ("auto", "required", "omit")),
            ("room_speech_audience", ("public", "present")),
        ):
            shown_text = rendered(describe_key(key))
            assert all(value in shown_text for value in values), shown_text
        text = self.cmd("/set Aria/plain_text_reply=shout")
        assert "say, remind, drop" in text


class TestCreateAndDelete(CommandCase):
    def test_a_duplicate_name_is_refused(self):
        text = self.cmd("/create Aria=A second librarian.")
        assert "Not created" in text and f"Aria({self.aria.dbref})" in text
        assert "@assistant/delete" in text
        assert [obj for obj in self.room1.contents if obj.key == "Aria"] == [self.aria]
        # an alias counts as a name
        self.aria.aliases.add("Librarian")
        assert "Not created" in self.cmd("/create librarian")

    def test_delete_asks_first_and_a_no_keeps_everything(self):
        self.handler.brain.journal.add("Bob likes tea.", author="Aria", now=NOW)
        text = self.cmd("/delete Aria", inputs=["n"])
        assert "holds 1 journal entry" in text
        assert "Deletion cancelled" in text
        assert self.aria.pk and self.our_tickers()

    def test_delete_removes_the_character_script_ticker_and_memory(self):
        self.handler.brain.journal.add("Bob likes tea.", author="Aria", now=NOW)
        script = self.script
        ids = (self.aria.id, script.id)
        assert self.our_tickers()
        assert Attribute.objects.filter(objectdb__id=self.aria.id).exists()
        text = self.cmd("/delete Aria", inputs=["y"])
        assert f"Deleted assistant Aria (#{ids[0]})" in text and "1 journal entry," in text
        assert not self.our_tickers()
        assert not [
            key for key in TICKER_HANDLER.ticker_storage if key[4] == script.ticker_idstring
        ]
        from evennia.objects.models import ObjectDB
        from evennia.scripts.models import ScriptDB

        assert not ObjectDB.objects.filter(id=ids[0]).exists()
        assert not ScriptDB.objects.filter(id=ids[1]).exists()
        assert not Attribute.objects.filter(objectdb__id=ids[0]).exists()
        assert not Attribute.objects.filter(scriptdb__id=ids[1]).exists()
        assert "No assistant called 'Aria'" in self.cmd("/status Aria")
        # the name is free again
        assert "Created assistant Aria" in self.cmd("/create Aria")

    def test_delete_takes_no_arguments_and_is_for_builders(self):
        assert "Usage: @assistant/delete <name>" in self.cmd("/delete Aria=now")
        assert self.aria.pk
        assert "delete" in commands().CmdAssistant.switch_options
        assert commands().CmdAssistant.locks == "cmd:perm(Builder)"

    def test_delete_is_refused_while_a_model_call_is_in_flight(self):
        self.handler.in_flight = True
        text = self.cmd("/delete Aria", inputs=["y"])
        assert "Not deleted" in text and "waiting on the model" in text
        assert self.aria.pk and self.our_tickers()


def readme_block_after(marker: str, section: str = "## Installing into your game") -> str:
    """The first Python code block in the README's `section` whose first line names `marker`."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    start = readme.index(section)
    end = readme.find("\n## ", start + len(section))
    for block in re.findall(r"```python\n(.*?)```", readme[start:end], re.DOTALL):
        if marker in block.splitlines()[0]:
            return block
    raise AssertionError(f"no code block for {marker} in the README's install section")


def test_the_readme_dashboard_lines_work_in_a_fresh_games_urls_file():
    """The README's lines, added at the end of the `web/website/urls.py` that `evennia --init`
    makes, route the dashboard and keep Evennia's own pages (the old one-line `path(...)` with
    `include` raised NameError there: every page answered 500)."""
    from pathlib import Path

    import evennia
    from django.urls import URLResolver, get_resolver
    from django.urls.resolvers import RegexPattern

    template = Path(evennia.__file__).parent / "game_template" / "web" / "website" / "urls.py"
    source = template.read_text() + "\n" + readme_block_after("web/website/urls.py")
    namespace = {}
    exec(compile(source, str(template), "exec"), namespace)
    resolver = URLResolver(RegexPattern(r"^/"), namespace["urlpatterns"])
    assert resolver.resolve("/assistants/").func.__module__ == "ai_assistant.web.views"
    assert resolver.resolve("/assistants/12/").url_name == "detail"
    # Evennia's front page is still served, by the view the game's own urls give it
    front = get_resolver("evennia.web.website.urls").resolve("/")
    assert resolver.resolve("/").func.__name__ == front.func.__name__


def serve_ports(*args, **env):
    """Run `python -m world.serve_ports` (what `make serve` runs) under the demo's settings."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    environ = {
        key: value for key, value in os.environ.items() if not key.startswith("AI_ASSISTANT_DEMO_")
    }
    environ.update(
        DJANGO_SETTINGS_MODULE="server.conf.settings",
        PYTHONPATH=f"{root / 'contrib'}{os.pathsep}{root}",
        **env,
    )
    return subprocess.run(
        [sys.executable, "-m", "world.serve_ports", *args],
        cwd=root,
        env=environ,
        capture_output=True,
        text=True,
    )


def test_make_serve_prints_the_ports_the_settings_end_with():
    done = serve_ports()
    assert done.returncode == 0, done.stderr
    assert "localhost:4000" in done.stdout and "http://localhost:4001/assistants/" in done.stdout
    done = serve_ports(AI_ASSISTANT_DEMO_TELNET_PORT="5400", AI_ASSISTANT_DEMO_WEB_PORT="5401")
    assert done.returncode == 0, done.stderr
    assert "localhost:5400" in done.stdout and "http://localhost:5401/assistants/" in done.stdout
    assert "4000" not in done.stdout and "4001" not in done.stdout


def test_the_ports_follow_the_games_own_settings():
    from types import SimpleNamespace

    from world.serve_ports import connect_lines, player_ports

    game = SimpleNamespace(
        TELNET_PORTS=[4100, 4200],
        WEBSERVER_PORTS=[(8080, 8085)],
        WEBSOCKET_CLIENT_PORT=8082,
        AMP_PORT=8086,
    )
    text = "\n".join(connect_lines(player_ports(game)))
    assert "localhost:4100 or localhost:4200" in text and "http://localhost:8080/" in text
    game.WEBSERVER_ENABLED = False
    text = "\n".join(connect_lines(player_ports(game)))
    assert "8080" not in text and "localhost:4100" in text


def test_bad_or_clashing_ports_stop_the_start_with_the_reason():
    done = serve_ports("--check", AI_ASSISTANT_DEMO_WEB_PORT="4005")
    assert done.returncode == 2
    assert "port 4005 is both the web and the web (internal) port" in done.stdout
    done = serve_ports("--check", AI_ASSISTANT_DEMO_TELNET_PORT="telnet")
    assert done.returncode == 2 and "port number from 1 to 65535, not 'telnet'" in done.stderr
    assert serve_ports("--check", AI_ASSISTANT_DEMO_TELNET_PORT="5400").returncode == 0


def test_the_makefile_serve_target_prints_no_fixed_port():
    from pathlib import Path

    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    serve = makefile.split("\nserve:", 1)[1].split("\n\n", 1)[0]
    assert "4000" not in serve and "4001" not in serve
    assert "world.serve_ports" in serve and "$(SERVE_ENV) $(EVENNIA_CLI) start" in serve


def test_a_start_without_an_admin_account_says_what_to_set(tmp_path):
    """A database with no superuser (a first start, or one made before any admin existed)
    makes Evennia's launcher ask on a terminal `make serve` does not have: it is caught first."""
    import sqlite3

    from world.first_start import needs_superuser

    path = tmp_path / "game.db3"
    database = {"ENGINE": "django.db.backends.sqlite3", "NAME": str(path)}
    assert needs_superuser(database)  # no database yet
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE accounts_accountdb (id INTEGER, is_superuser BOOL)")
        db.execute("INSERT INTO accounts_accountdb VALUES (1, 0)")
    assert needs_superuser(database)  # a database with players but no admin
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO accounts_accountdb VALUES (2, 1)")
    assert not needs_superuser(database)
    assert not needs_superuser({"ENGINE": "django.db.backends.postgresql", "NAME": "game"})
    from pathlib import Path

    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    serve = makefile.split("\nserve:", 1)[1].split("\n\n", 1)[0]
    assert "world.first_start" in serve.split("migrate")[0]  # checked before anything starts


class TestSettingsOverview(CommandCase):
    def overview(self) -> str:
        from unittest.mock import patch

        # all of it at once: EvMore would page it for a caller with a session
        with patch.object(commands().CmdAssistant, "more", lambda cmd, text: cmd.msg(text)):
            return self.cmd("/set Aria")

    def test_grouped_by_topic_with_every_key_and_its_full_allowed_values(self):
        from ai_assistant.conf import ESSENTIAL_KEYS, config_groups, config_keys

        self.cmd("/set Aria/tick_rate=7")
        text = self.overview()
        lines = text.splitlines()
        assert max(len(line) for line in lines) <= 80
        topics = [topic for topic, _ in config_groups()]
        assert {"ticking", "the model", "sleep", "recall", "dreaming"} <= set(topics)
        # each topic heads its own keys, in the order conf.py declares them
        positions = [lines.index(topic) for topic in topics]
        assert positions == sorted(positions)
        # the settings most builders change come first, before the topics
        assert lines.index("most changed") < min(positions)
        for topic, keys in [("most changed", ESSENTIAL_KEYS), *config_groups()]:
            keys = [k for k in keys if k not in ESSENTIAL_KEYS or topic == "most changed"]
            start = lines.index(topic)
            after = lines[start + 1 : start + 1 + len(keys) * 3]
            assert all(any(f"{key} = " in line for line in after) for key in keys), topic
        assert text.count(" tick_rate = ") + text.count("*tick_rate = ") == 1  # listed once
        for key in config_keys():
            assert f" {key} = " in text or f"*{key} = " in text
        assert " *tick_rate = 7" in text and "  tick_rate_sleep = 60" in text
        # wrapped, never cut: the longest choice list is whole once the lines are joined
        joined = " ".join(" ".join(text.split()).split())
        assert "one of auto, json_schema, json_object, text" in joined
        # only a long value is cropped (its key shows it whole), never what is allowed
        assert all(" = " in line for line in lines if "[...]" in line)
        # one line a key, plus a heading a topic and the title, persona and footer lines
        assert len(lines) <= len(config_keys()) + len(topics) + 12

    def test_one_key_in_full(self):
        self.cmd("/set Aria/tick_rate=7")
        text = self.cmd("/set Aria/tick_rate")
        assert "tick_rate = 7" in text and "from: this assistant's own value" in text
        assert "default: 5" in text and "allowed: integer, 1 to 3600" in text
        assert "meaning: Seconds between awake ticks." in text
        text = self.cmd("/set Aria/structured_output")
        assert "one of auto, json_schema, json_object, text" in text and "from: the default" in text

    def test_a_game_default_is_named_as_the_source(self):
        from django.test import override_settings

        with override_settings(AI_ASSISTANT_DEFAULTS={"tick_rate_sleep": 90}):
            text = self.cmd("/set Aria/tick_rate_sleep")
        assert "tick_rate_sleep = 90" in text and "AI_ASSISTANT_DEFAULTS" in text
        assert "default: 90" in text

    def test_an_unknown_key_names_it_and_suggests_close_ones(self):
        from ai_assistant.conf import config_keys

        for args in ("/set Aria/tick_rat", "/set Aria/tick_rat=4"):
            text = self.cmd(args)
            assert "Unknown key 'tick_rat'" in text and "tick_rate" in text
            # not every key on one line
            assert sum(key in text for key in config_keys()) <= 3
        text = self.cmd("/set Aria/zzzz=1")
        assert "Unknown key 'zzzz'" in text and "Did you mean" not in text
        assert "@assistant/set <name> lists every key" in text
        assert self.handler.overrides().get("tick_rate") is None


class TestPrivateEntriesMarked(CommandCase):
    def test_journal_and_memory_listings_say_whose_a_private_entry_is(self):
        brain = self.handler.brain
        brain.journal.add(
            "The vault code is 4-1-7.",
            author="Aria",
            now=NOW,
            heard_from="Char",
            audience=[self.char1.dbref],
        )
        brain.journal.add("The library opens at nine.", author="Aria", now=NOW)
        brain.long_term.add(
            "Char's vault code is 4-1-7.",
            importance=5,
            now=NOW,
            source_entry_ids=[],
            provenance={"heard_from": "Char"},
            audience=[self.char1.dbref],
        )
        brain.long_term.add(
            "Only builders know this.",
            importance=5,
            now=NOW,
            source_entry_ids=[],
            provenance={},
            audience=[],
        )
        journal = self.cmd("/journal Aria")
        assert journal.count("private to Char") == 1
        assert self.char1.dbref not in journal
        memory = self.cmd("/memory Aria")
        assert memory.count("private to Char") == 1 and "builders only" in memory
        assert self.char1.dbref not in memory

    def test_a_person_known_by_name_only_is_named(self):
        self.handler.brain.journal.add(
            "Mira's brother writes.", author="Aria", now=NOW, audience=["name:mira"]
        )
        assert "private to mira" in self.cmd("/journal Aria")


def column_text(table: str, column: int) -> str:
    """The words of one column of an EvTable, its wrapped lines joined."""
    cells = [line.split("|")[column + 1] for line in table.splitlines() if line.startswith("|")]
    return " ".join(" ".join(cells).split())


class TestSleepRecordAtOnce(CommandCase):
    overrides = {**CommandCase.overrides, "min_activity_before_sleep": 0}

    def test_sleeps_shows_the_sleep_under_way_and_what_it_has_done(self):
        from django.test import override_settings

        journal = self.handler.brain.journal
        for text in ("Bob said the east door sticks.", "Mira likes riddles about keys."):
            journal.add(text, author="Aria", now=self.clock.now(), heard_from="Bob")
        assert "has not slept yet" in self.cmd("/sleeps Aria")
        assert "is asleep (light, 1 h)" in self.cmd("/sleep Aria=1")
        text = column_text(self.cmd("/sleeps Aria"), 4)
        assert "ASLEEP NOW" in text and "done so far: nothing yet" in text
        assert "has not slept yet" not in text
        # its work, answered by the offline rehearsal model, takes a few sleep ticks
        with override_settings(AI_ASSISTANT_REHEARSAL=True):
            for _ in range(30):
                self.tick(60)
                if "links" in (self.script.db.dreaming_progress or {}).get("done", []):
                    break
        assert self.script.db.operating_mode == "sleep"
        text = column_text(self.cmd("/sleeps Aria"), 4)
        assert "ASLEEP NOW" in text and "done so far: compacting" in text
        assert "2 consolidated" in text
        assert "can be rolled back" not in text
        # when it wakes, the same record is closed and kept
        self.cmd("/wake Aria")
        text = column_text(self.cmd("/sleeps Aria"), 4)
        assert "ASLEEP NOW" not in text and "2 consolidated" in text
        assert self.handler.memory.admin.sleeps(5, current=True)[0]["id"] == "s1"


def test_status_does_not_say_none_beside_a_count_of_calls():
    from ai_assistant.display import AssistantDisplay

    line = AssistantDisplay().format_model_calls(None)
    assert "none made since the server started" not in line
    assert "server's queue" in line and "all time" in line
