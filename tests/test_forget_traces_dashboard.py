"""
Forgetting a person through the game's API (`ai_assistant.forget_person`): every assistant is
asked, the one that knew them only through another's gossip too, and no dashboard page of either
shows anything of theirs afterwards (issue 39).

"""

import json
import re
from datetime import datetime, timezone

from django.test import Client
from django.urls import reverse
from evennia.utils import create

from ai_assistant.assistants import forget_person
from ai_assistant.memory.working import WorkingMemory
from ai_assistant.memory.reminders import Reminders

from .helpers import AssistantTestCase

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
SECRETS = ("4471", "31-7-22", "tapestry", "locker combination", "guards must")
LOCKER = "My locker combination is 31-7-22 and the guards must never learn it, Aria."
PAGES = ("detail", "conversation", "memory", "context", "sleep")


class TestForgottenOnEveryPage(AssistantTestCase):
    def setUp(self):
        super().setUp()
        self.builder = Client()
        self.builder.force_login(self.account)
        self.mira = create.create_object(
            "ai_assistant.characters.AssistantCharacter",
            key="Mira",
            location=self.room1,
            home=self.room1,
        )

    def remember(self):
        """Aria heard char1's codes (in a whisper, his line, tool calls, a result, a reminder
        and working memory); Mira heard of him only through Aria's gossip, by name."""
        bob, key = self.char1.key, self.char1.dbref
        brain = self.handler.brain
        brain.journal.add(LOCKER, author="Aria", now=NOW, heard_from=bob, about=[key])
        brain.journal.add(
            "The vault code is 4471, behind the green tapestry.",
            author="Aria",
            now=NOW,
            heard_from=bob,
            audience=[key],
        )
        call = {"text": "I keep the locker combination is 31-7-22 in mind."}
        brain.history.extend(
            [
                {
                    "role": "user",
                    "content": f'<event type="say" from="{bob}" time="2026-01-01T12:00:00">'
                    f"{LOCKER}</event>",
                },
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "c0",
                            "type": "function",
                            "function": {"name": "say", "arguments": json.dumps(call)},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c0", "content": "You said it."},
                {
                    "role": "user",
                    "content": "You are talking with:\n- someone, last about: "
                    f"'{LOCKER[:80]}'\nReminders that came up: the vault code 4471\n"
                    '<event type="say" from="Alice" time="2026-01-01T12:01:00">Hello.</event>',
                },
                {"role": "assistant", "content": "Hello, Alice."},
            ]
        )
        WorkingMemory(brain.state).note([(key, bob, LOCKER, None)], NOW)
        Reminders(brain.state).add(
            "vault", "the vault code 4471 behind the green tapestry", now=NOW, by="Aria", limit=10
        )
        mira = self.mira.assistant.brain
        mira.journal.add(
            "The guards must never learn the locker combination 31-7-22.",
            author="Mira",
            now=NOW,
            importance=6,
            source_type="claim",
            heard_from="Aria",
            about=[key],
            gossip={
                "origin": {"name": bob, "key": key},
                "tellers": [{"name": "Aria", "key": self.aria.dbref}],
                "to": "Mira",
                "people": [key, self.aria.dbref],
            },
        )
        mira.gossip_log.add(
            {
                "at": "2026-01-01T12:00:00+00:00",
                "direction": "heard",
                "teller": "Aria",
                "to": "Mira",
                "text": "The guards must never learn the locker combination 31-7-22.",
                "chain": f"{bob} > Aria > Mira",
                "people": [key, self.aria.dbref],
            }
        )
        self.handler.forget_brain()
        self.mira.assistant.forget_brain()

    def pages(self, obj) -> str:
        shown = []
        for page in PAGES:
            response = self.builder.get(reverse(f"ai_assistant:{page}", args=[obj.id]))
            assert response.status_code == 200, page
            shown.append(response.content.decode())
        return "\n".join(shown)

    def traces(self, text: str) -> list[str]:
        found = [secret for secret in SECRETS if secret in text.lower()]
        if re.search(rf"\b{re.escape(self.char1.key)}\b", text):
            found.append(self.char1.key)
        if re.search(rf"{re.escape(self.char1.dbref)}(?!\w)", text):
            found.append(self.char1.dbref)
        return found

    def test_no_page_of_any_assistant_shows_anything_of_a_forgotten_person(self):
        self.remember()
        assert "31-7-22" in self.pages(self.aria) and "31-7-22" in self.pages(self.mira)
        done = forget_person(self.char1, by="the game")
        assert set(done) >= {"Aria", "Mira"}
        for obj in (self.aria, self.mira):
            # the builders' corrections list the forget itself, by his key (never his name)
            text = re.sub(r'<section id="reviews">.*?</section>', "", self.pages(obj), flags=re.S)
            assert self.traces(text) == [], obj.key
        # Alice's line stays (the model's answer in that turn went: his line was in its request)
        assert "Hello." in self.pages(self.aria)
