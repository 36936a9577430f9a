"""The web dashboard: permissions, the list and detail pages, pagination, POST-only editing."""

from datetime import datetime, timezone

from django.test import Client, override_settings
from django.urls import reverse

from ai_assistant.testing.server import tool_call, tool_reply

from .helpers import AssistantTestCase, reads_of

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


class TestDashboard(AssistantTestCase):
    def setUp(self):
        super().setUp()
        self.list_url = reverse("ai_assistant:list")
        self.url = reverse("ai_assistant:detail", args=[self.aria.id])
        self.action_url = reverse("ai_assistant:action", args=[self.aria.id])
        self.builder = Client()
        self.builder.force_login(self.account)  # a Developer: above Builder

    def add_entries(self, count: int):
        journal = self.handler.brain.journal
        for number in range(count):
            journal.add(f"Entry number {number:03d}.", author="Aria", now=NOW, heard_from="Bob")

    def test_anonymous_is_sent_to_login(self):
        for url in (self.list_url, self.url):
            response = Client().get(url)
            assert response.status_code == 302
            assert "login" in response["Location"] and "next=" in response["Location"]

    def test_non_builder_is_forbidden(self):
        client = Client()
        client.force_login(self.account2)
        assert not self.account2.check_permstring("Builder")
        assert client.get(self.list_url).status_code == 403
        assert client.get(self.url).status_code == 403
        assert client.post(self.action_url, {"action": "pause"}).status_code == 403
        assert not self.handler.paused

    def test_builder_sees_the_list(self):
        response = self.builder.get(self.list_url)
        assert response.status_code == 200
        text = response.content.decode()
        assert "Aria" in text and self.url in text and "awake" in text

    def test_builder_sees_an_assistant(self):
        self.add_entries(1)
        self.handler.memory.admin.kind("core_notes").set("motto", "Books are friends.")
        brain = self.handler.brain
        brain.state.set("usage_by_hour", {"2026-01-01T11": {"calls": 3, "prompt": 120}})
        response = self.builder.get(self.url)
        assert response.status_code == 200
        text = response.content.decode()
        assert "Entry number 000." in text and "Books are friends." in text
        assert '<svg class="usage"' in text and '<svg class="links"' in text
        assert '<svg class="timeline"' in text and "120 tokens, 3 calls" in text
        assert "sk-test-secret" not in text

    def test_unknown_id_is_404(self):
        assert self.builder.get(reverse("ai_assistant:detail", args=[999999])).status_code == 404
        not_assistant = reverse("ai_assistant:detail", args=[self.char1.id])
        assert self.builder.get(not_assistant).status_code == 404

    @override_settings(AI_ASSISTANT_DASHBOARD_PAGE_SIZE=10)
    def test_journal_is_paginated_newest_first(self):
        self.add_entries(60)
        text = self.builder.get(self.url, {"page": 2}).content.decode()
        shown = [n for n in range(60) if f"Entry number {n:03d}." in text]
        assert shown == list(range(40, 50))
        assert "Page 2 of 6" in text
        # a bad page number falls back to the first or the last page
        text = self.builder.get(self.url, {"page": "many"}).content.decode()
        assert "Page 1 of 6" in text and "Entry number 059." in text
        text = self.builder.get(self.url, {"page": 999}).content.decode()
        assert "Page 6 of 6" in text and "Entry number 000." in text

    @override_settings(AI_ASSISTANT_DASHBOARD_PAGE_SIZE=5)
    def test_journal_filters(self):
        self.add_entries(20)
        journal = self.handler.brain.journal
        journal.add("A secret for Cid.", author="Aria", now=NOW, heard_from="Cid", audience=["#9"])
        text = self.builder.get(self.url, {"speaker": "cid"}).content.decode()
        assert "A secret for Cid." in text and "Entry number" not in text
        text = self.builder.get(self.url, {"audience": "private"}).content.decode()
        assert "A secret for Cid." in text and "Page 1 of 1" in text
        text = self.builder.get(self.url, {"q": "number 01", "page": 2}).content.decode()
        shown = [n for n in range(20) if f"Entry number {n:03d}." in text]
        assert shown == [10, 11, 12, 13, 14]
        assert "Page 2 of 2" in text

    def test_get_changes_nothing(self):
        before = self.handler.status()
        self.builder.get(self.action_url, {"action": "pause"})
        self.builder.get(self.url, {"action": "pause"})
        after = self.handler.status()
        assert not after.paused and after.mode == before.mode == "awake"

    def test_actions(self):
        response = self.builder.post(self.action_url, {"action": "pause"})
        assert response.status_code == 302 and self.handler.paused
        self.builder.post(self.action_url, {"action": "resume"})
        assert not self.handler.paused
        self.builder.post(self.action_url, {"action": "set_core", "key": "k", "value": "v1"})
        assert [
            i["value"] for i in self.handler.memory.admin.kind("core_notes").notes()[0].values()
        ] == ["v1"]
        response = self.builder.post(self.action_url, {"action": "remove_core", "key": "k"})
        assert self.handler.memory.admin.kind("core_notes").notes()[0] == {}
        self.builder.post(self.action_url, {"action": "sleep", "hours": "2"})
        assert self.handler.status().mode == "sleep"
        self.builder.post(self.action_url, {"action": "wake"})
        assert self.handler.status().mode == "awake"

    def test_bad_action_input_is_a_message(self):
        self.handler.memory.admin.kind("core_notes").set("motto", "Books are friends.")
        before = self.handler.memory.admin.kind("core_notes").notes()[0]
        response = self.builder.post(
            self.action_url, {"action": "set_core", "key": "x" * 500, "value": "v"}, follow=True
        )
        assert response.status_code == 200
        assert "A key is 1 to at most" in response.content.decode()
        assert self.handler.memory.admin.kind("core_notes").notes()[0] == before
        response = self.builder.post(self.action_url, {"action": "wake"}, follow=True)
        assert "is not asleep" in response.content.decode()
        assert self.handler.status().mode == "awake"

    def test_post_without_csrf_token_is_refused(self):
        client = Client(enforce_csrf_checks=True)
        client.force_login(self.account)
        response = client.post(self.action_url, {"action": "pause"})
        assert response.status_code == 403
        assert not self.handler.paused
        # the page's forms carry the token
        assert "csrfmiddlewaretoken" in client.get(self.url).content.decode()

    def test_timeline_people_and_links(self):
        self.handler.sleep(hours=1)
        self.handler.wake("a test")
        self.add_entries(3)
        brain = self.handler.brain
        brain.entities.observe("#77", "Bob", "Bob likes <b>maps</b>.", now=NOW, author="Aria")
        brain.links.link([("j000000", "j000001", 0.8), ("j000001", "j000002", 0.4)], 5)
        text = self.builder.get(self.url).content.decode()
        timeline = text.split('<svg class="timeline"')[1].split("</svg>")[0]
        assert timeline.count("<rect") == 2 and "awake from" in timeline and "a test" in timeline
        assert "Bob likes &lt;b&gt;maps&lt;/b&gt;." in text  # escaped, never markup
        assert text.count("<circle") == 3 and text.count("<line") == 2

    def test_recent_turns_show_the_tools_and_the_prompt_shape(self):
        self.responder.add(
            tool_reply(tool_call("say", {"text": "Hello there."})), tool_reply(tool_call("noop"))
        )
        self.char1.execute_cmd("say Hello Aria")
        self.tick()
        turns = self.handler.overview.recent_turns()
        assert len(turns) == 1 and turns[0]["tools"] == ["say", "noop"]
        assert self.handler.status().last_turn == turns[0]  # the newest, not a second copy
        assert self.handler.brain.state.get("last_turn") is None
        shape = turns[0]["prompt"]
        fixed = self.handler.brain.fixed_tokens()
        assert shape["fixed"] == fixed and shape["conversation"] > 0
        assert shape["last_request"] > shape["fixed"] + shape["conversation"]
        text = self.builder.get(self.url).content.decode()
        row = text.split('<tr class="turn">')[1].split("</tr>")[0]
        assert "say, noop" in row and f"<td>{fixed}</td>" in row
        assert f"<td>{shape['last_request']}</td>" in row

    def test_the_turn_log_takes_in_the_ten_turns_an_earlier_version_kept(self):
        from ai_assistant.state import RECENT_TURNS

        older = [{"at": f"2025-01-01T00:00:{n:02d}+00:00", "tools": []} for n in range(10)]
        self.handler.brain.state.set(RECENT_TURNS, older)
        assert len(self.handler.overview.recent_turns()) == 10  # read before the first turn
        self.responder.add(tool_reply(tool_call("noop")))
        self.char1.execute_cmd("say Aria, a question")
        self.tick()
        turns = self.handler.overview.recent_turns()
        assert len(turns) == 11 and turns[0]["tools"] == ["noop"]  # newest first, none lost
        assert [t["at"] for t in turns[1:]] == [t["at"] for t in reversed(older)]
        assert not self.handler.brain.state.get(RECENT_TURNS)  # moved, not kept twice

    def test_sleeps_and_debt_are_shown(self):
        self.handler.memory.admin.add_debt(2, "a long talk")
        self.handler.sleep(hours=1, by="Dev")
        self.handler.wake("enough")
        records = self.handler.memory.admin.kind("sleep_history").recent()
        assert len(records) == 1
        text = self.builder.get(self.url).content.decode()
        row = text.split('<tr class="sleep">')[1].split("</tr>")[0]
        assert f"<td>{records[0]['id']}</td>" in row
        assert f"{records[0]['debt_before']} -&gt; {records[0]['debt_after']}" in row
        listing = self.builder.get(self.list_url).content.decode()
        assert f"<td>{self.handler.status().sleep_debt} (" in listing

    def test_reading_writes_nothing_and_leaves_heard_lines_unqueued(self):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        self.add_entries(3)
        self.builder.get(self.url)  # warm: the first read loads the caches
        self.char1.execute_cmd("say nice weather today")  # ambient: held until the next tick
        with CaptureQueriesContext(connection) as queries:
            detail = self.builder.get(self.url).content.decode()
            self.builder.get(self.list_url)
            self.builder.get(self.url, {"q": "number"})
        writes = [
            q["sql"]
            for q in queries.captured_queries
            if q["sql"].split()[0].upper() in ("INSERT", "UPDATE", "DELETE")
            and "django_session" not in q["sql"]
        ]
        assert writes == []
        assert "<tr><th>Pending events</th><td>1 (" in detail
        assert (
            len(self.handler.hearing.heard) == 1
        )  # still waiting for the tick, not queued by a read

    def test_state_is_read_on_the_reactor_when_the_server_runs(self):
        from unittest.mock import patch

        from ai_assistant.web import views

        hops = []

        def blocking_call(reactor, func, *args, **kwargs):
            hops.append(getattr(func, "__name__", repr(func)))
            return func(*args, **kwargs)

        self.add_entries(3)
        with (
            patch.object(views.reactor, "running", True),
            patch.object(views.threadable, "isInIOThread", lambda: False),
            patch.object(views, "blockingCallFromThread", blocking_call),
        ):
            assert self.builder.get(self.url, {"q": "number"}).status_code == 200
            assert self.builder.get(self.list_url).status_code == 200
            self.builder.post(self.action_url, {"action": "pause"})
        assert self.handler.paused
        assert "_detail_data" in hops and "_list_page" in hops and "get_assistant" in hops
        # the filter reads the journal chunk by chunk, on the reactor
        assert "matches" in hops
        assert "<lambda>" in hops  # the action
        # on the reactor itself, nothing hops
        hops.clear()
        with (
            patch.object(views.reactor, "running", True),
            patch.object(views.threadable, "isInIOThread", lambda: True),
            patch.object(views, "blockingCallFromThread", blocking_call),
        ):
            self.builder.get(self.url)
        assert hops == []

    @override_settings(AI_ASSISTANT_DASHBOARD_PAGE_SIZE=25)
    def test_list_is_paginated(self):
        from ai_assistant.assistants import create_assistant

        for number in range(30):
            create_assistant(f"Helper{number:02d}", self.room1)
        text = self.builder.get(self.list_url, {"page": 2}).content.decode()
        shown = [n for n in range(30) if f">Helper{n:02d}<" in text]
        assert "Page 2 of 2" in text and shown == [24, 25, 26, 27, 28, 29]

    @override_settings(AI_ASSISTANT_DASHBOARD_PAGE_SIZE=10)
    def test_unfiltered_page_reads_only_its_chunks(self):
        from ai_assistant.memory.store import ChunkedList

        self.add_entries(250)  # three chunks of 100
        journal = lambda chunks, index: chunks.name == "journal"  # noqa: E731
        with reads_of(ChunkedList, "_chunk", journal) as read:
            text = self.builder.get(self.url, {"page": 3}).content.decode()
        assert "Entry number 229." in text and "Entry number 220." in text
        assert set(read) <= {2}, read

    def test_filter_links_keep_the_filters(self):
        self.add_entries(30)
        text = self.builder.get(self.url, {"speaker": "Bob", "q": "a&b"}).content.decode()
        assert "No entries." in text
        text = self.builder.get(self.url, {"speaker": "Bob"}).content.decode()
        assert 'href="?speaker=Bob&amp;page=2#journal"' in text

    def test_secrets_are_redacted(self):
        journal = self.handler.brain.journal
        journal.add("The key is sk-test-secret, keep it.", author="Aria", now=NOW)
        text = self.builder.get(self.url).content.decode()
        assert "The key is" in text and "sk-test-secret" not in text

    def test_demo_game_serves_it_under_assistants(self):
        from django.conf import settings
        from django.urls import resolve

        assert settings.ROOT_URLCONF == "server.conf.urls"
        assert resolve("/assistants/").url_name == "list"
        assert resolve(f"/assistants/{self.aria.id}/").url_name == "detail"
        assert resolve("/").url_name  # Evennia's website is still there
