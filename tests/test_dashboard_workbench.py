"""The dashboard as a builder's workbench: the website's layout and menu, one clock, audiences in
words, and the conversation, memory, context, sleep and settings pages with their edits."""

import json
from datetime import datetime, timezone

from django.test import Client, RequestFactory, override_settings
from django.urls import reverse
from evennia.utils.test_resources import EvenniaCommandTest

from ai_assistant.memory.review import parse_trust
from ai_assistant.testing.server import tool_call, tool_reply

from .helpers import AssistantTestCase

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
PAGES = ("detail", "conversation", "memory", "context", "sleep", "settings")


class WorkbenchTestCase(AssistantTestCase):
    def setUp(self):
        super().setUp()
        self.builder = Client()
        self.builder.force_login(self.account)  # a Developer: above Builder

    def url(self, name: str, **query) -> str:
        url = reverse(f"ai_assistant:{name}", args=[self.aria.id])
        if query:
            from urllib.parse import urlencode

            url += "?" + urlencode(query)
        return url

    def page(self, name: str, **query) -> str:
        response = self.builder.get(self.url(name, **query))
        assert response.status_code == 200, (name, response.status_code)
        return response.content.decode()

    def post(self, **form):
        return self.builder.post(self.url("action"), form, follow=True)

    def know_bob(self) -> str:
        """Aria knows char2 as Bob: a private line to him shows as "private to Bob"."""
        key = f"#{self.char2.id}"
        self.handler.brain.entities.observe(key, "Bob", "Bob likes maps.", now=NOW, author="Aria")
        return key


