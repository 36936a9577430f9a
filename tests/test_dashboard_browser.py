"""
The dashboard in a real browser: headless Chromium (the system's package, driven by Selenium
through the system's chromedriver) logs in through the website's own login form as a builder,
opens an assistant's page and checks that the chart, the timeline and the link graph are drawn,
goes through every page of the workbench (conversation, memory, context, sleep, settings) and
the game's lore book, makes an edit through a page's form and sees it done, and checks that a
player is refused.

Each page (every tab, and every part of the Memory tab) is saved as a whole-page screenshot
under the test's temporary folder (pytest's `tmp_path`, under `--basetemp` when given); the test
prints where, so a reviewer can look at them (`pytest -s tests/test_dashboard_browser.py`). A
page taller than `HEIGHT_BUDGET` at `WIDTH` fails the test: a long list is paged, not scrolled.

Skipped, with the reason, when Chromium, chromedriver or Selenium is missing; the CI run sets
`AI_ASSISTANT_REQUIRE_BROWSER=1`, which makes their absence a failure.

"""

import os
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pytest
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.servers.basehttp import WSGIServer
from django.db import connections
from django.test.testcases import LiveServerThread
from django.urls import reverse

from ai_assistant.testing.server import tool_call, tool_reply

from .helpers import AssistantTestCase

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
PASSWORD = "a-builder-password"
# the browser's width, and the most a page of the workbench may be tall there (in CSS pixels):
# every tab's main content is on its first screen, and a long list is paged, not scrolled
WIDTH = 1400
HEIGHT_BUDGET = 2500
# the journal entries the test writes: more than a page of them
ENTRIES = 40


def _browser_missing() -> str:
    """Why the browser test cannot run here, or "" when it can."""
    missing = [name for name in ("chromium", "chromedriver") if not _program(name)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package (pip install -e '.[test]')")
    if not missing:
        return ""
    return (
        f"the headless-browser test needs {', '.join(missing)}: on Debian or Ubuntu, "
        "apt-get install chromium chromium-driver"
    )


def _program(name: str) -> str | None:
    return shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)


MISSING = _browser_missing()
if MISSING and os.environ.get("AI_ASSISTANT_REQUIRE_BROWSER") == "1":
    raise RuntimeError(f"AI_ASSISTANT_REQUIRE_BROWSER=1, but {MISSING}")
pytestmark = pytest.mark.skipif(bool(MISSING), reason=MISSING or "browser available")


