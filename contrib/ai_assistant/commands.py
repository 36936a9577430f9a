"""
Commands: `@assistant` for builders, and a `page` that also reaches assistants.

Add `AssistantCmdSet` to your `CharacterCmdSet` (see the README). The commands only parse and
format: every operation goes through the assistant's handler (`character.assistant`), which
validates it and raises `AssistantError` with a message for the builder.

"""

import re

from django.conf import settings
from evennia.commands.cmdset import CmdSet
from evennia.commands.default.comms import CmdPage
from evennia.utils.evmore import EvMore
from evennia.utils.evtable import EvTable
from evennia.utils.utils import class_from_module, crop, fill

from .conf import config_keys
from .handler import AssistantError, audience_label, create_assistant, find_assistants
from .reminders import source as reminder_source

_DEFAULT_COMMAND_CLASS = class_from_module(settings.COMMAND_DEFAULT_CLASS)
_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9 '\-]{0,39}$")
# tables fit an 80-column client
WIDTH = 78
PROGRESS_WIDTH = 20
# rows of a paged listing (journal, memories, people, a person's notes, reflections, reviews):
# EvMore pages the screen, this bounds what is read and drawn; `<name>/<page>` picks a page
PAGE_SIZE = 20
# the most characters shown of a stored name (a person, a tool, a source) and of a text
NAME_CHARS = 40
TEXT_CHARS = 300
# what to do about each kind of model error, shown in /status
ERROR_ADVICE = {
    "not_configured": "set AI_ASSISTANT_API_KEY (or OPENAI_API_KEY), or AI_ASSISTANT_BASE_URL "
    "for a local server, then reload",
    "auth": "check the API key the game uses (AI_ASSISTANT_API_KEY or OPENAI_API_KEY)",
    "connection": "check AI_ASSISTANT_BASE_URL and that the model server is running",
    "timeout": "the provider is slow: raise request_timeout, or try again later",
    "rate_limit": "the provider is limiting requests: the assistant backs off and retries",
    "server_error": "the provider failed: the assistant backs off and retries",
    "bad_request": "the provider refused the request: check AI_ASSISTANT_MODEL and the server log",
    "context_budget": "raise max_context_tokens or lower memory_block_tokens",
}
MEMORY_VIEWS = ("links", "people", "reflections", "reviews", "forget", "trust")
# the memory views with pages ("" is the list of memories)
PAGED_VIEWS = ("", "people", "reflections", "reviews")
# switches whose refusals say that nothing was changed
SWITCHES_WITH_TARGET = (
    "status",
    "set",
    "journal",
    "memory",
    "core",
    "sleep",
    "wake",
    "instruct",
    "tick",
    "pause",
    "resume",
    "clear",
    "debt",
    "sleeps",
    "trigger",
    "rollback",
)
SWITCHES_THAT_EDIT = ("set", "core", "debt", "trigger", "rollback")
# answers that confirm a rollback; anything else cancels it
YES = ("y", "yes")


def progress_bar(done: int, total: int, width: int = PROGRESS_WIDTH) -> str:
    """Draw a text progress bar such as `[#####-----] 5/10`.

    Args:
        done (int): How much is done.
        total (int): How much there is in all.
        width (int, optional): The bar's width in characters, brackets excluded.

    Returns:
        str: The bar, or "nothing to consolidate" when `total` is 0.

    """
    if not total:
        return "nothing to consolidate"
    filled = int(width * done / total)
    return f"[{'#' * filled}{'-' * (width - filled)}] {done}/{total}"


def _when(iso: str | None) -> str:
    """An ISO time as `YYYY-MM-DD HH:MM`."""
    return (iso or "")[:16].replace("T", " ") or "-"


def _short_when(iso: str | None) -> str:
    """An ISO time as `MM-DD HH:MM`, for table columns."""
    return (iso or "")[5:16].replace("T", " ") or "-"


def render_table(columns: list[tuple[str, int]], rows: list) -> str:
    """An EvTable of `rows` with these (header, width) columns.

    The widths (borders and padding included) add up to at most `WIDTH`, so the table fits an
    80-column client; longer cells wrap inside their column.

    Args:
        columns (list): (header, width) for each column.
        rows (list): The rows, each a sequence of cells.

    Returns:
        str: The rendered table.

    """
    table = EvTable(*(f"|w{title}|n" for title, _ in columns))
    for row in rows:
        table.add_row(*row)
    for index, (_, width) in enumerate(columns):
        table.reformat_column(index, width=width)
    return str(table)


def shown(value, width: int) -> str:
    """A stored value as a listing shows it: cropped, and never Evennia markup.

    What the listings show was said by players or written by the model, of any length and
    with any `|` codes: a line break or a colour in a builder's listing must not be theirs.
    Doubling `|` would not do in a table: EvTable parses a cell's markup twice before the
    session parses it again. So every `|` becomes `¦`, which no parser reads, in a table cell
    and on a plain line alike.

    Args:
        value (object): The value; None shows as "".
        width (int): The most characters kept (a cropped value ends in "[...]").

    Returns:
        str: The text, cropped, every `|` shown as `¦`.

    """
    text = "" if value is None else str(value)
    return crop(text, width).replace("|", "\N{BROKEN BAR}")


def shown_list(values, width: int = NAME_CHARS, most: int = 10) -> str:
    """Stored values as one line: at most `most` of them, each through `shown`, then how many
    more.

    Args:
        values (list): The values (a single value counts as one).
        width (int, optional): The most characters of each.
        most (int, optional): The most values listed.

    Returns:
        str: The values, comma-separated.

    """
    if not isinstance(values, (list, tuple)):
        values = [values] if values else []
    line = ", ".join(shown(value, width) for value in values[:most])
    return line + (f" and {len(values) - most} more" if len(values) > most else "")


def split_page(sub: str) -> tuple[str, int | None]:
    """Split a page number off the end of `<name>/...`: `people/2` is ("people", 2).

    Args:
        sub (str): What follows the assistant's name and its first `/`.

    Returns:
        tuple: (the rest, the page number or None); a page number of more than nine digits
            counts as 10**9 (past the last page).

    """
    rest, slash, last = sub.rpartition("/")
    if not last.isdigit():
        return sub, None
    return (rest if slash else ""), (int(last) if len(last) <= 9 else 10**9)


