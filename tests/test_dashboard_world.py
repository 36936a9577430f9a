"""The workbench's pages of the living world: the game's lore book (browse, search, add, edit,
remove after asking), how an assistant feels about each person (shown with the reasons' audiences
and set after asking) and who told whom what, each with the dashboard's access rules."""

from datetime import datetime, timezone

from django.test import Client, override_settings
from django.urls import reverse

from ai_assistant.shell.lore_book import game_lore, lore_script
from ai_assistant.memory import gossip
from ai_assistant.memory.provenance import CLAIM

from .test_dashboard_workbench import WorkbenchTestCase

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
FOUNDING = "Millbrook was founded by the river smith Oda in the year of the long frost."


class WorldTestCase(WorkbenchTestCase):
    def lore_url(self, name: str = "lore", entry: str | None = None, **query) -> str:
        url = reverse(f"ai_assistant:{name}", args=[entry] if entry else [])
        if query:
            from urllib.parse import urlencode

            url += "?" + urlencode(query)
        return url

    def lore_page(self, name: str = "lore", entry: str | None = None, **query) -> str:
        response = self.builder.get(self.lore_url(name, entry, **query))
        assert response.status_code == 200, (name, response.status_code)
        return response.content.decode()

    def add_lore(self, title="The founding", text=FOUNDING, tags="history", who=None) -> str:
        return game_lore().add(title, text, tags, who, by="Dev")["id"]

    def warm_bob(self, private: bool = False) -> str:
        """Bob's warmth set by sleep, its reason drawn from a whisper when `private`."""
        from ai_assistant.memory.relationships import Relationships

        key = self.know_bob()
        Relationships(self.handler.brain.entities.store).change(
            key,
            "Bob",
            "warmth",
            value=0.4,
            reason="he mended the east door for her",
            at=NOW,
            audience=[key] if private else None,
        )
        return key

    def gossip_from_mira(self) -> str:
        """Mira tells Aria what char1 (Bob) said: the telling recorded as Aria hears it."""
        key = self.know_bob()
        self.handler.set_option("gossip_enabled", "true")
        told = gossip.telling(
            memory_id="j000003",
            text="The east door sticks when it rains.",
            record={"source_type": CLAIM, "heard_from": "Bob", "voice": key},
            audience=None,
            trust=0.6,
            importance=4,
            about=[],
            teller={"name": "Mira", "key": "#900"},
            to={"name": "Aria", "key": self.aria.dbref},
            location="Room",
            now=NOW,
        )
        self.handler.receive_gossip(told, addressed=True, witnesses=[])
        return key


class TestAccess(WorldTestCase):
    def test_every_new_page_for_builders_only(self):
        self.add_lore()
        urls = [
            self.lore_url(),
            self.lore_url("lore_entry", "L1"),
            self.lore_url("lore_remove", "L1"),
            self.url("person", key=self.warm_bob()),
            self.url("confirm", do="relationship", person="Bob", dimension="trust", value="0.5"),
        ]
        player = Client()
        player.force_login(self.account2)
        for url in urls:
            assert self.builder.get(url).status_code == 200, url
            response = player.get(url)
            text = response.content.decode()
            assert response.status_code == 403 and "for builders" in text, url
            assert FOUNDING not in text and "Lore" not in text.split("</nav>")[-1], url
            response = Client().get(url)
            assert response.status_code == 302 and "login" in response["Location"], url
        # a player's POST changes nothing
        response = player.post(self.lore_url(), {"title": "X", "text": "Y"})
        assert response.status_code == 403 and len(game_lore()) == 1
        response = player.post(
            self.lore_url("lore_entry", "L1"), {"action": "remove", "confirmed": "yes"}
        )
        assert response.status_code == 403 and len(game_lore()) == 1

    def test_the_lore_page_is_linked_from_the_list_and_every_page(self):
        link = f'href="{self.lore_url()}"'
        assert link in self.builder.get(reverse("ai_assistant:list")).content.decode()
        assert link in self.page("memory")


