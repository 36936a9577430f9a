"""
Scenes in a real (test) Evennia world: two assistants talk to each other while a player
listens (`ai_assistant.shell.scenes`). A scene starts only with a player there to hear it (none
with no one: zero model calls), keeps its caps (lines, the gap and the hour of each assistant,
the game's hour, the budgets), gives the floor to a player who speaks up, and carries nothing
private into its prompts.

"""

from datetime import timedelta

from django.test import override_settings
from evennia.utils import create

from ai_assistant.driver import inline
from ai_assistant.memory.provenance import CLAIM
from ai_assistant.prompt import SCENE_ANSWER
from ai_assistant.shell import game_settings
from ai_assistant.shell.scenes import SCENES
from ai_assistant.state import WAIT_UNTIL
from ai_assistant.testing.server import tool_call, tool_reply

from .helpers import AssistantTestCase

SCENES_ON = {"scenes_enabled": True, "scene_chance": 1.0}
OPENING = "Bram, have you heard that the old well ran dry?"
ANSWER = "Aria, I have: the miller says it was the drought."
CLOSING = "Bram, then we shall need the river."


def says(text: str):
    return tool_reply(tool_call("say", {"text": text}), tool_call("noop", {}))


def quiet():
    return tool_reply(tool_call("noop", {}))


class SceneCase(AssistantTestCase):
    """Aria and Bram, two assistants with scenes on, in room1; char1 is a player there (a
    connected session plays it), char2 a character no one plays."""

    overrides = {**AssistantTestCase.overrides, **SCENES_ON}

    def setUp(self):
        super().setUp()
        SCENES.__init__()  # one for the server: start each test with no scene and no count
        self.bram = create.create_object(
            "ai_assistant.characters.AssistantCharacter",
            key="Bram",
            location=self.room1,
            home=self.room1,
        )
        self.bram.db.persona = "A gruff blacksmith."
        self.bram.assistant.script.db.config_overrides = dict(self.overrides)
        self.bram.assistant.clock = self.clock
        self.bram.assistant.runner = inline
        assert self.char1.sessions.count() and not self.char2.sessions.count()

    def tick_bram(self, advance: float = 5):
        self.clock.advance(advance)
        self.bram.assistant.script.at_assistant_tick()

    def ticks(self, count: int) -> None:
        for _ in range(count):
            self.tick()
            self.tick_bram(0)

    def requests_with(self, text: str) -> list[int]:
        """Which requests carried `text` anywhere in their messages."""
        return [
            index
            for index, request in enumerate(self.responder.requests)
            if any(text in str(message.get("content")) for message in request["messages"])
        ]

    def spend(self, brain) -> None:
        now = self.clock.now()
        brain.budget().add(5, now, brain.game_now(now))
        assert brain.budget_spent(now)

    def last_user_message(self, index: int = -1) -> str:
        return [m for m in self.sent_messages(index) if m["role"] == "user"][-1]["content"]


