"""
Views of the assistant dashboard: a paginated list of assistants and one page per assistant,
with a few builder operations (POST only), each through the same handler operation that the
@assistant command uses.

Only accounts with the Builder permission (or higher) see anything; anonymous visitors are sent
to the login page.

Evennia serves its website from a pool of threads, but an assistant's state (its Attributes and
in-memory caches) belongs to the reactor thread. So every read of that state and every operation
runs on the reactor (`on_reactor`), in short pieces, while the web thread filters, draws and
renders. Reading never writes: the status is read without queueing what was heard.

Nothing a page shows is trusted: every list that players or the model can grow (people, their
observations and attributes, the journal, the memories, the recent turns) is paged, and every
stored string is redacted and clipped by the templates' `clip` filter (`filters.py`). Every
response forbids framing and content sniffing, and a missing thing is the dashboard's own 404
page, which needs nothing of the game's website.

"""

import math
from datetime import datetime, timezone
from functools import wraps
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, HttpResponseForbidden, HttpResponsePermanentRedirect
from django.shortcuts import redirect
from django.template import Engine, RequestContext
from django.urls import Resolver404, resolve, reverse
from django.utils.http import urlencode
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST
from twisted.internet import reactor
from twisted.internet.threads import blockingCallFromThread
from twisted.python import threadable

from ..errors import Refused
from ..assistants import ASSISTANT_TAG, find_assistants
from ..game_settings import redacted
from ..lifecycle import DEFAULT_HOURS
from .filters import NAME_CHARS, TEXT_CHARS, clip

PERMISSION = "Builder"
# a person's newest observations and attributes shown on the assistant's page (all of them are
# on the person's own page, paged)
PREVIEW = 5
# tool names listed for one turn: a turn makes at most max_tool_calls_per_turn calls, but a
# stored list is not trusted to be short
MAX_TOOLS_SHOWN = 50
# a person's key in a link: longer keys (none is made so long) get no link
MAX_KEY_CHARS = 500
# the page parameters of an assistant's page, one per paged list, and of a person's page
DETAIL_PAGES = ("page", "people_page", "memories_page", "turns_page")
PERSON_PAGES = ("page", "attributes_page")
# every dashboard response: never inside another site's frame (clickjacking), never sniffed
# the pages show what players whispered: never framed by another site, never kept in a shared
# cache or the browser's history cache, and the address never sent on to a linked site
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",
}

# an engine of our own: a game need not list this package in INSTALLED_APPS for its templates;
# the `clip` filter is built in, so no template can forget to load it
ENGINE = Engine(
    dirs=[str(Path(__file__).parent / "templates")],
    context_processors=["django.contrib.messages.context_processors.messages"],
    builtins=[f"{__package__}.filters"],
)


def render(request, template: str, context: dict, status: int = 200) -> HttpResponse:
    """Render one of the dashboard's templates.

    Args:
        request (HttpRequest): The request (for the CSRF token and messages).
        template (str): The template's name, e.g. "ai_assistant/list.html".
        context (dict): The template's variables.
        status (int, optional): The response's status code.

    Returns:
        HttpResponse: The page.

    """
    page = ENGINE.get_template(template).render(RequestContext(request, context))
    return HttpResponse(page, status=status)


def on_reactor(func, *args, **kwargs):
    """Call `func` on the reactor thread and wait for its result.

    A web request runs in one of the website's threads while the server runs; the assistants'
    state may only be touched on the reactor. Called on the reactor, or with no reactor running
    (tests, scripts), `func` simply runs here.

    Args:
        func (callable): What to run.
        *args: Its arguments.
        **kwargs: Its keyword arguments.

    Returns:
        object: What `func` returned (its exception is raised here).

    """
    if reactor.running and not threadable.isInIOThread():
        return blockingCallFromThread(reactor, func, *args, **kwargs)
    return func(*args, **kwargs)


def _page_size() -> int:
    return max(1, int(getattr(settings, "AI_ASSISTANT_DASHBOARD_PAGE_SIZE", 25)))


