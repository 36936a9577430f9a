"""
The workbench's lore pages: the game's lore book (`ai_assistant.shell.lore_book`), game-wide, beside
the list of assistants.

- `lore/`: every entry paged by id (title, tags, who may know it, text), a search (the book's
  own, as `@assistant/lore =<words>` searches it, over every entry), a filter to what one
  assistant may know where it stands now (`?assistant=<id>`), and the form that adds an entry.
- `lore/<id>/`: one entry in full, with who added and last edited it, and a form per field.
- `lore/<id>/remove/`: what a removal would take away, asked before it is done.

Every edit is a POST carrying the CSRF token, made through the book's own operations (`add`,
`edit`, `remove`) with their validation, as `@assistant/lore` makes them: the entry records the
builder who added or edited it (here "<account> (web)"), and a removal is done only when the
POST says it was confirmed on its confirmation page. A refused edit changes nothing, and its
page is shown again with the values typed and the reason.

A GET writes nothing: the book is read without making its script (a game with no lore has
none, and shows an empty book), on the reactor (`views.on_reactor`), as every dashboard read.

"""

from datetime import datetime, timezone

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import urlencode

from ..clock import to_iso
from ..shell.lore_book import game_lore
from ..memory.lore import FIELDS, MAX_ENTRIES, LoreError, lore_id
from ..records import MAX_QUERY_CHARS  # a search as typed
from . import views
from .filters import TEXT_CHARS, clip
from .views import builder_required, dashboard_view, get_assistant, on_reactor, render

# the most entries a search shows (best first, paged)
MAX_FOUND = 100
# a refused field's value as shown again in its form (the book bounds each field far below)
MAX_FIELD_CHARS = 5000
# an entry's text in the list (the entry's own page shows it whole)
LIST_TEXT_CHARS = 300


def _book(make: bool = False):
    """The game's lore book; None when a GET finds none (reading never makes its script)."""
    return game_lore(make=make)


class _Entries:
    """The book's entries by id as a sequence a paginator can page: only the page is read."""

    def __init__(self, book):
        self.book = book

    def __len__(self) -> int:
        return len(self.book) if self.book is not None else 0

    def __getitem__(self, index):
        if self.book is None:
            return []
        if isinstance(index, slice):
            return self.book.entries(index.start or 0, index.stop)
        return self.book.entries(index, index + 1)[0]


def _row(entry: dict) -> dict:
    """An entry as a page shows it (every value clipped by the template)."""
    return {
        "id": entry.get("id"),
        "url": _entry_url(entry.get("id")),
        "title": entry.get("title"),
        "text": entry.get("text"),
        "tags": ", ".join(entry.get("tags") or []),
        "who": ", ".join(entry.get("who") or []) or "everyone",
        "by": entry.get("by"),
        "created_at": entry.get("created_at"),
        "edited_at": entry.get("edited_at"),
        "edited_by": entry.get("edited_by"),
    }


def _entry_url(entry_id) -> str | None:
    try:
        number = lore_id(entry_id)
    except LoreError:
        return None
    return reverse("ai_assistant:lore_entry", args=[f"L{number}"])


def _list_data(query: str, assistant, number) -> dict:
    """The list page's data, read on the reactor (nothing is written)."""
    book = _book()
    total = len(book) if book is not None else 0
    if query:
        found = [entry for entry, _ in book.search(query, None, MAX_FOUND)] if book else []
        page = views._get_page(found, number)
    elif assistant is not None:
        knower = assistant.assistant.lore.knower()
        page = views._get_page(book.known_to(knower, MAX_ENTRIES) if book else [], number)
    else:
        page = views._get_page(_Entries(book), number)
    return {"total": total, "page": page}


@dashboard_view
@builder_required
def lore_list(request):
    """The game's lore book, paged; `q` searches it, `assistant` keeps what one may know; a
    POST adds an entry.

    Args:
        request (HttpRequest): GET: `page`, `q` (words), `assistant` (an assistant's id).
            POST: `title`, `text`, `tags` (separated by commas), `who` (separated by commas).

    Returns:
        HttpResponse: The page; after an entry is added, a redirect to it.

    """
    form, error = {}, ""
    if request.method == "POST":
        posted = {name: request.POST.get(name, "") for name in FIELDS}
        by = f"{request.user.username} (web)"
        try:
            # the book checks each field whole (a refusal names its real length)
            entry = on_reactor(
                lambda: _book(make=True).add(
                    posted["title"], posted["text"], posted["tags"], posted["who"] or None, by=by
                )
            )
        except LoreError as err:
            error = clip(f"Not changed. {err}", TEXT_CHARS)
            # what was typed goes back into the form, cut to a size a page can hold
            form = {name: value[:MAX_FIELD_CHARS] for name, value in posted.items()}
        else:
            messages.success(request, clip(f"Added lore {entry['id']}: {entry['title']}."))
            return redirect(_entry_url(entry["id"]))
    query = request.GET.get("q", "")[:MAX_QUERY_CHARS].strip()
    assistant, assistant_name = None, ""
    wanted = request.GET.get("assistant", "")[:12]  # an id: a longer number is no id
    if wanted.isascii() and wanted.isdigit() and not query:
        assistant = on_reactor(get_assistant, int(wanted))
        assistant_name = assistant.key
    data = on_reactor(_list_data, query, assistant, request.GET.get("page"))
    extra = urlencode([(k, v) for k, v in (("q", query), ("assistant", wanted)) if v])
    return render(
        request,
        "ai_assistant/lore.html",
        {
            "page_title": "Lore",
            "total": data["total"],
            "page": data["page"],
            "rows": [_row(entry) for entry in data["page"].object_list],
            "query": query,
            "assistant_name": assistant_name,
            "extra": extra,
            "form": form,
            "error": error,
            "list_text_chars": LIST_TEXT_CHARS,
        },
        status=400 if error else 200,
    )