def page_span(total: int, page: int | None, size: int = PAGE_SIZE) -> tuple[int, int, int, int]:
    """Where one page of a listing starts and ends, a page past the end being the last.

    Args:
        total (int): How many items there are.
        page (int or None): The page asked for (1 is the first; None is the first).
        size (int, optional): Items a page.

    Returns:
        tuple: (the page shown, the number of pages, its first index, the index after it).

    """
    pages = max(1, -(-total // size))
    page = min(max(1, page or 1), pages)
    return page, pages, (page - 1) * size, min(page * size, total)


def newest_memories(store, start: int, stop: int) -> list:
    """The long-term memories not forgotten, newest first, from `start` to `stop`.

    Only the `MemoryStore` protocol is used (`count`, `recent`): the newest memories are read
    down to the page's end (further back when some were forgotten), never the whole store.

    Args:
        store (MemoryStore): The assistant's long-term store.
        start (int): The first position, newest first.
        stop (int): The position after the last.

    Returns:
        list: The memories of the page.

    """
    total = store.count()
    if start >= stop or not total:
        return []
    look = stop
    while True:
        found = store.recent(look)
        if len(found) >= stop or look >= total:
            return list(found[start:stop])
        look = min(total, look * 2)


def _person_rows(profile: dict) -> list:
    """A profile's attributes, then its observations, each newest first: what /people=<person>
    pages."""
    attributes = list(profile.get("attributes") or [])
    observations = list(profile.get("observations") or [])
    return [("a", a) for a in reversed(attributes)] + [("o", o) for o in reversed(observations)]


class CmdAssistant(_DEFAULT_COMMAND_CLASS):
    """
    create, inspect and manage AI assistants

    Usage:
      @assistant[/list]
      @assistant/create <name>[=<persona>]
      @assistant/status <name>
      @assistant/set <name>[/<key>=<value>]
      @assistant/journal <name>[/<page>]
      @assistant/memory <name>[/<page>]
      @assistant/memory <name>=<query>
      @assistant/memory <name>/links
      @assistant/memory <name>/people[/<page>][=<person>]
      @assistant/memory <name>/reflections[/<page>]
      @assistant/memory <name>/forget=<memory id>
      @assistant/memory <name>/trust=<memory id> <level>
      @assistant/memory <name>/reviews[/<page>]
      @assistant/core <name>[/<key>[=<value>]]
      @assistant/sleep <name>[=<hours> [light|deep] [<reason>]]
      @assistant/wake <name>[=<reason>]
      @assistant/debt <name>[=<1-3> <reason>]
      @assistant/sleeps <name>
      @assistant/rollback <name>[=<sleep id>]
      @assistant/trigger <name>[[/<max fires>]=<pattern>: <reminder>]
      @assistant/trigger <name>/remove=<reminder id>
      @assistant/instruct <name>=<instruction>
      @assistant/tick <name>
      @assistant/pause <name>
      @assistant/resume <name>
      @assistant/clear <name>

    Switches:
      list     - list all assistants.
      create   - create an assistant here; prints its dbref.
      status   - mode, tick rate, pending events, context use, model usage, errors.
      set      - without a key, every setting with its current value; with
                 <key>=<value>, change one (validated). The value 'default'
                 drops this assistant's override. <key> 'persona' sets its persona.
      journal  - the assistant's journal entries, newest first, 20 a page;
                 <name>/2 shows the second page.
      memory   - its long-term memories, newest first, 20 a page (<name>/2
                 for the second); with =<query>, everything it would
                 recall for <query>, ranked, with scores, sources and who may
                 know each (you see all). /links: memories it has linked;
                 /people: the people it knows (=<person> for one profile, its
                 attributes and observations); /reflections: its insights;
                 /forget=<id>: make it forget one memory (j000012, m000003,
                 #12/o3); /trust=<id> <low|medium|high|0-1>: set how far it
                 trusts one; /reviews: the corrections made, and by whom.
                 /people, /reflections and /reviews are paged the same way:
                 /people/2, /people/2=<person>, /reviews/3. Long texts are
                 cropped; the dashboard shows more.
      core     - its core memory: the notes in every prompt. <key>=<value> sets
                 a note, <key>= removes it. Your notes are pinned: the
                 assistant reads them and cannot change them. Its own notes
                 show who they were written for (core_notes_per_person each).
      sleep    - put it to sleep now (default 4 hours, light). Light sleep
                 wakes on urgent events, deep only when the time is up. The
                 safeguards the assistant itself must pass do not bind you.
      wake     - wake it now.
      debt     - its sleep debt: each turn adds 0-3 by its memory writes and
                 tool calls; Alert 0-3, Drowsy 4-6, Sleepy 7-9 (it is told to
                 consider sleep), Must Sleep 10+ (told to sleep). A completed
                 sleep pays it off. =<1-3> <reason> adds points by hand.
      sleeps   - its sleeps, newest first: how each began, how deep, the
                 phases done, the debt paid, what was consolidated, calls.
      rollback - restore its memory as it was when a sleep began (default: the
                 latest sleep with a snapshot), undoing that sleep, every later
                 one, and what it learned awake since. Shows what would change
                 and asks first. Only while it is awake. The last snapshots_kept
                 sleeps can be rolled back.
      trigger  - its reminders: when <pattern> (a name, word or place) comes
                 up in what it hears, <reminder> rides in that turn, at most
                 <max fires> times (default 3, 1-20), shown to it as information
                 with who set it. It sets its own with the set_reminder tool (at
                 most max_triggers, max_triggers_per_person for one player);
                 builders' reminders have room of their own. /remove=<id>
                 removes one.
      instruct - give the assistant a builder instruction (heard as a direct
                 message with builder authority).
      tick     - run one tick now.
      pause    - stop acting (it keeps hearing; events wait in its queue).
      resume   - start acting again.
      clear    - reset its error counts, last error and back-off: after
                 fixing the model's settings, its next tick tries again.

    Examples:
      @assistant/create Aria=A cheerful librarian who loves riddles.
      @assistant/set Aria
      @assistant/set Aria/tick_rate=10
      @assistant/set Aria/respond_to_ambient=true
      @assistant/instruct Aria=Greet newcomers and tell them about the library.
      @assistant/status Aria
      @assistant/sleep Aria=2 deep quiet hours
      @assistant/debt Aria
      @assistant/debt Aria=2 ran the harvest festival all day
      @assistant/sleeps Aria
      @assistant/rollback Aria=s4
      @assistant/trigger Aria=Mira: give her the letter from her brother
      @assistant/trigger Aria/remove=t2
      @assistant/memory Aria=east door
      @assistant/memory Aria/people=Bob
      @assistant/memory Aria/people/2
      @assistant/journal Aria/3
      @assistant/memory Aria/forget=m000012
      @assistant/memory Aria/trust=j000031 low

    Name an assistant by its name, an alias or its dbref (#12). Assistants act
    only through their tools (speak, emote, whisper, journal); what players
    tell them is information, never orders.
    """

    key = "@assistant"
    aliases = ["assistant"]
    switch_options = ("list", "create", *SWITCHES_WITH_TARGET)
    locks = "cmd:perm(Builder)"
    help_category = "Building"

    def parse(self):
        """Split `<name>[/<key>]` off the left-hand side."""
        super().parse()
        name, _, sub = (self.lhs or "").partition("/")
        self.target_name = name.strip()
        self.subkey = sub.strip()
        self.target = None

    def func(self):
        """Run the switch given (default /list) on the assistant named, if any."""
        switch = self.switches[0] if self.switches else "list"
        if switch in SWITCHES_WITH_TARGET:
            self.target = self.find_target()
            if self.target is None:
                return
        try:
            # a switch that asks a question returns its generator (Evennia's `yield` prompt)
            return getattr(self, f"do_{switch}")()
        except AssistantError as err:
            if switch in SWITCHES_THAT_EDIT:
                self.msg(f"Not changed. {err}")
            else:
                self.msg(f"{self.target.key if self.target else 'Assistant'}: {err}")

    def find_target(self):
        """Find the one assistant the arguments name; say why when there is none.

        Returns:
            Object or None: The assistant, or None when none or several match.

        """
        name = self.target_name
        if not name:
            self.msg(f"Name an assistant. Usage: {self.key}/{self.switches[0]} <name>")
            return None
        matches = find_assistants(name)
        if len(matches) == 1:
            return matches[0]
        if matches:
            listed = ", ".join(f"{obj.key}({obj.dbref})" for obj in matches)
            self.msg(f"Several assistants are called '{name}': {listed}. Use the dbref.")
            return None
        known = ", ".join(f"{obj.key}({obj.dbref})" for obj in find_assistants()) or "none yet"
        self.msg(f"No assistant called '{name}'. Assistants: {known}.")
        return None

    @property
    def handler(self):
        """The handler of the target assistant.

        Returns:
            AssistantHandler: `self.target.assistant`.

        """
        return self.target.assistant

    def more(self, text: str) -> None:
        """Long output, paged with EvMore for a player; at once for a caller without a
        session (a script, a headless demo), whom EvMore would show nothing.

        Args:
            text (str): What to show.

        """
        if self.caller.sessions.get():
            EvMore(self.caller, text)
        else:
            self.msg(text)

    # ---- switches -------------------------------------------------------------------------

    def do_list(self):
        """Show every assistant in a table, and the usage when no switch was given."""
        assistants = find_assistants()
        if not assistants:
            self.msg("There are no assistants yet. Create one with @assistant/create <name>.")
            return
        self.msg(self.format_list(assistants))
        if not self.switches:
            self.msg(
                f"Usage: {self.key}/<switch> [<name>...]. Switches: "
                f"{', '.join(self.switch_options)}. See 'help {self.key}'."
            )

    def do_create(self):
        """Create an assistant in the caller's room, with the persona after `=`."""
        name = self.target_name
        if not _NAME_RE.match(name):
            self.msg(
                "Give the assistant a name of 1-40 characters: letters first, then letters, "
                "digits, spaces, ' or -. Usage: @assistant/create <name>[=<persona>]"
            )
            return
        location = self.caller.location
        if not location:
            self.msg("You must be in a room to create an assistant there.")
            return
        same = find_assistants(name)
        assistant = create_assistant(name, location, self.rhs or "")
        self.msg(f"Created assistant {assistant.key} ({assistant.dbref}) in {location.key}.")
        if same:
            listed = ", ".join(f"{obj.key}({obj.dbref})" for obj in same)
            self.msg(f"Note: an assistant of that name already exists: {listed}. Use dbrefs.")

    def do_status(self):
        """Show the target assistant's status."""
        self.msg(self.format_status(self.target, self.handler.status()))

    def do_set(self):
        """Show every setting of the assistant, one setting, or change one."""
        if not self.subkey:
            if self.rhs is not None:
                self.msg("Usage: @assistant/set <name>/<key>=<value>, or @assistant/set <name>.")
                return
            self.more(self.format_options(self.target, self.handler.options()))
            return
        if self.rhs is None:
            row = next((r for r in self.handler.options() if r[0] == self.subkey), None)
            if row is None:
                self.msg(f"Unknown key '{self.subkey}'. Keys: {', '.join(config_keys())}, persona.")
                return
            self.msg(f"{row[0]} = {row[1]!r} ({row[2]})")
            return
        value = self.handler.set_option(self.subkey, self.rhs)
        if self.subkey == "persona":
            self.msg(f"{self.target.key}'s persona is now: {value}")
        elif self.rhs.strip().lower() == "default":
            self.msg(f"{self.target.key}: {self.subkey} set to its default.")
        else:
            self.msg(f"{self.target.key}: {self.subkey} set to {value!r}.")

    def do_journal(self):
        """Show one page of the assistant's journal, newest first (`<name>/<page>`)."""
        rest, page = split_page(self.subkey)
        if rest or self.rhs is not None:
            self.msg("Usage: @assistant/journal <name>[/<page>]")
            return
        journal = self.handler.brain.journal
        total = len(journal)
        if not total:
            self.msg(f"{self.target.key}'s journal is empty.")
            return
        page, pages, start, stop = page_span(total, page)
        # newest first, counted from the end: only the page's chunks are read
        entries = journal.entries.slice(total - stop, total - start)
        text = self.format_journal(self.target, entries, total=total)
        self.more(text + self.page_footer(f"journal {self.target.key}", page, pages))

    @staticmethod
    def page_footer(form: str, page: int, pages: int, after: str = "") -> str:
        """The line under a paged listing: which page, and how to see the next.

        Args:
            form (str): The command after `@assistant/`, up to the page (`journal Aria`).
            page (int): The page shown.
            pages (int): How many pages there are.
            after (str, optional): What follows the page in the command (`=Bob`).

        Returns:
            str: The line, with its leading line break.

        """
        line = f"\nPage {page} of {pages}."
        if page < pages:
            line += f" Next: @assistant/{form}/{page + 1}{shown(after, NAME_CHARS)}"
        return line

    def do_memory(self):
        """Show the assistant's memories, or one of the memory views (/links, /people ...);
        `/<page>` after the name or view pages the listings."""
        view, page = split_page(self.subkey)
        view = view.lower()
        usage = "Usage: @assistant/memory <name>[/<view>][/<page>][=<query or person>]"
        if view and view not in MEMORY_VIEWS:
            self.msg(
                f"'{self.subkey}' is not a memory view. Use one of: {', '.join(MEMORY_VIEWS)}. "
                + usage
            )
            return
        if page is not None and (view not in PAGED_VIEWS or (not view and self.rhs)):
            self.msg(f"Only the memories, /people, /reflections and /reviews have pages. {usage}")
            return
        if view == "links":
            rows = self.handler.memory_links()
            if not rows:
                self.msg(f"{self.target.key} has linked no memories yet (links form in sleep).")
                return
            self.more(self.format_links(self.target, rows))
            return
        if view == "people":
            self.show_people((self.rhs or "").strip(), page)
            return
        if view == "forget":
            memory_id = (self.rhs or "").strip()
            if not memory_id:
                self.msg("Usage: @assistant/memory <name>/forget=<memory id>")
                return
            try:
                gone = self.handler.forget(memory_id, by=self.caller.key)
            except AssistantError as err:
                self.msg(f"Not changed. {err}")
                return
            self.msg(f"{self.target.key} forgot {', '.join(gone)} (recorded).")
            return
        if view == "trust":
            memory_id, _, level = (self.rhs or "").strip().partition(" ")
            if not memory_id or not level.strip():
                self.msg("Usage: @assistant/memory <name>/trust=<memory id> <low|medium|high|0-1>")
                return
            try:
                trust, before = self.handler.set_trust(memory_id, level, by=self.caller.key)
            except AssistantError as err:
                self.msg(f"Not changed. {err}")
                return
            was = "its source's" if before is None else f"{before:.2f}"
            self.msg(
                f"{self.target.key} now trusts {memory_id} at {trust:.2f} (was {was}; recorded)."
            )
            return
        if view == "reviews":
            total = len(self.handler.brain.review.audit)
            if not total:
                self.msg(f"No one has corrected {self.target.key}'s memory yet.")
                return
            page, pages, start, stop = page_span(total, page)
            # newest first: the newest `stop` records are read, the page is the last of them
            reviews = self.handler.reviews(stop)[start:stop]
            text = self.format_reviews(self.target, reviews)
            self.more(text + self.page_footer(f"memory {self.target.key}/reviews", page, pages))
            return
        if view == "reflections":
            # the handler reads them from the whole journal; only a page of them is drawn
            reflections = self.handler.reflections()
            if not reflections:
                self.msg(f"{self.target.key} has no reflections yet (they form in sleep).")
                return
            page, pages, start, stop = page_span(len(reflections), page)
            text = self.format_reflections(self.target, reflections[start:stop])
            footer = self.page_footer(f"memory {self.target.key}/reflections", page, pages)
            self.more(text + footer)
            return
        query = (self.rhs or "").strip()
        if not query:
            store = self.handler.brain.long_term
            count = store.count()
            page, pages, start, stop = page_span(count, page)
            memories = newest_memories(store, start, stop)
            if not memories and page == 1:
                self.msg(f"{self.target.key} has no long-term memories yet (they form in sleep).")
                return
            title = f"{count} memories, newest first"
            text = self.format_memories(self.target, memories, title)
            self.more(text + self.page_footer(f"memory {self.target.key}", page, pages))
            return
        target = self.target
        how = "embeddings" if self.handler.brain.embedding_model else "lexical"
        self.handler.search_memory(query).addCallbacks(
            lambda found: (
                EvMore(
                    self.caller,
                    self.format_recalled(target, found, f"matching '{query}' ({how})"),
                )
                if found
                else self.msg(f"No memories of {target.key} matching '{query}'.")
            ),
            lambda failure: self.msg(f"Memory search failed: {failure.getErrorMessage()}"),
        )

    def show_people(self, name: str, page: int | None) -> None:
        """Show one page of the people the assistant knows, or of one person's attributes and
        observations (`/people/<page>`, `/people/<page>=<person>`).

        Only the profiles on the page are read for the list (the names come from the index).

        Args:
            name (str): The person (a name or key), or "" for everyone.
            page (int or None): The page asked for.

        """
        key = self.target.key
        if name:
            profiles = self.handler.people(name)
            pages = max(page_span(len(_person_rows(p)), None)[1] for p in profiles)
            page = min(max(1, page or 1), pages)
            text = self.format_people(self.target, profiles, True, page=page)
            footer = self.page_footer(f"memory {key}/people", page, pages, after=f"={name}")
            self.more(text + footer)
            return
        entities = self.handler.brain.entities
        # by name, as the dashboard lists them: one read of the index, then the page's profiles
        index = sorted(
            entities.index().items(), key=lambda item: (str(item[1]).lower(), str(item[0]))
        )
        if not index:
            self.msg(f"{key} has noted nothing about anyone yet.")
            return
        page, pages, start, stop = page_span(len(index), page)
        profiles = [p for k, _ in index[start:stop] if (p := entities.profile(k)) is not None]
        text = self.format_people(self.target, profiles, False, total=len(index))
        self.more(text + self.page_footer(f"memory {key}/people", page, pages))

    def do_core(self):
        """Show the core memory, show one note, set a note or remove it."""
        if not self.subkey:
            items, tokens, budget = self.handler.core_memory()
            if not items:
                self.msg(f"{self.target.key}'s core memory is empty (budget {budget} tokens).")
                return
            self.msg(self.format_core(self.target, items, tokens, budget))
            return
        if self.rhs is None:
            items = self.handler.core_memory()[0]
            item = items.get(self.subkey)
            self.msg(
                f"{self.subkey}: {item['value']}" if item else f"No core memory '{self.subkey}'."
            )
            return
        if not self.rhs.strip():
            self.handler.remove_core_memory(self.subkey)
            self.msg(f"Removed '{self.subkey}' from {self.target.key}'s core memory.")
            return
        tokens = self.handler.set_core_memory(self.subkey, self.rhs, by=self.caller.key)
        budget = self.handler.core_memory()[2]
        self.msg(
            f"{self.target.key}: core memory '{self.subkey}' set, pinned ({tokens}/{budget} "
            "tokens of builders' notes)."
        )

    def do_sleep(self):
        """Put the assistant to sleep for the hours and depth given (4 hours, light by default)."""
        words = (self.rhs or "").split()
        hours, depth = 4, "light"
        usage = "Usage: @assistant/sleep <name>[=<hours> [light|deep] [<reason>]], hours 1-24."
        if words:
            if not words[0].isdigit():
                self.msg(f"'{words[0]}' is not a number of hours. {usage}")
                return
            hours = int(words.pop(0))
            if words and words[0].lower() in ("light", "deep"):
                depth = words.pop(0).lower()
        reason = " ".join(words) or f"put to sleep by {self.caller.key}"
        try:
            phase = self.handler.sleep(hours, depth, reason, by=self.caller.key)
        except AssistantError as err:
            self.msg(f"{self.target.key} was not put to sleep: {err} {usage}")
            return
        self.msg(f"{self.target.key} is asleep ({depth}, {hours} h), starting with {phase}.")

    def do_debt(self):
        """Show the assistant's sleep debt, or add 1-3 points with a reason."""
        usage = "Usage: @assistant/debt <name>[=<1-3> <reason>]"
        if self.rhs is None:
            self.msg(self.format_debt(self.target, self.handler.debt()))
            return
        words = self.rhs.split(None, 1)
        if not words or not words[0].lstrip("-").isdigit():
            self.msg(f"Not changed. Give 1 to 3 points and a reason. {usage}")
            return
        reason = words[1] if len(words) > 1 else ""
        debt = self.handler.add_debt(int(words[0]), reason)
        self.msg(
            f"Added {int(words[0])} to {self.target.key}'s sleep debt: now {debt['points']} "
            f"({debt['level']})."
        )

    @staticmethod
    def format_debt(assistant, debt: dict) -> str:
        """Render an assistant's sleep debt for `/debt`.

        Args:
            assistant (Object): The assistant character.
            debt (dict): As `AssistantHandler.debt` gives it.

        Returns:
            str: One fact a line.

        """
        last = _when(debt["last_sleep"]) if debt["last_sleep"] else "never"
        rows = [
            ("sleep debt", f"{debt['points']} ({debt['level']})"),
            ("last sleep", f"{last}, {debt['turns_since_sleep']} turns since"),
            ("levels", "Alert 0-3, Drowsy 4-6, Sleepy 7-9, Must Sleep 10+"),
        ]
        if debt.get("last_reason"):
            rows.append(("last added", debt["last_reason"]))
        lines = [f"|w{label:>12}|n: {value}" for label, value in rows]
        return f"|w{assistant.key}'s sleep debt|n\n" + "\n".join(lines)

    def do_trigger(self):
        """List the assistant's reminders, set one, or remove one."""
        usage = (
            "Usage: @assistant/trigger <name>[[/<max fires>]=<pattern>: <reminder>] or "
            "@assistant/trigger <name>/remove=<reminder id>"
        )
        if self.rhs is None:
            if self.subkey:
                self.msg(f"Not changed. {usage}")
                return
            self.more(self.format_reminders(self.target, self.handler.reminders()))
            return
        if self.subkey.lower() == "remove":
            removed = self.handler.remove_reminder(self.rhs)
            self.msg(f"Removed reminder {removed['id']} ({removed['pattern']}).")
            return
        if self.subkey and not self.subkey.isdigit():
            self.msg(f"Not changed. Max fires must be a whole number from 1 to 20. {usage}")
            return
        pattern, colon, reminder = self.rhs.partition(":")
        if not colon:
            self.msg(f"Not changed. Separate the pattern and the reminder with ':'. {usage}")
            return
        added = self.handler.add_reminder(
            pattern, reminder, int(self.subkey) if self.subkey else 3, by=self.caller.key
        )
        self.msg(
            f"{self.target.key}: reminder {added['id']} set: when {added['pattern']} comes up "
            f"(at most {added['max_fires']} times)."
        )

    @staticmethod
    def format_reminders(assistant, reminders: list) -> str:
        """Render an assistant's reminders for `/trigger`.

        Args:
            assistant (Object): The assistant character.
            reminders (list): As `AssistantHandler.reminders` gives them.

        Returns:
            str: A table, or a line saying there are none.

        """
        if not reminders:
            return f"{assistant.key} has no reminders."
        rows = [
            (
                item["id"],
                crop(item["pattern"], 16),
                f"{item['fired_count']}/{item['max_fires']}",
                audience_label(item.get("audience")),
                # who set it, and for whom: a player who fills the model's reminders shows
                f"{crop(item['reminder'], 120)}\n(set by {crop(reminder_source(item), 60)})",
            )
            for item in reminders
        ]
        table = render_table(
            [("id", 7), ("when", 12), ("fired", 8), ("who may see", 13), ("reminder", 38)], rows
        )
        return f"|w{assistant.key}'s reminders|n\n{table}"

    def do_sleeps(self):
        """List the assistant's sleeps, newest first."""
        if self.rhs is not None:
            self.msg("Usage: @assistant/sleeps <name>")
            return
        kept = {snapshot["sleep_id"] for snapshot in self.handler.snapshots()}
        self.more(self.format_sleeps(self.target, self.handler.sleeps(50), kept))

    @staticmethod
    def format_sleeps(assistant, sleeps: list, snapshots: set | None = None) -> str:
        """Render an assistant's sleeps for `/sleeps`.

        Args:
            assistant (Object): The assistant character.
            sleeps (list): Sleep records, newest first.
            snapshots (set, optional): Ids of the sleeps with a snapshot (they can be rolled
                back).

        Returns:
            str: A title and a table that fits 80 columns.

        """
        if not sleeps:
            return f"{assistant.key} has not slept yet."
        columns = [("id", 6), ("game time", 13), ("began", 12), ("debt", 9), ("done", 38)]
        rows = []
        for record in sleeps:
            counts = record.get("counts") or {}
            done = (
                f"{counts.get('consolidated', 0)} consolidated, "
                f"{counts.get('memories', 0)} memories, {counts.get('links', 0)} links, "
                f"{counts.get('profiles', 0)} people, {counts.get('reflections', 0)} insights, "
                f"{counts.get('core notes', 0)} core notes, "
                f"{counts.get('pruned', 0)} pruned, {counts.get('digests', 0)} digests, "
                f"{counts.get('removed', 0)} removed; {record.get('calls', 0)} calls, "
                f"{record.get('tokens', 0)} tokens"
                + (f", {record['errors']} errors" if record.get("errors") else "")
                + ("; quiet" if record.get("quiet") else "")
                + (
                    f"; rolled back by {record['rolled_back'].get('by')}"
                    if record.get("rolled_back")
                    else ""
                )
                + ("; can be rolled back" if record.get("id") in (snapshots or ()) else "")
            )
            rows.append(
                (
                    record.get("id"),
                    f"{_short_when(record.get('start'))}\n{_short_when(record.get('end'))}",
                    f"{shown(record.get('began'), NAME_CHARS)}\n{record.get('depth')}",
                    f"{record.get('debt_before')} -> {record.get('debt_after')}",
                    done,
                )
            )
        title = f"|w{assistant.key}'s sleeps, newest first ({len(sleeps)})|n\n"
        # what the last sleeps made of their days, in their own words (the digests' summaries)
        summaries = [
            # the model's words: cropped, markup shown as typed
            fill(
                f"{record.get('id')}: {shown(record['summary'], 2 * TEXT_CHARS)}",
                width=78,
                indent=2,
            )
            for record in sleeps[:3]
            if record.get("summary")
        ]
        return title + render_table(columns, rows) + "".join(f"\n{s}" for s in summaries)

    def do_rollback(self):
        """Show what rolling back a sleep would change, then ask before doing it.

        Returns:
            generator: The confirmation (Evennia runs it: `yield` asks the question).

        """
        sleep_id = (self.rhs or "").strip() or None
        if self.subkey or (self.rhs is not None and not sleep_id):
            self.msg("Not changed. Usage: @assistant/rollback <name>[=<sleep id>]")
            return None
        plan = self.handler.rollback_plan(sleep_id)
        self.msg(self.format_rollback(self.target, plan, done=False))
        # what was shown is what is confirmed: the sleeps undone and the corrections kept
        shown_kept = [correction["seq"] for correction in plan.get("kept") or []]
        return self._confirm_rollback(plan["sleep_id"], plan["sleeps"], shown_kept)

    def _confirm_rollback(self, sleep_id: str, shown: list, shown_kept: list):
        answer = yield f"Roll back {self.target.key}'s memory to before sleep {sleep_id}? [y/N]"
        if (answer or "").strip().lower() not in YES:
            self.msg(f"Rollback cancelled; {self.target.key}'s memory is unchanged.")
            return
        try:
            result = self.handler.rollback(
                sleep_id, by=self.caller.key, expected=shown, expected_kept=shown_kept
            )
        except AssistantError as err:  # it fell asleep, or a turn began, while we asked
            self.msg(f"Not changed. {err}")
            return
        self.msg(self.format_rollback(self.target, result, done=True))

    @staticmethod
    def format_rollback(assistant, summary: dict, done: bool) -> str:
        """Render what a rollback changes (before asking) or changed (after).

        Args:
            assistant (Object): The assistant character.
            summary (dict): As `AssistantHandler.rollback_plan` or `rollback` gives it.
            done (bool): True once it was rolled back.

        Returns:
            str: A title, one line per kind of change, then the builders' corrections it keeps
                (at most ten, then how many more).

        """
        from .memory.snapshots import describe

        sleeps = ", ".join(summary["sleeps"])
        kept = " The builders' corrections made since are kept." if summary.get("kept") else ""
        if done:
            title = (
                f"{assistant.key}'s memory is back to before sleep {summary['sleep_id']} "
                f"(undone: {sleeps}).{kept} What changed:"
            )
        else:
            title = (
                f"Rolling back {assistant.key} to before sleep {summary['sleep_id']} undoes "
                f"sleeps {sleeps} and what it learned awake since.{kept} It would change "
                f"{summary['values']} stored values:"
            )
        # a kept memory's words are quoted: shown as typed, never as Evennia markup
        lines = [line.replace("|", "||") for line in describe(summary)]
        return "\n".join([title, *(f"  {line}" for line in lines)])

    def do_wake(self):
        """Wake the assistant now."""
        self.handler.wake((self.rhs or "").strip() or f"woken by {self.caller.key}")
        self.msg(f"{self.target.key} is awake.")

    def do_instruct(self):
        """Give the assistant a builder instruction, handled on its next tick."""
        if self.rhs is None:
            self.msg("Usage: @assistant/instruct <name>=<instruction>")
            return
        self.handler.instruct(self.caller, self.rhs)
        self.msg(f"{self.target.key} received your instruction; it is handled on its next tick.")

    def do_tick(self):
        """Run one tick now and say what it did."""
        report = self.handler.tick_now()
        name = self.target.key
        outcome = report.outcome
        if report.in_flight:
            self.msg(f"{name} is thinking (a model call is in flight).")
        elif outcome is not None:
            # tool names and the stop reason come from the model: cropped, markup as typed
            tools = shown_list([call["name"] for call in outcome.tool_calls]) or "none"
            error = f" ({shown(outcome.error, TEXT_CHARS)})" if outcome.error else ""
            self.msg(
                f"{name} ticked: {outcome.model_calls} model calls, tools: {tools}, "
                f"ended by {shown(outcome.stop_reason, NAME_CHARS)}{error}"
            )
        elif report.retry_after:
            self.msg(
                f"{name} is backing off after model errors until {_when(report.retry_after)} "
                f"({report.pending_events} events wait). See @assistant/status {name}."
            )
        elif report.asleep:
            self.msg(f"{name} is asleep; the tick did its sleep work.")
        else:
            self.msg(
                f"{name} ticked: nothing needed the model ({report.pending_events} events pending)."
            )

    def do_pause(self):
        """Pause the assistant: it keeps hearing but does not act."""
        self.handler.pause()
        self.msg(f"{self.target.key} is paused; it keeps hearing, and acts after resume.")

    def do_resume(self):
        """Resume a paused assistant."""
        self.handler.resume()
        self.msg(f"{self.target.key} resumed.")

    def do_clear(self):
        """Reset the assistant's error counts and last error."""
        self.handler.clear_errors()
        self.msg(f"{self.target.key}: error counts and back-off cleared.")

    # ---- formatting -----------------------------------------------------------------------

    @staticmethod
    def format_spend(status) -> str:
        """Describe the tokens spent this game day and this hour against their limits.

        Args:
            status (AssistantStatus): The assistant's status.

        Returns:
            str: The spend text, with a warning when a budget is used up.

        """
        budget, spend = status.budget, status.spend
        parts = []
        for period, word in (("day", "game day"), ("hour", "hour")):
            limit = budget.get(period)
            parts.append(
                f"{spend.get(period, 0)} this {word}" + (f" of {limit}" if limit else " (no limit)")
            )
        text = ", ".join(parts)
        return text + (f"; |rno model calls: {budget['spent']}|n" if budget.get("spent") else "")

    def format_list(self, assistants: list) -> str:
        """Render a table with one row for each assistant.

        Args:
            assistants (list): The assistant characters.

        Returns:
            str: The table.

        """
        rows = []
        for obj in assistants:
            status = obj.assistant.status()
            rows.append(
                (
                    crop(obj.key, 16),
                    obj.dbref,
                    crop(obj.location.key if obj.location else "-", 16),
                    status.mode + (" (paused)" if status.paused else ""),
                    status.pending_events,
                )
            )
        columns = [("name", 20), ("dbref", 9), ("location", 20), ("mode", 17), ("pending", 12)]
        return render_table(columns, rows)

    def format_status(self, assistant, status) -> str:
        """Render an assistant's status for `/status`.

        Args:
            assistant (Object): The assistant character.
            status (AssistantStatus): Its status snapshot.

        Returns:
            str: The status text, one fact a line.

        """
        usage = status.usage
        mode = status.mode + (" (paused)" if status.paused else "")
        if status.phase:
            mode += f", phase {status.phase}, {status.depth} sleep"
        rows = [("mode", mode)]
        if status.asleep:
            progress = status.consolidation_progress
            rows += [
                ("scheduled wake", _when(status.scheduled_wake_time)),
                (
                    "initiated by",
                    f"{status.initiated_by}: {shown(status.sleep_reason, TEXT_CHARS)}",
                ),
                (
                    "consolidation",
                    progress_bar(
                        progress.get("processed_entries", 0), progress.get("total_entries", 0)
                    ),
                ),
            ]
            if status.phase == "dreaming":
                dreaming = status.dreaming_progress
                done = ", ".join(dreaming.get("done", [])) or "nothing yet"
                rows.append(("dreaming done", done))
                for step, error in (dreaming.get("errors") or {}).items():
                    rows.append((f"dreaming {step}", f"failed, tried again: {error}"))
            if status.wake_deferred_reason:
                rows.append(("wake deferred", status.wake_deferred_reason))
        context_share = 100 * status.context_tokens / status.max_context_tokens
        rows += [
            ("model", assistant.assistant.model_in_use()),
            ("tick rate", f"{status.tick_rate} s" if status.tick_rate else "not ticking"),
            ("pending events", f"{status.pending_events} ({status.events_dropped} dropped)"),
            ("last tick", f"{_when(status.last_tick)} ({status.tick_count} ticks)"),
            ("turn in flight", "yes" if status.in_flight else "no"),
            ("prompt starts", status.prompt_starts),
            ("model calls (server)", self.format_model_calls(status.model_calls)),
            ("activity since wake", status.activity_since_wake),
            (
                "context tokens",
                f"{status.context_tokens} of {status.max_context_tokens} ({context_share:.1f}%)",
            ),
            ("core memory", f"{status.core_memory_tokens}/{status.memory_block_tokens} tokens"),
            ("journal entries", status.journal_size),
            ("long-term memories", status.long_term_memories),
            (
                "sleep cooldown",
                f"{status.cooldown_minutes_left} min" if status.cooldown_minutes_left else "none",
            ),
            ("sleep schedule", status.schedule),
            ("sleep debt", f"{status.sleep_debt} ({status.debt_level})"),
            (
                "last sleep",
                f"{_when(status.last_sleep) if status.last_sleep else 'never'}, "
                f"{status.turns_since_sleep} turns since",
            ),
            *(
                (
                    f"sleep {record.get('id')}",
                    f"{_when(record.get('start'))} -> {_when(record.get('end'))}, "
                    f"{record.get('began')}, debt {record.get('debt_before')} -> "
                    f"{record.get('debt_after')}, {record.get('calls', 0)} calls",
                )
                for record in status.recent_sleeps
            ),
            *(
                (
                    f"batch {batch['id']}",
                    f"{batch['requests']} sleep-time requests, sent "
                    f"{_when(batch['submitted_at'])}",
                )
                for batch in status.batches
            ),
            ("model usage", usage.summary()),
            ("token spend", self.format_spend(status)),
            ("model problems", usage.problems()),
        ]
        if status.wait_until:
            rows.append(("waiting until", _when(status.wait_until)))
        if status.retry_after:
            rows.append(("backing off until", _when(status.retry_after)))
        last = status.last_turn
        if last:
            # what the model named (tools) and why the turn stopped are shown cropped
            tools = shown_list(last.get("tools") or []) or "no tools"
            rows.append(
                (
                    "last turn",
                    f"{_when(last.get('at'))}: {last.get('events')} events, "
                    f"{last.get('model_calls')} calls, {tools} -> "
                    f"{shown(last.get('stop_reason'), NAME_CHARS)}",
                )
            )
            if last.get("error"):
                kind = str(last["error"]).split(":", 1)[0]
                advice = ERROR_ADVICE.get(kind)
                rows.append(("last model error", shown(last["error"], TEXT_CHARS)))
                if advice:
                    rows.append(("what to do", advice))
        compaction = status.last_compaction
        if compaction:
            rows.append(
                (
                    "last compaction",
                    f"{_when(compaction['at'])} "
                    f"({'emergency' if compaction['emergency'] else 'sleep'}): "
                    f"{compaction['result']}, {compaction['compacted']} messages, "
                    f"{compaction['facts_recorded']} facts journaled first, tokens "
                    f"{compaction['tokens_before']} -> {compaction['tokens_after']}",
                )
            )
        last_error = shown(status.last_error, TEXT_CHARS)
        rows.append(("tick errors", f"{status.tick_errors} {last_error}".strip()))
        if status.config_error:
            rows.append(("|rconfig error|n", status.config_error))
        if status.overrides:
            rows.append(("overrides", ", ".join(f"{k}={v!r}" for k, v in status.overrides.items())))
        # one "label: value" line each, as `examine` shows things: long values wrap in the
        # client instead of in a narrow table cell
        lines = [f"|w{label:>20}|n: {value}" for label, value in rows]
        return f"|wAssistant {assistant.key} ({assistant.dbref})|n\n" + "\n".join(lines)

    def format_model_calls(self, queue: dict | None) -> str:
        """Render the server's model call queue (shared by every assistant) in one line.

        Args:
            queue (dict or None): `AssistantStatus.model_calls`.

        Returns:
            str: Calls in flight and waiting, the waits, and any rate limiting.

        """
        if not queue:
            return "none made since the server started"
        line = (
            f"{queue['in_flight']} in flight of {queue['max_in_flight']}, {queue['queued']} "
            f"waiting ({queue['owners_waiting']} assistants); wait for a slot "
            f"{queue['wait_p50_ms']:.0f} ms median, {queue['wait_max_ms']:.0f} ms longest; "
            f"{queue['calls']} calls, {queue['rate_limited']} refused for rate"
        )
        if queue["paused_for"]:
            line += f"; |ypaused {queue['paused_for']:.1f} s for the provider's rate limit|n"
        where = queue.get("io_process")
        if where:
            line += (
                f"; made {where}" if not where.startswith("in the server:") else f"; |y{where}|n"
            )
        return line

    def format_options(self, assistant, rows: list) -> str:
        """Render a table of an assistant's settings.

        Args:
            assistant (Object): The assistant character.
            rows (list): (key, value, what is allowed) tuples, as `options()` returns them.

        Returns:
            str: A title and the table.

        """
        table = render_table(
            [("key", 32), ("value", 22), ("allowed", 24)],
            [(key, crop(repr(value), 18), crop(allowed, 20)) for key, value, allowed in rows],
        )
        return (
            f"|w{assistant.key}'s settings|n (change with @assistant/set "
            f"{assistant.key}/<key>=<value>)\n{table}"
        )

    def format_journal(self, assistant, entries: list, total: int | None = None) -> str:
        """Render a table of journal entries, newest first.

        Args:
            assistant (Object): The assistant character.
            entries (list): The journal entries, oldest first (a page of them).
            total (int, optional): How many entries the journal holds; `len(entries)` if None.

        Returns:
            str: A title and the table.

        """
        rows = []
        for entry in reversed(entries):
            source = str(entry.get("source_type") or "")
            if entry.get("heard_from"):
                source += f" ({entry['heard_from']})"
            rows.append(
                (
                    shown(entry.get("id"), 12),
                    _short_when(entry.get("created_at")),
                    shown(entry.get("importance"), 4),
                    shown(source, 14),
                    shown(entry.get("content"), 200),
                )
            )
        columns = [("id", 11), ("when", 15), ("imp", 7), ("source", 18), ("entry", 27)]
        total = len(entries) if total is None else total
        return f"|w{assistant.key}'s journal ({total} entries)|n\n" + render_table(columns, rows)

    def format_memories(self, assistant, memories: list, title: str) -> str:
        """Render a table of long-term memories.

        Args:
            assistant (Object): The assistant character.
            memories (list): The memories, as dicts.
            title (str): What the list is, shown in the title.

        Returns:
            str: A title and the table.

        """
        rows = [
            (
                shown(memory.get("id"), 12),
                shown(memory.get("importance"), 4),
                shown((memory.get("provenance") or {}).get("heard_from") or "self", 12),
                shown(memory.get("text"), TEXT_CHARS),
            )
            for memory in memories
        ]
        columns = [("id", 11), ("imp", 7), ("from", 16), ("memory", 44)]
        return f"|w{assistant.key}'s long-term memory: {title}|n\n" + render_table(columns, rows)

    def format_recalled(self, assistant, items: list, title: str) -> str:
        """Render a table of recalled memories with their scores and sources.

        Args:
            assistant (Object): The assistant character.
            items (list): The `Recalled` items, best first.
            title (str): What was searched for, shown in the title.

        Returns:
            str: A title and the table.

        """
        rows = []
        for item in items:
            source = item.provenance.get("heard_from") or item.provenance.get("source_type")
            rows.append(
                (
                    shown(item.id, 12),
                    f"{item.score:.2f}",
                    f"{shown(item.kind, 16)}\n{shown(source or 'self', 12)}\n"
                    f"{audience_label(item.audience)}",
                    shown(item.text, TEXT_CHARS),
                )
            )
        columns = [("id", 11), ("score", 8), ("kind, source", 20), ("memory", 39)]
        return f"|w{assistant.key} remembers, {title}|n\n" + render_table(columns, rows)

    def format_links(self, assistant, rows: list) -> str:
        """Render a table of memory links, strongest first.

        Args:
            assistant (Object): The assistant character.
            rows (list): (id, id, strength, text, text) tuples.

        Returns:
            str: A title and the table.

        """
        table = [
            (
                f"{shown(one, 12)}\n{shown(other, 12)}",
                f"{strength:.2f}",
                f"{shown(text1, 60)}\n{shown(text2, 60)}",
            )
            for one, other, strength, text1, text2 in rows
        ]
        columns = [("memories", 12), ("strength", 11), ("texts", 55)]
        return f"|w{assistant.key}'s memory links, strongest first|n\n" + render_table(
            columns, table
        )

    def format_people(
        self,
        assistant,
        profiles: list,
        detailed: bool,
        total: int | None = None,
        page: int | None = None,
    ) -> str:
        """Render the people an assistant knows.

        Args:
            assistant (Object): The assistant character.
            profiles (list): The profiles, as dicts (a page of them).
            detailed (bool): Show each profile's attributes and observations, not one
                line a person.
            total (int, optional): How many people it knows; `len(profiles)` if None.
            page (int, optional): With `detailed`, the page of each profile's attributes and
                observations (newest first) to show; the first if None.

        Returns:
            str: The text to show.

        """
        if not detailed:
            rows = [
                (
                    shown(p.get("name"), 20),
                    shown(p.get("key"), 20),
                    len(p.get("observations") or []),
                    len(p.get("attributes") or []),
                )
                for p in profiles
            ]
            columns = [("person", 24), ("key", 20), ("observations", 16), ("attributes", 16)]
            total = len(profiles) if total is None else total
            return f"|w{assistant.key} knows {total} people|n\n" + render_table(columns, rows)
        blocks = []
        for profile in profiles:
            notes = _person_rows(profile)
            shown_page, pages, start, stop = page_span(len(notes), page)
            rows = []
            for kind, note in notes[start:stop]:
                if kind == "a":
                    rows.append(
                        (
                            shown(note.get("id"), 8),
                            shown(note.get("type", ""), 14),
                            f"{shown(note.get('value'), TEXT_CHARS)} "
                            f"(from {shown_list(note.get('cites') or [])}; "
                            f"{audience_label(note.get('audience'))})",
                        )
                    )
                    continue
                rows.append(
                    (
                        shown(note.get("id"), 8),
                        "observed" if not note.get("heard_from") else "told",
                        f"{shown(note.get('text'), TEXT_CHARS)} "
                        f"({shown(note.get('heard_from') or 'seen', NAME_CHARS)}, "
                        f"{_short_when(note.get('at'))}; "
                        f"{audience_label(note.get('audience'))}"
                        + ("; consolidated" if note.get("consolidated") else "")
                        + ")",
                    )
                )
            columns = [("id", 8), ("kind", 14), ("attribute or observation", 56)]
            title = (
                f"|w{shown(profile.get('name'), NAME_CHARS)} "
                f"({shown(profile.get('key'), NAME_CHARS)})|n: "
                f"{len(profile.get('attributes') or [])} attributes, "
                f"{len(profile.get('observations') or [])} observations, newest first; "
                f"page {shown_page} of {pages}"
            )
            blocks.append(f"{title}\n" + render_table(columns, rows))
        return "\n".join(blocks)

    def format_reflections(self, assistant, entries: list) -> str:
        """Render a table of reflections.

        Args:
            assistant (Object): The assistant character.
            entries (list): The reflection entries, newest first.

        Returns:
            str: A title and the table.

        """
        rows = [
            (
                shown(entry.get("id"), 12),
                _short_when(entry.get("created_at")),
                f"{shown(entry.get('content'), TEXT_CHARS)} "
                f"(from {shown_list(entry.get('cites') or [])}; "
                f"{audience_label(entry.get('audience'))})",
            )
            for entry in entries
        ]
        columns = [("id", 11), ("when", 15), ("insight", 52)]
        return f"|w{assistant.key}'s reflections, newest first|n\n" + render_table(columns, rows)

    def format_reviews(self, assistant, reviews: list) -> str:
        """Render a table of the corrections made to an assistant's memory.

        Args:
            assistant (Object): The assistant character.
            reviews (list): The corrections, newest first.

        Returns:
            str: A title and the table.

        """
        rows = []
        for review in reviews:
            if review.get("action") == "forget":
                what = f"forgot {shown_list(review.get('forgotten') or [])}"
                if review.get("reason"):
                    what += f": {shown(review['reason'], TEXT_CHARS)}"
            else:
                was = review.get("was")
                what = f"trust {review['trust']:.2f} (was {'source' if was is None else was})"
            rows.append(
                (
                    _short_when(review.get("at")),
                    shown(review.get("by"), 14),
                    shown(review.get("id"), 14),
                    what,
                )
            )
        columns = [("when", 15), ("by", 16), ("memory", 14), ("change", 33)]
        return f"|wCorrections of {assistant.key}'s memory, newest first|n\n" + render_table(
            columns, rows
        )

    def format_core(self, assistant, items: dict, tokens: int, budget: int) -> str:
        """Render a table of the core memory notes.

        Args:
            assistant (Object): The assistant character.
            items (dict): The notes, by key.
            tokens (int): The tokens the notes use.
            budget (int): The token budget.

        Returns:
            str: A title and the table.

        """
        rows = [
            (
                crop(name, 60),
                crop(item["value"], 300),
                f"{_short_when(item.get('recorded'))}\n{audience_label(item.get('audience'))}"
                # a builder's note: read-only to the model, left alone by sleep
                + (", pinned" if item.get("pinned") else "")
                + (f"\nby {crop(item['by'], 20)}" if item.get("by") else "")
                # the people whose words had the model write it (their share is bounded)
                + (
                    f"\nfor {crop(', '.join((item.get('owners') or {}).values()), 40)}"
                    if item.get("owners")
                    else ""
                ),
            )
            for name, item in sorted(items.items())
        ]
        table = render_table([("key", 20), ("value", 36), ("recorded, who", 22)], rows)
        pinned = self.handler.pinned_core_tokens()
        return (
            f"|w{assistant.key}'s core memory|n (the model's notes one conversation sees: up to "
            f"{tokens}/{budget} tokens; builders' pinned notes: {pinned}/{budget} tokens)\n{table}"
        )


class CmdPageAssistant(CmdPage):
    """
    send a private message to another account, or to an assistant

    Usage:
      page <account or assistant> <message>
      page[/switches] [<account>,<account>,... = <message>]

    Works like the ordinary page; an assistant's name as the only target
    delivers the page to that assistant, who may answer when it is near you.
    """

    MAX_CHARS = 2000

    def func(self):
        """Page the assistants named, or fall back to the ordinary page for anyone else."""
        if "=" in self.args:
            targets, _, message = self.args.partition("=")
        else:
            targets, _, message = self.args.strip().partition(" ")
        wanted = [name.strip().lower() for name in targets.split(",") if name.strip()]
        assistants = {obj.key.lower(): obj for obj in find_assistants()}
        if self.switches or not wanted or not all(name in assistants for name in wanted):
            super().func()
            return
        message = message.strip()
        if not message:
            (self.caller or self.obj).msg(
                "What do you want to page? Usage: page <assistant> <message>"
            )
            return
        # page runs with the account as caller; the assistant hears the character played
        # (self.obj is the character whose cmdset holds this command)
        sender = (self.session.puppet if self.session else None) or self.obj or self.caller
        for name in wanted:
            assistant = assistants[name]
            assistant.msg(
                text=(f"{sender.key} pages: {message}", {"type": "page"}),
                from_obj=sender,
                ai_speech=message[: self.MAX_CHARS],
            )
        # the caller is the sender's account; a character without one hears it itself
        (self.caller or self.obj).msg(
            f"You paged {', '.join(assistants[n].key for n in wanted)} with: '{message}'."
        )


class AssistantCmdSet(CmdSet):
    """`@assistant` for builders and a `page` that reaches assistants."""

    key = "ai_assistant"

    def at_cmdset_creation(self):
        """Add `@assistant` and the assistant-aware `page`."""
        self.add(CmdAssistant())
        self.add(CmdPageAssistant())