def _max_graph_nodes() -> int:
    return max(2, int(getattr(settings, "AI_ASSISTANT_DASHBOARD_GRAPH_NODES", 60)))


def is_builder(user) -> bool:
    """Whether a web user may see the dashboard.

    Args:
        user (Account or AnonymousUser): The request's user.

    Returns:
        bool: True for a logged-in account with the Builder permission or higher.

    """
    if not getattr(user, "is_authenticated", False):
        return False
    if getattr(user, "is_superuser", False):
        return True
    check = getattr(user, "check_permstring", None)
    return bool(check and check(PERMISSION))


def dashboard_view(view):
    """Decorate a dashboard view: its security headers, its own 404 page, CSRF checks.

    A missing thing (`Http404`) is rendered with the dashboard's own template. Django's handler
    would render the game's `404.html`, Evennia's, whose menu links staff accounts to the admin
    site: in a game whose URLs have no admin (the demo game's), that link fails and every 404
    became a 500 for the superuser.

    The CSRF check runs here (`csrf_protect`) instead of in the middleware, which is told to
    skip the view: so its refusal goes through this wrapper and carries the headers too.

    Args:
        view (callable): The view.

    Returns:
        callable: The decorated view.

    """
    checked = csrf_protect(view)

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        try:
            response = checked(request, *args, **kwargs)
        except Http404 as missing:
            response = render(
                request, "ai_assistant/404.html", {"reason": str(missing)}, status=404
            )
        for header, value in SECURITY_HEADERS.items():
            response[header] = value
        return response

    return csrf_exempt(wrapped)


def builder_required(view):
    """Decorate a view: anonymous users go to the login page, other non-builders get 403.

    Args:
        view (callable): The view to protect.

    Returns:
        callable: The protected view.

    """

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not getattr(request.user, "is_authenticated", False):
            return redirect_to_login(request.get_full_path())
        if not is_builder(request.user):
            return HttpResponseForbidden("The assistant dashboard is for builders.")
        return view(request, *args, **kwargs)

    return wrapped


def get_assistant(dbid: int):
    """The assistant with this database id.

    Args:
        dbid (int): The object's id (its dbref without '#').

    Returns:
        Object: The assistant character.

    Raises:
        Http404: No assistant has that id.

    """
    from evennia.objects.models import ObjectDB

    obj = ObjectDB.objects.filter(id=dbid).first()
    # the tag is how find_assistants knows an assistant; a plain object of that id is no match
    if obj is None or not obj.tags.has(ASSISTANT_TAG[0], category=ASSISTANT_TAG[1]):
        raise Http404("No assistant has that id.")
    return obj


def _tokens(usage) -> int:
    return usage.prompt_tokens + usage.completion_tokens


@dashboard_view
@builder_required
def not_found(request, rest: str = ""):
    """Any other address under the dashboard: its 404 page (not the game's, see
    `dashboard_view`), or a real address that lacks its final slash, redirected.

    Django's `APPEND_SLASH` adds the slash only after the game's 404 page was rendered, and
    that page is what fails; so this view, which matches first, does it.

    Args:
        request (HttpRequest): The request.
        rest (str, optional): The unknown part of the address.

    Returns:
        HttpResponse: A permanent redirect to the address with its slash.

    Raises:
        Http404: No dashboard page has this address.

    """
    if not request.path_info.endswith("/"):
        try:
            match = resolve(f"{request.path_info}/")
        except Resolver404:
            match = None
        if match is not None and match.url_name != "not_found":
            query = request.META.get("QUERY_STRING", "")
            return HttpResponsePermanentRedirect(
                f"{request.path}/" + (f"?{query}" if query else "")
            )
    raise Http404("There is no such page on the assistant dashboard.")


@dashboard_view
@builder_required
def assistant_list(request):
    """Every assistant, 25 a page, with mode, pending events, last turn, errors and tokens.

    Args:
        request (HttpRequest): The request; `page` picks the page.

    Returns:
        HttpResponse: The list page.

    """
    page, rows = on_reactor(_list_page, request.GET.get("page"))
    return render(request, "ai_assistant/list.html", {"page": page, "rows": rows})