class TestLayout(WorkbenchTestCase):
    def test_every_page_is_in_the_websites_layout_with_the_builders_link(self):
        for name in PAGES:
            text = self.page(name)
            # Evennia's base template: its menu bar and its main container
            assert 'class="navbar' in text and 'id="main-copy"' in text, name
            assert 'id="ai-assistant-menu"' in text, name
            assert "Times are real time in UTC" in text, name
            # the tabs between an assistant's pages
            for other in PAGES:
                assert f'href="{self.url(other)}"' in text, (name, other)

    def test_the_403_page_is_in_the_layout_without_the_link(self):
        player = Client()
        player.force_login(self.account2)
        for name in PAGES:
            response = player.get(self.url(name))
            text = response.content.decode()
            assert response.status_code == 403, name
            assert 'class="navbar' in text and "for builders" in text, name
            assert 'id="ai-assistant-menu"' not in text and "Aria" not in text, name

    def test_anonymous_visitors_go_to_log_in(self):
        for name in (*PAGES, "confirm"):
            response = Client().get(self.url(name))
            assert response.status_code == 302 and "login" in response["Location"], name

    def test_add_menu_link_puts_the_templates_first_once(self):
        from ai_assistant.web.menu import CONTEXT_PROCESSOR, TEMPLATE_DIR, add_menu_link

        templates = [{"DIRS": ["/game/web/templates"], "OPTIONS": {"context_processors": []}}]
        add_menu_link(templates)
        add_menu_link(templates)
        assert templates[0]["DIRS"] == [TEMPLATE_DIR, "/game/web/templates"]
        assert templates[0]["OPTIONS"]["context_processors"] == [CONTEXT_PROCESSOR]

    def test_the_menu_link_is_for_builders_only(self):
        from ai_assistant.web.menu import menu_link

        request = RequestFactory().get("/")
        request.user = self.account
        assert menu_link(request)["ai_assistant_menu_url"] == reverse("ai_assistant:list")
        request.user = self.account2
        assert "ai_assistant_menu_url" not in menu_link(request)

    def test_times_are_readable_in_one_named_clock(self):
        at = datetime(2026, 1, 1, 12, 0, 5, 123456, tzinfo=timezone.utc)
        self.handler.brain.journal.add("A line.", author="Aria", now=at, heard_from="Bob")
        text = self.page("detail")
        assert "2026-01-01 12:00:05 UTC" in text and "123456" not in text
        with override_settings(TIME_ZONE="Europe/Paris"):
            text = self.page("detail")
        assert "2026-01-01 13:00:05 CET" in text and "Europe/Paris" in text

    def test_sleeps_show_game_time_marked_as_game_time(self):
        self.handler.sleep(hours=1, by="Dev")
        self.handler.wake("enough")
        start = self.handler.memory.admin.kind("sleep_history").recent()[0]["start"]
        game = datetime.fromisoformat(start).strftime("%Y-%m-%d %H:%M")
        row = self.page("detail").split('<tr class="sleep">')[1].split("</tr>")[0]
        assert f"game {game}" in row and "UTC" not in row
        # the sleep tab's table in its timeline's clock (real time), the game time marked
        text = self.page("sleep")
        record = self.handler.memory.admin.kind("sleep_history").recent()[0]
        row = text.split('<tr class="sleep">')[1].split("</tr>")[0]
        began = [t for t in self.handler.overview.transitions() if t["mode"] != "awake"][-1]
        assert record["real_start"] == began["at"]
        cell = row.split('<td class="from">')[1].split("</td>")[0]
        assert f'datetime="{began["at"][:19]}' in cell  # to the second
        assert f"game {game}" in cell
        # the sleep page names both clocks now
        self.handler.game_clock = type("Clock", (), {"now": lambda self: NOW})()
        text = self.page("sleep")
        assert "real time, game 2026-01-01 12:00." in text

    def test_private_entries_say_to_whom(self):
        key = self.know_bob()
        journal = self.handler.brain.journal
        journal.add("A secret for Bob.", author="Aria", now=NOW, heard_from="Bob", audience=[key])
        text = self.page("detail")
        row = [r for r in text.split('<tr class="entry">') if "A secret for Bob." in r][0]
        assert "private to Bob" in row and f">{key}<" not in row

    def test_an_audience_is_in_names_even_for_someone_without_a_profile(self):
        # a line private to Char, of whom it keeps no profile (a builder who whispered to it)
        self.handler.brain.journal.add(
            "For Char only.", author="Aria", now=NOW, audience=[f"#{self.char1.id}"]
        )
        for text in (self.page("detail"), self.page("memory")):
            row = [r for r in text.split('<tr class="entry">') if "For Char only." in r][0]
            assert "private to Char" in row and f"private to #{self.char1.id}" not in row

    def test_the_link_graph_labels_memories_by_their_text(self):
        journal = self.handler.brain.journal
        journal.add("The east door of the library sticks in winter.", author="Aria", now=NOW)
        journal.add("Short one.", author="Aria", now=NOW)
        self.handler.brain.links.link([("j000000", "j000001", 0.8)], 5)
        graph = self.page("memory", part="links").split('<svg class="links"')[1].split("</svg>")[0]
        assert "The east door of the library…" in graph and ">Short one.</text>" in graph
        assert graph.count("<circle") == 2 and graph.count("<line") == 1

    def test_the_timeline_has_an_axis_and_a_legend(self):
        self.handler.sleep(hours=1)
        self.clock.advance(3600)
        self.handler.wake("a test")
        text = self.page("sleep")
        assert "Legend:" in text and "awake" in text and "asleep" in text
        timeline = text.split('<svg class="timeline"')[1].split("</svg>")[0]
        assert timeline.count("<rect") == 2 and timeline.count('<text x="') == 5

    def test_one_hour_of_use_is_one_bar_not_the_whole_chart(self):
        self.handler.brain.state.set(
            "usage_by_hour", {"2026-01-01T11": {"calls": 3, "prompt": 120}}
        )
        chart = self.page("detail").split('<svg class="usage"')[1].split("</svg>")[0]
        width = float(chart.split("<rect")[1].split('width="')[1].split('"')[0])
        assert width <= 24

    def test_the_usage_axis_runs_only_over_the_hours_with_data(self):
        from ai_assistant.web.charts import usage_svg

        chart = usage_svg({"2026-01-01T11": {"calls": 3, "prompt": 120}})
        labels = [t.split(">")[1] for t in chart.split('font-size="10">')[1:3]]
        # one hour of use: one label, that hour (not a day's axis running into the future)
        assert chart.count("<rect") == 1 and "01-01 11:00" in chart
        assert "01-01 12:00" not in chart and "01-02" not in chart, labels
        chart = usage_svg({"2026-01-01T11": {"calls": 1}, "2026-01-01T14": {"calls": 2}})
        assert "01-01 11:00" in chart and "01-01 15:00" not in chart


