"""The dashboard against what players and a hostile model can store: every list is paged, every
stored string clipped, every missing thing a 404 (for the superuser too), every response framed
by nobody and never sniffed."""

import re
from datetime import datetime, timezone

from django.test import Client, override_settings
from django.urls import reverse

from .helpers import AssistantTestCase, reads_of

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
HUGE = 100_000


def shown(text: str, pattern: str) -> list[str]:
    """The numbers matched by `pattern` (one group) in a page, in order."""
    return [match for match in re.findall(pattern, text)]


class DashboardCase(AssistantTestCase):
    def setUp(self):
        super().setUp()
        self.url = reverse("ai_assistant:detail", args=[self.aria.id])
        self.action_url = reverse("ai_assistant:action", args=[self.aria.id])
        self.list_url = reverse("ai_assistant:list")
        self.builder = Client()
        self.builder.force_login(self.account)  # a Developer: above Builder, not staff

    @property
    def person_url(self) -> str:
        # looked up when used: the tests that need no person's page do not depend on it
        return reverse("ai_assistant:person", args=[self.aria.id])

    def superuser(self) -> Client:
        """A client logged in as a superuser, staff as `evennia createsuperuser` makes one."""
        self.account.is_superuser = True
        self.account.is_staff = True
        self.account.save()
        client = Client()
        client.force_login(self.account)
        return client

    def observe(self, key: str, name: str, count: int, **kwargs):
        entities = self.handler.brain.entities
        for number in range(count):
            entities.observe(
                key, name, f"Observation {number:03d} of {name}.", now=NOW, author="Aria", **kwargs
            )


