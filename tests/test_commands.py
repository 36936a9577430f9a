"""The @assistant builder command: every switch, bad input, and the Builder lock."""

from evennia.objects.objects import DefaultCharacter
from evennia.utils import create
from evennia.utils.test_resources import EvenniaCommandTest

from ai_assistant.testing.server import tool_call, tool_reply

from .helpers import AssistantTestCase


def commands():
    # Evennia's default commands can only be imported once its API is initialised (in the
    # session fixture), which is after this module is collected
    from ai_assistant import commands

    return commands


class TestAssistantCommand(AssistantTestCase, EvenniaCommandTest):
    def cmd(self, args, expected=None, **kwargs):
        return self.call(commands().CmdAssistant(), args, expected, **kwargs)

    def test_lock_requires_builder(self):
        command = commands().CmdAssistant()
        # an unpuppeted character's own permissions apply (a puppet uses its account's)
        visitor = create.create_object(DefaultCharacter, key="Visitor", location=self.room1)
        assert not command.access(visitor, "cmd")
        visitor.permissions.add("Builder")
        assert command.access(visitor, "cmd")

    def test_usage_without_switch_lists_assistants(self):
        text = self.cmd("")
        assert "Aria" in text and self.aria.dbref in text
        assert "Usage: @assistant/<switch>" in text and "list, create, status, set" in text

    def test_unknown_switch_is_refused(self):
        text = self.cmd("/explode Aria")
        assert "explode" in text.lower()

    def test_create_prints_dbref(self):
        text = self.cmd("/create Bob=A grumpy guard.", "Created assistant Bob (#")
        bob = [obj for obj in self.room1.contents if obj.key == "Bob"][0]
        assert bob.is_ai_assistant and bob.db.persona == "A grumpy guard."
        assert bob.dbref in text
        assert bob.assistant.script is not None

    def test_two_assistants_of_one_name(self):
        self.cmd("/create Bob=A grumpy guard.")
        text = self.cmd("/create Bob=Another guard.")
        assert "Not created" in text and "already exists" in text
        assert len([obj for obj in self.room1.contents if obj.key == "Bob"]) == 1
        # made another way (code, a builder's `create`): commands by name say to use dbrefs
        from ai_assistant.assistants import create_assistant

        create_assistant("Bob", self.room1, "Another guard.")
        bobs = [obj for obj in self.room1.contents if obj.key == "Bob"]
        assert len(bobs) == 2
        text = self.cmd("/status Bob")
        assert "Several assistants are called 'Bob'" in text
        assert all(bob.dbref in text for bob in bobs)
        assert "Aria" not in text and self.aria.dbref not in text
        assert f"Assistant Bob ({bobs[1].dbref})" in self.cmd(f"/status {bobs[1].dbref}")

    def test_create_bad_input(self):
        assert "name of 1-40 characters" in self.cmd("/create")
        assert "name of 1-40 characters" in self.cmd("/create 9lives")
        assert "name of 1-40 characters" in self.cmd("/create " + "x" * 41)
        assert "at most 2000" in self.cmd("/create Bob=" + "p" * 2001)
        assert not [obj for obj in self.room1.contents if obj.key == "Bob"]

    def test_unknown_assistant(self):
        text = self.cmd("/status Nobody")
        assert "No assistant called 'Nobody'" in text and "Aria(" in text
        assert "Name an assistant" in self.cmd("/status")

    def test_list(self):
        assert "Aria" in self.cmd("/list")

    def test_status(self):
        self.char1.execute_cmd("say Aria, hello")
        text = self.cmd("/status Aria")
        for label in (
            "mode",
            "awake",
            "tick rate",
            "5 s",
            "pending events",
            "1 (0 dropped)",
            "last tick",
            "activity since wake",
            "context tokens",
            "of 100000",
            "journal entries",
            "model usage",
            "model problems",
        ):
            assert label in text, label

    def test_reading_a_status_or_the_list_changes_nothing(self):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        def attributes():
            # every Attribute of the script and of the character: its row and its value
            return {
                (obj.id, attr.db_key, attr.db_category): (attr.id, attr.value)
                for obj in (self.script, self.aria)
                for attr in obj.attributes.all()
            }

        def writes(queries):
            return [
                q["sql"]
                for q in queries
                if q["sql"].lstrip().split(" ", 1)[0].upper() in ("INSERT", "UPDATE", "DELETE")
            ]

        self.handler.brain  # built, as after any tick
        self.char1.execute_cmd("say Aria, hello")  # heard, not yet queued
        before = attributes()
        with CaptureQueriesContext(connection) as status_queries:
            text = self.cmd("/status Aria")
        assert "1 (0 dropped)" in text  # the line heard is counted, not written
        assert writes(status_queries) == [] and attributes() == before
        assert len(self.handler.hearing) == 1  # still waiting for the tick
        self.handler.forget_brain()
        with CaptureQueriesContext(connection) as list_queries:
            text = self.cmd("")
        assert "Aria" in text and writes(list_queries) == [] and attributes() == before
        assert self.handler._brain is None  # listing built no brain

    def test_status_by_dbref(self):
        assert "Assistant Aria" in self.cmd(f"/status {self.aria.dbref}")

    def test_set_valid_and_listed_in_status(self):
        self.cmd("/set Aria/max_react_iterations=3", "Aria: max_react_iterations set to 3.")
        assert self.script.db.config_overrides["max_react_iterations"] == 3
        assert "max_react_iterations=3" in self.cmd("/status Aria")
        self.cmd(
            "/set Aria/max_react_iterations=default",
            "Aria: max_react_iterations set to its default.",
        )
        assert "max_react_iterations" not in self.script.db.config_overrides

    def test_set_bad_input_changes_nothing(self):
        before = dict(self.script.db.config_overrides)
        assert "Unknown key 'speed'" in self.cmd("/set Aria/speed=3")
        text = self.cmd("/set Aria/tick_rate=0")
        assert "Not changed" in text and "tick_rate" in text and ">= 1" in text
        assert "Not changed" in self.cmd("/set Aria/temperature=hot")
        assert "Usage: @assistant/set" in self.cmd("/set Aria=3")
        assert "Usage: @assistant/set" in self.cmd("/set")
        assert dict(self.script.db.config_overrides) == before
        (key,) = self.our_tickers()
        assert key[3] == 5

    def test_set_without_value_shows_current_value_and_what_is_allowed(self):
        shown = self.cmd("/set Aria/tick_rate")
        assert "tick_rate = 5" in shown and "allowed: integer, 1 to 3600" in shown
        self.cmd("/set Aria/tick_rate=7")
        listing = self.cmd("/set Aria")  # the first page
        assert "allow_color_markup" in listing and "False" in listing and "persona" in listing
        assert ("tick_rate_sleep", 60) in [row[:2] for row in self.handler.options()]
        assert ("tick_rate", 7) in [row[:2] for row in self.handler.options()]
        assert max(len(line) for line in listing.splitlines()) <= 80

    def test_set_persona(self):
        self.cmd("/set Aria/persona=A stern archivist.", "Aria's persona is now")
        assert self.aria.db.persona == "A stern archivist."
        assert "at most" not in self.cmd("/set Aria/persona=ok")
        assert "1-2000 characters" in self.cmd("/set Aria/persona=" + "x" * 2001)
        assert self.aria.db.persona == "ok"

    def test_journal(self):
        assert "journal is empty" in self.cmd("/journal Aria")
        journal = self.handler.brain.journal
        journal.add(
            "Char likes riddles",
            author="Aria",
            now=self.clock.now(),
            source_type="heard",
            heard_from="Char",
        )
        text = self.cmd("/journal Aria")
        assert "Char likes riddles" in text and "heard (Char)" in text and "j000000" in text

    def test_instruct(self):
        self.cmd("/instruct Aria=Greet newcomers warmly.", "Aria received your instruction")
        self.handler.hearing.flush()
        (event,) = self.handler.brain.events.peek()
        assert event.type == "instruction" and event.classification == "direct_message"
        assert "Usage: @assistant/instruct" in self.cmd("/instruct Aria")
        assert "at most 2000" in self.cmd("/instruct Aria=" + "x" * 2001)
        self.handler.hearing.flush()
        assert len(self.handler.brain.events) == 1

    def test_tick(self):
        assert "nothing needed the model (0 events pending)" in self.cmd("/tick Aria")
        self.responder.add(
            tool_reply(tool_call("say", {"text": "Hi!"})), tool_reply(tool_call("noop", {}))
        )
        self.char2.execute_cmd("say Aria?")
        text = self.cmd("/tick Aria")
        assert "2 model calls, tools: say, noop, ended by noop" in text

    def test_without_a_model_status_says_what_to_do_and_clear_starts_afresh(self):
        from unittest.mock import patch

        from django.test import override_settings

        no_model = override_settings(AI_ASSISTANT_BASE_URL=None, AI_ASSISTANT_API_KEY=None)
        sdk_env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OPENAI")}
        with no_model, patch.dict("os.environ", sdk_env, clear=True):
            self.char1.execute_cmd("say Aria, are you there?")
            self.tick()
            text = self.cmd("/status Aria")
            assert "last model error" in text and "not_configured" in text
            assert "what to do" in text and "set AI_ASSISTANT_API_KEY" in text
            assert "backing off until" in text
            # a tick while backing off says so, not that nothing needed the model
            text = self.cmd("/tick Aria")
            assert "is backing off after model errors until" in text and "1 events wait" in text
            self.cmd("/clear Aria", "Aria: error counts and back-off cleared.")
            turns = self.handler.overview.recent_turns()  # kept on record, their errors cleared
            assert turns and all(turn["error"] is None for turn in turns)
            text = self.cmd("/status Aria")
            assert "last model error" not in text and "backing off" not in text
            assert "tick errors" not in text or "tick errors: 0" in text
        # the model is back: the next tick asks it at once, the event still queued
        self.responder.add(
            tool_reply(tool_call("say", {"text": "I am here."})), tool_reply(tool_call("noop"))
        )
        text = self.cmd("/tick Aria")
        assert "2 model calls, tools: say, noop" in text

    def test_resting_entries_are_shown_and_clear_lets_them_be_tried_again(self):
        from ai_assistant.sleep.consolidating import MAX_ENTRY_FAILURES

        journal = self.handler.brain.journal
        journal.add("a line the model cannot file", author="Aria", now=self.clock.now())
        journal.count_failure(
            journal.unconsolidated(), "invalid_response: Invalid JSON", MAX_ENTRY_FAILURES
        )
        assert not journal.rested_count()  # one failure: not yet resting
        for _ in range(MAX_ENTRY_FAILURES - 1):
            journal.count_failure(journal.all(), "invalid_response: Invalid JSON", 3)
        text = self.cmd("/status Aria")
        assert "1 resting: the model failed on them" in text and "/clear" in text
        self.cmd(
            "/clear Aria",
            "Aria: error counts and back-off cleared; 1 journal entry that rested will be "
            "consolidated at the next sleep.",
        )
        assert "resting" not in self.cmd("/status Aria")
        assert [entry["id"] for entry in self.handler.brain.journal.unconsolidated()] == ["j000000"]

    def test_status_says_when_tokens_are_counted_as_the_server_counts_them(self):
        from ai_assistant.state import TOKEN_SCALE

        brain = self.handler.brain
        assert "counted as the server counts" not in self.cmd("/status Aria")
        brain.state.set(TOKEN_SCALE, {"model": brain.model, "ratio": 1.25, "samples": 3})
        if brain.counter.native:  # the test settings' model is not OpenAI's
            raise AssertionError(f"{brain.model} is counted natively")
        assert "counted as the server counts (x1.25)" in self.cmd("/status Aria")

    def test_create_uses_the_games_own_typeclass(self):
        from django.test import override_settings

        with override_settings(AI_ASSISTANT_TYPECLASS="typeclasses.characters.Assistant"):
            self.cmd("/create Quill=A scribe.", "Created assistant Quill (#")
        quill = [obj for obj in self.room1.contents if obj.key == "Quill"][0]
        assert quill.typeclass_path == "typeclasses.characters.Assistant"
        assert quill.is_ai_assistant and quill.assistant.script is not None

    def test_trigger_lists_sets_and_removes_reminders(self):
        assert "Aria has no reminders." in self.cmd("/trigger Aria")
        self.cmd(
            "/trigger Aria=Mira: give her the letter from her brother",
            "Aria: reminder t1 set: when Mira comes up (at most 3 times).",
        )
        self.cmd("/trigger Aria/5=east door: it sticks when it rains", "Aria: reminder t2 set")
        reminders = self.handler.memory.admin.kind("reminders").all()
        assert [(r["pattern"], r["max_fires"], r["audience"]) for r in reminders] == [
            ("Mira", 3, None),
            ("east door", 5, None),
        ]
        text = self.cmd("/trigger Aria")
        assert "t1" in text and "Mira" in text and "0/3" in text and "give her the" in text
        assert max(len(line) for line in text.splitlines()) <= 80
        self.cmd("/trigger Aria/remove=t1", "Removed reminder t1 (Mira).")
        assert [r["id"] for r in self.handler.memory.admin.kind("reminders").all()] == ["t2"]

    def test_trigger_bad_input_changes_nothing(self):
        self.cmd("/trigger Aria=Mira: give her the letter")
        before = self.handler.memory.admin.kind("reminders").all()
        for args, expected in (
            ("/trigger Aria=no colon here", "Separate the pattern and the reminder with ':'"),
            ("/trigger Aria/many=Mira: x", "Max fires must be a whole number from 1 to 20"),
            ("/trigger Aria/50=Mira: x", "max_fires must be from 1 to 20"),
            ("/trigger Aria=: x", "The pattern must be"),
            ("/trigger Aria=Mira: ", "The reminder must be"),
            ("/trigger Aria/remove=t9", "No reminder 't9' (there are: t1)"),
            ("/trigger Aria/remove", "Not changed."),
        ):
            assert expected in self.cmd(args), args
        assert self.handler.memory.admin.kind("reminders").all() == before

    def test_pause_and_resume(self):
        self.cmd("/pause Aria", "Aria is paused")
        assert self.script.db.paused
        assert "is paused" in self.cmd("/tick Aria")
        self.cmd("/resume Aria", "Aria resumed.")
        assert not self.script.db.paused

    def test_page_without_message(self):
        # page answers its caller's account (it runs with account_caller)
        text = self.call(
            commands().CmdPageAssistant(), "Aria", caller=self.char1, receiver=self.account
        )
        assert "What do you want to page" in text


def test_progress_bar():
    from ai_assistant.shell.status_display import progress_bar

    assert progress_bar(5, 10, width=10) == "[#####-----] 5/10"
    # a sleep with nothing to consolidate says so, instead of a full bar for 0/0
    assert progress_bar(0, 0, width=4) == "nothing to consolidate"
