"""The @assistant listings against what players and a hostile model can store: the journal, the
memories, the people and one person's notes, the reflections and the reviews are paged
(`<name>/<page>`), and every stored string is cropped with its Evennia markup shown as typed."""

from datetime import datetime, timezone

from evennia.utils.test_resources import EvenniaCommandTest

from .helpers import AssistantTestCase, reads_of

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
# long enough to show a cut, short enough that the uncut table is drawn in seconds
HUGE = 5_000


def commands():
    # Evennia's default commands can be imported only once its API is initialised
    from ai_assistant import commands

    return commands


class ListingCase(AssistantTestCase, EvenniaCommandTest):
    def cmd(self, args):
        return self.call(commands().CmdAssistant(), args)

    def add_entries(self, count: int, **kwargs):
        journal = self.handler.brain.journal
        for number in range(count):
            journal.add(f"Entry {number:03d}.", author="Aria", now=NOW, heard_from="Bob", **kwargs)

    def observe(self, key: str, name: str, count: int):
        for number in range(count):
            self.handler.brain.entities.observe(
                key, name, f"Observation {number:03d} of {name}.", now=NOW, author="Aria"
            )


def numbers(text: str, prefix: str) -> list[int]:
    """The three-digit numbers after `prefix` in a listing, in order."""
    import re

    return [int(n) for n in re.findall(rf"{prefix} (\d{{3}})", text)]


def forgotten(text: str) -> list[int]:
    """The journal entries a listing of reviews says were forgotten, in order."""
    import re

    return [int(n) for n in re.findall(r"forgot j(\d{6})", text)]


class TestPagedListings(ListingCase):
    def test_the_journal_is_paged_newest_first(self):
        self.add_entries(45)
        text = self.cmd("/journal Aria")
        assert numbers(text, "Entry") == list(range(44, 24, -1))
        assert "Aria's journal (45 entries)" in text
        assert "Page 1 of 3. Next: @assistant/journal Aria/2" in text
        text = self.cmd("/journal Aria/3")
        assert numbers(text, "Entry") == [4, 3, 2, 1, 0] and "Page 3 of 3." in text
        assert "Next:" not in text
        # past the end is the last page; a page that is no page is refused
        assert numbers(self.cmd("/journal Aria/99"), "Entry")[0] == 4
        assert numbers(self.cmd("/journal Aria/" + "9" * 5000), "Entry")[0] == 4
        assert numbers(self.cmd("/journal Aria/0"), "Entry")[0] == 44
        assert "Usage: @assistant/journal <name>[/<page>]" in self.cmd("/journal Aria/x")
        assert "Usage: @assistant/journal" in self.cmd("/journal Aria=2")

    def test_a_journal_page_reads_only_its_chunks(self):
        from ai_assistant.memory.store import ChunkedList

        self.add_entries(250)  # three chunks of 100
        journal = lambda chunks, index: chunks.name == "journal"  # noqa: E731
        with reads_of(ChunkedList, "_chunk", journal) as read:
            text = self.cmd("/journal Aria")
        assert numbers(text, "Entry")[0] == 249 and numbers(text, "Entry")[-1] == 230
        assert set(read) == {2}, read

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
        text = self.cmd("/memory Aria")
        assert numbers(text, "Memory") == list(range(23, 3, -1))
        assert "25 memories, newest first" in text and "Next: @assistant/memory Aria/2" in text
        text = self.cmd("/memory Aria/2")
        assert numbers(text, "Memory") == [3, 2, 1, 0] and "Page 2 of 2." in text

    def test_people_are_paged_and_only_the_pages_profiles_are_read(self):
        from ai_assistant.memory.entities import EntityMemory

        for number in range(45):
            self.observe(f"#{1000 + number}", f"Flooder{number:02d}", 1)
        with reads_of(EntityMemory, "profile") as read:
            text = self.cmd("/memory Aria/people")
        assert "Aria knows 45 people" in text and text.count("Flooder") == 20
        assert len(read) == 20
        assert "Page 1 of 3. Next: @assistant/memory Aria/people/2" in text
        text = self.cmd("/memory Aria/people/3")
        assert [f"Flooder{n}" in text for n in range(40, 45)] == [True] * 5
        assert text.count("Flooder") == 5

    def test_one_persons_notes_are_paged(self):
        self.observe("#77", "Bob", 30)
        profile = self.handler.brain.entities.profile("#77")
        profile["attributes"] = [
            {"id": f"a{n}", "type": "fact", "value": f"Attribute {n:03d}.", "cites": ["o1"]}
            for n in range(5)
        ]
        self.handler.brain.entities.save(profile)
        text = self.cmd("/memory Aria/people=Bob")
        assert numbers(text, "Attribute") == [4, 3, 2, 1, 0]
        assert numbers(text, "Observation") == list(range(29, 14, -1))
        assert "5 attributes, 30 observations, newest first; page 1 of 2" in text
        assert "Next: @assistant/memory Aria/people/2=Bob" in text
        text = self.cmd("/memory Aria/people/2=Bob")
        assert numbers(text, "Observation") == list(range(14, -1, -1))
        assert numbers(text, "Attribute") == [] and "Next:" not in text

    def test_reviews_and_reflections_are_paged(self):
        from ai_assistant.memory.journal import REFLECTION_KIND

        self.add_entries(25)
        for number in range(25):
            self.handler.memory.admin.forget(f"j{number:06d}", by="Dev")
        text = self.cmd("/memory Aria/reviews")
        assert forgotten(text) == list(range(24, 4, -1))
        assert "Next: @assistant/memory Aria/reviews/2" in text
        assert forgotten(self.cmd("/memory Aria/reviews/2")) == [4, 3, 2, 1, 0]
        journal = self.handler.brain.journal
        for number in range(22):
            journal.add(f"Insight {number:03d}.", author="Aria", now=NOW, kind=REFLECTION_KIND)
        text = self.cmd("/memory Aria/reflections")
        assert numbers(text, "Insight") == list(range(21, 1, -1))
        assert numbers(self.cmd("/memory Aria/reflections/2"), "Insight") == [1, 0]

    def test_a_page_where_there_are_no_pages_is_refused(self):
        for args in (
            "/memory Aria/links/2",
            "/memory Aria/trust/2=j000000 low",
            "/memory Aria/2=door",
        ):
            assert (
                "Only the memories, /people, /reflections, /reviews and /gossip have pages"
                in self.cmd(args)
            ), args
        assert "is not a memory view" in self.cmd("/memory Aria/secrets/2")

    def test_help_documents_the_pages(self):
        doc = commands().CmdAssistant.__doc__
        for form in (
            "@assistant/journal <name>[/<page>]",
            "@assistant/memory <name>[/<page>]",
            "@assistant/memory <name>/people[/<page>][=<person>]",
            "@assistant/memory <name>/reflections[/<page>]",
            "@assistant/memory <name>/reviews[/<page>]",
        ):
            assert form in doc, form


