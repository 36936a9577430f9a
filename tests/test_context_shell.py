"""Context features through Evennia: @assistant/core, the budget check on /set, status."""

import json

from evennia.utils.test_resources import EvenniaCommandTest

from ai_assistant.testing.server import text_reply, tool_call, tool_reply

from .helpers import AssistantTestCase


def commands():
    from ai_assistant import commands

    return commands


class TestCoreAndBudget(AssistantTestCase, EvenniaCommandTest):
    def cmd(self, args):
        return self.call(commands().CmdAssistant(), args)

    def test_core_switch(self):
        assert "core memory is empty (budget 2000 tokens)" in self.cmd("/core Aria")
        assert "core memory 'owner' set, pinned (" in self.cmd("/core Aria/owner=Mira owns the inn")
        listing = self.cmd("/core Aria")
        assert "owner" in listing and "Mira owns the inn" in listing and "/2000 tokens" in listing
        assert "public, pinned" in listing
        assert self.cmd("/core Aria/owner") == "owner: Mira owns the inn"
        # a builder's note is pinned: sleep's consolidation leaves it as it is
        assert self.handler.brain.core_memory.items()["owner"]["pinned"] is True
        assert "Removed 'owner'" in self.cmd("/core Aria/owner=")
        assert "No core memory 'owner' to remove" in self.cmd("/core Aria/owner=")
        assert "at most 1000 characters" in self.cmd("/core Aria/k=" + "x" * 1001)
        assert "at most 60 characters" in self.cmd("/core Aria/" + "k" * 61 + "=v")
        assert "No assistant called 'Bob'" in self.cmd("/core Bob")

    def test_core_budget_refusal_changes_nothing(self):
        self.cmd("/set Aria/memory_block_tokens=60")
        self.cmd("/core Aria/a=short")
        text = self.cmd("/core Aria/b=" + "long words " * 30)
        assert "Not changed" in text and "over its budget of 60" in text
        assert list(self.handler.brain.core_memory.items()) == ["a"]

    def test_core_memory_rides_in_requests(self):
        self.cmd("/core Aria/owner=Mira owns the inn")
        self.responder.add(tool_reply(tool_call("noop", {})))
        self.char1.execute_cmd("say Aria, hello")
        self.tick()
        sent = self.sent_messages(0)
        assert "- owner: Mira owns the inn" in sent[1]["content"]
        assert "core memory" in self.cmd("/status Aria")

    def test_budget_too_small_for_prompt_and_tools_is_refused(self):
        text = self.cmd("/set Aria/max_context_tokens=1500")
        assert "Not changed" in text and "cannot hold the system prompt" in text
        assert "max_context_tokens" not in self.script.db.config_overrides
        assert "set to 20000" in self.cmd("/set Aria/max_context_tokens=20000")

    def test_emergency_compaction_shows_in_status(self):
        self.script.db.config_overrides = {
            **self.overrides,
            "max_context_tokens": 3500,
            "compact_preserve_window": 4,
            "pre_compact_extraction_enabled": False,
        }
        history = self.handler.brain.history
        for i in range(10):
            history.extend(
                [
                    {"role": "user", "content": "chat " * 120},
                    {"role": "assistant", "content": "ok " * 20},
                ]
            )
        self.responder.add(text_reply(json.dumps({"summary": "They chatted for a long time."})))
        self.tick()
        status = self.cmd("/status Aria")
        assert "last compaction" in status and "(emergency): compacted, 16 messages" in status
        assert self.handler.brain.history.tokens() < 3500 * 0.8
        assert f"{self.handler.brain.context_tokens()} of 3500" in status
