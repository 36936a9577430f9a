"""
How `@assistant` shows things: tables, statuses, listings. Formatting only, free of side
effects: every method takes the data the command read through the assistant's handler, and
returns text.

`AssistantDisplay` is a mixin of the builder command (`commands.CmdAssistant`); a game that
wants its listings drawn otherwise subclasses the command and overrides the `format_*` method
it wants. What players and the model wrote reaches a builder's screen here, so every stored
string is cropped and shown as typed (`shown`), and every list a player can grow is paged by
the command (`PAGE_SIZE`).

"""

import re
import textwrap
from datetime import datetime, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from evennia.utils.evtable import EvTable
from evennia.utils.utils import crop, fill

from ..conf import ESSENTIAL_KEYS, AssistantConfig, config_groups
from .game_settings import redacted
from ..memory.audience import label as audience_label
from ..memory.forget_person import ONE as FORGOTTEN_ONE
from ..memory.gossip import chain_names
from ..memory.relationships import DIMENSIONS as REL_DIMENSIONS
from ..memory.relationships import describe as rel_describe
from ..memory.reminders import source as reminder_source
from ..text import counted

# tables fit an 80-column client
WIDTH = 78
PROGRESS_WIDTH = 20
# rows of a paged listing (journal, memories, people, a person's notes, reflections, reviews):
# EvMore pages the screen, this bounds what is read and drawn; `<name>/<page>` picks a page
PAGE_SIZE = 20
# the most characters shown of a stored name (a person, a tool, a source) and of a text
NAME_CHARS = 40
TEXT_CHARS = 300
# answers that confirm what a command asks first (a removal, a rollback); anything else cancels
YES = ("y", "yes")
# what to do about each kind of model error, shown in /status
ERROR_ADVICE = {
    "not_configured": "set AI_ASSISTANT_API_KEY (or OPENAI_API_KEY), or AI_ASSISTANT_BASE_URL "
    "for a local server, then reload",
    "auth": "check the API key the game uses (AI_ASSISTANT_API_KEY or OPENAI_API_KEY)",
    "connection": "check AI_ASSISTANT_BASE_URL and that the model server is running",
    "timeout": "the server did not answer within request_timeout: a model on a CPU may need "
    "120 s or more; raise it (@assistant/set <name>/request_timeout=120) or use a faster "
    "server",
    "rate_limit": "the provider is limiting requests: the assistant backs off and retries",
    "server_error": "the server failed: the assistant backs off and retries; its log says why",
    "not_found": "the server has no such model or route: check AI_ASSISTANT_MODEL (the name "
    "the server lists) and that AI_ASSISTANT_BASE_URL ends in /v1",
    "context_length": "a request was larger than the server's context window: set "
    "max_context_tokens below the window (llama.cpp: the --ctx-size it was started with), "
    "leaving room for max_reply_tokens",
    "bad_request": "the server refused the request: check AI_ASSISTANT_MODEL and the server's "
    "log; for sleep's structured calls, structured_output fixes the format by hand",
    "invalid_response": "the model's replies did not fit what was asked: a larger model, or "
    "structured_output set to the format the server enforces",
    "context_budget": "raise max_context_tokens or lower memory_block_tokens",
}


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


# One clock rule for what builders read: a real time is shown in the game's zone
# (`settings.TIME_ZONE`, read when shown), unlabelled; a game time always says "game time"
# (the game's clock runs at its own pace, `TIME_FACTOR`), never unlabelled beside a real one.