@override_settings(AI_ASSISTANT_DASHBOARD_PAGE_SIZE=10)
class TestPaging(DashboardCase):
    def test_people_are_paged_and_only_the_pages_profiles_are_read(self):
        from ai_assistant.memory.entities import EntityMemory

        # the probe: 84 profiles flooded by players
        for number in range(84):
            self.observe(f"#{1000 + number}", f"Flooder{number:02d}", 1)
        with reads_of(EntityMemory, "profile") as read:
            text = self.builder.get(self.url).content.decode()
        assert text.count('<div class="person">') == 10
        assert shown(text, r"<h3>Flooder(\d\d) ") == [f"{n:02d}" for n in range(10)]
        assert "Page 1 of 9 (84 in all)" in text
        assert len(read) == 10
        text = self.builder.get(self.url, {"people_page": 9}).content.decode()
        assert shown(text, r"<h3>Flooder(\d\d) ") == ["80", "81", "82", "83"]
        assert 'href="?people_page=8#people"' in text
        # a bad page number is the first or the last page, never an error
        for bad, first in (
            ("x", "00"),
            ("-3", "80"),
            ("0", "80"),
            ("1e9", "00"),
            ("9" * 5000, "00"),
        ):
            response = self.builder.get(self.url, {"people_page": bad})
            assert response.status_code == 200, bad
            assert shown(response.content.decode(), r"<h3>Flooder(\d\d) ")[0] == first, bad

    def test_a_pages_links_keep_the_other_lists_pages(self):
        for number in range(25):
            self.observe(f"#{1000 + number}", f"Flooder{number:02d}", 1)
        journal = self.handler.brain.journal
        for number in range(25):
            journal.add(f"Entry {number:03d}.", author="Aria", now=NOW, heard_from="Bob")
        text = self.builder.get(self.url, {"people_page": 2, "speaker": "Bob"}).content.decode()
        assert 'href="?speaker=Bob&amp;people_page=2&amp;page=2#journal"' in text
        assert 'href="?speaker=Bob&amp;page=1&amp;people_page=3#people"' not in text
        assert 'href="?speaker=Bob&amp;people_page=3#people"' in text

    def test_a_persons_page_shows_a_few_observations_and_links_to_all(self):
        self.observe("#77", "Bob", 60)
        profile = self.handler.brain.entities.profile("#77")
        profile["attributes"] = [
            {"id": f"a{n}", "type": "fact", "value": f"Attribute {n:03d}.", "at": "2026-01-01"}
            for n in range(30)
        ]
        self.handler.brain.entities.save(profile)
        text = self.builder.get(self.url).content.decode()
        # the assistant's page: the newest five of each, and a link to the rest
        assert shown(text, r"Observation (\d{3}) of Bob") == ["059", "058", "057", "056", "055"]
        assert shown(text, r"Attribute (\d{3})") == ["029", "028", "027", "026", "025"]
        assert "60 observations, 30 attributes" in text
        link = f'{self.person_url}?key=%2377"'
        assert link in text
        # the person's page: every observation and attribute, paged, newest first
        text = self.builder.get(self.person_url, {"key": "#77", "page": 2}).content.decode()
        assert shown(text, r"Observation (\d{3}) of Bob") == [f"{n:03d}" for n in range(49, 39, -1)]
        assert shown(text, r"Attribute (\d{3})") == [f"{n:03d}" for n in range(29, 19, -1)]
        assert "Page 2 of 6 (60 in all)" in text and "Page 1 of 3 (30 in all)" in text
        assert 'href="?key=%2377&amp;page=2&amp;attributes_page=2#attributes"' in text
        text = self.builder.get(
            self.person_url, {"key": "#77", "page": "x", "attributes_page": 99}
        ).content.decode()
        assert shown(text, r"Observation (\d{3}) of Bob")[0] == "059"
        assert shown(text, r"Attribute (\d{3})") == [f"{n:03d}" for n in range(9, -1, -1)]

    def test_memories_are_paged_newest_first(self):
        store = self.handler.brain.long_term
        for number in range(25):
            store.add(
                f"Memory {number:03d}.",
                importance=5,
                now=NOW,
                source_entry_ids=[],
                provenance={"source_type": "observed"},
            )
        store.forget("m000024", NOW, "a test")
        store.forget("m000020", NOW, "a test")
        text = self.builder.get(self.url).content.decode()
        assert shown(text, r"Memory (\d{3})\.") == [
            f"{n:03d}" for n in (23, 22, 21, 19, 18, 17, 16, 15, 14, 13)
        ]
        text = self.builder.get(self.url, {"memories_page": 2}).content.decode()
        assert shown(text, r"Memory (\d{3})\.") == [f"{n:03d}" for n in range(12, 2, -1)]
        text = self.builder.get(self.url, {"memories_page": 3}).content.decode()
        assert shown(text, r"Memory (\d{3})\.") == ["002", "001", "000"]
        assert "Page 3 of 3 (25 in all)" in text

    def test_recent_turns_are_paged(self):
        from ai_assistant.state import RECENT_TURNS

        # however many a stored value holds, a page shows one page of them
        turns = [{"at": f"2026-01-01T00:{n:02d}:00+00:00", "tools": ["noop"]} for n in range(25)]
        self.handler.brain.state.set(RECENT_TURNS, turns)
        text = self.builder.get(self.url).content.decode()
        assert text.count('<tr class="turn">') == 10
        assert "2026-01-01T00:24:00" in text and "2026-01-01T00:14:00" not in text
        # shown in the dashboard's clock, to the second, named
        assert "2026-01-01 00:24:00 UTC" in text
        text = self.builder.get(self.url, {"turns_page": 3}).content.decode()
        assert text.count('<tr class="turn">') == 5 and "2026-01-01T00:04:00" in text