def _list_page(number) -> tuple:
    """One page of the list, read on the reactor: the assistants and their statuses."""
    assistants = sorted(find_assistants(), key=lambda obj: obj.id)
    page = Paginator(assistants, _page_size()).get_page(number)
    rows = []
    # statuses are read only for the page shown: each one loads the assistant's state
    for obj in page.object_list:
        row = {"obj": obj, "key": obj.key, "id": obj.id, "dbref": obj.dbref}
        try:
            status = obj.assistant.status(flush=False)
        except Exception as err:  # one broken assistant must not hide the others
            rows.append({**row, "error": redacted(err)})
            continue
        rows.append(
            {
                **row,
                "status": status,
                "tokens": _tokens(status.usage),
                "errors": sum(status.usage.errors.values()) + status.tick_errors,
                "last_turn_at": (status.last_turn or {}).get("at"),
            }
        )
    return page, rows


def journal_matches(memory, speaker: str = "", query: str = "", audience: str = "") -> list:
    """Positions of the journal entries that pass the filters, read chunk by chunk.

    Args:
        memory (AssistantMemory): The assistant's memory (`character.assistant.memory`).
        speaker (str, optional): Part of the speaker's (or author's) name.
        query (str, optional): Words the text must hold.
        audience (str, optional): "private", "public" or empty for both.

    Returns:
        list: The matching positions, oldest first.

    """
    seqs = []
    step = on_reactor(memory.journal_chunk)
    # one chunk per visit to the reactor: a long journal never holds the game up for long
    for start in range(0, on_reactor(memory.journal_count), step):
        seqs += on_reactor(memory.journal_matches, start, start + step, speaker, query, audience)
    return seqs


def _parse_time(text):
    try:
        moment = datetime.fromisoformat(str(text))
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def timeline_svg(transitions: list, now: datetime, width: int = 720, height: int = 40) -> str:
    """The awake and asleep periods as a band of coloured blocks.

    Args:
        transitions (list): {"mode", "at", "reason"} dicts, oldest first.
        now (datetime): Where the last period ends.
        width (int, optional): Pixels.
        height (int, optional): Pixels.

    Returns:
        str: An `<svg>` element (escaped text inside).

    """
    points = [(t, _parse_time(t.get("at"))) for t in transitions]
    points = [(t, at) for t, at in points if at is not None]
    parts = [f'<svg class="timeline" width="{width}" height="{height + 16}" role="img">']
    if not points:
        parts.append(
            f'<text x="4" y="{height // 2}">No transitions yet: awake since created.</text>'
        )
    else:
        begin = points[0][1]
        span = max((now - begin).total_seconds(), 1.0)
        for index, (transition, at) in enumerate(points):
            end = points[index + 1][1] if index + 1 < len(points) else now
            x = (at - begin).total_seconds() / span * width
            w = max((end - at).total_seconds() / span * width, 1.0)
            mode = clip(transition.get("mode", "?"), 20)
            colour = "#f2c94c" if mode == "awake" else "#2f80ed"
            # a reason may quote what the model said when it chose to sleep
            title = escape(
                f"{mode} from {clip(transition.get('at'), 40)}: "
                f"{clip(transition.get('reason', ''), NAME_CHARS)}"
            )
            parts.append(
                f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" fill="{colour}">'
                f"<title>{title}</title></rect>"
            )
        first = escape(clip(points[0][0].get("at"), 40))
        parts.append(f'<text x="0" y="{height + 12}" font-size="10">{first}</text>')
    parts.append("</svg>")
    return "".join(parts)