class TestScenes(SceneCase):
    def test_a_scene_opens_while_a_player_listens_and_ends_at_its_cap(self):
        for handler in (self.handler, self.bram.assistant):
            handler.set_option("scene_max_lines", "3")
        self.responder.add(says(OPENING), says(ANSWER), says(CLOSING))
        self.tick()  # Aria, idle, opens: one turn, prompted by the game's notice
        assert len(self.responder.requests) == 1
        opening = self.last_user_message()
        assert "open a short exchange with Bram" in opening and SCENE_ANSWER not in opening
        heard = self.received(self.char1)
        assert f'Aria says, "{OPENING}"' in heard  # the room hears it as any speech
        self.tick_bram(0)  # Bram heard it as a line of the scene: his turn answers it
        assert len(self.responder.requests) == 2
        answering = self.last_user_message()
        assert OPENING in answering and SCENE_ANSWER in answering
        self.tick()  # Aria hears Bram's answer the same way
        assert len(self.responder.requests) == 3 and ANSWER in self.last_user_message()
        assert f'Aria says, "{CLOSING}"' in self.received(self.char1)
        # the third line is the cap: Bram does not hear it as the scene's, and nothing loops
        self.ticks(20)
        assert len(self.responder.requests) == 3
        assert self.bram.assistant.status().pending_events == 0

    def test_no_scene_starts_with_no_player_to_hear_it(self):
        # char2 is present, but no one plays it; char1, the player, is elsewhere
        self.char1.location = self.room2
        self.ticks(50)
        assert self.responder.requests == []
        assert SCENES.rooms == {} and SCENES.opened == 0
        # nor when the assistants are alone
        self.char2.location = self.room2
        self.ticks(50)
        assert self.responder.requests == []
        # a player comes in: now one may start
        self.char1.location = self.room1
        self.responder.add(quiet())
        self.tick()
        assert len(self.responder.requests) == 1

    def test_a_scene_ends_when_no_player_is_left_to_hear_it(self):
        self.responder.add(says(OPENING), says(ANSWER))
        self.tick()
        self.char1.location = self.room2  # the player leaves after the opening line
        self.tick_bram(0)  # Bram heard it while the player was there: he answers
        assert len(self.responder.requests) == 2
        self.ticks(20)  # no one hears Bram's answer now: Aria does not take it up
        assert len(self.responder.requests) == 2
        assert SCENES.rooms == {}

    def test_a_partner_who_sleeps_or_waits_is_no_partner(self):
        # (Aria's ticks alone: she is the one who would open a scene)
        self.bram.assistant.sleep(hours=1)
        for _ in range(20):
            self.tick()
        self.bram.assistant.wake()
        self.bram.assistant.wait(30, reason="a builder asked")  # a scene's line would not end it
        for _ in range(20):
            self.tick()
        assert self.responder.requests == []
        self.bram.assistant.brain.state.delete(WAIT_UNTIL)  # the wait is over
        self.responder.add(quiet())
        self.tick()  # the same room, Bram free again: a scene opens
        assert len(self.responder.requests) == 1

    def test_scenes_are_off_unless_both_turn_them_on(self):
        self.bram.assistant.set_option("scenes_enabled", "false")
        self.ticks(30)
        assert self.responder.requests == []
        self.handler.set_option("scenes_enabled", "false")
        self.bram.assistant.set_option("scenes_enabled", "default")
        self.ticks(30)
        assert self.responder.requests == []

    def test_each_assistants_gap_and_hourly_cap_hold(self):
        self.handler.set_option("scene_gap_minutes", "10")
        for handler in (self.handler, self.bram.assistant):
            handler.set_option("scenes_per_hour", "2")
        self.responder.add(quiet())
        self.tick()  # a first scene, which Aria lets pass (noop): it still counts
        assert len(self.responder.requests) == 1
        self.ticks(100)  # 500 s: within Aria's gap, and the scene idles out
        assert len(self.responder.requests) == 1
        self.clock.advance(timedelta(minutes=11).total_seconds())
        self.responder.add(quiet())
        self.tick()  # past the gap (and Bram's 15 minutes): the second
        assert len(self.responder.requests) == 2
        self.clock.advance(timedelta(minutes=20).total_seconds())
        self.ticks(10)  # past the gap again, but two scenes this hour is the cap
        assert len(self.responder.requests) == 2
        self.clock.advance(timedelta(minutes=30).total_seconds())
        self.responder.add(quiet())
        self.tick()  # the first left the last hour
        assert len(self.responder.requests) == 3

    def test_the_games_hourly_cap_holds_across_rooms(self):
        with override_settings(AI_ASSISTANT_SCENES_PER_HOUR=0):
            self.ticks(20)
        assert self.responder.requests == []
        with override_settings(AI_ASSISTANT_SCENES_PER_HOUR=1):
            self.responder.add(quiet())
            self.tick()
            assert len(self.responder.requests) == 1
            # two more assistants and a player in another room: the game's one scene is spent
            cara = self._assistant("Cara", self.room2)
            dov = self._assistant("Dov", self.room2)
            self.char1.location = self.room2
            for _ in range(10):
                self.clock.advance(5)
                cara.assistant.script.at_assistant_tick()
                dov.assistant.script.at_assistant_tick()
            assert len(self.responder.requests) == 1

    def test_a_spent_budget_means_no_scene(self):
        self.start_at_the_top_of_an_hour()  # the budgets are an hour's: the ticks stay in it
        self.bram.assistant.set_option("token_budget_per_hour", "1")
        self.spend(self.bram.assistant.brain)
        self.ticks(30)  # Bram's budget is spent: he cannot be Aria's partner
        assert self.responder.requests == []
        self.handler.set_option("token_budget_per_hour", "1")
        self.bram.assistant.set_option("token_budget_per_hour", "default")
        self.spend(self.handler.brain)
        self.tick()  # nor may Aria, whose own budget is spent, open one
        assert all("open a short exchange with Bram" not in str(r) for r in self.responder.requests)

    def test_a_player_who_speaks_up_is_answered_first_and_the_scene_gives_way(self):
        self.responder.add(says(OPENING))
        self.tick()
        assert self.bram.assistant.hearing.heard  # Aria's line waits for Bram's tick
        self.char1.at_say("Bram, where is the smithy?")
        self.responder.add(says("Char, it is just east of here."))
        self.tick_bram(0)
        assert len(self.responder.requests) == 2
        answering = self.last_user_message()
        # the player's line is the one answered; Aria's is there as what the room heard
        assert "where is the smithy" in answering and OPENING in answering
        assert SCENE_ANSWER not in answering
        assert SCENES.rooms == {}
        # the scene is over: Aria does not hear Bram, and no one answers anyone again
        self.ticks(20)
        assert len(self.responder.requests) == 2

    def _assistant(self, key, room):
        other = create.create_object(
            "ai_assistant.characters.AssistantCharacter", key=key, location=room, home=room
        )
        other.assistant.script.db.config_overrides = dict(self.overrides)
        other.assistant.clock = self.clock
        other.assistant.runner = inline
        return other