def _entry(entry_id: str) -> dict:
    """One entry, read on the reactor (`Http404` for none)."""
    book = _book()
    try:
        if book is None:
            raise LoreError(f"There is no lore entry {clip(entry_id, 20)}.")
        return book.get(entry_id)
    except LoreError as err:
        raise Http404(str(err)) from None


@dashboard_view
@builder_required
def lore_entry(request, entry_id: str):
    """One lore entry in full, with a form per field; a POST edits a field (`edit`) or
    removes the entry (`remove`, only with `confirmed=yes` from its confirmation page).

    Args:
        request (HttpRequest): POST: `action` (edit or remove), `field` and `value` for an edit,
            `confirmed` for a removal.
        entry_id (str): The entry's id (`L12`).

    Returns:
        HttpResponse: The page; after an edit, a redirect to it; after a removal, to the list.

    """
    by = f"{request.user.username} (web)"
    error, typed = "", {}
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if action == "edit":
                field = request.POST.get("field", "")[:20]
                value = request.POST.get("value", "")
                typed = {str(field).strip().lower(): value[:MAX_FIELD_CHARS]}
                on_reactor(lambda: _book(make=True).edit(entry_id, field, value, by=by))
                messages.success(
                    request, clip(f"Lore {entry_id}: {field.strip().lower()} changed.")
                )
                return redirect(_entry_url(entry_id))
            if action == "remove":
                if request.POST.get("confirmed") != "yes":
                    raise LoreError(
                        "A removal must be confirmed on its confirmation page: use Remove."
                    )
                now = to_iso(datetime.now(timezone.utc))
                entry = on_reactor(lambda: _book(make=True).remove(entry_id, by=by, now=now))
                messages.success(request, clip(f"Removed lore {entry['id']}: {entry['title']}."))
                return redirect(reverse("ai_assistant:lore"))
            raise LoreError(f"Unknown action '{clip(action, 40)}': edit or remove.")
        except LoreError as err:
            error = clip(f"Not changed. {err}", TEXT_CHARS)
    entry = on_reactor(_entry, entry_id)
    row = _row(entry)
    # each field's form holds its value as the command takes it (or what was typed, refused)
    values = {
        "title": entry.get("title") or "",
        "text": entry.get("text") or "",
        "tags": row["tags"],
        "who": row["who"],
        **{name: value for name, value in typed.items() if name in FIELDS},
    }
    fields = [{"name": name, "value": values[name]} for name in FIELDS]
    return render(
        request,
        "ai_assistant/lore_entry.html",
        {
            "page_title": "Lore",
            "entry": row,
            "fields": fields,
            "error": error,
            "remove_url": reverse("ai_assistant:lore_remove", args=[row["id"]]),
        },
        status=400 if error else 200,
    )


@dashboard_view
@builder_required
def lore_remove(request, entry_id: str):
    """What removing an entry would take away, with the form that does it (a GET: nothing is
    changed).

    Args:
        request (HttpRequest): The request.
        entry_id (str): The entry's id.

    Returns:
        HttpResponse: The confirmation page.

    """
    entry = on_reactor(_entry, entry_id)
    return render(
        request,
        "ai_assistant/lore_remove.html",
        {"page_title": "Lore", "entry": _row(entry)},
    )


def known_preview(handler, limit: int) -> dict:
    """What one assistant may know of the lore where it stands now, for its memory tab: the
    first `limit` entries by id, and whether there are more (read on the reactor; a game
    without lore shows none, and no lore script is made).

    Args:
        handler (AssistantHandler): The assistant's handler.
        limit (int): The most entries listed.

    Returns:
        dict: `entries` (rows), `more` (bool), `total` (the entries in the book).

    """
    book = _book()
    if book is None or not len(book):
        return {"entries": [], "more": False, "total": 0}
    known = handler.lore.known(limit + 1)
    return {
        "entries": [_row(entry) for entry in known[:limit]],
        "more": len(known) > limit,
        "total": len(book),
    }


__all__ = ["lore_list", "lore_entry", "lore_remove", "known_preview"]
