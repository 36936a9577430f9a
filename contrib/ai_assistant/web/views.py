"""
Views of the assistant dashboard: a paginated list of assistants, each assistant's overview and
person pages, the builder operations (POST only, `assistant_action`), each through the same
handler operation that the @assistant command uses, and what every page shares (the template
engine, the reactor hop, the access rules, the tabs, audiences in words). The other tabs of an
assistant are in `pages.py`, the charts in `charts.py`.

Pages are drawn with the game's own template engine and extend the website's
`website/base.html` (its menu, styles and footer), this package's templates first.

Only accounts with the Builder permission (or higher) see anything; anonymous visitors are sent
to the login page, others get a 403 page in the site's layout.

Evennia serves its website from a pool of threads, but an assistant's state (its Attributes and
in-memory caches) belongs to the reactor thread. So every read of that state and every operation
runs on the reactor (`on_reactor`), in short pieces, while the web thread filters, draws and
renders. Reading never writes: the status is read without queueing what was heard.

Nothing a page shows is trusted: every list that players or the model can grow (people, their
observations and attributes, the journal, the memories, the turn log) is paged, and every
stored string is redacted and clipped by the templates' `clip` filter (`filters.py`). Every
response forbids framing and content sniffing, and a missing thing is the dashboard's own 404
page (in the site's layout, like the 403).

"""

from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import redirect
from django.template import Engine, RequestContext, engines
from django.urls import Resolver404, resolve, reverse
from django.utils.http import urlencode
from django.utils.safestring import mark_safe
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST
from twisted.internet import reactor
from twisted.internet.threads import blockingCallFromThread
from twisted.python import threadable

from ..errors import Refused
from ..assistants import ASSISTANT_TAG, find_assistants
from ..shell.game_settings import redacted
from ..lifecycle import DEFAULT_HOURS
from .charts import hour_label, links_svg, timeline_svg, usage_svg
from .filters import NAME_CHARS, TEXT_CHARS, audience_words, clip, clock_label, game_time

# PERMISSION and is_builder stay importable from here, as before menu.py held them
from .menu import CONTEXT_PROCESSOR, PERMISSION, TEMPLATE_DIR, is_builder  # noqa: F401

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

_ENGINES: dict = {}


def engine() -> Engine:
    """The template engine of the dashboard: the game's own (its folders, context processors
    and libraries, so pages extend the website's `website/base.html` with its menu and styles),
    with this package's templates first and its `clip`, `when` and `gametime` filters built in.

    The game need not list this package in INSTALLED_APPS, nor change its TEMPLATES: this
    package's `website/_menu.html` adds the builders' link to the game's menu on these pages
    (`menu.add_menu_link` puts it on every page of the website).

    Returns:
        Engine: Made once per game engine.

    """
    base = engines["django"].engine
    made = _ENGINES.get(id(base))
    if made is None:
        processors = [*base.context_processors]
        if CONTEXT_PROCESSOR not in processors:
            processors.append(CONTEXT_PROCESSOR)
        dirs = [TEMPLATE_DIR, *(d for d in base.dirs if str(d) != TEMPLATE_DIR)]
        made = _ENGINES[id(base)] = Engine(
            dirs=dirs,
            app_dirs=base.app_dirs,
            context_processors=processors,
            debug=base.debug,
            string_if_invalid=base.string_if_invalid,
            libraries=base.libraries,
            builtins=[f"{__package__}.filters"],
            autoescape=base.autoescape,
        )
    return made


def render(request, template: str, context: dict, status: int = 200) -> HttpResponse:
    """Render one of the dashboard's templates in the game website's layout.

    Args:
        request (HttpRequest): The request (for the CSRF token, the menu and messages).
        template (str): The template's name, e.g. "ai_assistant/list.html".
        context (dict): The template's variables.
        status (int, optional): The response's status code.

    Returns:
        HttpResponse: The page.

    """
    context = {"clock_label": clock_label(), "page_title": "Assistants", **context}
    page = engine().get_template(template).render(RequestContext(request, context))
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