class TestScenePrivacy(SceneCase):
    def test_a_scenes_prompts_carry_nothing_said_in_private(self):
        brain = self.handler.brain
        secret = "My vault code is 7-3-1, and Bram must never know it."
        brain.journal.add(
            secret,
            author="Aria",
            now=self.clock.now(),
            source_type=CLAIM,
            heard_from=self.char1.key,
            voice=f"#{self.char1.id}",
            audience=[f"#{self.char1.id}"],
        )
        brain.journal.add(
            "Bram mended the library roof last winter.",
            author="Aria",
            now=self.clock.now(),
            location=self.room1.key,
        )
        # and a whisper answered in private, in Aria's history
        self.responder.add(
            tool_reply(tool_call("whisper", {"target": "Char", "text": "Your secret is safe."}))
        )
        self.responder.add(quiet())
        self.handler.hearing.hear("whisper", self.char1, "The vault code is 7-3-1.")
        self.tick()
        private_requests = len(self.responder.requests)
        assert self.requests_with("7-3-1")  # the private turn saw it, as it should
        self.responder.add(says(OPENING), says(ANSWER))
        self.tick()  # the scene opens in the room: Char1, Char2 and Bram may hear it
        self.tick_bram(0)
        scene_requests = self.responder.requests[private_requests:]
        for request in scene_requests:
            sent = str(request["messages"])
            assert "7-3-1" not in sent and "vault" not in sent and "secret is safe" not in sent
        opening = "\n".join(str(m.get("content")) for m in scene_requests[0]["messages"])
        # what the room may know is recalled (the roof), nothing whispered is there
        assert "open a short exchange with Bram" in opening
        assert "mended the library roof" in opening
        assert len(scene_requests) == 2 and OPENING in str(scene_requests[1]["messages"])


def test_the_games_scene_cap_names_what_is_allowed():
    with override_settings(AI_ASSISTANT_SCENES_PER_HOUR="many"):
        try:
            game_settings.scenes_per_hour()
        except ValueError as err:
            assert "AI_ASSISTANT_SCENES_PER_HOUR" in str(err) and "0 or more" in str(err)
        else:
            raise AssertionError("a bad setting was taken")
    with override_settings(AI_ASSISTANT_SCENES_PER_HOUR=3):
        assert game_settings.scenes_per_hour() == 3


def test_the_scenes_bench_runs_and_meets_its_target():
    """`python -m bench.scenes --quick`: the measured calls per hour of scenes (cannot rot)."""
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
        [sys.executable, "-m", "bench.scenes", "--quick"],
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert "with no player: 0 calls, 0 tokens, 0 scenes" in out
    assert "1 scene, 6 lines said" in out and out.rstrip().endswith("PASS")