class SerialWSGIServer(WSGIServer):
    """Serves one request at a time, on the live server's own thread."""

    def __init__(self, *args, connections_override=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.connections_override = connections_override


class SerialLiveServerThread(LiveServerThread):
    """Django's live server, one request at a time: the browser asks for a page and its favicon
    together, and two threads must not share the test's one database connection (an error in
    one would break the test's transaction for the other)."""

    server_class = SerialWSGIServer


class TestDashboardInBrowser(AssistantTestCase):
    @pytest.fixture(autouse=True)
    def screenshots_folder(self, tmp_path):
        """Screenshots go under the test's own temporary folder (kept by pytest)."""
        self.shots = tmp_path / "screenshots"
        self.shots.mkdir()

    def shoot(self, name: str) -> Path:
        """Save the whole page as a screenshot, and note its height against the budget."""
        driver = self.driver
        height = driver.execute_script("return document.documentElement.scrollHeight")
        self.heights[name] = height
        shot = self.shots / f"{name}.png"
        driver.set_window_size(WIDTH, max(height, 600) + self.chrome_height)
        try:
            assert driver.save_screenshot(str(shot))
        finally:
            driver.set_window_size(WIDTH, 1000 + self.chrome_height)
        assert shot.stat().st_size > 10_000 and shot.read_bytes()[:4] == b"\x89PNG"
        return shot

    def assert_pages_fit(self):
        """Every page shot so far fits the height budget (all are shot first, so that a
        reviewer sees the one that does not)."""
        tall = {name: h for name, h in self.heights.items() if h > HEIGHT_BUDGET}
        assert not tall, f"taller than {HEIGHT_BUDGET} px at {WIDTH} px wide: {tall}"

    def setUp(self):
        super().setUp()
        # the page's data: a journal, a person, linked memories, sleep and waking, tokens
        self.handler.sleep(hours=1)
        self.handler.wake("the browser test")
        brain = self.handler.brain
        for number in range(3):
            brain.journal.add(f"Entry number {number}.", author="Aria", now=NOW, heard_from="Bob")
        for number in range(3, ENTRIES):
            brain.journal.add(
                f"Bob talked about the map of the north road, part {number}.",
                author="Aria",
                now=NOW,
                heard_from="Bob",
            )
        brain.entities.observe("#77", "Bob", "Bob likes maps.", now=NOW, author="Aria")
        brain.links.link([("j000000", "j000001", 0.8), ("j000001", "j000002", 0.4)], 5)
        brain.state.set("usage_by_hour", {"2026-01-01T11": {"calls": 3, "prompt": 120}})
        # a turn to see in the conversation: heard, a tool call, said
        self.responder.add(
            tool_reply(tool_call("say", {"text": "Hello there."})), tool_reply(tool_call("noop"))
        )
        self.char1.execute_cmd("say Hello Aria")
        self.tick()
        # many more turns than a page shows, each like that one: the conversation's pages full
        from ai_assistant.memory.turn_log import TurnLog

        log = TurnLog(brain.state)
        turn = log.last()
        for _ in range(40):
            log.add(dict(turn))
        self.account.set_password(PASSWORD)
        self.account.save()
        self.server = self.start_web_server()
        self.driver = self.start_browser()
        self.heights = {}
        # the window's height beyond its page (Chromium's own frame, none when headless)
        self.chrome_height = self.driver.execute_script(
            "return window.outerHeight - window.innerHeight"
        )

    def start_web_server(self) -> LiveServerThread:
        # the test's in-memory database is shared with the server's thread, as Django's own
        # live-server tests do it
        shared = {alias: connections[alias] for alias in connections}
        for connection in shared.values():
            connection.inc_thread_sharing()
        server = SerialLiveServerThread(
            "127.0.0.1", StaticFilesHandler, connections_override=shared
        )
        server.daemon = True
        server.start()
        server.is_ready.wait()
        if server.error:
            raise server.error

        def stop():
            server.terminate()
            for connection in shared.values():
                connection.dec_thread_sharing()

        self.addCleanup(stop)
        return server

    def start_browser(self):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = _program("chromium")
        # no sandbox as root; no background connections, which a closed network refuses
        for flag in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--window-size={WIDTH},1000",
            f"--user-data-dir={tempfile.mkdtemp(prefix='chromium-')}",
        ):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(_program("chromedriver")), options=options)
        driver.set_page_load_timeout(30)
        self.addCleanup(driver.quit)
        return driver

    def wait_for(self, condition, seconds: float = 20):
        """Wait until `condition(driver)` holds: a click starts a page load, it does not end it.

        While the page changes, an element asked for may belong to the page that is going: the
        driver says so as a stale element, or (Chromium's inspector, seen on CI) as a plain
        `WebDriverException` ("Node with given id does not belong to the document"). Both are
        asked again; a condition that never holds still times out.

        """
        from selenium.common.exceptions import (
            NoSuchElementException,
            StaleElementReferenceException,
            WebDriverException,
        )
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(
            self.driver,
            seconds,
            ignored_exceptions=(
                NoSuchElementException,
                StaleElementReferenceException,
                WebDriverException,
            ),
        ).until(condition)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.port}{path}"

    def test_a_builder_logs_in_and_sees_the_chart_and_the_graph(self):
        from selenium.webdriver.common.by import By

        driver = self.driver
        page = reverse("ai_assistant:detail", args=[self.aria.id])
        driver.get(self.url(page))
        # not logged in: the website's login form, which returns to the page afterwards
        assert "login" in driver.current_url
        driver.find_element(By.NAME, "username").send_keys(self.account.username)
        driver.find_element(By.NAME, "password").send_keys(PASSWORD)
        driver.find_element(By.CSS_SELECTOR, "form [type=submit]").click()
        self.wait_for(
            lambda d: d.current_url.endswith(page)
            and d.find_element(By.TAG_NAME, "h1").text.startswith("Aria")
        )

        chart = driver.find_element(By.CSS_SELECTOR, "svg.usage")
        assert chart.size["width"] > 100 and chart.size["height"] > 100
        assert len(chart.find_elements(By.TAG_NAME, "rect")) == 1
        assert len(chart.find_elements(By.TAG_NAME, "polyline")) == 1
        timeline = driver.find_element(By.CSS_SELECTOR, "svg.timeline")
        assert len(timeline.find_elements(By.TAG_NAME, "rect")) == 2
        # the overview folds the graph away (it is on the Memory tab): open it
        driver.find_element(By.CSS_SELECTOR, "#links summary").click()
        graph = driver.find_element(By.CSS_SELECTOR, "svg.links")
        assert graph.is_displayed()
        assert len(graph.find_elements(By.TAG_NAME, "circle")) == 3
        assert len(graph.find_elements(By.TAG_NAME, "line")) == 2
        # drawn: the browser laid the nodes out where the page put them, inside the graph
        box = graph.rect
        for node in graph.find_elements(By.TAG_NAME, "circle"):
            assert box["x"] <= node.rect["x"] <= box["x"] + box["width"]
            assert box["y"] <= node.rect["y"] <= box["y"] + box["height"]
        # the journal is folded away too (it is on the Memory tab)
        assert not driver.find_element(By.CSS_SELECTOR, "#journal table").is_displayed()
        driver.find_element(By.CSS_SELECTOR, "#links summary").click()  # folded again

        # inside the website: its menu, with the builders' link to the dashboard
        assert driver.find_element(By.CSS_SELECTOR, "nav.navbar #ai-assistant-menu").is_displayed()
        shot = self.shoot("overview")
        print(f"screenshot: {shot}")
        self.visit_each_page()
        self.edit_through_a_page()
        print(f"screenshots of every page: {self.shots}; heights: {self.heights}")
        self.assert_pages_fit()

    def log_in(self, account, page: str):
        from selenium.webdriver.common.by import By

        driver = self.driver
        driver.get(self.url(page))
        driver.find_element(By.NAME, "username").send_keys(account.username)
        driver.find_element(By.NAME, "password").send_keys(PASSWORD)
        driver.find_element(By.CSS_SELECTOR, "form [type=submit]").click()

    def open_tab(self, name: str):
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.LINK_TEXT, name).click()
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, ".tabs a.active").text == name)

    def open_part(self, name: str):
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.CSS_SELECTOR, "#memory-parts").find_element(
            By.LINK_TEXT, name
        ).click()
        self.wait_for(
            lambda d: d.find_element(By.CSS_SELECTOR, "#memory-parts a.active").text == name
        )

    def visit_each_page(self):
        from selenium.webdriver.common.by import By

        driver = self.driver
        self.open_tab("Conversation")
        card = driver.find_element(By.CSS_SELECTOR, ".turn-card")
        assert "Hello Aria" in card.text and "say: Hello there." in card.text
        # the tool calls fold under the turn; the noop that ended it is not one of them
        assert not card.find_element(By.CSS_SELECTOR, "table.calls").is_displayed()
        card.find_element(By.CSS_SELECTOR, "details.turn-details summary").click()
        assert len(card.find_elements(By.CSS_SELECTOR, "tr.call")) == 1
        self.shoot("conversation")

        self.open_tab("Memory")
        # the journal first, paged: its newest entries, and the way to the older ones
        rows = driver.find_elements(By.CSS_SELECTOR, "#journal tr.entry")
        assert 0 < len(rows) < ENTRIES and f"part {ENTRIES - 1}." in rows[0].text
        assert f"({ENTRIES} in all)" in driver.find_element(By.CSS_SELECTOR, ".pager").text
        self.shoot("memory-journal")
        for part in (
            "Memories",
            "People",
            "Reflections",
            "Digests",
            "Reminders",
            "Gossip",
            "Corrections",
            "Core memory",
            "Lore",
            "Links",
        ):
            self.open_part(part)
            self.shoot(f"memory-{part.lower().replace(' ', '-')}")
        graph = driver.find_element(By.CSS_SELECTOR, "svg.links")
        labels = [t.text for t in graph.find_elements(By.TAG_NAME, "text")]
        assert "Entry number 0." in labels  # a memory's text, not its id
        search = driver.find_element(By.NAME, "q")
        search.send_keys("entry number")
        search.submit()
        self.wait_for(lambda d: d.find_elements(By.CSS_SELECTOR, "#found tr.found"))
        self.shoot("memory-search")

        self.open_tab("Context")
        parts = driver.find_elements(By.CSS_SELECTOR, "#parts tr.part")
        assert [p.text.split(" ")[0] for p in parts][:2] == ["System", "Tool"]
        assert "A cheerful librarian." in driver.find_element(By.ID, "system").text
        assert "sk-test-secret" not in driver.page_source
        self.shoot("context")

        self.open_tab("Sleep")
        timeline = driver.find_element(By.CSS_SELECTOR, "svg.timeline")
        assert len(timeline.find_elements(By.TAG_NAME, "rect")) == 2
        assert "awake" in driver.find_element(By.CSS_SELECTOR, "#timeline .legend").text
        assert driver.find_elements(By.CSS_SELECTOR, "tr.sleep")
        self.shoot("sleep")

        self.open_tab("Settings")
        assert driver.find_element(By.ID, "setting-tick_rate")
        self.shoot("settings")

        # the game's lore book, game-wide: from the link beside the tabs
        from ai_assistant.shell.lore_book import game_lore

        game_lore().add("The bell", "The bell rings at dusk.", "town", None, by="Dev")
        driver.find_element(By.ID, "lore-link").click()
        self.wait_for(lambda d: d.find_element(By.TAG_NAME, "h1").text.startswith("Lore"))
        row = driver.find_element(By.CSS_SELECTOR, "#lore-entries tr.lore")
        assert "The bell" in row.text and "The bell rings at dusk." in row.text
        assert driver.find_element(By.ID, "lore-add-form")
        self.shoot("lore")
        driver.back()
        self.wait_for(lambda d: d.find_element(By.ID, "setting-tick_rate"))

    def edit_through_a_page(self):
        """A builder's edit round trip: the tick rate changed from the settings page, then a
        memory forgotten after its confirmation page."""
        from selenium.webdriver.common.by import By

        driver = self.driver
        row = driver.find_element(By.ID, "setting-tick_rate")
        row.find_element(By.NAME, "value").send_keys("45")
        row.find_element(By.TAG_NAME, "button").click()
        self.wait_for(lambda d: "tick_rate is now 45" in d.find_element(By.TAG_NAME, "body").text)
        assert self.handler.config().tick_rate == 45
        self.shoot("settings-changed")

        self.open_tab("Memory")
        search = driver.find_element(By.NAME, "q")
        search.send_keys("entry number 2")
        search.submit()
        self.wait_for(lambda d: d.find_elements(By.CSS_SELECTOR, "#found tr.found"))
        row = [
            r
            for r in driver.find_elements(By.CSS_SELECTOR, "#found tr.found")
            if r.find_element(By.TAG_NAME, "td").text == "j000002"
        ][0]
        row.find_element(By.LINK_TEXT, "forget").click()
        self.wait_for(lambda d: d.find_elements(By.ID, "confirm-form"))
        assert "Entry number 2." in driver.find_element(By.ID, "memory").text
        self.shoot("confirm-forget")
        assert self.handler.memory.admin.kind("review_log").latest() == []  # asked, not done
        driver.find_element(By.CSS_SELECTOR, "#confirm-form button").click()
        self.wait_for(lambda d: "Forgotten: j000002" in d.find_element(By.TAG_NAME, "body").text)
        review = self.handler.memory.admin.kind("review_log").latest()[0]
        assert review["action"] == "forget" and review["id"] == "j000002"
        self.shoot("forgotten")

    def test_a_non_builder_is_refused(self):
        from selenium.webdriver.common.by import By

        self.account2.set_password(PASSWORD)
        self.account2.save()
        driver = self.driver
        driver.get(self.url(reverse("ai_assistant:list")))
        driver.find_element(By.NAME, "username").send_keys(self.account2.username)
        driver.find_element(By.NAME, "password").send_keys(PASSWORD)
        driver.find_element(By.CSS_SELECTOR, "form [type=submit]").click()
        self.wait_for(lambda d: "for builders" in d.find_element(By.TAG_NAME, "body").text)
        assert "Aria" not in driver.page_source
        # the refusal is a page of the website, with its menu but no link to the dashboard
        assert driver.find_element(By.CSS_SELECTOR, "nav.navbar")
        assert not driver.find_elements(By.ID, "ai-assistant-menu")
        # every page of the workbench refuses the player alike
        for name in ("conversation", "memory", "context", "sleep", "settings"):
            driver.get(self.url(reverse(f"ai_assistant:{name}", args=[self.aria.id])))
            self.wait_for(lambda d: "for builders" in d.find_element(By.TAG_NAME, "body").text)
        print(f"screenshot: {self.shoot('refused')}")
