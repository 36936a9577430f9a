"""`help @assistant` fits one page and points to its topics (Evennia's help subtopics), and
`@assistant/set` puts the settings most builders change first."""

from evennia.utils.test_resources import EvenniaCommandTest

from .helpers import AssistantTestCase

TOPICS = ("manage", "memory", "sleep", "lore", "settings", "dashboard")


def commands():
    from ai_assistant import commands

    return commands


class TestHelpTopics(AssistantTestCase, EvenniaCommandTest):
    def help(self, args: str) -> str:
        from evennia.commands.default.help import CmdHelp
        from evennia.utils.ansi import parse_ansi

        cmdset = commands().AssistantCmdSet()
        cmdset.add(CmdHelp())
        text = self.call(CmdHelp(), args, caller=self.char1, cmdset=cmdset)
        return parse_ansi(text, strip_ansi=True)

    def test_the_main_page_fits_one_screen_and_names_its_topics(self):
        text = self.help("@assistant")
        lines = text.splitlines()
        assert len(lines) <= 40, len(lines)  # one page, with Evennia's own frame and topic list
        for topic in TOPICS:
            assert f"help @assistant/{topic}" in text, topic
        # the detail of a switch lives in its topic, not on the main page
        assert "rollback - restore its memory" not in text and "Page [" not in text

    def test_every_topic_fits_one_page(self):
        for topic in TOPICS:
            text = self.help(f"@assistant/{topic}")
            # Evennia's pager pages at the client's height (CLIENT_DEFAULT_HEIGHT, 45)
            assert "Page [" not in text and len(text.splitlines()) <= 40, (topic, len(text))
        # what a topic leaves out is in the reference it names
        assert "docs/using.md" in self.help("@assistant/memory")
        assert "docs/lifecycle.md" in self.help("@assistant/sleep")

    def test_each_topic_shows_its_own_switches(self):
        for topic, says in (
            ("memory", "journal  - the assistant's journal entries"),
            ("sleep", "rollback - restore its memory"),
            ("lore", "The game's lore book, shared by every assistant"),
            ("settings", "the few most builders change"),
            ("dashboard", "/assistants/"),
            ("manage", "clear    - reset its error counts"),
        ):
            text = self.help(f"@assistant/{topic}")
            assert says in text, (topic, text[:300])
            assert "No help entry found" not in text


def test_the_settings_changed_first_are_real_keys_with_meanings():
    from ai_assistant.conf import ESSENTIAL_KEYS, AssistantConfig

    assert 4 <= len(ESSENTIAL_KEYS) <= 10
    for key in ESSENTIAL_KEYS:
        assert AssistantConfig.model_fields[key].description, key
