"""
How `@assistant` fits what it shows to a builder's screen, and reads their answers: tables of
80 columns, stored strings cropped and shown as typed, long listings paged.

What players and the model wrote reaches a builder's screen through these: every stored string
is cropped and shown as typed (`shown`), and every list a player can grow is paged by the
command (`PAGE_SIZE`, `page_span`, `page_footer`).

"""

from evennia.utils.evtable import EvTable
from evennia.utils.utils import crop

from ..memory.audience import label as audience_label

# tables fit an 80-column client
WIDTH = 78
# rows of a paged listing (journal, memories, people, a person's notes, reflections, reviews):
# EvMore pages the screen, this bounds what is read and drawn; `<name>/<page>` picks a page
PAGE_SIZE = 20
# the most characters shown of a stored name (a person, a tool, a source) and of a text
NAME_CHARS = 40
TEXT_CHARS = 300
# answers that confirm what a command asks first (a removal, a rollback); anything else cancels
YES = ("y", "yes")


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


def private_mark(audience, names: dict | None) -> str:
    """A second line for a listing's source cell: "private to Bob" (or "builders only") for
    what not everyone may know; nothing for what is public. Names are cropped, markup shown."""
    if audience is None:
        return ""
    return "\n" + shown(audience_label(audience, names), TEXT_CHARS)


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