class TestLorePages(WorldTestCase):
    def test_a_game_without_lore_shows_an_empty_book_and_makes_no_script(self):
        text = self.lore_page()
        assert "(0 entries" in text and "No lore entry here" in text
        assert "The game has no lore yet" in self.page("memory", part="lore")
        assert lore_script(make=False) is None

    @override_settings(AI_ASSISTANT_DASHBOARD_PAGE_SIZE=3)
    def test_browse_paged_and_search(self):
        for number in range(7):
            self.add_lore(f"Entry {number}", f"Lore text number {number}.", who="tag:guards")
        self.add_lore("The founding", FOUNDING, "history, town", "Aria, room:Hall")
        text = self.lore_page(page=2)
        assert "Page 2 of 3 (8 in all)" in text
        assert [n for n in range(7) if f"Entry {n}<" in text] == [3, 4, 5]
        assert "tag:guards" in text
        text = self.lore_page(page=3)
        row = text.split('<tr class="lore">')[-1].split("</tr>")[0]
        assert "The founding" in row and "history, town" in row and "aria, room:hall" in row
        assert "river smith Oda" in row
        text = self.lore_page(q="river smith")
        assert text.count('<tr class="lore">') == 1 and "The founding" in text
        assert "No entry matches" in self.lore_page(q="dragons")
        # an assistant filter that is no id shows every entry; an unknown one is a 404
        assert "Every entry, by id" in self.lore_page(assistant="²")
        assert self.builder.get(self.lore_url(assistant=99999)).status_code == 404
        entry = self.lore_page("lore_entry", "L8")
        assert FOUNDING in entry and "by Dev" in entry

    def test_the_memory_tab_lists_the_lore_it_may_know(self):
        self.add_lore("For Aria", "Aria knows the bell.", who="Aria")
        self.add_lore("For guards", "The watch starts at ten.", who="tag:guards")
        self.add_lore("For all", "The river floods in spring.")
        section = (
            self.page("memory", part="lore").split('<section id="lore">')[1].split("</section>")[0]
        )
        assert "For Aria" in section and "For all" in section and "For guards" not in section
        assert "2 entries in all" in section and "(3 in all)" in section
        # what it may know where it stands, in full on the lore page
        text = self.lore_page(assistant=self.aria.id)
        assert "What Aria may know" in text and text.count('<tr class="lore">') == 2

    def test_add_edit_and_remove_round_trip(self):
        by = f"{self.account.username} (web)"
        response = self.builder.post(
            self.lore_url(),
            {"title": "The bell", "text": "It rings at dusk.", "tags": "town", "who": ""},
            follow=True,
        )
        assert response.redirect_chain[-1][0] == self.lore_url("lore_entry", "L1")
        assert "Added lore L1: The bell." in response.content.decode()
        entry = game_lore().get("L1")
        assert (entry["title"], entry["tags"], entry["who"], entry["by"]) == (
            "The bell",
            ["town"],
            [],
            by,
        )
        response = self.builder.post(
            self.lore_url("lore_entry", "L1"),
            {"action": "edit", "field": "who", "value": "Aria, tag:guards"},
            follow=True,
        )
        assert "Lore L1: who changed." in response.content.decode()
        entry = game_lore().get("L1")
        assert entry["who"] == ["aria", "tag:guards"] and entry["edited_by"] == by
        # removal: asked first on its page, which changes nothing
        text = self.lore_page("lore_remove", "L1")
        assert "It rings at dusk." in text and 'name="confirmed" value="yes"' in text
        assert len(game_lore()) == 1
        # a removal not confirmed is refused, and says why
        response = self.builder.post(self.lore_url("lore_entry", "L1"), {"action": "remove"})
        assert response.status_code == 400
        assert "must be confirmed on its confirmation page" in response.content.decode()
        assert len(game_lore()) == 1
        response = self.builder.post(
            self.lore_url("lore_entry", "L1"), {"action": "remove", "confirmed": "yes"}, follow=True
        )
        assert response.redirect_chain[-1][0] == self.lore_url()
        assert "Removed lore L1: The bell." in response.content.decode()
        assert len(game_lore()) == 0
        assert self.builder.get(self.lore_url("lore_entry", "L1")).status_code == 404

    def test_bad_input_changes_nothing_and_says_why(self):
        self.add_lore()
        version = game_lore().version
        cases = [
            ({"title": "", "text": "x"}, "A lore title is 1 to 120 characters"),
            ({"title": "T", "text": ""}, "A lore text is 1 to 1000 characters"),
            ({"title": "T", "text": "x", "who": "castle:keep"}, "cannot say who may know lore"),
            ({"title": "T", "text": "x", "tags": "a!b"}, "is not a tag"),
        ]
        for form, reason in cases:
            response = self.builder.post(self.lore_url(), form)
            text = response.content.decode()
            assert response.status_code == 400 and "Not changed." in text and reason in text
            # what was typed is kept in the form
            assert f'value="{form["title"]}"' in text
        edits = [
            ({"action": "edit", "field": "colour", "value": "red"}, "is not a lore field"),
            ({"action": "edit", "field": "text", "value": "y" * 1001}, "A lore text is 1 to"),
            ({"action": "frobnicate"}, "Unknown action"),
        ]
        for form, reason in edits:
            response = self.builder.post(self.lore_url("lore_entry", "L1"), form)
            assert response.status_code == 400 and reason in response.content.decode()
        response = self.builder.post(
            self.lore_url("lore_entry", "L7"), {"action": "edit", "field": "text", "value": "x"}
        )
        assert response.status_code == 404 and "no lore entry L7" in response.content.decode()
        assert game_lore().version == version and len(game_lore()) == 1
        assert game_lore().get("L1")["text"] == FOUNDING


