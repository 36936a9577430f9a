"""
The `/lore` switch of `@assistant`: the game's lore book (list, show, search, add, edit, remove
after asking, import of a text or JSON file).

`LoreSwitch` is a mixin of `commands.CmdAssistant`, whose docstring is the in-game help. The
book checks every entry (`memory.lore.LoreBook`); only a write makes its script, so a builder
reading a game without lore makes nothing.

"""

from datetime import datetime, timezone

from ..clock import to_iso
from .screen import PAGE_SIZE, YES, page_footer, page_span, shown
from .lore_book import game_lore, read_lore_file
from ..memory.lore import LoreError


class LoreSwitch:
    """The `/lore` switch of `@assistant` (a mixin of `commands.CmdAssistant`)."""

    def do_lore(self):
        """The game's lore book: list, show, search, add, edit, remove (asking first), import.

        Returns:
            generator or None: The confirmation of a removal (Evennia runs it).

        """
        words = (self.lhs or "").strip()
        action, _, rest = words.partition(" ")
        action, rest = action.lower(), rest.strip()
        # only a write makes the lore book's script: reading a game without lore makes nothing
        book = game_lore(make=action in ("add", "import"))
        if book is None:
            self.msg(
                "The game has no lore yet: add an entry with @assistant/lore add <title>=<text>, "
                "or import a file with @assistant/lore import <file>."
            )
            return None
        try:
            if action == "add":
                title, _, more = rest.partition(";")
                tags, _, who = more.partition(";")
                if self.rhs is None:
                    raise LoreError("Usage: @assistant/lore add <title>[;<tags>[;<who>]]=<text>")
                entry = book.add(title, self.rhs, tags, who or None, by=self.caller.key)
                self.msg(f"Added lore {entry['id']}: {shown(entry['title'], 80)}.")
            elif action == "edit":
                entry_id, _, field = rest.partition("/")
                if not field or self.rhs is None:
                    raise LoreError(
                        "Usage: @assistant/lore edit <lore id>/<title||text||tags||who>=<value>"
                    )
                entry = book.edit(entry_id, field, self.rhs, by=self.caller.key)
                self.msg(f"Lore {entry['id']}: {field.strip().lower()} changed.")
            elif action == "remove":
                entry = book.get(rest)
                self.msg(self.format_lore_entry(entry))
                return self._confirm_lore_removal(entry["id"])
            elif action == "import":
                added = book.add_many(read_lore_file(rest), by=self.caller.key)
                self.msg(
                    f"Imported {len(added)} lore entries ({added[0]['id']} to "
                    f"{added[-1]['id']}) from {shown(rest, 100)}."
                )
            elif self.rhs is not None and not words:
                query = self.rhs.strip()
                found = [entry for entry, _ in book.search(query, None, PAGE_SIZE)]
                self.more(self.format_lore(found, len(book), f"for '{shown(query, 40)}'"))
            elif words.isdigit() or not words:
                page, pages, start, stop = page_span(len(book), int(words) if words else 1)
                text = self.format_lore(book.entries(start, stop), len(book))
                self.more(text + page_footer("lore", page, pages).replace("/lore/", "/lore "))
            elif " " not in words and self.rhs is None:
                self.msg(self.format_lore_entry(book.get(words)))
            else:
                raise LoreError(
                    "Usage: @assistant/lore [<page>||<lore id>||=<words>], or /lore add, edit, "
                    "remove or import (see 'help @assistant')."
                )
        except LoreError as err:
            self.msg(f"Not changed. {err}")
        return None

    def _confirm_lore_removal(self, entry_id: str):
        answer = yield f"Remove lore {entry_id} from every assistant's knowledge? [y/N]"
        if (answer or "").strip().lower() not in YES:
            self.msg(f"Removal cancelled; lore {entry_id} is unchanged.")
            return
        try:
            now = to_iso(datetime.now(timezone.utc))
            entry = game_lore().remove(entry_id, by=self.caller.key, now=now)
        except LoreError as err:  # removed by someone else while we asked
            self.msg(f"Not changed. {err}")
            return
        self.msg(f"Removed lore {entry['id']}: {shown(entry['title'], 80)}.")