class TestConversation(WorkbenchTestCase):
    def talk(self):
        self.responder.add(
            tool_reply(tool_call("say", {"text": "Hello there."})), tool_reply(tool_call("noop"))
        )
        self.char1.execute_cmd("say Hello Aria")
        self.tick()

    def test_each_turn_as_it_happened(self):
        self.talk()
        text = self.page("conversation")
        card = text.split('<div class="turn-card"')[1].split('<div class="turn-card"')[0]
        # what was heard, from whom, for whom
        heard = card.split('class="table table-sm heard"')[1].split("</table>")[0]
        assert "Char" in heard and "Hello Aria" in heard and "public" in heard
        # each tool call with its arguments and result; what was said; why it stopped
        calls = card.split('class="table table-sm calls"')[1].split("</table>")[0]
        assert (
            calls.count('<tr class="call">') == 1
            and "&quot;text&quot;: &quot;Hello there.&quot;" in calls
        )
        # folded under the turn; the noop that ended it counted, not a box of its own
        assert card.index('<details class="turn-details">') < card.index(
            'class="table table-sm calls"'
        )
        assert '<tr class="call"><td><code>noop' not in card and "(and a noop)" in card
        assert "say: Hello there." in card
        turn = self.handler.overview.recent_turns()[0]
        assert f"stopped: <code>{turn['stop_reason']}</code>" in card
        tokens = turn["tokens"]
        assert tokens["prompt"] > 0 and tokens["completion"] > 0
        assert f"{tokens['prompt']} prompt + {tokens['completion']} completion tokens" in card
        assert turn["seconds"] >= 0 and f"{turn['seconds']} s" in card

    def test_filters_by_person_and_by_tool(self):
        self.talk()
        assert "Hello Aria" in self.page("conversation", tool="say")
        assert "Hello Aria" in self.page("conversation", person="char")
        text = self.page("conversation", tool="look")
        assert "Hello Aria" not in text and "No turn matches these filters" in text
        assert "Hello Aria" not in self.page("conversation", person="nobody")

    def test_memory_ids_link_to_the_memory_they_name(self):
        self.handler.brain.journal.add("The east door sticks.", author="Aria", now=NOW)
        self.responder.add(
            tool_reply(tool_call("recall", {"query": "east door"})),
            tool_reply(tool_call("say", {"text": "It sticks."})),
            tool_reply(tool_call("noop")),
        )
        self.char1.execute_cmd("say Aria, about the east door")
        self.tick()
        text = self.page("conversation")
        link = f'<a class="memory-id" href="{self.url("memory")}?part=item&amp;id=j000000">'
        assert link in text
        item = self.page("memory", part="item", id="j000000")
        section = item.split('<section id="item">')[1].split("</section>")[0]
        assert "The east door sticks." in section and "do=forget&amp;id=j000000" in section
        item = self.page("memory", part="item", id="m999999")
        assert "Aria has no memory &#x27;m999999&#x27;." in item

    def test_an_id_link_adds_nothing_a_player_wrote(self):
        from ai_assistant.web.filters import linked_ids

        html = linked_ids('<b onclick="x">j000001</b>', "/m/?part=item&id=")
        assert "<b" not in html and "&lt;b onclick=&quot;x&quot;&gt;" in html
        assert '<a class="memory-id" href="/m/?part=item&amp;id=j000001">j000001</a>' in html

    @override_settings(AI_ASSISTANT_DASHBOARD_PAGE_SIZE=3)
    def test_paged_newest_first(self):
        from ai_assistant.state import RECENT_TURNS

        turns = [{"at": f"2026-01-01T00:0{n}:00+00:00", "tools": ["noop"]} for n in range(8)]
        self.handler.brain.state.set(RECENT_TURNS, turns)
        text = self.page("conversation", page=2)
        assert "Page 2 of 3" in text
        shown = [n for n in range(8) if f"2026-01-01 00:0{n}:00 UTC" in text]
        assert shown == [2, 3, 4]
        # the newest page first, but each page a chat log: oldest first
        where = [text.index(f"2026-01-01 00:0{n}:00 UTC") for n in (2, 3, 4)]
        assert where == sorted(where)

    @override_settings(AI_ASSISTANT_DASHBOARD_PAGE_SIZE=3)
    def test_the_whole_log_is_paged_not_the_last_ten(self):
        from ai_assistant.memory.turn_log import TurnLog

        log = TurnLog(self.handler.brain.state)
        for n in range(40):
            log.add({"at": f"2026-01-01T00:{n:02d}:00+00:00", "tools": ["noop"]})
        text = self.page("conversation")
        assert "Page 1 of 14" in text and "Its 40 turns" in text
        assert "2026-01-01 00:39:00 UTC" in text and "2026-01-01 00:36:00 UTC" not in text
        text = self.page("conversation", page=14)  # the oldest turn is still there
        assert "2026-01-01 00:00:00 UTC" in text and "2026-01-01 00:01:00 UTC" not in text

    def test_the_models_own_text_is_shown_with_the_turn(self):
        self.handler.brain.journal.add("The east door sticks.", author="Aria", now=NOW)
        self.responder.add(
            tool_reply(
                tool_call("say", {"text": "Welcome."}),
                content="Char asks about j000000; I will <b>greet</b> them first.",
            ),
            tool_reply(tool_call("noop")),
        )
        self.char1.execute_cmd("say Hello Aria")
        self.tick()
        card = self.page("conversation").split('<div class="turn-card"')[1]
        texts = card.split('<ul class="texts">')[1].split("</ul>")[0]
        assert "Aria wrote" in texts and "I will &lt;b&gt;greet&lt;/b&gt; them first." in texts
        assert f'href="{self.url("memory")}?part=item&amp;id=j000000">j000000</a>' in texts
        assert "say: Welcome." in card

    def test_a_private_turn_is_labelled_with_whom(self):
        self.responder.add(tool_reply(tool_call("noop")))
        key = self.know_bob()
        self.char2.execute_cmd("whisper Aria = my secret plan")
        self.tick()
        turn = self.handler.overview.recent_turns()[0]
        assert turn["audience"] == [key]
        text = self.page("conversation")
        assert "private to Bob" in text and "my secret plan" in text

    def test_a_builder_instructs_it_from_the_page(self):
        response = self.post(action="instruct", text="Greet everyone who comes in.")
        assert response.redirect_chain[-1][0] == self.url("conversation")
        assert "Instruction given" in response.content.decode()
        line = self.handler.hearing.heard[-1]
        assert line.event_type == "instruction" and line.text == "Greet everyone who comes in."
        assert line.speaker == f"{self.account.username} (web)"
        text = self.post(action="instruct", text="  ").content.decode()
        assert "An instruction needs some text." in text and len(self.handler.hearing.heard) == 1

    def test_the_details_kept_are_bounded(self):
        from ai_assistant.awake.turn import DETAIL_CHARS, DETAIL_ITEMS, TurnOutcome
        from ai_assistant.events import Event

        events = [
            Event(id=n, type="say", speaker="Bob", text="x" * 5000, time=NOW.isoformat())
            for n in range(1, 40)
        ]
        calls = [{"name": "say", "arguments": "y" * 5000, "result": "sk-test-secret " * 10}] * 30
        details = TurnOutcome(events=events, tool_calls=calls).details()
        assert len(details["heard"]) == DETAIL_ITEMS and len(details["calls"]) == DETAIL_ITEMS
        assert all(len(e["text"]) <= DETAIL_CHARS for e in details["heard"])
        assert all(len(c["arguments"]) <= DETAIL_CHARS for c in details["calls"])
        assert "sk-test-secret" not in json.dumps(details)