def usage_svg(by_hour: dict, width: int = 720, height: int = 160) -> str:
    """Tokens per hour as bars and model calls per hour as a line.

    Args:
        by_hour (dict): Hour -> {"calls", "prompt", "completion", "cached"}.
        width (int, optional): Pixels.
        height (int, optional): Pixels.

    Returns:
        str: An `<svg>` element.

    """
    hours = sorted(by_hour)
    parts = [f'<svg class="usage" width="{width}" height="{height + 20}" role="img">']
    if not hours:
        parts.append(f'<text x="4" y="{height // 2}">No model calls recorded yet.</text>')
        parts.append("</svg>")
        return "".join(parts)
    tokens = [by_hour[h].get("prompt", 0) + by_hour[h].get("completion", 0) for h in hours]
    calls = [by_hour[h].get("calls", 0) for h in hours]
    top_tokens, top_calls = max(max(tokens), 1), max(max(calls), 1)
    step = width / len(hours)
    line = []
    for index, hour in enumerate(hours):
        bar = tokens[index] / top_tokens * height
        x = index * step
        title = escape(f"{hour}: {tokens[index]} tokens, {calls[index]} calls")
        parts.append(
            f'<rect x="{x:.1f}" y="{height - bar:.1f}" width="{max(step - 1, 1):.1f}" '
            f'height="{bar:.1f}" fill="#6fcf97"><title>{title}</title></rect>'
        )
        line.append(f"{x + step / 2:.1f},{height - calls[index] / top_calls * height:.1f}")
    parts.append(f'<polyline points="{" ".join(line)}" fill="none" stroke="#eb5757" />')
    parts.append(
        f'<text x="0" y="{height + 14}" font-size="10">{escape(hours[0])} .. {escape(hours[-1])}'
        f" (bars: tokens, max {top_tokens}; line: calls, max {top_calls})</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


def links_svg(links: list, max_nodes: int, size: int = 420) -> str:
    """Memory links as a graph: memories on a circle, a line per link.

    Args:
        links (list): (id, id, strength, text, text) tuples, strongest first.
        max_nodes (int): The most memories drawn; links to others are left out.
        size (int, optional): Width and height in pixels.

    Returns:
        str: An `<svg>` element.

    """
    nodes: dict[str, str] = {}
    kept = []
    for one, other, strength, first, second in links:
        for key, text in ((one, first), (other, second)):
            if key not in nodes and len(nodes) < max_nodes:
                nodes[key] = text
        if one in nodes and other in nodes:
            kept.append((one, other, strength))
    parts = [f'<svg class="links" width="{size}" height="{size}" role="img">']
    if not nodes:
        parts.append(f'<text x="4" y="{size // 2}">No links between memories yet.</text>')
        parts.append("</svg>")
        return "".join(parts)
    centre, radius = size / 2, size / 2 - 20
    where = {}
    for index, key in enumerate(nodes):
        angle = 2 * math.pi * index / len(nodes)
        where[key] = (centre + radius * math.cos(angle), centre + radius * math.sin(angle))
    for one, other, strength in kept:
        (x1, y1), (x2, y2) = where[one], where[other]
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#828282" '
            f'stroke-width="{0.5 + 3 * max(0.0, min(float(strength), 1.0)):.1f}" />'
        )
    for key, (x, y) in where.items():
        title = escape(f"{clip(key, 40)}: {clip(nodes[key], NAME_CHARS)}")
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="#2d9cdb"><title>{title}</title>'
            "</circle>"
            f'<text x="{x + 7:.1f}" y="{y + 3:.1f}" font-size="9">{escape(clip(key, 40))}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _get_page(items, number, size: int | None = None):
    """One page of `items`, evaluated: a page number that is not a number gives the first page,
    one past the end the last (Django's `get_page`), never an error."""
    page = Paginator(items, size or _page_size()).get_page(number)
    page.object_list = list(page.object_list)
    return page


