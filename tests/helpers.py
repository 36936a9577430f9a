"""
A test base for assistants in a real (test) Evennia world, with their model calls going through
the real `openai` SDK over HTTP to a scripted server on 127.0.0.1.

"""

import json
from contextlib import contextmanager
from unittest.mock import MagicMock, patch

from django.test import override_settings
from evennia.scripts.tickerhandler import TICKER_HANDLER
from evennia.utils import create
from evennia.utils.ansi import strip_ansi
from evennia.utils.test_resources import EvenniaTest

from ai_assistant.clock import ManualClock
from ai_assistant.shell.hearing import PLAYER_TOKENS, PLAYER_TURNS
from ai_assistant.testing.server import LocalModelServer, ScriptedResponder
from ai_assistant.driver import inline


class AssistantTestCase(EvenniaTest):
    """`self.aria` is an assistant in room1 with char1 and char2, `self.handler` its handler;
    `self.responder` scripts its model."""

    overrides = {"max_retries": 0, "request_timeout": 2.0}

    def setUp(self):
        super().setUp()
        TICKER_HANDLER.clear()  # the handler is module-global: start each test clean
        PLAYER_TURNS.__init__()  # so is the count of each player's turns a minute
        PLAYER_TOKENS.__init__()  # and the tokens each player's turns spent (ids come again)
        self.responder = ScriptedResponder()
        self.server = LocalModelServer(self.responder).start()
        self.addCleanup(self.server.stop)
        # runs before the server stops (cleanups run last-in first-out): the model was used as scripted
        self.addCleanup(self.responder.verify)
        settings_override = override_settings(
            AI_ASSISTANT_BASE_URL=self.server.base_url, AI_ASSISTANT_API_KEY="sk-test-secret"
        )
        settings_override.enable()
        self.addCleanup(settings_override.disable)
        self.aria = create.create_object(
            "ai_assistant.characters.AssistantCharacter",
            key="Aria",
            location=self.room1,
            home=self.room1,
        )
        self.aria.db.persona = "A cheerful librarian."
        self.handler = self.aria.assistant
        self.script = self.handler.script
        self.script.db.config_overrides = dict(self.overrides)
        self.clock = ManualClock()
        self.handler.clock = self.clock
        self.handler.runner = inline
        self.char1.msg = MagicMock()
        self.char2.msg = MagicMock()
        self.account.msg = MagicMock()

    def start_at_the_top_of_an_hour(self) -> None:
        """Budgets count by the real clock's hour, and this clock starts at the real time: a
        test whose minutes straddle two hours would find its spending gone (one did when CI
        ran at 03:56). Starting at the top of an hour gives a test the whole hour."""
        now = self.clock.now()
        self.clock.advance(3600 - now.minute * 60 - now.second - now.microsecond / 1e6)

    def as_player(self) -> None:
        """Make char1 and its account a plain player: Evennia's test case makes them
        Developers, and a builder's lines are not held back by the limits on players."""
        for holder in (self.char1, self.account):
            holder.permissions.remove("Developer")

    def our_tickers(self) -> list[tuple]:
        """The ticker subscriptions of this assistant's script (store keys)."""
        idstring = self.script.ticker_idstring
        return [key for key in TICKER_HANDLER.ticker_storage if key[4] == idstring]

    def tick(self, advance: float = 5):
        self.clock.advance(advance)
        self.script.at_assistant_tick()

    def received(self, character) -> list[str]:
        """Texts a (mocked) character was sent."""
        texts = []
        for call in character.msg.call_args_list:
            text = call.kwargs.get("text", call.args[0] if call.args else None)
            if isinstance(text, (tuple, list)):
                text = text[0]
            texts.append(strip_ansi(str(text)))
        return texts

    def sent_messages(self, request_index: int = -1) -> list[dict]:
        return self.responder.requests[request_index]["messages"]

    @staticmethod
    def tool_results(messages: list[dict]) -> list[str]:
        return [m["content"] for m in messages if m.get("role") == "tool"]

    @staticmethod
    def args(**kwargs) -> str:
        return json.dumps(kwargs)


@contextmanager
def reads_of(owner, method: str, keep=lambda obj, arg: True):
    """Record the argument of every call of `owner.method` (say, which chunks or profiles a
    page reads) while the block runs; the calls still happen.

    Args:
        owner (type): The class whose method to watch.
        method (str): The method's name; it takes one argument besides `self`.
        keep (callable, optional): `keep(obj, arg)`: record only the calls it accepts.

    Yields:
        list: The arguments recorded, in order.

    """
    read = []
    original = getattr(owner, method)

    def recorded(obj, arg):
        if keep(obj, arg):
            read.append(arg)
        return original(obj, arg)

    with patch.object(owner, method, recorded):
        yield read


class SleepTestCase(AssistantTestCase):
    overrides = {**AssistantTestCase.overrides, "min_activity_before_sleep": 0}

    def journal(self, *texts):
        journal = self.handler.brain.journal
        for text in texts:
            journal.add(text, author="Aria", now=self.clock.now())

    def builder_sleep(self, hours=4, depth="light"):
        self.handler.brain.lifecycle.go_to_sleep(
            self.clock.now(),
            hours=hours,
            depth=depth,
            reason="test",
            initiated_by="builder",
            enforce_safeguards=False,
        )

    def mode(self):
        return self.script.db.operating_mode