class TestMemoryPage(WorkbenchTestCase):
    def test_search_uses_recall_with_scores_sources_and_audiences(self):
        key = self.know_bob()
        journal = self.handler.brain.journal
        journal.add("The east door sticks.", author="Aria", now=NOW, heard_from="Bob")
        journal.add("Bob's east door key.", author="Aria", now=NOW, audience=[key])
        text = self.page("memory", q="east door")
        rows = text.split('<tr class="found">')[1:]
        assert len(rows) >= 2
        found = self.handler.memory.admin.search("east door")
        assert f"<td>{found[0].id}</td>" in rows[0] and f"<td>{found[0].score:.3f}</td>" in rows[0]
        assert "relevance" in rows[0]
        private = [row for row in rows if "Bob&#x27;s east door key." in row][0]
        assert "private to Bob" in private

    @override_settings(AI_ASSISTANT_DASHBOARD_PAGE_SIZE=5)
    def test_every_memory_is_paged(self):
        store = self.handler.brain.long_term
        for number in range(12):
            store.add(
                f"Memory number {number:02d}.",
                source_entry_ids=[],
                importance=5,
                now=NOW,
                provenance={"source_type": "builder"},
            )
        text = self.page("memory", memories_page=3)
        assert "Page 3 of 3 (12 in all)" in text
        assert [n for n in range(12) if f"Memory number {n:02d}." in text] == [0, 1]

    def test_reminders_reflections_and_people_are_listed(self):
        self.know_bob()
        self.handler.memory.admin.kind("reminders").add(
            "dragon", "Ask about the dragon.", 3, by="Dev"
        )
        text = self.page("memory", part="reminders")
        assert "Ask about the dragon." in text and "0 of 3" in text
        assert ">Bob</a>" in self.page("memory", part="people")

    def test_one_part_at_a_time_the_journal_first(self):
        """The memory tab shows one part, chosen by its sub-tabs; the journal by default."""
        self.know_bob()
        self.handler.brain.journal.add("Heard at the desk.", author="Aria", now=NOW)
        self.handler.memory.admin.kind("reminders").add(
            "dragon", "Ask about the dragon.", 3, by="Dev"
        )
        text = self.page("memory")
        nav = text.split('id="memory-parts">')[1].split("</nav>")[0]
        for label in (
            "Journal",
            "Memories",
            "People",
            "Links",
            "Reflections",
            "Digests",
            "Reminders",
            "Gossip",
            "Corrections",
        ):
            assert f">{label}</a>" in nav
        assert '<section id="journal">' in text and "Heard at the desk." in text
        assert '<section id="reminders">' not in text and "Ask about the dragon." not in text
        text = self.page("memory", part="reminders")
        assert "Ask about the dragon." in text and '<section id="journal">' not in text
        # a search shows its results; an unknown part is the journal
        assert 'id="found"' in self.page("memory", q="desk")
        assert '<section id="journal">' in self.page("memory", part="nonsense")

    @override_settings(AI_ASSISTANT_DASHBOARD_PAGE_SIZE=2)
    def test_the_journal_and_the_reflections_are_paged_and_filtered(self):
        from ai_assistant.memory.journal import REFLECTION_KIND

        journal = self.handler.brain.journal
        for number in range(5):
            journal.add(f"Insight {number}.", author="Aria", now=NOW, kind=REFLECTION_KIND)
        text = self.page("memory", part="reflections", reflections_page=3)
        assert "Page 3 of 3 (5 in all)" in text
        assert [n for n in range(5) if f"Insight {n}." in text] == [0]
        journal.add("Bob asked for maps.", author="Aria", now=NOW, heard_from="Bob")
        text = self.page("memory", part="journal", speaker="Bob")
        assert "Bob asked for maps." in text and "Insight" not in text
        assert "Page 1 of 1 (1 in all)" in text

    def test_forget_is_confirmed_first_and_recorded_as_the_command_does(self):
        self.handler.brain.journal.add("Forget me.", author="Aria", now=NOW)
        # the confirm page shows it and changes nothing
        text = self.page("confirm", do="forget", id="j000000")
        assert "Forget me." in text and 'name="confirmed" value="yes"' in text
        assert self.handler.memory.admin.kind("review_log").latest() == []
        # a POST that was not confirmed is refused
        text = self.post(action="forget", id="j000000").content.decode()
        assert (
            "must be confirmed" in text
            and self.handler.memory.admin.kind("review_log").latest() == []
        )
        response = self.post(action="forget", id="j000000", confirmed="yes", reason="a test")
        assert response.redirect_chain[-1][0] == self.url("memory")
        assert "Forgotten: j000000" in response.content.decode()
        review = self.handler.memory.admin.kind("review_log").latest()[0]
        assert review["action"] == "forget" and review["id"] == "j000000"
        assert review["by"] == f"{self.account.username} (web)"
        assert "Forget me." not in self.page("memory", q="forget")

    def test_trust_round_trip_and_bad_level(self):
        self.handler.brain.journal.add("Trust me.", author="Aria", now=NOW)
        text = self.post(action="trust", id="j000000", level="lots", confirmed="yes").content
        assert self.handler.memory.admin.kind("review_log").latest() == [] and b"low" in text
        self.post(action="trust", id="j000000", level="high", confirmed="yes")
        review = self.handler.memory.admin.kind("review_log").latest()[0]
        # the level as the command reads it
        assert review["action"] == "trust" and review["trust"] == parse_trust("high")

    def test_an_unknown_memory_cannot_be_confirmed(self):
        text = self.page("confirm", do="forget", id="m999999")
        assert "has no memory" in text and 'name="confirmed"' not in text

    def test_core_memory_edits_return_to_the_memory_page(self):
        response = self.post(action="set_core", key="motto", value="Books first.", back="memory")
        assert response.redirect_chain[-1][0] == self.url("memory", part="core")
        assert "Books first." in response.content.decode()
        assert [
            n["value"] for n in self.handler.memory.admin.kind("core_notes").notes()[0].values()
        ] == ["Books first."]