def _joined(items, most: int = MAX_TOOLS_SHOWN) -> str:
    """Stored values as one line: at most `most` of them, each clipped, and how many more."""
    items = list(items) if isinstance(items, (list, tuple)) else ([items] if items else [])
    shown = ", ".join(clip(item, NAME_CHARS) for item in items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def _journal_row(entry: dict) -> dict:
    audience = entry.get("audience")
    return {
        "id": entry.get("id"),
        "content": entry.get("content") or "",
        "speaker": entry.get("heard_from") or entry.get("author"),
        "at": entry.get("created_at"),
        "location": entry.get("location"),
        "audience": "public" if audience is None else _joined(audience),
        "importance": entry.get("importance"),
        "consolidated": entry.get("consolidated"),
        "kind": entry.get("kind"),
        "pruned": entry.get("pruned", False),
    }


def _memory_row(memory: dict) -> dict:
    audience = memory.get("audience")
    return {
        "id": memory.get("id"),
        "importance": memory.get("importance"),
        "audience": "public" if not audience else _joined(audience),
        "created_at": memory.get("created_at"),
        "sources": _joined(memory.get("source_entry_ids") or []),
        "text": memory.get("text", ""),
    }


def _observation_row(observation: dict) -> dict:
    return {
        "id": observation.get("id"),
        "text": observation.get("text", ""),
        "at": observation.get("at"),
        "where": observation.get("where"),
        "heard_from": observation.get("heard_from"),
        "importance": observation.get("importance"),
        "consolidated": observation.get("consolidated"),
    }


def _attribute_row(attribute: dict) -> dict:
    return {
        "id": attribute.get("id"),
        "type": attribute.get("type"),
        "value": attribute.get("value", ""),
        "at": attribute.get("at"),
    }


def _person_url(dbid: int, key: str) -> str | None:
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS:
        return None
    return f"{reverse('ai_assistant:person', args=[dbid])}?{urlencode({'key': key})}"


def _person(dbid: int, key: str, name: str, profile: dict | None) -> dict:
    """A person on the assistant's page: counts and the newest few of each list."""
    # what people said about others can hold anything a player typed: the template clips it
    profile = profile or {}
    observations = list(profile.get("observations") or [])
    attributes = list(profile.get("attributes") or [])
    return {
        "name": profile.get("name") or name,
        "key": key,
        "url": _person_url(dbid, key),
        "observation_count": len(observations),
        "attribute_count": len(attributes),
        "observations": [_observation_row(o) for o in reversed(observations[-PREVIEW:])],
        "attributes": [_attribute_row(a) for a in reversed(attributes[-PREVIEW:])],
    }


def _page_links(state: dict, params: tuple) -> dict:
    """For each page parameter, the query string of everything else a pager link keeps."""
    links = {}
    for param in params:
        kept = [
            (name, value)
            for name, value in state.items()
            if value and name != param and not (name in params and value == 1)
        ]
        links[param] = urlencode(kept)
    return links


@dashboard_view
@builder_required
def assistant_detail(request, dbid: int):
    """One assistant: status, timeline, sleeps, usage chart, journal, memories, people, links,
    core memory and recent turns.

    Args:
        request (HttpRequest): The request; `page`, `speaker`, `q` and `audience` page and
            filter the journal; `people_page`, `memories_page` and `turns_page` page the
            people, the long-term memories and the recent turns.
        dbid (int): The assistant's database id.

    Returns:
        HttpResponse: The assistant's page (404 for an unknown id).

    """
    obj = on_reactor(get_assistant, dbid)
    speaker = request.GET.get("speaker", "")[:100]
    query = request.GET.get("q", "")[:200]
    audience = request.GET.get("audience", "")
    if audience not in ("private", "public"):
        audience = ""
    seqs = None
    if speaker or query or audience:
        seqs = journal_matches(obj.assistant.memory, speaker, query, audience)
    pages = {name: request.GET.get(name) for name in DETAIL_PAGES}
    data = on_reactor(_detail_data, obj, seqs, pages)
    status, page = data["status"], data["journal_page"]
    filters = {"speaker": speaker, "q": query, "audience": audience}
    state = {
        **filters,
        "page": page.number,
        "people_page": data["people_page"].number,
        "memories_page": data["memories_page"].number,
        "turns_page": data["turns_page"].number,
    }
    context = {
        **data,
        "tokens": _tokens(status.usage),
        "model_errors": _counts(status.usage.errors),
        "malformed": _counts(status.usage.malformed),
        "timeline": mark_safe(timeline_svg(data["transitions_all"], data["now"])),
        "transitions": list(reversed(data["transitions_all"][-20:])),
        "usage_chart": mark_safe(usage_svg(data["usage_by_hour"])),
        "journal_rows": [_journal_row(entry) for entry in page.object_list],
        "filters": filters,
        "page_links": _page_links(state, DETAIL_PAGES),
        "memories": [_memory_row(memory) for memory in data["memories_page"].object_list],
        "people": [
            _person(dbid, key, name, profile)
            for (key, name), profile in zip(data["people_page"].object_list, data["profiles"])
        ],
        "links_graph": mark_safe(links_svg(data["links"], _max_graph_nodes())),
        "sleeps": [_sleep_row(record) for record in data["sleeps"]],
        "turns": [_turn_row(turn) for turn in data["turns_page"].object_list],
        "last_error": status.last_error,
        "sleep_reason": status.sleep_reason or "",
        "last_compaction": status.last_compaction or "",
        "action_url": reverse("ai_assistant:action", args=[dbid]),
    }
    return render(request, "ai_assistant/detail.html", context)


def _detail_data(obj, seqs, pages: dict) -> dict:
    """What an assistant's page shows, read on the reactor (nothing is written).

    Each list is paged where it is read: the journal's and the memories' pages read only their
    chunks, and only the profiles of the people on the page shown are read.

    """
    handler = obj.assistant
    memory = handler.memory
    journal_page = _get_page(memory.newest_entries(seqs), pages.get("page"))
    people_page = _get_page(memory.people_index(), pages.get("people_page"))
    core_items, core_tokens, core_budget = handler.memory.core_notes()
    return {
        "obj": obj,
        "key": obj.key,
        "dbref": obj.dbref,
        "status": handler.status(flush=False),
        "model": handler.overview.model_in_use(),
        "now": handler.now(),
        "transitions_all": handler.overview.transitions(200),
        "usage_by_hour": handler.overview.usage_by_hour(),
        "journal_page": journal_page,
        "memories_page": _get_page(memory.newest_memories(), pages.get("memories_page")),
        "people_page": people_page,
        "profiles": [memory.profile(key) for key, _ in people_page.object_list],
        "links": handler.memory.memory_links(200),
        "core_items": sorted(core_items.items()),
        "core_tokens": core_tokens,
        "core_budget": core_budget,
        "sleeps": handler.memory.sleeps(20),
        "turns_page": _get_page(handler.overview.recent_turns(), pages.get("turns_page")),
    }


@dashboard_view
@builder_required
def assistant_person(request, dbid: int):
    """One person an assistant knows: every observation and attribute, paged, newest first.

    Args:
        request (HttpRequest): The request; `key` names the person (`#12` or `name:bob`),
            `page` pages the observations and `attributes_page` the attributes.
        dbid (int): The assistant's database id.

    Returns:
        HttpResponse: The person's page (404 for an unknown assistant or person).

    """
    obj = on_reactor(get_assistant, dbid)
    key = request.GET.get("key", "")
    if not key or len(key) > MAX_KEY_CHARS:
        raise Http404("The assistant knows no one by that key.")
    pages = {name: request.GET.get(name) for name in PERSON_PAGES}
    data = on_reactor(_person_data, obj, key, pages)
    state = {
        "key": key,
        "page": data["observations_page"].number,
        "attributes_page": data["attributes_page"].number,
    }
    context = {
        **data,
        "person_key": key,
        "page_links": _page_links(state, PERSON_PAGES),
        "observations": [_observation_row(o) for o in data["observations_page"].object_list],
        "attributes": [_attribute_row(a) for a in data["attributes_page"].object_list],
        "detail_url": reverse("ai_assistant:detail", args=[dbid]),
    }
    return render(request, "ai_assistant/person.html", context)


def _person_data(obj, key: str, pages: dict) -> dict:
    """One person's profile, read on the reactor, its lists paged newest first."""
    # only a key of the index is a person (a crafted key never reaches another stored value)
    profile = obj.assistant.memory.profile(key)
    if profile is None:
        raise Http404("The assistant knows no one by that key.")
    name = profile.get("name") or key
    observations = list(reversed(profile.get("observations") or []))
    attributes = list(reversed(profile.get("attributes") or []))
    return {
        "key": obj.key,
        "dbref": obj.dbref,
        "name": profile.get("name") or name,
        "observations_page": _get_page(observations, pages.get("page")),
        "attributes_page": _get_page(attributes, pages.get("attributes_page")),
    }


def _counts(counts: dict) -> str:
    return ", ".join(f"{kind} x{count}" for kind, count in sorted(counts.items())) or "none"


def _sleep_row(record: dict) -> dict:
    counts = record.get("counts") or {}
    return {
        "id": record.get("id"),
        "start": record.get("start"),
        "end": record.get("end") or "asleep",
        "began": record.get("began") or "",
        "depth": record.get("depth"),
        "quiet": record.get("quiet"),
        "phases": _joined(record.get("phases") or []),
        "counts": _joined([f"{name} {value}" for name, value in counts.items() if value]),
        "debt": f"{record.get('debt_before')} -> {record.get('debt_after')}",
        "calls": record.get("calls", 0),
        "tokens": record.get("tokens", 0),
        "errors": record.get("errors", 0),
        "summary": record.get("summary") or "",
    }


def _turn_row(turn: dict) -> dict:
    shape = turn.get("prompt") or {}
    recalled = turn.get("recalled") or []
    return {
        "at": turn.get("at"),
        "events": turn.get("events"),
        "model_calls": turn.get("model_calls"),
        # tool names are the model's: one may be anything, of any length
        "tools": _joined(turn.get("tools") or []) or "none",
        "stop_reason": turn.get("stop_reason"),
        "error": turn.get("error") or "",
        "recalled": len(recalled) if isinstance(recalled, (list, tuple)) else 0,
        "fixed": shape.get("fixed"),
        "conversation": shape.get("conversation"),
        "last_request": shape.get("last_request"),
    }


def _do_action(handler, action: str, data, by: str) -> str:
    if action == "set_core":
        tokens = handler.memory.set_core_note(data.get("key", ""), data.get("value", ""), by=by)
        return f"Core memory '{data.get('key', '').strip()}' set ({tokens} tokens in use)."
    if action == "remove_core":
        handler.memory.remove_core_note(data.get("key", ""), by=by)
        return f"Core memory '{data.get('key', '').strip()}' removed."
    if action == "pause":
        handler.pause()
        return "Paused."
    if action == "resume":
        handler.resume()
        return "Resumed."
    if action == "sleep":
        try:
            hours = int(data.get("hours") or DEFAULT_HOURS)
        except ValueError:
            raise Refused("Hours must be a whole number.") from None
        phase = handler.sleep(hours=hours, depth=data.get("depth") or "light", by=by)
        return f"Asleep ({phase})."
    if action == "wake":
        handler.wake(data.get("reason", ""))
        return "Awake."
    raise Refused(f"Unknown action '{action}'.")


@dashboard_view
@require_POST
@builder_required
def assistant_action(request, dbid: int):
    """Run one builder operation (POST only) and go back to the assistant's page.

    Args:
        request (HttpRequest): The form: `action` (set_core, remove_core, pause, resume,
            sleep, wake) and its fields (key, value, hours, depth, reason).
        dbid (int): The assistant's database id.

    Returns:
        HttpResponse: A redirect to the assistant's page, with the outcome as a message.

    """
    obj = on_reactor(get_assistant, dbid)
    by = f"{request.user.username} (web)"
    action, data = request.POST.get("action", ""), request.POST.dict()
    # a message may quote what was posted (an unknown key or action): it rides in the session
    # or a cookie, so it is clipped like anything else the dashboard shows
    try:
        done = on_reactor(lambda: _do_action(obj.assistant, action, data, by))
        messages.success(request, clip(done, TEXT_CHARS))
    except Refused as err:
        messages.error(request, clip(err, TEXT_CHARS))
    return redirect(reverse("ai_assistant:detail", args=[dbid]))