class TestClipping(DashboardCase):
    def plant(self):
        """Stored strings of 100,000 characters in every place the assistant's page shows one;
        each place has its own letter, so a failure names it."""
        from ai_assistant.memory.entities import INDEX_KEY
        from ai_assistant.memory.sleep_history import SleepHistory
        from ai_assistant.state import LAST_ERROR, RECENT_TURNS, REASON

        brain = self.handler.brain
        brain.journal.add(
            "J" * HUGE, author="Aria", now=NOW, heard_from="H" * HUGE, location="L" * HUGE
        )
        brain.entities.observe(
            "#77",
            "Bob",
            "O" * HUGE,
            now=NOW,
            author="Aria",
            location="W" * HUGE,
            heard_from="F" * HUGE,
        )
        # a huge name is written as stored values, not through `observe` (which looks for a
        # profile by that name first)
        profile = brain.entities.profile("#77")
        profile["name"] = "N" * HUGE
        profile["attributes"] = [{"id": "a1", "type": "Y" * HUGE, "value": "V" * HUGE, "at": "x"}]
        brain.entities.save(profile)
        brain.entities.store.set(INDEX_KEY, {"#77": "N" * HUGE})
        brain.long_term.add(
            "M" * HUGE,
            importance=5,
            now=NOW,
            source_entry_ids=["S" * HUGE],
            provenance={"source_type": "observed"},
            audience=["A" * HUGE],
        )
        brain.state.set(
            RECENT_TURNS,
            [
                {
                    "at": "2026-01-01T00:00:00+00:00",
                    "tools": ["T" * HUGE, "say"],
                    "stop_reason": "R" * HUGE,
                    "error": "E" * HUGE,
                    "events": 1,
                }
            ],
        )
        brain.lifecycle.log().append({"mode": "sleep", "at": NOW.isoformat(), "reason": "X" * HUGE})
        SleepHistory(brain.state).records.append(
            {"id": "s1", "start": NOW.isoformat(), "began": "B" * HUGE, "summary": "U" * HUGE}
        )
        brain.state.set(REASON, "Z" * HUGE)
        self.script.attributes.add(LAST_ERROR, "Q" * HUGE)

    def test_every_stored_string_is_clipped(self):
        self.plant()
        response = self.builder.get(self.url)
        assert response.status_code == 200
        text = response.content.decode()
        names = {
            "H": "speaker",
            "L": "place",
            "N": "name",
            "W": "where",
            "F": "from",
            "Y": "type",
            "S": "sources",
            "A": "audience",
            "T": "tool",
            "R": "stop reason",
        }
        texts = {
            "J": "journal",
            "O": "observation",
            "V": "attribute",
            "M": "memory",
            "E": "turn error",
            "X": "transition reason",
            "B": "sleep began",
            "U": "summary",
            "Z": "sleep reason",
            "Q": "last error",
        }
        for letter, what in names.items():
            assert letter * 201 not in text, what
            assert letter * 100 in text, what  # still shown, its start
        for letter, what in texts.items():
            assert letter * 2001 not in text, what
            assert letter * 100 in text, what
        assert "… (100,000 characters in all)" in text
        assert len(text) < 100_000  # ten huge values, each cut
        person = self.builder.get(self.person_url, {"key": "#77"}).content.decode()
        for letter in "NWFY":
            assert letter * 201 not in person and letter * 100 in person
        for letter in "OV":
            assert letter * 2001 not in person and letter * 100 in person

    def test_a_core_note_keeps_its_remove_form(self):
        # the form posts the whole key (only a key too long to be a note's loses it)
        self.handler.memory.admin.kind("core_notes").set("motto", "Books are friends.")
        text = self.builder.get(self.url).content.decode()
        assert '<input type="hidden" name="key" value="motto">' in text

    def test_the_list_clips_too(self):
        from unittest.mock import patch

        from ai_assistant.handler import AssistantHandler

        def broken(handler, flush=True):
            raise RuntimeError("K" * HUGE)

        with patch.object(AssistantHandler, "status", broken):
            text = self.builder.get(self.list_url).content.decode()
        assert "status unavailable: " in text and "K" * 2001 not in text and "K" * 100 in text

    def test_secrets_stay_redacted_when_clipped(self):
        journal = self.handler.brain.journal
        # the key straddles the cut: neither its start nor the rest is shown
        journal.add("x" * 1990 + " sk-test-secret " + "y" * HUGE, author="Aria", now=NOW)
        text = self.builder.get(self.url).content.decode()
        assert "sk-te" not in text and "x" * 1990 in text

    def test_an_action_message_is_clipped(self):
        response = self.builder.post(
            self.action_url, {"action": "remove_core", "key": "k" * HUGE}, follow=True
        )
        text = response.content.decode()
        assert response.status_code == 200 and "No core memory" in text
        assert "k" * 2001 not in text

    def test_clip_filter(self):
        from ai_assistant.web.filters import clip, clip_filter

        assert clip(None) == "" and clip(12) == "12" and clip("short") == "short"
        assert clip("a" * 201) == "a" * 200 + "… (201 characters in all)"
        assert clip_filter("a" * 20, "5") == "aaaaa… (20 characters in all)"
        assert clip_filter("a" * 300, "many") == "a" * 200 + "… (300 characters in all)"
        assert clip("the key is sk-test-secret") == "the key is [redacted]"