def dashboard_view(view):
    """Decorate a dashboard view: its security headers, its own 404 page, CSRF checks.

    A missing thing (`Http404`) is rendered with the dashboard's own template, so that it carries
    the headers and says what is missing. (Its layout is the website's, whose menu links staff
    accounts to the admin site: a game's URLs serve it, as every game `evennia --init` makes.)

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
            return render(request, "ai_assistant/403.html", {}, status=403)
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
    journal = on_reactor(memory.admin.kind, "journal")
    step = on_reactor(journal.chunk)
    # one chunk per visit to the reactor: a long journal never holds the game up for long
    for start in range(0, on_reactor(journal.count), step):
        seqs += on_reactor(journal.matches, start, start + step, speaker, query, audience)
    return seqs


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
    core memory and the turn log.

    Args:
        request (HttpRequest): The request; `page`, `speaker`, `q` and `audience` page and
            filter the journal; `people_page`, `memories_page` and `turns_page` page the
            people, the long-term memories and the turn log.
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
    names = data["names"]
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
        "usage_chart": mark_safe(usage_svg(data["usage_by_hour"], costs=data["costs"]["hours"])),
        "costs": _cost_rows(data["costs"]),
        "journal_rows": [_worded(_journal_row(entry), entry, names) for entry in page.object_list],
        "filters": filters,
        "page_links": _page_links(state, DETAIL_PAGES),
        "memories": [
            _worded(_memory_row(memory), memory, names)
            for memory in data["memories_page"].object_list
        ],
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
        "memory_url": reverse("ai_assistant:memory", args=[dbid]),
        "tabs": tabs(dbid, "detail"),
        "plan_rows": _plan_rows(*data["plan"], names),
    }
    return render(request, "ai_assistant/detail.html", context)


def _plan_rows(plan: dict, words: list[str], names: dict) -> list[dict]:
    """Today's plan as the detail page shows it: each item with what became of it and, for
    one agreed in private, who may know of it."""
    return [
        {**_worded(item, item, names), "status": word} for item, word in zip(plan["items"], words)
    ]


def _worded(row: dict, stored: dict, names: dict) -> dict:
    """A journal or memory row with its audience in words ("private to Bob")."""
    return {
        **row,
        "audience": audience_words(stored.get("audience"), names),
        "private": bool(stored.get("audience")),
    }


def _cost_rows(costs: dict) -> dict:
    """The cost per day (newest first) and in all, as the detail page shows it."""
    return {
        "price": costs["price"],
        "model": costs["model"],
        "days": [
            (day, f"{money:.4f}") for day, money in sorted(costs["days"].items(), reverse=True)
        ],
        "hours": [
            (hour_label(hour), f"{money:.4f}")
            for hour, money in sorted(costs["hours"].items(), reverse=True)[:48]
        ],
        "total": f"{costs['total']:.4f}",
    }


def _detail_data(obj, seqs, pages: dict) -> dict:
    """What an assistant's page shows, read on the reactor (nothing is written).

    Each list is paged where it is read: the journal's and the memories' pages read only their
    chunks, and only the profiles of the people on the page shown are read.

    """
    handler = obj.assistant
    memory = handler.memory
    journal_page = _get_page(memory.admin.kind("journal").newest(seqs), pages.get("page"))
    people_page = _get_page(memory.admin.kind("profiles").index(), pages.get("people_page"))
    core_items, core_tokens, core_budget = handler.memory.admin.kind("core_notes").notes()
    return {
        "obj": obj,
        "key": obj.key,
        "dbref": obj.dbref,
        "status": handler.status(flush=False),
        "model": handler.overview.model_in_use(),
        "now": handler.now(),
        "transitions_all": handler.overview.transitions(200),
        "usage_by_hour": handler.overview.usage_by_hour(),
        "costs": handler.overview.costs(),
        "names": {str(key): str(name) for key, name in memory.admin.kind("profiles").index()},
        "journal_page": journal_page,
        "memories_page": _get_page(
            memory.admin.kind("long_term").newest(), pages.get("memories_page")
        ),
        "people_page": people_page,
        "profiles": [
            memory.admin.kind("profiles").profile(key) for key, _ in people_page.object_list
        ],
        "links": handler.memory.admin.kind("links").strongest(200),
        "core_items": sorted(core_items.items()),
        "core_tokens": core_tokens,
        "core_budget": core_budget,
        "sleeps": handler.memory.admin.kind("sleep_history").recent(20),
        "turns_page": _get_page(handler.overview.recent_turns(), pages.get("turns_page")),
        "plan": handler.plans.today(),
    }


@dashboard_view
@builder_required
def assistant_person(request, dbid: int):
    """One person an assistant knows: how it feels about them (each dimension's recent changes,
    and a form to set one, confirmed first), every observation and attribute, paged, newest
    first.

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
        "confirm_url": reverse("ai_assistant:confirm", args=[dbid]),
        "tabs": tabs(dbid, "memory"),
    }
    return render(request, "ai_assistant/person.html", context)


