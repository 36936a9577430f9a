"""
How `@assistant` shows the people an assistant knows: who they are, what it noted of each, how it
feels about them, and what forgetting a person forgets (`/memory <name>/people`, `/forget`).

"""

from ..memory.audience import label as audience_label
from ..memory.forget_person import ONE as FORGOTTEN_ONE
from ..memory.relationships import DIMENSIONS as REL_DIMENSIONS
from ..memory.relationships import describe as rel_describe
from ..text import counted
from .screen import NAME_CHARS, TEXT_CHARS, page_span, render_table, shown, shown_list
from .time_display import short_game_when, short_when


def person_rows(profile: dict) -> list:
    """A profile's attributes, then its observations, each newest first: what /people=<person>
    pages."""
    attributes = list(profile.get("attributes") or [])
    observations = list(profile.get("observations") or [])
    return [("a", a) for a in reversed(attributes)] + [("o", o) for o in reversed(observations)]


class PeopleDisplay:
    """The `format_*` methods of the people an assistant knows: data in, text out."""

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
            return f"|w{assistant.key} knows {counted(total, 'person')}|n\n" + render_table(
                columns, rows
            )
        blocks = []
        for profile in profiles:
            notes = person_rows(profile)
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
                        f"{short_when(note.get('at'))}; "
                        f"{audience_label(note.get('audience'))}"
                        + ("; consolidated" if note.get("consolidated") else "")
                        + ")",
                    )
                )
            columns = [("id", 8), ("kind", 14), ("attribute or observation", 56)]
            title = (
                f"|w{shown(profile.get('name'), NAME_CHARS)} "
                f"({shown(profile.get('key'), NAME_CHARS)})|n: "
                f"{counted(len(profile.get('attributes') or []), 'attribute')}, "
                f"{counted(len(profile.get('observations') or []), 'observation')}, newest first; "
                f"page {shown_page} of {pages}"
            )
            blocks.append(f"{title}\n" + render_table(columns, rows))
        return "\n".join(blocks)

    def format_relationship(self, assistant, name: str, state: dict | None, names=None) -> str:
        """Render how an assistant feels about one person: each dimension's value, what it
        means, and its recent changes (reason, game time, by whom, who may know the reason).

        Args:
            assistant (Object): The assistant character.
            name (str): The person's name.
            state (dict or None): The relationship (`memory.relationships`); None: none yet.
            names (dict, optional): Person key -> name, for the audiences.

        Returns:
            str: A title and the table.

        """
        title = f"|w{assistant.key} and {shown(name, NAME_CHARS)}|n: "
        if state is None:
            return title + "no relationship yet (it forms in sleep, from what happens)."
        rows = []
        for dimension in REL_DIMENSIONS:
            part = state.get(dimension) or {}
            value = float(part.get("value") or 0.0)
            changes = list(reversed(part.get("changes") or []))[:3]
            said = "; ".join(
                f"{change.get('change', 0):+.2f} {shown(change.get('reason'), 60)} "
                f"(game time {short_game_when(change.get('at'))}, "
                f"{shown(change.get('by'), NAME_CHARS)}, "
                f"{audience_label(change.get('audience'), names)})"
                for change in changes
            )
            number = f"{value:.2f}" if dimension == "familiarity" else f"{value:+.2f}"
            rows.append(
                (dimension, f"{number} {rel_describe(dimension, value)}", said or "unchanged")
            )
        title += f"{int(state.get('interactions') or 0)} interactions, last met " + (
            f"on game day {shown(state['last_met'], 12)}" if state.get("last_met") else "never"
        )
        columns = [("dimension", 15), ("value", 20), ("recent changes, newest first", 43)]
        return f"{title}\n" + render_table(columns, rows)

    @staticmethod
    def format_person_plan(assistant, plan: dict) -> str:
        """Render what forgetting a person would forget in one assistant (before asking).

        Args:
            assistant (Object): The assistant character.
            plan (dict): As `character.assistant.memory.admin.forget_person_plan()` gives it.

        Returns:
            str: One line: their keys and the counts by kind (never anyone's words).

        """
        labels = {
            "said": ("memory of what they said", "memories of what they said"),
            "about": ("memory about them", "memories about them"),
            "private": ("memory private to them", "memories private to them"),
            "gossip": ("memory told of them", "memories told of them"),
        }
        found = ", ".join(
            counted(count, *labels.get(kind, (kind, kind))) for kind, count in plan["found"].items()
        )
        return (
            f"{assistant.key} knows {shown_list(plan['names'] or plan['keys'])} "
            f"({shown_list(plan['keys'])}): {found or 'nothing stored'}, and what was drawn "
            "from it."
        )

    @staticmethod
    def format_forgotten_person(assistant, report) -> str:
        """Render what forgetting a person did in one assistant, and what remains.

        Args:
            assistant (Object): The assistant character.
            report (PersonForgotten): As `character.assistant.memory.forget_person()` gives
                it.

        Returns:
            str: What was forgotten (counts) and what remains, by id only: what remains is
                other people's (their words are never shown here).

        """
        forgotten = ", ".join(
            counted(count, FORGOTTEN_ONE.get(what, what), what)
            for what, count in report.counts.items()
        )
        lines = [
            f"{assistant.key} forgot {shown_list(report.keys)}: "
            f"{forgotten or 'nothing was stored'} (recorded)."
        ]
        for what, ids in report.remains.items():
            total = report.remains_total.get(what, len(ids))
            lines.append(
                f"  Remains: {counted(total, FORGOTTEN_ONE.get(what, what), what)}: "
                f"{shown_list(ids, most=len(ids))}"
            )
        if not report.remains:
            lines.append("  Nothing that remains names them.")
        return "\n".join(lines)