class TestContextSleepSettings(WorkbenchTestCase):
    def test_the_next_request_in_its_parts(self):
        self.handler.memory.admin.kind("core_notes").set("motto", "Books are friends.")
        self.handler.brain.journal.add("The east door sticks.", author="Aria", now=NOW)
        self.char1.execute_cmd("say Aria, about the east door")
        self.handler.hearing.flush()  # queued, as a tick would, but no turn
        text = self.page("context")
        parts = self.handler.overview.next_request()
        assert parts["events"] and parts["tokens"]["system"] > 0
        for name in ("System prompt", "Tool schemas", "Core memory", "History", "New events"):
            assert f"<td>{name}</td>" in text
        assert "A cheerful librarian." in text and "Books are friends." in text
        assert "about the east door" in text and "The east door sticks." in text
        assert (
            f"of a budget of <strong>{self.handler.brain.calibration.context_budget()}</strong>"
            in text
        )
        assert "<code>say</code>" in text
        assert "sk-test-secret" not in text

    def test_the_history_is_folded_and_keeps_its_line_breaks(self):
        self.handler.brain.history.extend(
            [{"role": "user", "content": "First line.\nSecond line."}]
        )
        text = self.page("context")
        section = text.split('<section id="history">')[1].split("</section>")[0]
        assert section.startswith("<details><summary>") and "<details open" not in section
        cell = section.split('<td class="lines">')[1].split("</td>")[0]
        assert "First line.\nSecond line." in cell

    def test_rollback_from_the_page_shows_the_plan_and_asks_first(self):
        self.handler.brain.journal.add("Before the night.", author="Aria", now=NOW)
        self.handler.sleep(hours=1, by="Dev")
        self.handler.wake("morning")
        self.handler.brain.journal.add("After the night.", author="Aria", now=NOW)
        text = self.page("sleep")
        assert "roll back…" in text
        text = self.page("confirm", do="rollback", sleep="s1")
        plan = self.handler.memory.rollback_plan("s1")
        for line in self.handler.memory.describe_rollback(plan):
            assert line.replace("'", "&#x27;") in text
        assert len(self.handler.memory.journal.all()) == 2  # asking changed nothing
        response = self.post(action="rollback", sleep="s1", expected="s1", confirmed="yes")
        assert "Rolled back s1" in response.content.decode()
        assert [e["content"] for e in self.handler.memory.journal.all()] == ["Before the night."]
        assert "rolled back by" in self.page("sleep")

    def test_a_rollback_keeps_the_corrections_it_showed_and_no_others(self):
        journal = self.handler.brain.journal
        journal.add("Before the night.", author="Aria", now=NOW)
        journal.add("Wrong, forget it.", author="Aria", now=NOW)
        self.handler.sleep(hours=1, by="Dev")
        self.handler.wake("morning")
        self.handler.memory.admin.forget("j000001", by="Dev")  # a correction made since: kept
        text = self.page("confirm", do="rollback", sleep="s1")
        kept = text.split('name="expected_kept" value="')[1].split('"')[0]
        assert kept and kept.isdigit()
        # what was not shown is refused, and nothing changes
        text = self.post(action="rollback", sleep="s1", expected="s1", confirmed="yes")
        assert "changed since you were asked" in text.content.decode()
        assert (
            self.handler.memory.admin.kind("sleep_history").recent()[0].get("rolled_back") is None
        )
        self.post(action="rollback", sleep="s1", expected="s1", expected_kept=kept, confirmed="yes")
        assert (
            self.handler.memory.admin.kind("sleep_history").recent()[0]["rolled_back"]["by"]
            == f"{self.account.username} (web)"
        )
        contents = [e["content"] for e in self.handler.brain.journal.all()]
        assert "Before the night." in contents and "Wrong, forget it." not in contents

    def test_settings_say_what_each_means_and_ask_with_the_right_input(self):
        from ai_assistant.conf import AssistantConfig

        text = self.page("settings")
        row = text.split('id="setting-tick_rate"')[1].split("</tr>")[0]
        assert AssistantConfig.model_fields["tick_rate"].description in row
        assert "integer, &gt;= 1, &lt;= 3600" in row and 'name="value" size="12"' in row
        # true/false: a checkbox, checked as the value is
        row = text.split('id="setting-respond_to_ambient"')[1].split("</tr>")[0]
        assert 'type="checkbox" name="value" value="true"' in row and " checked" not in row
        # a choice: a select of what is allowed, the value in force selected
        row = text.split('id="setting-room_speech_audience"')[1].split("</tr>")[0]
        assert "<select" in row and "<option selected>public</option>" in row
        assert "<option>present</option>" in row
        # the checkbox's form posts "true" when ticked, the hidden "false" when not
        self.post(action="set", key="respond_to_ambient", value=["false", "true"])
        assert self.handler.config().respond_to_ambient is True
        self.post(action="set", key="respond_to_ambient", value="false")
        assert self.handler.config().respond_to_ambient is False
        self.post(action="set", key="room_speech_audience", value="present")
        assert self.handler.config().room_speech_audience == "present"

    def test_settings_change_with_the_commands_validation(self):
        text = self.page("settings")
        assert 'id="setting-tick_rate"' in text and "A cheerful librarian." in text
        # every key once: the essentials first, open, then each other under its topic as
        # @assistant/set groups them, folded
        from ai_assistant.conf import ESSENTIAL_KEYS, config_groups, config_keys

        for key in config_keys():
            assert text.count(f'id="setting-{key}"') == 1, key
        essentials = text.split('id="essentials" open>')[1].split("</details>")[0]
        assert all(f'id="setting-{key}"' in essentials for key in ESSENTIAL_KEYS)
        topic, keys = config_groups()[0]
        keys = [key for key in keys if key not in ESSENTIAL_KEYS]
        heading = f"<summary><strong>{topic[0].upper()}{topic[1:]}</strong>"
        assert heading in text and text.index(heading) < text.index(f'id="setting-{keys[0]}"')
        assert text.index('id="essentials"') < text.index(heading)
        before = self.handler.overrides()
        response = self.post(action="set", key="tick_rate", value="-5")
        assert response.redirect_chain[-1][0] == self.url("settings")
        text = response.content.decode()
        assert (
            'class="alert alert-danger"' in text and "tick_rate must be at least 1 (got -5)" in text
        )
        assert self.handler.overrides() == before
        self.post(action="set", key="tick_rate", value="45")
        assert self.handler.config().tick_rate == 45
        self.post(action="set", key="persona", value="A grumpy archivist.")
        assert self.handler.persona == "A grumpy archivist."
        text = self.post(action="set", key="nonsense", value="1").content.decode()
        assert "Unknown key" in text

    @override_settings(AI_ASSISTANT_PRICES={"gpt-4o-mini": (0.15, 0.60)})
    def test_cost_per_hour_and_day(self):
        self.script.db.config_overrides = {**self.overrides, "model": "gpt-4o-mini"}
        hours = {
            "2026-01-01T11": {"calls": 3, "prompt": 1_000_000, "completion": 100_000},
            "2026-01-02T09": {"calls": 1, "prompt": 2_000_000, "completion": 0},
        }
        self.handler.brain.state.set("usage_by_hour", hours)
        costs = self.handler.overview.costs()
        assert costs["days"] == {"2026-01-01": 0.15 + 0.06, "2026-01-02": 0.30}
        text = self.page("detail")
        assert "<td>2026-01-01</td><td>0.2100</td>" in text and "<strong>0.5100</strong>" in text

    def test_no_price_says_how_to_set_one(self):
        assert "AI_ASSISTANT_PRICES" in self.page("detail")