def _person_data(obj, key: str, pages: dict) -> dict:
    """One person's profile and relationship, read on the reactor, its lists paged newest
    first."""
    from .people import CHANGES_SHOWN, dimensions

    memory = obj.assistant.memory
    # only a key of the index is a person (a crafted key never reaches another stored value)
    profile = memory.admin.kind("profiles").profile(key)
    try:
        found, name, relationship = memory.admin.kind("relationships").find(key)
    except Refused:
        found, name, relationship = None, key, None
    if found != key:  # matched by a name, not this key: not this person's relationship
        name, relationship = key, None
    if profile is None and relationship is None:
        raise Http404("The assistant knows no one by that key.")
    profile = profile or {}
    names = {str(k): str(n) for k, n in memory.admin.kind("profiles").index()}
    observations = list(reversed(profile.get("observations") or []))
    attributes = list(reversed(profile.get("attributes") or []))
    return {
        "key": obj.key,
        "dbref": obj.dbref,
        "name": profile.get("name") or name,
        "relationship": relationship is not None,
        "interactions": int((relationship or {}).get("interactions") or 0),
        "last_met": (relationship or {}).get("last_met"),
        "dimensions": dimensions(relationship, names, CHANGES_SHOWN),
        "observations_page": _get_page(observations, pages.get("page")),
        "attributes_page": _get_page(attributes, pages.get("attributes_page")),
    }


def _counts(counts: dict) -> str:
    return ", ".join(f"{kind} x{count}" for kind, count in sorted(counts.items())) or "none"


