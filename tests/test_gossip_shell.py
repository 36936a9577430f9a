"""
Gossip in a real (test) Evennia world: one assistant tells another aloud, the players present
hear it, the other records it with its chain without a model call, two assistants alone never
start turns because of each other's gossip, and builders see who told whom what.

"""

from evennia.utils import create
from evennia.utils.test_resources import EvenniaCommandTest

from ai_assistant.driver import inline
from ai_assistant.memory.provenance import CLAIM
from ai_assistant.testing.server import tool_call, tool_reply

from .helpers import AssistantTestCase

DOOR = "The east door sticks when it rains."


class GossipCase(AssistantTestCase, EvenniaCommandTest):
    overrides = {**AssistantTestCase.overrides, "gossip_enabled": True}

    def setUp(self):
        super().setUp()
        self.mira = create.create_object(
            "ai_assistant.characters.AssistantCharacter",
            key="Mira",
            location=self.room1,
            home=self.room1,
        )
        self.mira.db.persona = "A gossiping innkeeper."
        self.mira.assistant.script.db.config_overrides = dict(self.overrides)
        self.mira.assistant.clock = self.clock
        self.mira.assistant.runner = inline
        brain = self.mira.assistant.brain
        brain.journal.add(
            DOOR,
            author="Mira",
            now=self.clock.now(),
            source_type=CLAIM,
            heard_from=self.char1.key,
            voice=f"#{self.char1.id}",
            location=self.room1.key,
        )

    def tick_mira(self, advance: float = 5):
        self.clock.advance(advance)
        self.mira.assistant.script.at_assistant_tick()

    def cmd(self, args):
        from ai_assistant import commands

        return self.call(commands.CmdAssistant(), args)

    def tell_aria(self):
        self.responder.add(
            tool_reply(
                tool_call(
                    "tell",
                    {"to": "Aria", "memory_id": "j000000", "text": "Aria, the east door sticks."},
                ),
                tool_call("noop", {}),
            )
        )
        self.mira.assistant.hearing.hear("say", self.char1, "Mira, what do you know?")
        self.tick_mira()


class TestGossip(GossipCase):
    def test_a_telling_is_heard_by_players_and_recorded_by_the_other_without_a_call(self):
        self.tell_aria()
        line = 'Mira says to Aria, "Aria, the east door sticks."'
        assert line in self.received(self.char1) and line in self.received(self.char2)
        assert len(self.responder.requests) == 1  # Mira's one call; Aria made none
        entry = self.handler.brain.journal.get("j000000")
        assert (entry["content"], entry["heard_from"]) == (DOOR, "Mira")
        assert entry["gossip"]["origin"]["name"] == self.char1.key
        assert f"#{self.char1.id}" in entry["gossip"]["people"]
        (found,) = self.handler.brain.recall("east door", now=self.clock.now(), served=None)
        assert found.line().startswith(f"- [Mira told you that {self.char1.key} said;")
        # the door gives builders who told whom what
        (heard,) = self.handler.memory.admin.kind("gossip_log").records()
        assert heard["chain"] == f"{self.char1.key} > Mira > Aria"
        assert self.handler.memory.admin.kind("gossip_log").records(person=f"#{self.char1.id}") == [
            heard
        ]

    def test_a_whisper_is_never_told_and_nothing_is_said_aloud(self):
        self.mira.assistant.brain.journal.add(
            "My vault code is 7-3-1.",
            author="Mira",
            now=self.clock.now(),
            source_type=CLAIM,
            heard_from=self.char1.key,
            audience=[f"#{self.char1.id}"],
        )
        # the model asks for the whispered memory by its id, though it was never shown it
        self.responder.add(
            tool_reply(
                tool_call("tell", {"to": "Aria", "memory_id": "j000001", "text": "The code!"})
            ),
            tool_reply(tool_call("noop", {})),
        )
        self.mira.assistant.hearing.hear("say", self.char1, "Mira, what do you know?")
        self.tick_mira()
        result = self.sent_messages()[-1]["content"]
        assert "private" in result and "Nothing was said" in result
        assert not any("code" in text for text in self.received(self.char2))
        assert len(self.handler.brain.journal) == 0
        assert self.mira.assistant.memory.admin.kind("gossip_log").records() == []

    def test_two_assistants_alone_start_no_turns_after_a_telling(self):
        # even when they are set to hear each other
        for handler in (self.handler, self.mira.assistant):
            handler.set_option("respond_to_assistants", "true")
        self.char1.location = self.char2.location = self.room2
        self.tell_aria()
        assert len(self.handler.brain.journal) == 1
        for _ in range(6):
            self.tick()
            self.tick_mira()
        assert len(self.responder.requests) == 1
        assert self.handler.status().pending_events == 0

    def test_builders_see_the_gossip_log(self):
        assert "has told and heard no gossip yet" in self.cmd("/memory Aria/gossip")
        self.tell_aria()
        shown = self.cmd("/memory Aria/gossip")
        assert "Aria's gossip, newest first" in shown and "heard" in shown
        assert "Mira >" in shown and "j000000" in shown
        told = self.cmd("/memory Mira/gossip")
        assert "told" in told and "j000000" in told
        assert "no gossip" in self.cmd("/memory Aria/gossip=Nobody")


def test_the_gossip_bench_runs_and_meets_its_target():
    """`python -m bench.gossip --quick`: the measured model calls per meeting (cannot rot)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_SETTINGS", "OPENAI_", "AI_ASSISTANT_"))
    }
    done = subprocess.run(
        [sys.executable, "-m", "bench.gossip", "--quick"],
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert "teller 2, receiver 0; alone 20 ticks: 0" in out and out.rstrip().endswith("PASS")
