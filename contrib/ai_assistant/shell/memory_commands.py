"""
The memory switches of `@assistant`: `/journal`, `/memory` and its views (search, links, people
and relationships, reflections, forget, trust, reviews, gossip, forgetting a person), `/core`,
`/forgetperson`, `/export` and `/import`.

`MemorySwitches` is a mixin of `commands.CmdAssistant`, whose docstring is the in-game help: it
parses and asks; every read and change goes through the assistant's `memory` door
(`character.assistant.memory`), which checks it and raises `errors.Refused` for the builder.

"""

from .finding import find_assistants
from .people_display import person_rows
from .screen import NAME_CHARS, TEXT_CHARS, YES, page_footer, page_span, shown, shown_list
from ..errors import Refused
from ..memory.forget_person import AmbiguousPerson
from ..memory.transfer import describe_counts
from ..text import counted

# the views of `/memory <name>/<view>`
MEMORY_VIEWS = (
    "links",
    "people",
    "reflections",
    "reviews",
    "forget",
    "trust",
    "gossip",
    "forgetperson",
)
# the memory views with pages ("" is the list of memories)
PAGED_VIEWS = ("", "people", "reflections", "reviews", "gossip")


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


class MemorySwitches:
    """The memory switches of `@assistant` (a mixin of `commands.CmdAssistant`)."""

    def do_journal(self):
        """Show one page of the assistant's journal, newest first (`<name>/<page>`)."""
        rest, page = split_page(self.subkey)
        if rest or self.rhs is not None:
            self.msg("Usage: @assistant/journal <name>[/<page>]")
            return
        entries = self.handler.memory.admin.kind("journal").newest()
        total = len(entries)
        if not total:
            self.msg(f"{self.target.key}'s journal is empty.")
            return
        page, pages, start, stop = page_span(total, page)
        # newest first, counted from the end: only the page's chunks are read
        shown_entries = list(reversed(entries[start:stop]))
        names = self.audience_names(entry.get("audience") for entry in shown_entries)
        text = self.format_journal(self.target, shown_entries, total=total, names=names)
        self.more(text + page_footer(f"journal {self.target.key}", page, pages))

    def do_memory(self):
        """Show the assistant's memories, or one of the memory views (/links, /people ...);
        `/<page>` after the name or view pages the listings."""
        view, page = split_page(self.subkey)
        view = view.lower()
        usage = "Usage: @assistant/memory <name>[/<view>][/<page>][=<query or person>]"
        if view and view not in MEMORY_VIEWS:
            self.msg(
                f"'{shown(self.subkey, NAME_CHARS)}' is not a memory view. Use one of: "
                f"{', '.join(MEMORY_VIEWS)}. " + usage
            )
            return
        if page is not None and (view not in PAGED_VIEWS or (not view and self.rhs)):
            self.msg(
                "Only the memories, /people, /reflections, /reviews and /gossip have pages. "
                + usage
            )
            return
        argument = (self.rhs or "").strip()
        if not view:
            if argument:
                self.search_memories(argument)
            else:
                self.show_memories(page)
            return
        # one method a view: /links -> show_links, /people -> show_people ... (a view that
        # asks first returns its question)
        return getattr(self, f"show_{view}")(argument, page)

    def show_memories(self, page: int | None) -> None:
        """One page of the long-term memories, newest first (only that page is read)."""
        memories = self.handler.memory.admin.kind("long_term").newest()
        count = len(memories)
        page, pages, start, stop = page_span(count, page)
        shown_memories = memories[start:stop]
        if not shown_memories and page == 1:
            self.msg(f"{self.target.key} has no long-term memories yet (they form in sleep).")
            return
        names = self.audience_names(memory.get("audience") for memory in shown_memories)
        title = f"{counted(count, 'memory')}, newest first"
        text = self.format_memories(self.target, shown_memories, title, names=names)
        self.more(text + page_footer(f"memory {self.target.key}", page, pages))

    def audience_names(self, audiences) -> dict[str, str]:
        """The names of the people in some audiences, for "private to Bob": from the people
        the assistant knows, else (a dbref it has no profile for) the character's key.

        Args:
            audiences (iterable): Audiences (lists of person keys, or None).

        Returns:
            dict: Person key -> name, for the keys found.

        """
        keys = {key for audience in audiences if audience for key in audience}
        if not keys:
            return {}
        names = {
            key: name
            for key, name in self.handler.memory.admin.kind("profiles").index()
            if key in keys
        }
        ids = [int(key[1:]) for key in keys - set(names) if key[:1] == "#" and key[1:].isdigit()]
        if ids:
            from evennia.objects.models import ObjectDB

            for dbid, name in ObjectDB.objects.filter(id__in=ids).values_list("id", "db_key"):
                names[f"#{dbid}"] = name
        return names

    def search_memories(self, query: str) -> None:
        """Everything it would recall for `query`, ranked (the answer comes when the query's
        embedding, if any, has been computed off the reactor)."""
        target = self.target
        how = "embeddings" if self.handler.memory.admin.searches_by_meaning() else "lexical"
        self.handler.memory.search_deferred(query).addCallbacks(
            lambda found: (
                self.more(
                    self.format_recalled(
                        target,
                        found,
                        f"matching '{query}' ({how})",
                        names=self.audience_names(item.audience for item in found),
                    )
                )
                if found
                else self.msg(f"No memories of {target.key} matching '{query}'.")
            ),
            lambda failure: self.msg(f"Memory search failed: {failure.getErrorMessage()}"),
        )

    def show_links(self, argument: str, page: int | None) -> None:
        """The strongest links between its memories."""
        rows = self.handler.memory.admin.kind("links").strongest()
        if not rows:
            self.msg(f"{self.target.key} has linked no memories yet (links form in sleep).")
            return
        self.more(self.format_links(self.target, rows))

    def show_forget(self, memory_id: str, page: int | None) -> None:
        """Make it forget one memory (recorded)."""
        if not memory_id:
            self.msg("Usage: @assistant/memory <name>/forget=<memory id>")
            return
        try:
            gone = self.handler.memory.admin.forget(memory_id, by=self.caller.key)
        except Refused as err:
            self.msg(f"Not changed. {err}")
            return
        first, *drawn = gone
        # everything drawn from it went too: the builder is told what it touched
        also = f", and what was drawn from it: {shown_list(drawn, most=30)}" if drawn else ""
        rewritten = getattr(gone, "rewritten", None)
        if rewritten:
            also += f"; took its words out of {shown_list(rewritten, most=30)}"
        reopened = getattr(gone, "reopened", None)
        if reopened:
            also += f"; {shown_list(reopened, most=30)} will be filed again at the next sleep"
        self.msg(f"{self.target.key} forgot {first}{also} (recorded).")

    def show_forgetperson(self, person: str, page: int | None):
        """Say what forgetting a person would forget, then ask before doing it.

        Returns:
            generator: The confirmation (Evennia runs it: `yield` asks the question).

        """
        if not person:
            self.msg("Not changed. Usage: @assistant/memory <name>/forgetperson=<person>")
            return None
        try:
            plan = self.handler.memory.admin.forget_person_plan(person)
        except Refused as err:
            self.msg(f"Not changed. {err}")
            return None
        self.msg(self.format_person_plan(self.target, plan))
        return self._confirm_forget_person([self.target], person)

    def do_forgetperson(self):
        """Say what every assistant that knows a person would forget, then ask first.

        Returns:
            generator: The confirmation (Evennia runs it: `yield` asks the question).

        """
        person = (self.args or "").strip()
        if not person or self.rhs is not None:
            self.msg("Not changed. Usage: @assistant/forgetperson <person>")
            return None
        knowing = []
        for assistant in find_assistants():
            try:
                plan = assistant.assistant.memory.admin.forget_person_plan(person)
            except AmbiguousPerson as err:
                # two people of that name: none is forgotten until the builder names one
                self.msg(f"Not changed. {err}")
                return None
            except Refused:
                continue  # it does not know them
            knowing.append(assistant)
            self.msg(self.format_person_plan(assistant, plan))
        if not knowing:
            self.msg(
                f"Not changed. No assistant knows anyone called '{shown(person, NAME_CHARS)}'."
            )
            return None
        return self._confirm_forget_person(knowing, person)

    def _confirm_forget_person(self, targets: list, person: str):
        names = ", ".join(target.key for target in targets)
        answer = yield (
            f"Make {names} forget everything about '{shown(person, NAME_CHARS)}'? This cannot "
            "be undone. [y/N]"
        )
        if (answer or "").strip().lower() not in YES:
            self.msg("Cancelled; nothing was forgotten.")
            return
        for target in targets:
            try:
                report = target.assistant.memory.forget_person(person, by=self.caller.key)
            except Refused as err:  # it began a turn, or forgot them, while we asked
                self.msg(f"{target.key}: not changed. {err}")
                continue
            self.msg(self.format_forgotten_person(target, report))

    def show_trust(self, argument: str, page: int | None) -> None:
        """Set how far it trusts one memory (recorded)."""
        memory_id, _, level = argument.partition(" ")
        if not memory_id or not level.strip():
            self.msg("Usage: @assistant/memory <name>/trust=<memory id> <low||medium||high||0-1>")
            return
        try:
            trust, before = self.handler.memory.admin.set_trust(
                memory_id, level, by=self.caller.key
            )
        except Refused as err:
            self.msg(f"Not changed. {err}")
            return
        was = "its source's" if before is None else f"{before:.2f}"
        self.msg(f"{self.target.key} now trusts {memory_id} at {trust:.2f} (was {was}; recorded).")

    def show_reviews(self, argument: str, page: int | None) -> None:
        """One page of the corrections made, newest first."""
        memory = self.handler.memory
        total = memory.admin.kind("review_log").count()
        if not total:
            self.msg(f"No one has corrected {self.target.key}'s memory yet.")
            return
        page, pages, start, stop = page_span(total, page)
        # newest first: the newest `stop` records are read, the page is the last of them
        text = self.format_reviews(
            self.target, memory.admin.kind("review_log").latest(stop)[start:stop]
        )
        self.more(text + page_footer(f"memory {self.target.key}/reviews", page, pages))

    def show_gossip(self, argument: str, page: int | None) -> None:
        """One page of who told whom what, newest first; =<person> for those naming them."""
        person = None
        if argument:
            # a character's key when one has that name, else the name (those known by name)
            found = self.caller.search(argument, global_search=True, quiet=True)
            person = f"#{found[0].id}" if len(found) == 1 else f"name:{argument.lower()[:80]}"
        records = self.handler.memory.admin.kind("gossip_log").records(person=person)
        if not records:
            self.msg(f"{self.target.key} has told and heard no gossip yet.")
            return
        page, pages, start, stop = page_span(len(records), page)
        text = self.format_gossip(self.target, records[start:stop])
        self.more(text + page_footer(f"memory {self.target.key}/gossip", page, pages))

    def show_reflections(self, argument: str, page: int | None) -> None:
        """One page of its reflections, newest first."""
        # read from the whole journal; only a page of them is drawn
        reflections = self.handler.memory.admin.kind("journal").reflections()
        if not reflections:
            self.msg(f"{self.target.key} has no reflections yet (they form in sleep).")
            return
        page, pages, start, stop = page_span(len(reflections), page)
        text = self.format_reflections(self.target, reflections[start:stop])
        footer = page_footer(f"memory {self.target.key}/reflections", page, pages)
        self.more(text + footer)

    def show_people(self, name: str, page: int | None) -> None:
        """Show one page of the people the assistant knows, or of one person's attributes and
        observations (`/people/<page>`, `/people/<page>=<person>`).

        Only the profiles on the page are read for the list (the names come from the index).

        Args:
            name (str): The person (a name or key), or "" for everyone.
            page (int or None): The page asked for.

        """
        key = self.target.key
        memory = self.handler.memory
        name, _, setting = name.partition("/")
        name = name.strip()
        if setting:
            self.set_relationship(name, setting)
            return
        if name:
            # the profile, then how it feels about them (memory.relationships)
            _, person_name, relationship = memory.admin.kind("relationships").find(name)
            text = self.format_relationship(
                self.target,
                person_name,
                relationship,
                self.audience_names(
                    change.get("audience")
                    for part in (relationship or {}).values()
                    if isinstance(part, dict)
                    for change in part.get("changes") or []
                ),
            )
            try:
                profiles = memory.admin.kind("profiles").find(name)
            except Refused:
                profiles = []  # a relationship without a profile still shows
            if not profiles:
                self.msg(text)
                return
            pages = max(page_span(len(person_rows(p)), None)[1] for p in profiles)
            page = min(max(1, page or 1), pages)
            text = self.format_people(self.target, profiles, True, page=page) + "\n" + text
            footer = page_footer(f"memory {key}/people", page, pages, after=f"={name}")
            self.more(text + footer)
            return
        # by name, as the dashboard lists them: one read of the index, then the page's profiles
        index = memory.admin.kind("profiles").index()
        if not index:
            self.msg(f"{key} has noted nothing about anyone yet.")
            return
        page, pages, start, stop = page_span(len(index), page)
        profiles = [
            p
            for k, _ in index[start:stop]
            if (p := memory.admin.kind("profiles").profile(k)) is not None
        ]
        text = self.format_people(self.target, profiles, False, total=len(index))
        self.more(text + page_footer(f"memory {key}/people", page, pages))

    def set_relationship(self, name: str, setting: str) -> None:
        """Set how it feels about someone: `<dimension>=<value> [<reason>]` (recorded)."""
        usage = (
            "Usage: @assistant/memory <name>/people=<person>/<familiarity||warmth||trust>="
            "<value> [<reason>] (familiarity 0 to 1, warmth and trust -1 to 1)"
        )
        dimension, equals, rest = setting.partition("=")
        value, _, reason = rest.strip().partition(" ")
        if not name or not equals or not value:
            self.msg(f"Not changed. {usage}")
            return
        try:
            person, after, before = self.handler.memory.admin.kind("relationships").set(
                name, dimension, value, reason, by=self.caller.key
            )
        except Refused as err:
            self.msg(f"Not changed. {err} {usage}")
            return
        self.msg(
            f"{self.target.key}'s {dimension.strip().lower()} toward {person} is now "
            f"{after:+.2f} (was {before:+.2f}; recorded)."
        )

    def do_core(self):
        """Show the core memory, show one note, set a note or remove it."""
        if not self.subkey:
            items, tokens, budget = self.handler.memory.admin.kind("core_notes").notes()
            if not items:
                self.msg(f"{self.target.key}'s core memory is empty (budget {budget} tokens).")
                return
            pinned = self.handler.memory.admin.kind("core_notes").pinned_tokens()
            self.msg(self.format_core(self.target, items, tokens, budget, pinned))
            return
        if self.rhs is None:
            items = self.handler.memory.admin.kind("core_notes").notes()[0]
            item = items.get(self.subkey)
            self.msg(
                f"{self.subkey}: {item['value']}" if item else f"No core memory '{self.subkey}'."
            )
            return
        if not self.rhs.strip():
            self.handler.memory.admin.kind("core_notes").remove(self.subkey, by=self.caller.key)
            self.msg(f"Removed '{self.subkey}' from {self.target.key}'s core memory.")
            return
        tokens = self.handler.memory.admin.kind("core_notes").set(
            self.subkey, self.rhs, by=self.caller.key
        )
        budget = self.handler.memory.admin.kind("core_notes").notes()[2]
        self.msg(
            f"{self.target.key}: core memory '{self.subkey}' set, pinned ({tokens}/{budget} "
            "tokens of builders' notes)."
        )

    def do_export(self):
        """Write the assistant's whole memory to a new file in the game's memory folder."""
        from pathlib import Path

        from django.conf import settings

        from .transfer_files import EXPORT_FOLDER

        path = (self.rhs or "").strip()
        if self.subkey or not path:
            self.msg(
                f"Usage: @assistant/export <name>=<file>, a new .json file in the game's "
                f"{EXPORT_FOLDER} folder."
            )
            return
        written, found = self.handler.memory.export_to(path)
        where = Path(written).relative_to(Path(settings.GAME_DIR).resolve()).as_posix()
        self.msg(
            f"Exported {self.target.key}'s memory to {shown(where, TEXT_CHARS)}: "
            f"{describe_counts(found)}. It "
            "holds private words: keep it like a database backup."
        )

    def do_replace(self):
        """`/replace` goes with `/import`."""
        self.msg("Usage: @assistant/import/replace <name>=<file>")

    def do_import(self):
        """Check a memory file, say what it holds and what it replaces, then ask before
        importing it.

        Returns:
            generator: The confirmation (Evennia runs it: `yield` asks the question).

        """
        path = (self.rhs or "").strip()
        if self.subkey or not path:
            self.msg("Not changed. Usage: @assistant/import[/replace] <name>=<file>")
            return None
        plan = self.handler.memory.import_plan_from(path, replace="replace" in self.switches)
        parsed = plan["file"]
        # the file's words are shown as stored values are: cropped, never markup
        lines = [
            f"{shown(path, TEXT_CHARS)} holds the memory of "
            f"{shown(parsed.assistant.name, NAME_CHARS)} "
            f"({shown(parsed.game.name or 'a game', NAME_CHARS)}, exported "
            f"{shown(parsed.exported_at, NAME_CHARS)}): {describe_counts(plan['counts'])}."
        ]
        if plan["held"]:
            lines.append(
                f"It replaces all {self.target.key} remembers now: "
                f"{describe_counts(plan['held'])}."
            )
        if plan["rekey"]:
            dbrefs = sum(1 for key in plan["rekey"] if key.startswith("#"))
            lines.append(
                f"It was made in another game: {dbrefs} people's dbrefs become name "
                "keys (such as name:bob), so nobody here is taken for them."
            )
        # what the file sets besides memory: its own settings replace the assistant's (none
        # in the file: back to the game's defaults), and its persona when it has one
        given = sorted(parsed.assistant.settings)
        settings_line = (
            f"Its own settings become the file's ({shown_list(given, most=30)})."
            if given
            else "Its own settings are dropped (the file has none): the game's defaults apply."
        )
        if parsed.assistant.persona:
            settings_line += " It takes the file's persona too."
        lines.append(settings_line)
        self.msg("\n".join(lines))
        return self._confirm_import(plan)

    def _confirm_import(self, plan):
        target = self.target
        answer = yield f"Import {shown(plan['path'], TEXT_CHARS)} into {target.key}? [y/N]"
        if (answer or "").strip().lower() not in YES:
            self.msg(f"Import cancelled; {target.key} is unchanged.")
            return
        try:
            written = target.assistant.memory.import_from(plan)
        except Refused as err:
            self.msg(f"Not changed. {err}")
            return
        self.msg(f"Imported into {target.key}: {describe_counts(written)}.")