def _sleep_row(record: dict) -> dict:
    counts = record.get("counts") or {}
    return {
        "id": record.get("id"),
        "start": game_time(record.get("start")),
        "end": game_time(record["end"]) if record.get("end") else "asleep",
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


# the edits asked about first, on the confirm page (`pages.confirm`)
CONFIRMED = ("forget", "trust", "rollback", "relationship")
TABS = (
    ("Overview", "detail"),
    ("Conversation", "conversation"),
    ("Memory", "memory"),
    ("Context", "context"),
    ("Sleep", "sleep"),
    ("Settings", "settings"),
)


def tabs(dbid: int, active: str) -> list[dict]:
    """The tabs of an assistant's pages.

    Args:
        dbid (int): The assistant's id.
        active (str): The URL name of the page shown.

    Returns:
        list: {"name", "url", "active"} dicts.

    """
    return [
        {"name": name, "url": reverse(f"ai_assistant:{url}", args=[dbid]), "active": url == active}
        for name, url in TABS
    ]


def do_confirmed(handler, action: str, data, by: str) -> str:
    """Run a confirmed edit (forget, trust, rollback, relationship) as the in-game commands do.

    Args:
        handler (AssistantHandler): The assistant.
        action (str): forget, trust, rollback or relationship.
        data (QueryDict or dict): The form.
        by (str): Who did it (recorded).

    Returns:
        str: What was done.

    Raises:
        Refused: Not confirmed, or the handler refused; nothing is changed.

    """
    if data.get("confirmed") != "yes":
        raise Refused(f"Not changed: a {action} must be confirmed on its confirmation page.")
    memory = handler.memory
    if action == "forget":
        gone = memory.admin.forget(
            data.get("id", "")[:60], by=by, reason=data.get("reason", "")[:300]
        )
        return f"Forgotten: {', '.join(clip(i, 40) for i in gone[:20])}."
    if action == "trust":
        trust, before = memory.admin.set_trust(
            data.get("id", "")[:60], data.get("level", ""), by=by
        )
        was = f" (was {before:.2f})" if before is not None else ""
        return f"Trust of {clip(data.get('id'), 40)} set to {trust:.2f}{was}."
    if action == "rollback":
        expected = [s for s in (data.get("expected") or "").split(",") if s]
        kept = [int(s) for s in (data.get("expected_kept") or "").split(",") if s.isdigit()]
        result = memory.rollback(
            data.get("sleep") or None, by=by, expected=expected, expected_kept=kept
        )
        lines = memory.describe_rollback(result)
        return f"Rolled back {', '.join(result['sleeps'])}. " + " ".join(lines[:5])
    if action == "relationship":
        # as `@assistant/memory <name>/people=<person>/<dimension>=<value> <reason>` sets it
        # bounded as the confirmation page read them (a longer one is refused there)
        dimension = data.get("dimension", "")[:1000]
        name, after, before = memory.admin.kind("relationships").set(
            data.get("person", "")[:MAX_KEY_CHARS],
            dimension,
            data.get("value", "")[:1000],
            data.get("reason", "")[:1000],
            by=by,
        )
        return (
            f"{handler.obj.key}'s {dimension.strip().lower()} toward {clip(name, 60)} is now "
            f"{after:+.2f} (was {before:+.2f}; recorded)."
        )
    raise Refused(f"Unknown action '{clip(action, 40)}'.")


def edit_response(request, dbid: int, action: str):
    """Where a POST of `action` returns: the page its form was on."""
    if action == "relationship":
        person = _person_url(dbid, request.POST.get("person", ""))
        if request.POST.get("back") == "person" and person:
            return redirect(person)
        return redirect(reverse("ai_assistant:memory", args=[dbid]) + "?part=people")
    page = {
        "forget": "memory",
        "trust": "memory",
        "set_core": request.POST.get("back") or "detail",
        "remove_core": request.POST.get("back") or "detail",
        "rollback": "sleep",
        "set": "settings",
        "instruct": "conversation",
    }.get(action, "detail")
    if page not in {url for _, url in TABS}:
        page = "detail"
    # a core note edited on the memory tab returns to its core part
    part = "?part=core" if page == "memory" and action in ("set_core", "remove_core") else ""
    return redirect(reverse(f"ai_assistant:{page}", args=[dbid]) + part)


def _do_action(handler, action: str, data, by: str) -> str:
    if action == "set_core":
        tokens = handler.memory.admin.kind("core_notes").set(
            data.get("key", ""), data.get("value", ""), by=by
        )
        return f"Core memory '{data.get('key', '').strip()}' set ({tokens} tokens in use)."
    if action == "remove_core":
        handler.memory.admin.kind("core_notes").remove(data.get("key", ""), by=by)
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
    if action == "instruct":
        # heard as `@assistant/instruct` is: a builder's instruction, answered at its next turn
        handler.instruct(by, data.get("text", ""))
        return "Instruction given: it is answered at the assistant's next turn."
    if action == "set":
        key = data.get("key", "")
        value = handler.set_option(key, data.get("value", ""))
        return f"{clip(key.strip(), 60)} is now {clip(value, 500)}."
    if action in CONFIRMED:
        return do_confirmed(handler, action, data, by)
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
    return edit_response(request, dbid, action)