class TestRelationships(WorldTestCase):
    def test_the_memory_tab_shows_each_dimension_with_its_latest_reason(self):
        self.warm_bob()
        row = self.page("memory", part="people").split('<tr class="person">')[1].split("</tr>")[0]
        warmth = row.split('class="dimension warmth"')[1].split("</td>")[0]
        assert "+0.40" in warmth and "warm" in warmth
        assert "he mended the east door for her" in warmth and "game 2026-01-01 12:00" in warmth
        assert "private" not in warmth
        trust = row.split('class="dimension trust"')[1].split("</td>")[0]
        assert "+0.00" in trust and "neutral" in trust

    def test_a_private_reason_is_labelled_with_whom(self):
        self.warm_bob(private=True)
        row = self.page("memory", part="people").split('<tr class="person">')[1].split("</tr>")[0]
        warmth = row.split('class="dimension warmth"')[1].split("</td>")[0]
        assert "he mended the east door" in warmth and "private to Bob" in warmth
        person = self.page("person", key=f"#{self.char2.id}")
        section = person.split('<section id="relationship">')[1].split("</section>")[0]
        assert "he mended the east door" in section and "private to Bob" in section

    def test_someone_known_only_by_a_relationship_is_listed_with_a_page(self):
        # a relationship without a profile (the command shows it too)
        from ai_assistant.memory.relationships import Relationships

        Relationships(self.handler.brain.entities.store).change(
            "name:cid", "Cid", "trust", value=-0.3, reason="he lied about the key", at=NOW
        )
        assert ">Cid</a>" in self.page("memory", part="people")
        person = self.page("person", key="name:cid")
        assert "he lied about the key" in person and "-0.30" in person

    def test_set_is_confirmed_first_and_recorded_as_the_command_does(self):
        key = self.warm_bob()
        query = {"do": "relationship", "person": key, "dimension": "trust", "value": "0.4"}
        text = self.page("confirm", **query, reason="kept every promise")
        plan = text.split('id="relationship"')[1].split("</table>")[0]
        assert "+0.00 (neutral)" in plan and "+0.40 (trusting)" in plan
        assert "kept every promise" in plan and 'name="confirmed" value="yes"' in text
        assert self.handler.memory.admin.kind("review_log").latest() == []  # asked, not done
        form = {k: v for k, v in query.items() if k != "do"}
        form.update(action="relationship", reason="kept every promise")
        # not confirmed: refused
        text = self.post(**form).content.decode()
        assert (
            "must be confirmed" in text
            and self.handler.memory.admin.kind("review_log").latest() == []
        )
        response = self.post(**form, confirmed="yes")
        assert response.redirect_chain[-1][0] == self.url("memory", part="people")
        assert "Aria&#x27;s trust toward Bob is now +0.40 (was +0.00; recorded)." in (
            response.content.decode()
        )
        state = self.handler.memory.admin.kind("relationships").find(key)[2]
        assert state["trust"]["value"] == 0.4
        change = state["trust"]["changes"][-1]
        by = f"{self.account.username} (web)"
        assert change["reason"] == "kept every promise" and change["by"] == by
        review = self.handler.memory.admin.kind("review_log").latest()[0]
        assert review["by"] == by and "relationship" in str(review.get("action"))
        # from the person's page, back to it
        response = self.post(**{**form, "value": "0.2", "back": "person"}, confirmed="yes")
        assert response.redirect_chain[-1][0] == self.url("person", key=key)

    def test_bad_input_changes_nothing_and_says_why(self):
        key = self.warm_bob()
        before = self.handler.memory.admin.kind("relationships").find(key)[2]
        cases = [
            ({"dimension": "respect", "value": "0.5"}, "is not a relationship dimension"),
            ({"dimension": "trust", "value": "2"}, "trust must be from -1 to 1"),
            ({"dimension": "familiarity", "value": "-0.5"}, "familiarity must be from 0 to 1"),
            ({"dimension": "warmth", "value": "lots"}, "warmth must be a number from -1 to 1"),
            ({"dimension": "trust", "value": "0.5", "reason": "x" * 201}, "at most 200"),
            ({"person": "Nobody", "dimension": "trust", "value": "0.5"}, "knows no one called"),
        ]
        for fields, reason in cases:
            fields = {"person": key, "reason": "", **fields}
            text = self.page("confirm", do="relationship", **fields)
            assert reason in text and 'name="confirmed"' not in text, reason
            text = self.post(action="relationship", confirmed="yes", **fields).content.decode()
            assert reason in text, reason
        assert self.handler.memory.admin.kind("relationships").find(key)[2] == before
        assert self.handler.memory.admin.kind("review_log").latest() == []