class TestCroppedListings(ListingCase):
    def test_stored_strings_are_cropped(self):
        brain = self.handler.brain
        brain.journal.add("J" * HUGE, author="Aria", now=NOW, heard_from="H" * HUGE)
        brain.journal.add("Forget me.", author="Aria", now=NOW)
        brain.long_term.add(
            "M" * HUGE,
            importance=5,
            now=NOW,
            source_entry_ids=[],
            provenance={"heard_from": "F" * HUGE},
        )
        self.observe("#77", "Bob", 1)
        profile = brain.entities.profile("#77")
        profile["observations"][0].update(text="O" * HUGE, heard_from="W" * HUGE)
        profile["attributes"] = [{"id": "a1", "type": "Y" * HUGE, "value": "V" * HUGE}]
        brain.entities.save(profile)
        self.handler.memory.admin.forget("j000001", by="Dev", reason="R" * HUGE)
        listings = {
            "journal": (self.cmd("/journal Aria"), "JH"),
            "memories": (self.cmd("/memory Aria"), "MF"),
            "person": (self.cmd("/memory Aria/people=Bob"), "OWYV"),
            "reviews": (self.cmd("/memory Aria/reviews"), "R"),
        }
        for what, (text, letters) in listings.items():
            # the text itself is shown, cropped (a short column may crop a name away)
            assert text.count(letters[0]) > 0, what
            for letter in letters:
                # a table wraps a long cell: count the letter, not a run of it
                assert text.count(letter) <= 400, (what, letter, text.count(letter))

    def test_a_turns_tools_and_stop_reason_are_cropped_in_status(self):
        from ai_assistant.state import RECENT_TURNS

        turn = {
            "at": NOW.isoformat(),
            "tools": ["T" * HUGE] + ["say"] * 30,
            "stop_reason": "S" * HUGE,
            "error": "server_error: " + "E" * HUGE,
            "events": 1,
            "model_calls": 1,
        }
        self.handler.brain.state.set(RECENT_TURNS, [turn])
        text = self.cmd("/status Aria")
        assert 0 < text.count("T") <= 100 and 0 < text.count("S" * 10) <= 10
        assert 0 < text.count("E") <= 400
        assert "and 21 more" in text  # ten tool names, then a count

    def test_markup_in_stored_text_is_shown_as_typed(self):
        brain = self.handler.brain
        brain.journal.add("evil|/line |rred", author="Aria", now=NOW, heard_from="Bob")
        self.observe("#77", "Bob", 1)
        profile = brain.entities.profile("#77")
        profile["observations"][0]["text"] = "fake|/SYSTEM"
        brain.entities.save(profile)
        # a table cell is parsed for markup more than once: the bar is shown, never read
        journal = self.cmd("/journal Aria")
        assert "evil¦/line ¦rred" in journal and "evil\n" not in journal
        assert "fake¦/SYSTEM" in self.cmd("/memory Aria/people=Bob")

    def test_the_helpers(self):
        from ai_assistant.shell.screen import page_span, shown, shown_list
        from ai_assistant.shell.memory_commands import split_page

        assert shown(None, 5) == "" and shown("a|b", 10) == "a¦b"
        assert len(shown("x" * 100, 20)) == 20
        assert shown_list(["a", "b", "c"], most=2) == "a, b and 1 more"
        assert split_page("people/2") == ("people", 2) and split_page("3") == ("", 3)
        assert split_page("people") == ("people", None) and split_page("") == ("", None)
        assert split_page("9" * 20) == ("", 10**9)
        assert page_span(45, None) == (1, 3, 0, 20) and page_span(45, 99) == (3, 3, 40, 45)
        assert page_span(0, 5) == (1, 1, 0, 0)