def game_zone():
    """The zone real times are shown in: the game's `TIME_ZONE` (UTC when it names none).

    Returns:
        tzinfo: The zone.

    """
    from django.conf import settings

    try:
        return ZoneInfo(getattr(settings, "TIME_ZONE", None) or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return timezone.utc


def _real(iso: str | None) -> str:
    """A real time (ISO, stored in UTC) as `YYYY-MM-DD HH:MM` in the game's zone."""
    try:
        moment = datetime.fromisoformat(iso) if iso else None
    except (TypeError, ValueError):
        return str(iso)[:16].replace("T", " ")
    if moment is None:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(game_zone()).strftime("%Y-%m-%d %H:%M")


def _when(iso: str | None) -> str:
    """A real time as `YYYY-MM-DD HH:MM`, in the game's zone."""
    return _real(iso) or "-"


def _short_when(iso: str | None) -> str:
    """A real time as `MM-DD HH:MM`, in the game's zone, for table columns."""
    return _real(iso)[5:] or "-"


def _game_when(iso: str | None) -> str:
    """A game time as `YYYY-MM-DD HH:MM`, as the game's clock has it (label it "game time")."""
    return (iso or "")[:16].replace("T", " ") or "-"


def _short_game_when(iso: str | None) -> str:
    """A game time as `MM-DD HH:MM`, for a table column headed "game time"."""
    return (iso or "")[5:16].replace("T", " ") or "-"


# the settings overview: a key and its value take this many columns, what is allowed the rest
OPTION_COLUMN = 40


def _grouped_keys() -> set:
    return {key for _, keys in config_groups() for key in keys}


def key_meaning(key: str) -> str:
    """A configuration key's one-line meaning ("" for a key that is not one, e.g. persona)."""
    field = AssistantConfig.model_fields.get(key)
    return (field.description or "") if field else ""


def _compact_allowed(allowed: str) -> str:
    """What a key allows, in fewer characters: "integer, >= 1, <= 3600 (default 5)" is
    "integer, 1 to 3600" (the default is shown by the value's own line)."""
    allowed = re.sub(r" \(default .*\)$", "", allowed)
    return re.sub(r">= (\S+), <= (\S+?)(,|$)", r"\1 to \2\3", allowed)


def _option_line(key: str, value, allowed: str, own: bool) -> str:
    """One key of the settings overview: `  key = value` and what is allowed, wrapped."""
    left = f" {'*' if own else ' '}{key} = "
    # a long value is cropped to its column (`/set <name>/<key>` shows it whole)
    left += shown(repr(value), max(12, OPTION_COLUMN - 2 - len(left)))
    allowed = _compact_allowed(allowed)
    if len(left) > OPTION_COLUMN - 2:
        # a long key or value: what is allowed goes on the lines below, indented
        return left + "\n" + fill(allowed, WIDTH, indent=OPTION_COLUMN)
    wrapped = fill(allowed, WIDTH - OPTION_COLUMN).splitlines() or [""]
    pad = " " * OPTION_COLUMN
    return left.ljust(OPTION_COLUMN) + f"\n{pad}".join(wrapped)


def _private_mark(audience, names: dict | None) -> str:
    """A second line for a listing's source cell: "private to Bob" (or "builders only") for
    what not everyone may know; nothing for what is public. Names are cropped, markup shown."""
    if audience is None:
        return ""
    return "\n" + shown(audience_label(audience, names), TEXT_CHARS)


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


def _person_rows(profile: dict) -> list:
    """A profile's attributes, then its observations, each newest first: what /people=<person>
    pages."""
    attributes = list(profile.get("attributes") or [])
    observations = list(profile.get("observations") or [])
    return [("a", a) for a in reversed(attributes)] + [("o", o) for o in reversed(observations)]


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


class AssistantDisplay:
    """The `format_*` methods of the builder command: data in, text out."""

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

    @staticmethod
    def format_debt(assistant, debt: dict) -> str:
        """Render an assistant's sleep debt for `/debt`.

        Args:
            assistant (Object): The assistant character.
            debt (dict): As `character.assistant.memory.admin.debt()` gives it.

        Returns:
            str: One fact a line.

        """
        last = _when(debt["last_sleep"]) if debt["last_sleep"] else "never"
        rows = [
            ("sleep debt", f"{debt['points']} ({debt['level']})"),
            ("last sleep", f"{last}, {counted(debt['turns_since_sleep'], 'turn')} since"),
            ("levels", "Alert 0-3, Drowsy 4-6, Sleepy 7-9, Must Sleep 10+"),
        ]
        if debt.get("last_reason"):
            rows.append(("last added", debt["last_reason"]))
        lines = [f"|w{label:>12}|n: {value}" for label, value in rows]
        return f"|w{assistant.key}'s sleep debt|n\n" + "\n".join(lines)

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
            under_way = bool(record.get("in_progress"))
            phases = ", ".join(shown(phase, NAME_CHARS) for phase in record.get("phases") or [])
            done = (
                (
                    f"ASLEEP NOW, wakes {_when(record.get('wakes_at'))} real time; "
                    f"done so far: {phases or 'nothing yet'}; "
                    if under_way
                    else ""
                )
                + f"{counts.get('consolidated', 0)} consolidated, "
                f"{counted(counts.get('memories', 0), 'memory')}, "
                f"{counted(counts.get('links', 0), 'link')}, "
                f"{counted(counts.get('profiles', 0), 'person')}, "
                f"{counted(counts.get('reflections', 0), 'insight')}, "
                f"{counted(counts.get('core notes', 0), 'core note')}, "
                f"{counts.get('pruned', 0)} pruned, {counted(counts.get('digests', 0), 'digest')}, "
                f"{counts.get('removed', 0)} removed; {counted(record.get('calls', 0), 'call')}, "
                f"{counted(record.get('tokens', 0), 'token')}"
                + (f", {counted(record['errors'], 'error')}" if record.get("errors") else "")
                + ("; quiet" if record.get("quiet") else "")
                + (
                    f"; rolled back by {record['rolled_back'].get('by')}"
                    if record.get("rolled_back")
                    else ""
                )
                + (
                    "; can be rolled back"
                    if record.get("id") in (snapshots or ()) and not under_way
                    else ""
                )
            )
            rows.append(
                (
                    record.get("id"),
                    f"{_short_game_when(record.get('start'))}\n"
                    + ("asleep" if under_way else _short_game_when(record.get("end"))),
                    f"{shown(record.get('began'), NAME_CHARS)}\n{record.get('depth')}",
                    f"{record.get('debt_before')} -> "
                    + ("..." if under_way else f"{record.get('debt_after')}"),
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

    @staticmethod
    def format_cost(cost: dict | None) -> str:
        """Describe what the model use cost, as the dashboard counts it.

        Args:
            cost (dict or None): `AssistantStatus.cost`.

        Returns:
            str: The money in all and today, or how to set a price.

        """
        if not cost:
            return "no price for this model: set AI_ASSISTANT_PRICES"
        prompt, completion = cost["price"]
        return (
            f"{cost['total']:.4f} in all, {cost['today']:.4f} today (UTC) at {prompt:g} / "
            f"{completion:g} per million prompt / completion tokens"
        )

    def format_list(self, assistants: list) -> str:
        """Render a table with one row for each assistant.

        Args:
            assistants (list): (assistant character, its handler's `summary()`) pairs.

        Returns:
            str: The table.

        """
        rows = []
        for obj, summary in assistants:
            rows.append(
                (
                    crop(obj.key, 16),
                    obj.dbref,
                    crop(obj.location.key if obj.location else "-", 16),
                    summary["mode"] + (" (paused)" if summary["paused"] else ""),
                    summary["pending"],
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
        rows = [
            ("clock", f"real times in {game_zone()} (the game's TIME_ZONE); game time is marked"),
            ("mode", mode),
        ]
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
                    )
                    + (
                        f"; rests until the next sleep, {progress['rested']}"
                        if progress.get("rested")
                        else ""
                    ),
                ),
            ]
            if status.phase == "dreaming":
                dreaming = status.dreaming_progress
                done = ", ".join(dreaming.get("done", [])) or "nothing yet"
                rows.append(("dreaming done", done))
                failures = dreaming.get("failures") or {}
                for step, error in (dreaming.get("errors") or {}).items():
                    if step in dreaming.get("done", []):
                        said = f"failed {failures.get(step, 1)} times, rests until the next sleep"
                    else:
                        said = "failed, tried again"
                    rows.append((f"dreaming {step}", f"{said}: {shown(error, TEXT_CHARS)}"))
            if status.wake_deferred_reason:
                rows.append(("wake deferred", status.wake_deferred_reason))
        context_share = 100 * status.context_tokens / status.max_context_tokens
        rows += [
            ("model", status.model or "-"),
            ("tick rate", f"{status.tick_rate} s" if status.tick_rate else "not ticking"),
            ("pending events", f"{status.pending_events} ({status.events_dropped} dropped)"),
            ("last tick", f"{_when(status.last_tick)} ({status.tick_count} ticks)"),
            ("turn in flight", "yes" if status.in_flight else "no"),
            ("prompt starts", status.prompt_starts),
            ("model calls (server)", self.format_model_calls(status.model_calls)),
            ("players (server)", self.format_player_limits(status.player_limits)),
            ("recall", status.recall),
            ("activity since wake", status.activity_since_wake),
            (
                "context tokens",
                f"{status.context_tokens} of {status.max_context_tokens} ({context_share:.1f}%)"
                + (
                    f", counted as the server counts (x{status.token_scale:.2f})"
                    if status.token_scale != 1.0
                    else ""
                ),
            ),
            (
                "context window",
                (
                    (
                        f"{status.context_window['tokens']} tokens ("
                        + (
                            "the server's model list"
                            if status.context_window.get("source") == "server"
                            else "learned from a refusal"
                        )
                        + "); the budget keeps max_reply_tokens free"
                    )
                    if status.context_window
                    else "not reported by the server: max_context_tokens"
                ),
            ),
            ("core memory", f"{status.core_memory_tokens}/{status.memory_block_tokens} tokens"),
            (
                "journal entries",
                f"{status.journal_size}"
                + (
                    f" ({status.journal_rested} resting: the model failed on them, kept as "
                    "they are; /clear lets them be tried again)"
                    if status.journal_rested
                    else ""
                ),
            ),
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
                f"{counted(status.turns_since_sleep, 'turn')} since",
            ),
            *(
                (
                    f"sleep {record.get('id')}",
                    f"game time {_game_when(record.get('start'))} -> "
                    f"{_game_when(record.get('end'))}, "
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
        if status.cost:
            rows.append(("cost", self.format_cost(status.cost)))
        if status.wait_until:
            # why comes from the model or a builder: cropped, markup as typed
            why = f": {shown(status.wait_reason, TEXT_CHARS)}" if status.wait_reason else ""
            rows.append(("waiting until", f"{_when(status.wait_until)}{why}"))
        if status.retry_after:
            rows.append(("backing off until", _when(status.retry_after)))
        last = status.last_turn
        if last:
            # what the model named (tools) and why the turn stopped are shown cropped
            tools = shown_list(last.get("tools") or []) or "no tools"
            rows.append(
                (
                    "last turn",
                    f"{_when(last.get('at'))}: {counted(last.get('events') or 0, 'event')}, "
                    f"{counted(last.get('model_calls') or 0, 'call')}, {tools} -> "
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
                    f"{compaction['result']}, {counted(compaction['compacted'], 'message')}, "
                    f"{counted(compaction['facts_recorded'], 'fact')} journaled first, tokens "
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
        # secrets redacted as the dashboard does: a key or an address's password a builder
        # typed into a setting, an endpoint's error that echoes one
        return redacted(f"|wAssistant {assistant.key} ({assistant.dbref})|n\n" + "\n".join(lines))

    @staticmethod
    def format_player_limits(limits: dict | None) -> str:
        """Render the game-wide limits on players (shared by every assistant) in one line: the
        turns a minute and how many lines wait for them, the token budgets and the top
        spenders this hour and game day (names and tokens, nothing said).

        Args:
            limits (dict or None): `AssistantStatus.player_limits`.

        Returns:
            str: The line, "-" when not known.

        """
        if not limits:
            return "-"
        if limits.get("error"):
            return f"|r{limits['error']}|n"

        def limit(value, unit: str) -> str:
            return f"{value} {unit}" if value else f"{unit}: no limit"

        text = (
            f"{limit(limits['turns_per_minute'], 'turns a minute')} "
            f"({limits['deferred']} lines deferred); tokens "
            f"{limit(limits['tokens_per_hour'], 'an hour')}, "
            f"{limit(limits['tokens_per_day'], 'a game day')}"
        )
        for period, word in (("hour", "this hour"), ("day", "this game day")):
            top = limits["top"].get(period) or []
            if top:
                spenders = ", ".join(f"{shown(name, NAME_CHARS)} {tokens}" for name, tokens in top)
                text += f"; top {word}: {spenders}"
        return text

    def format_model_calls(self, queue: dict | None) -> str:
        """Render the server's model call queue (shared by every assistant) in one line.

        Args:
            queue (dict or None): `AssistantStatus.model_calls`.

        Returns:
            str: Calls in flight and waiting, the waits, and any rate limiting.

        """
        if not queue:
            # "model usage" counts this assistant's calls of all time: say whose "none" this is
            return "the server's queue has made none since it started (model usage: all time)"
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

    def format_options(self, assistant, rows: list, own=()) -> str:
        """Render an assistant's settings by topic, one line a key (its allowed values wrapped
        onto the next lines, never cut).

        Args:
            assistant (Object): The assistant character.
            rows (list): (key, value, what is allowed) tuples, as `options()` returns them.
            own (iterable, optional): The keys this assistant has its own value for (marked).

        Returns:
            str: A title, the keys under their topics, and how to see one key in full.

        """
        by_key = {row[0]: row for row in rows}
        own = set(own)
        lines = [
            f"|w{assistant.key}'s settings|n, the most changed first, then by topic",
            "key = value, what is allowed (* marks its own value, not the default)",
        ]
        groups = [
            ("persona", [key for key in by_key if key not in _grouped_keys()]),
            ("most changed", list(ESSENTIAL_KEYS)),
        ]
        for topic, keys in (*groups, *config_groups()):
            if topic != "most changed":
                keys = [key for key in keys if key not in ESSENTIAL_KEYS]
            present = [by_key[key] for key in keys if key in by_key]
            if not present:
                continue
            lines.append(f"|w{topic}|n")
            lines.extend(
                _option_line(key, value, allowed, key in own) for key, value, allowed in present
            )
        lines.append(f"One key in full, with its meaning: @assistant/set {assistant.key}/<key>")
        lines.append(
            f"Change one: @assistant/set {assistant.key}/<key>=<value> (=default drops its own)"
        )
        return "\n".join(lines)

    def format_option(self, assistant, row: tuple, default, source: str) -> str:
        """Render one setting in full: its value, default, allowed values and meaning.

        Args:
            assistant (Object): The assistant character.
            row (tuple): (key, value, what is allowed), as `options()` gives it.
            default (object): Its default (the game's, if the game sets one).
            source (str): Where the value comes from, in words.

        Returns:
            str: A few lines.

        """
        key, value, allowed = row
        meaning = key_meaning(key)
        lines = [
            f"{key} = {shown(repr(value), TEXT_CHARS)}",
            f"  from: {source}",
            f"  default: {shown(repr(default), TEXT_CHARS)}",
            f"  allowed: {_compact_allowed(allowed)}",
        ]
        if meaning:
            lines.append(f"  meaning: {meaning}")
        lines.append(f"  change: @assistant/set {assistant.key}/{key}=<value>")
        return "\n".join(textwrap.fill(line, WIDTH, subsequent_indent="    ") for line in lines)

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
                    _short_when(entry.get("created_at")),
                    shown(entry.get("importance"), 4),
                    shown(source, 14) + _private_mark(entry.get("audience"), names),
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
                + _private_mark(memory.get("audience"), names),
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
                f"(game time {_short_game_when(change.get('at'))}, "
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
                _short_when(record.get("at")),
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
                _short_when(share.get("at")),
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
        return (
            f"|w{assistant.key}'s core memory|n (the model's notes one conversation sees: up to "
            f"{tokens}/{budget} tokens; builders' pinned notes: {pinned}/{budget} tokens)\n{table}"
        )

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
            f"added {_when(entry.get('created_at'))} by {shown(entry.get('by') or '?', 40)}",
        ]
        if entry.get("edited_at"):
            lines.append(
                f"edited {_when(entry['edited_at'])} by {shown(entry.get('edited_by') or '?', 40)}"
            )
        text = shown(entry["text"], 4000)
        lines += [fill(paragraph, WIDTH) for paragraph in text.splitlines() or [""]]
        return "\n".join(lines)