class TestGossipLog(WorldTestCase):
    def test_the_chain_newest_first_and_filtered_by_person(self):
        key = self.gossip_from_mira()
        self.handler.brain.gossip_log.add(
            {
                "at": "2026-01-01T13:00:00+00:00",
                "direction": "told",
                "teller": "Aria",
                "to": "Mira",
                "memory_id": "m000001",
                "text": "The well is dry.",
                "chain": "Aria > Mira",
                "trust": 0.7,
                "people": [],
                "location": "Room",
            }
        )
        section = (
            self.page("memory", part="gossip")
            .split('<section id="gossip">')[1]
            .split("</section>")[0]
        )
        rows = section.split('<tr class="gossip">')[1:]
        assert len(rows) == 2
        assert "The well is dry." in rows[0] and "Aria &gt; Mira" in rows[0]
        assert "The east door sticks when it rains." in rows[1]
        assert "Bob &gt; Mira &gt; Aria" in rows[1] and "heard" in rows[1]
        # only the gossip naming Bob, by name or by key
        for person in ("Bob", key):
            section = self.page("memory", gossip_person=person).split('<section id="gossip">')[1]
            section = section.split("</section>")[0]
            assert section.count('<tr class="gossip">') == 1 and "Bob &gt; Mira" in section
        section = self.page("memory", gossip_person="Nobody").split('<section id="gossip">')[1]
        assert "No gossip names" in section.split("</section>")[0]

    @override_settings(AI_ASSISTANT_DASHBOARD_PAGE_SIZE=2)
    def test_paged(self):
        for number in range(30):
            self.handler.brain.gossip_log.add(
                {
                    "at": f"2026-01-01T12:{number:02d}:00+00:00",
                    "direction": "told",
                    "text": f"Gossip {number:02d}.",
                    "chain": "Aria > Mira",
                    "people": [],
                }
            )
        text = self.page("memory", gossip_page=2)
        assert "Page 2 of 2 (30 in all)" in text
        assert [n for n in range(30) if f"Gossip {n:02d}." in text] == [0, 1, 2, 3, 4]


class TestReadingChangesNothing(WorldTestCase):
    def test_no_new_page_writes(self):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        self.add_lore()
        self.warm_bob(private=True)
        self.gossip_from_mira()
        key = f"#{self.char2.id}"
        reads = [
            lambda: self.lore_page(),
            lambda: self.lore_page(q="river smith"),
            lambda: self.lore_page(assistant=self.aria.id),
            lambda: self.lore_page("lore_entry", "L1"),
            lambda: self.lore_page("lore_remove", "L1"),
            lambda: self.page("memory", gossip_person="Bob"),
            lambda: self.page("person", key=key),
            lambda: self.page(
                "confirm", do="relationship", person=key, dimension="trust", value="0.5"
            ),
        ]
        for read in reads:
            read()  # warm: the first read loads the caches
        with CaptureQueriesContext(connection) as queries:
            for read in reads:
                read()
        writes = [
            q["sql"]
            for q in queries.captured_queries
            if q["sql"].split()[0].upper() in ("INSERT", "UPDATE", "DELETE")
            and "django_session" not in q["sql"]
        ]
        assert writes == []
        assert (
            self.handler.memory.admin.kind("review_log").latest() == [] and game_lore().version == 1
        )