class TestReadingChangesNothing(WorkbenchTestCase):
    def test_no_page_writes_queues_or_starts_a_turn(self):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        self.know_bob()
        self.handler.brain.journal.add("The east door sticks.", author="Aria", now=NOW)
        self.handler.sleep(hours=1)
        self.handler.wake("a test")
        for name in PAGES:
            self.page(name)  # warm: the first read loads the caches
        self.char1.execute_cmd("say nice weather today")  # held until the next tick
        with CaptureQueriesContext(connection) as queries:
            for name in PAGES:
                self.page(name)
            self.page("memory", q="east door")
            self.page("conversation", person="bob", tool="say")
            self.page("confirm", do="forget", id="j000000")
            self.page("confirm", do="trust", id="j000000")
            self.page("confirm", do="rollback", sleep="s1")
            # the living world's pages (tests/test_dashboard_world.py reads them with data)
            self.page("confirm", do="relationship", person="Bob", dimension="trust", value="1")
            self.page("person", key=f"#{self.char2.id}")
            assert self.builder.get(reverse("ai_assistant:lore")).status_code == 200
        writes = [
            q["sql"]
            for q in queries.captured_queries
            if q["sql"].split()[0].upper() in ("INSERT", "UPDATE", "DELETE")
            and "django_session" not in q["sql"]
        ]
        assert writes == []
        assert len(self.handler.hearing.heard) == 1 and not self.handler.in_flight

    def test_every_form_carries_the_csrf_token_and_a_post_without_it_is_refused(self):
        client = Client(enforce_csrf_checks=True)
        client.force_login(self.account)
        self.handler.brain.journal.add("Keep me.", author="Aria", now=NOW)
        for name in ("detail", "memory", "settings"):
            text = client.get(self.url(name)).content.decode()
            assert text.count('<form method="post"') + text.count('<form class="inline') > 0
            assert "csrfmiddlewaretoken" in text, name
        text = client.get(self.url("confirm", do="forget", id="j000000")).content.decode()
        assert "csrfmiddlewaretoken" in text
        response = client.post(
            self.url("action"), {"action": "forget", "id": "j000000", "confirmed": "yes"}
        )
        assert (
            response.status_code == 403
            and self.handler.memory.admin.kind("review_log").latest() == []
        )

    def test_credentials_in_the_endpoints_address_are_on_no_page(self):
        from ai_assistant.shell.game_settings import redacted

        url = self.server.base_url.replace("http://", "http://proxyuser:hunter2pass@")
        with override_settings(AI_ASSISTANT_BASE_URL=url):
            for name in PAGES:
                text = self.page(name)
                assert "hunter2pass" not in text and "proxyuser" not in text, name
            # the endpoint is still named, its credentials hidden
            assert "[redacted]@127.0.0.1" in self.page("detail")
            assert "hunter2pass" not in redacted(f"GET {url} failed")

    def test_a_player_cannot_edit(self):
        self.handler.brain.journal.add("Keep me.", author="Aria", now=NOW)
        player = Client()
        player.force_login(self.account2)
        response = player.post(
            self.url("action"), {"action": "forget", "id": "j000000", "confirmed": "yes"}
        )
        assert (
            response.status_code == 403
            and self.handler.memory.admin.kind("review_log").latest() == []
        )
        response = player.post(
            self.url("action"), {"action": "set", "key": "tick_rate", "value": "9"}
        )
        assert response.status_code == 403 and self.handler.config().tick_rate != 9


