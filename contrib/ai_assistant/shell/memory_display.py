"""
How `@assistant` shows what an assistant remembers: its journal, long-term memories, what a
search recalls, links, reflections, reminders, core notes, the builders' corrections, gossip,
the shares of groups, and what a rollback undoes. A private item says whose.

"""

from evennia.utils.utils import crop

from ..memory.audience import label as audience_label
from ..memory.gossip import chain_names
from ..memory.reminders import source as reminder_source
from ..text import counted
from .screen import NAME_CHARS, TEXT_CHARS, private_mark, render_table, shown, shown_list
from .time_display import short_when


class MemoryDisplay:
    """The `format_*` methods of what an assistant remembers: data in, text out."""

    def format_journal(
        self, assistant, entries: list, total: int | None = None, names: dict | None = None
    ) -> str:
        """Render a table of journal entries, newest first; a private entry says whose.

        Args:
            assistant (Object): The assistant character.
            entries (list): The journal entries, oldest first (a page of them).
            total (int, optional): How many entries the journal holds; `len(entries)` if None.
            names (dict, optional): Display names of the people in the entries' audiences,
                keyed by person key (see `memory.audience.label`).

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
                    short_when(entry.get("created_at")),
                    shown(entry.get("importance"), 4),
                    shown(source, 14) + private_mark(entry.get("audience"), names),
                    shown(entry.get("content"), 200),
                )
            )
        columns = [("id", 11), ("when", 15), ("imp", 7), ("source", 18), ("entry", 27)]
        total = len(entries) if total is None else total
        return f"|w{assistant.key}'s journal ({counted(total, 'entry')})|n\n" + render_table(
            columns, rows
        )

    def format_memories(
        self, assistant, memories: list, title: str, names: dict | None = None
    ) -> str:
        """Render a table of long-term memories; a private one says whose.

        Args:
            assistant (Object): The assistant character.
            memories (list): The memories, as dicts.
            title (str): What the list is, shown in the title.
            names (dict, optional): Display names of the people in their audiences.

        Returns:
            str: A title and the table.

        """
        rows = [
            (
                shown(memory.get("id"), 12),
                shown(memory.get("importance"), 4),
                shown((memory.get("provenance") or {}).get("heard_from") or "self", 12)
                + private_mark(memory.get("audience"), names),
                shown(memory.get("text"), TEXT_CHARS),
            )
            for memory in memories
        ]
        columns = [("id", 11), ("imp", 7), ("from", 20), ("memory", 40)]
        return f"|w{assistant.key}'s long-term memory: {title}|n\n" + render_table(columns, rows)

    def format_recalled(self, assistant, items: list, title: str, names: dict | None = None) -> str:
        """Render a table of recalled memories with their scores and sources.

        Args:
            assistant (Object): The assistant character.
            items (list): The `Recalled` items, best first.
            title (str): What was searched for, shown in the title.
            names (dict, optional): Display names of the people in their audiences.

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
                    + shown(audience_label(item.audience, names), 60),
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
                short_when(entry.get("created_at")),
                f"{shown(entry.get('content'), TEXT_CHARS)} "
                f"(from {shown_list(entry.get('cites') or [])}; "
                f"{audience_label(entry.get('audience'))})",
            )
            for entry in entries
        ]
        columns = [("id", 11), ("when", 15), ("insight", 52)]
        return f"|w{assistant.key}'s reflections, newest first|n\n" + render_table(columns, rows)

    @staticmethod
    def format_reminders(assistant, reminders: list) -> str:
        """Render an assistant's reminders for `/trigger`.

        Args:
            assistant (Object): The assistant character.
            reminders (list): As `character.assistant.memory.admin.kind("reminders").all()`
                gives them.

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

    def format_core(self, assistant, items: dict, tokens: int, budget: int, pinned: int = 0) -> str:
        """Render a table of the core memory notes.

        Args:
            assistant (Object): The assistant character.
            items (dict): The notes, by key.
            tokens (int): The tokens the notes use.
            budget (int): The token budget.
            pinned (int, optional): The tokens of the builders' pinned notes.

        Returns:
            str: A title and the table.

        """
        rows = [
            (
                crop(name, 60),
                crop(item["value"], 300),
                f"{short_when(item.get('recorded'))}\n{audience_label(item.get('audience'))}"
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
        return (
            f"|w{assistant.key}'s core memory|n (the model's notes one conversation sees: up to "
            f"{tokens}/{budget} tokens; builders' pinned notes: {pinned}/{budget} tokens)\n{table}"
        )

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
            action = review.get("action")
            if action == "forget":
                what = f"forgot {shown_list(review.get('forgotten') or [])}"
                if review.get("rewritten"):
                    # kept, with the forgotten words taken out of them
                    what += f"; rewrote {shown_list(review['rewritten'])}"
                if review.get("reason"):
                    what += f": {shown(review['reason'], TEXT_CHARS)}"
            elif action == "core_set":
                note = review.get("note") or {}
                what = f"pinned core note {shown(note.get('key') or review.get('id'), NAME_CHARS)}"
            elif action == "core_remove":
                what = f"removed core note {shown(review.get('id'), NAME_CHARS)}"
            elif action == "forget_person":
                # a person forgotten: their keys and how much went, never their words
                what = (
                    f"forgot the person {shown_list(review.get('keys') or [])} "
                    f"({review.get('forgotten_count', 0)} memories)"
                )
                if review.get("reason"):
                    what += f": {shown(review['reason'], TEXT_CHARS)}"
            elif action == "relationship":
                what = (
                    f"{shown(review.get('dimension'), 12)} {review.get('value', 0):+.2f} "
                    f"(was {review.get('was_value', 0):+.2f})"
                )
            elif "trust" not in review:
                what = shown(action, NAME_CHARS)  # a correction this version does not know
            else:
                was = review.get("was")
                what = f"trust {review['trust']:.2f} (was {'source' if was is None else was})"
            rows.append(
                (
                    short_when(review.get("at")),
                    shown(review.get("by"), 14),
                    shown(review.get("id"), 14),
                    what,
                )
            )
        columns = [("when", 15), ("by", 16), ("memory", 14), ("change", 33)]
        return f"|wCorrections of {assistant.key}'s memory, newest first|n\n" + render_table(
            columns, rows
        )

    def format_gossip(self, assistant, records: list) -> str:
        """Render a table of who told whom what (`memory.gossip.GossipLog`).

        Args:
            assistant (Object): The assistant character.
            records (list): The records, newest first.

        Returns:
            str: A title and the table.

        """
        rows = [
            (
                short_when(record.get("at")),
                shown(record.get("direction"), 9),
                shown(record.get("chain"), NAME_CHARS),
                f"{record.get('trust', 0):.2f}",
                f"{shown(record.get('memory_id'), 14)} {shown(record.get('text'), TEXT_CHARS)}",
            )
            for record in records
        ]
        columns = [("when", 15), ("", 10), ("chain", 20), ("trust", 8), ("what", 25)]
        return f"|w{assistant.key}'s gossip, newest first|n\n" + render_table(columns, rows)

    def format_groups(self, rows: list) -> str:
        """Render a table of the groups of assistants (`shell.groups`).

        Args:
            rows (list): (group, member names, shares, sharing on) per group.

        Returns:
            str: A title and the table.

        """
        cells = [
            (shown(group, 20), shown_list(names, NAME_CHARS), str(count), "on" if on else "off")
            for group, names, count, on in rows
        ]
        columns = [("group", 22), ("members", 34), ("shared", 10), ("sharing", 10)]
        return "|wGroups of assistants|n\n" + render_table(columns, cells)

    def format_group_shares(self, group: str, shares: list, on: bool) -> str:
        """Render a table of what a group's members shared (`memory.groups`).

        Args:
            group (str): The group's name.
            shares (list): The shares, each with its `gid` and `member`.
            on (bool): Whether the group's sharing is on.

        Returns:
            str: A title and the table.

        """
        rows = [
            (
                shown(share["gid"], 12),
                short_when(share.get("at")),
                shown(chain_names(share), NAME_CHARS),
                f"{share.get('trust', 0):.2f}",
                shown(share.get("text"), TEXT_CHARS),
            )
            for share in shares
        ]
        state = "on" if on else "off (its members neither share nor recall it)"
        title = f"|wWhat the {shown(group, 40)} share ({len(shares)}), sharing {state}|n\n"
        if not rows:
            return title + "Nothing shared yet."
        columns = [("id", 12), ("when", 15), ("chain", 20), ("trust", 8), ("what", 23)]
        return title + render_table(columns, rows)

    @staticmethod
    def format_rollback(assistant, summary: dict, done: bool, changes: list) -> str:
        """Render what a rollback changes (before asking) or changed (after).

        Args:
            assistant (Object): The assistant character.
            summary (dict): As `character.assistant.memory.rollback_plan()` or `rollback()`
                gives it.
            done (bool): True once it was rolled back.
            changes (list): The summary in lines of text, as
                `character.assistant.memory.describe_rollback(summary)` gives them: one per
                kind of change, then the builders' corrections it keeps (at most ten, then how
                many more).

        Returns:
            str: A title, then the lines.

        """
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
        lines = [line.replace("|", "||") for line in changes]
        return "\n".join([title, *(f"  {line}" for line in lines)])
