"""
How `@assistant/lore` shows the game's lore book: a page of entries, or one entry in full.

"""

from evennia.utils.utils import fill

from ..text import counted
from .screen import WIDTH, render_table, shown, shown_list
from .time_display import when


class LoreDisplay:
    """The `format_*` methods of the lore book: data in, text out."""

    def format_lore(self, entries: list, total: int, title: str = "") -> str:
        """Render a table of lore entries (`@assistant/lore`).

        Args:
            entries (list): The entries (a page of them, or what a search found).
            total (int): How many entries the book holds.
            title (str, optional): What the list is (a search's words); the book by default.

        Returns:
            str: A title and the table.

        """
        rows = [
            (
                shown(entry["id"], 8),
                shown(entry["title"], 60),
                shown_list(entry.get("tags") or [], 20, 5),
                shown_list(entry.get("who") or ["everyone"], 30, 5),
            )
            for entry in entries
        ]
        heading = f"|wThe game's lore ({counted(total, 'entry')})|n" + (
            f" {title}" if title else ""
        )
        if not rows:
            return heading + "\nNo lore entry here. Add one with @assistant/lore add."
        table = render_table([("id", 8), ("title", 30), ("tags", 18), ("who may know", 22)], rows)
        return f"{heading}\n{table}"

    @staticmethod
    def format_lore_entry(entry: dict) -> str:
        """Render one lore entry in full (`@assistant/lore <id>`).

        Args:
            entry (dict): The entry.

        Returns:
            str: Its fields, one a line (the text wrapped).

        """
        lines = [
            f"|wLore {shown(entry['id'], 12)}: {shown(entry['title'], 200)}|n",
            f"tags: {shown_list(entry.get('tags') or [], 40) or '-'}",
            f"who may know it: {shown_list(entry.get('who') or ['everyone'], 80, 20)}",
            f"added {when(entry.get('created_at'))} by {shown(entry.get('by') or '?', 40)}",
        ]
        if entry.get("edited_at"):
            lines.append(
                f"edited {when(entry['edited_at'])} by {shown(entry.get('edited_by') or '?', 40)}"
            )
        text = shown(entry["text"], 4000)
        lines += [fill(paragraph, WIDTH) for paragraph in text.splitlines() or [""]]
        return "\n".join(lines)