class TestErrorsAndHeaders(DashboardCase):
    def test_missing_things_are_404_for_the_superuser(self):
        client = self.superuser()
        missing = [
            reverse("ai_assistant:detail", args=[999999]),
            reverse("ai_assistant:detail", args=[self.char1.id]),  # not an assistant
            reverse("ai_assistant:person", args=[999999]) + "?key=%2377",
            self.person_url + "?key=%2377",  # nobody of that key
            self.person_url,  # no key
            self.person_url + "?key=index",  # a stored value that is no person
            self.person_url + "?key=" + "k" * 600,
            "/assistants/no-such-page/",
            "/assistants/no-such-page",
            f"/assistants/{self.aria.id}/sleeps/s999/",
        ]
        for url in missing:
            response = client.get(url)
            assert response.status_code == 404, url
            assert "<h1>Not found</h1>" in response.content.decode(), url
        response = client.post(reverse("ai_assistant:action", args=[999999]), {"action": "pause"})
        assert response.status_code == 404
        # and the builder's too (not staff: the game's page would have worked for them)
        assert self.builder.get(self.person_url + "?key=%2377").status_code == 404

    def test_a_missing_page_of_the_whole_site_is_a_404_for_the_superuser(self):
        # Evennia's own 404 page links staff to the admin site, which the demo game serves
        response = self.superuser().get("/no-such-page-anywhere/")
        assert response.status_code == 404

    def test_every_page_says_it_must_not_be_framed_cached_or_referred(self):
        for response in (self.superuser().get(self.url), self.superuser().get("/assistants/x/")):
            assert response["X-Frame-Options"] == "DENY"
            assert response["Cache-Control"] == "no-store"
            assert response["Referrer-Policy"] == "same-origin"

    def test_a_missing_slash_is_still_added(self):
        response = self.superuser().get(f"/assistants/{self.aria.id}", {"page": 2})
        assert response.status_code == 301
        assert response["Location"] == f"/assistants/{self.aria.id}/?page=2"

    def test_the_superuser_sees_the_pages(self):
        self.observe("#77", "Bob", 3)
        client = self.superuser()
        assert client.get(self.list_url).status_code == 200
        assert client.get(self.url).status_code == 200
        assert client.get(self.person_url, {"key": "#77"}).status_code == 200

    def test_a_staff_account_without_builder_is_forbidden(self):
        self.account2.is_staff = True
        self.account2.save()
        client = Client()
        client.force_login(self.account2)
        for url in (self.list_url, self.url, self.person_url + "?key=%2377", "/assistants/x/"):
            response = client.get(url)
            assert response.status_code == 403, url
            assert response["X-Frame-Options"] == "DENY"

    def test_every_response_carries_the_headers(self):
        self.observe("#77", "Bob", 1)
        anonymous, stranger = Client(), Client()
        stranger.force_login(self.account2)
        strict = Client(enforce_csrf_checks=True)
        strict.force_login(self.account)
        responses = {
            "list": self.builder.get(self.list_url),
            "detail": self.builder.get(self.url),
            "person": self.builder.get(self.person_url, {"key": "#77"}),
            "404": self.builder.get(reverse("ai_assistant:detail", args=[999999])),
            "404 path": self.builder.get("/assistants/nothing/"),
            "slash": self.builder.get(f"/assistants/{self.aria.id}"),
            "login": anonymous.get(self.url),
            "403": stranger.get(self.url),
            "action": self.builder.post(self.action_url, {"action": "pause"}),
            "405": self.builder.get(self.action_url),
            "csrf": strict.post(self.action_url, {"action": "resume"}),
        }
        expected = {"slash": 301, "login": 302, "403": 403, "action": 302, "405": 405}
        expected.update({"404": 404, "404 path": 404, "csrf": 403})
        for what, response in responses.items():
            assert response.status_code == expected.get(what, 200), what
            assert response["X-Frame-Options"] == "DENY", what
            assert response["X-Content-Type-Options"] == "nosniff", what
        # the CSRF check still refuses: the POST without a token changed nothing
        assert self.handler.paused