class TestCostInStatus(AssistantTestCase, EvenniaCommandTest):
    @override_settings(AI_ASSISTANT_PRICES={"gpt-4o-mini": (0.15, 0.60)})
    def test_status_names_the_same_cost(self):
        from ai_assistant import commands

        self.script.db.config_overrides = {**self.overrides, "model": "gpt-4o-mini"}
        self.responder.add(tool_reply(tool_call("noop")))
        self.char1.execute_cmd("say Aria, hello")
        self.tick()
        status = self.handler.status()
        usage = status.usage
        total = (usage.prompt_tokens * 0.15 + usage.completion_tokens * 0.60) / 1_000_000
        assert total > 0 and status.cost["total"] == total
        today = self.handler.overview.costs()["days"][self.handler.now().strftime("%Y-%m-%d")]
        assert status.cost["today"] == today
        text = self.call(commands.CmdAssistant(), "/status Aria")
        assert f"{total:.4f} in all, {today:.4f} today (UTC)" in text

    def test_no_price_no_cost_line(self):
        from ai_assistant import commands

        assert self.handler.status().cost is None
        assert "in all," not in self.call(commands.CmdAssistant(), "/status Aria")


class TestMenuOnTheWholeSite(WorkbenchTestCase):
    def test_the_front_page_links_builders_to_the_dashboard(self):
        # the demo's settings call add_menu_link(TEMPLATES), as the README says a game does
        link = f'href="{reverse("ai_assistant:list")}" id="ai-assistant-menu"'
        assert link in self.builder.get("/").content.decode()
        player = Client()
        player.force_login(self.account2)
        assert 'id="ai-assistant-menu"' not in player.get("/").content.decode()
        assert 'id="ai-assistant-menu"' not in Client().get("/").content.decode()
