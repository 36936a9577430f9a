"""
The workbench's pages of one assistant, beside its overview (`views.assistant_detail`):

- Conversation: the turn log (`memory.turn_log`) as a chat log (the newest page first, each
  page oldest first): what was heard, from whom, for whom; what was said and the model's own
  text; each turn's tool calls (arguments and results), stop reason, tokens and time folded
  under it; memory ids linked; filtered by person and by tool.
- Memory: sub-tabs, one part read and shown at a time, each list paged: the journal (filtered),
  the long-term memories, the people with how it feels about each (`people.py`), the links
  drawn with readable labels, reflections, digests, reminders, the gossip log, the builders'
  corrections, core memory and the lore it may know (`lore.py`); one memory by its id; a search
  with the recall the assistant uses (scores, sources, audiences in words); forget, trust,
  relationship and core-memory edits.
- Context: the next request laid open in its parts with their tokens against the budget.
- Sleep: the timeline with its legend and axis, each sleep's record in the same clock, the
  debt over the sleeps, and rollback.
- Settings: a form: the essentials first, every other setting under its topic, each with its
  meaning and allowed values, changed with `@assistant/set`'s validation.
- Confirm: what an edit (forget, trust, rollback, relationship) would change, asked before it
  is done.

Everything is read and done through the assistant's handler (`character.assistant`: its
`memory`, `overview` and lifecycle orders), on the reactor (`views.on_reactor`), as the
`@assistant` command does. A GET reads only; every edit is a POST carrying the CSRF token, and
forget, trust, rollback and relationship are done only when the POST says it was confirmed on
the confirm page.

"""

import json

from django.http import Http404
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.safestring import mark_safe
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from ..errors import Refused
from ..records import MAX_QUERY_CHARS  # a search query or a filter, as typed
from ..state import TURN_LOG_KEPT
from . import charts, people, views
from .filters import TEXT_CHARS, audience_words, clip, game_time
from .lore import known_preview
from .views import (
    CONFIRMED,
    builder_required,
    dashboard_view,
    get_assistant,
    on_reactor,
    render,
    tabs,
)

# the sleeps the sleep page lists and the debt chart draws
SLEEPS_SHOWN = 50
# the lore entries an assistant may know that its memory tab lists (all are on the lore page)
LORE_PREVIEW = 10


def _names(handler) -> dict:
    """Person key -> name, for audiences in words (one read of the people's index)."""
    return {str(key): str(name) for key, name in handler.memory.admin.kind("profiles").index()}


def _waited(result):
    """The result of what may be a Deferred (a search): off the reactor `on_reactor` has waited
    for it; on it (tests, no server) an inline runner has fired it already."""
    if not isinstance(result, Deferred):
        return result
    box = []
    result.addBoth(box.append)
    if not box:
        raise Refused("The search is still running; try again in a moment.")
    if isinstance(box[0], Failure):
        box[0].raiseException()
    return box[0]


def _pretty(arguments) -> str:
    """A tool call's arguments (JSON text as the model sent it), indented when they parse."""
    try:
        return json.dumps(json.loads(arguments), indent=1, ensure_ascii=False)
    except (TypeError, ValueError):
        return "" if arguments is None else str(arguments)


def _said(calls: list) -> list[str]:
    """What the assistant said aloud in a turn: the text of its speaking tools' calls."""
    said = []
    for call in calls:
        if call.get("name") in ("say", "whisper", "emote") and call.get("ok"):
            try:
                arguments = json.loads(call.get("arguments") or "{}")
            except (TypeError, ValueError):
                continue
            if not isinstance(arguments, dict):
                continue
            # say and whisper carry "text", emote its "action"
            text = arguments.get("text") or arguments.get("action")
            if text:
                target = arguments.get("target")
                said.append(f"{call['name']}{f' to {target}' if target else ''}: {text}")
    return said


def _turn_card(turn: dict, names: dict) -> dict:
    """One recent turn, for the conversation page."""
    calls = [call for call in turn.get("calls") or [] if isinstance(call, dict)]
    heard = [event for event in turn.get("heard") or [] if isinstance(event, dict)]
    tokens = turn.get("tokens") or {}
    shape = turn.get("prompt") or {}
    return {
        "at": turn.get("at"),
        "events": turn.get("events"),
        "heard": [
            {
                "type": event.get("type"),
                "speaker": event.get("speaker"),
                "audience": audience_words(event.get("audience"), names),
                "private": bool(event.get("audience")),
                "text": event.get("text"),
            }
            for event in heard
        ],
        # a noop ends a turn with nothing to do: counted, not shown as a call
        "calls": [
            {
                "name": call.get("name"),
                "arguments": _pretty(call.get("arguments")),
                "result": call.get("result"),
                "ok": call.get("ok"),
            }
            for call in calls
            if call.get("name") != "noop"
        ],
        "noops": sum(1 for call in calls if call.get("name") == "noop"),
        # an older record has tool names only
        "tools": [] if calls else [clip(name) for name in (turn.get("tools") or [])[:50]],
        "said": _said(calls),
        # the model's own text, where it wrote any
        "texts": [text for text in turn.get("texts") or [] if isinstance(text, str)][:20],
        "audience": audience_words(turn.get("audience"), names),
        "private": bool(turn.get("audience")),
        "stop_reason": turn.get("stop_reason"),
        "error": turn.get("error"),
        "model_calls": turn.get("model_calls"),
        "prompt_tokens": tokens.get("prompt"),
        "completion_tokens": tokens.get("completion"),
        "seconds": turn.get("seconds"),
        "recalled": [clip(i, 40) for i in (turn.get("recalled") or [])[:20]],
        "fixed": shape.get("fixed"),
        "conversation": shape.get("conversation"),
        "last_request": shape.get("last_request"),
    }


def _turn_matches(turn: dict, person: str, tool: str) -> bool:
    if person:
        who = [
            f"{event.get('speaker') or ''} {event.get('person') or ''}".lower()
            for event in turn.get("heard") or []
            if isinstance(event, dict)
        ]
        if not any(person in one for one in who):
            return False
    if tool:
        used = [str(call.get("name") or "") for call in turn.get("calls") or []]
        used += [str(name) for name in turn.get("tools") or []]
        if not any(tool in name.lower() for name in used):
            return False
    return True


# the most turns a page of the conversation shows (a turn is a card, taller than a row)
TURNS_A_PAGE = 10


@dashboard_view
@builder_required
def conversation(request, dbid: int):
    """Each turn of the log as it happened, the newest page first, each page oldest first;
    filters `person` and `tool`.

    Args:
        request (HttpRequest): The request; `person` (part of a speaker's name or key),
            `tool` (part of a tool's name) and `page`.
        dbid (int): The assistant's database id.

    Returns:
        HttpResponse: The page.

    """
    obj = on_reactor(get_assistant, dbid)
    person = request.GET.get("person", "")[:MAX_QUERY_CHARS].strip()
    tool = request.GET.get("tool", "")[:MAX_QUERY_CHARS].strip()

    def read():
        handler = obj.assistant
        turns = handler.overview.recent_turns()
        if person or tool:
            # a filter reads the whole log (it is bounded: `state.TURN_LOG_KEPT`)
            turns = [t for t in turns if _turn_matches(t, person.lower(), tool.lower())]
        # pages run from the newest turns back, a page reading only its chunks of the log
        page = views._get_page(
            turns, request.GET.get("page"), min(TURNS_A_PAGE, views._page_size())
        )
        return page, len(turns), _names(handler)

    page, kept, names = on_reactor(read)
    page.object_list.reverse()  # a page reads as a chat log, oldest first
    filters = {"person": person, "tool": tool}
    return render(
        request,
        "ai_assistant/conversation.html",
        {
            "key": obj.key,
            "dbref": obj.dbref,
            "tabs": tabs(dbid, "conversation"),
            "turns": [_turn_card(turn, names) for turn in page.object_list],
            "page": page,
            "filters": filters,
            "extra": urlencode([(k, v) for k, v in filters.items() if v]),
            "kept": kept,
            "turns_kept": TURN_LOG_KEPT,
            "detail_url": reverse("ai_assistant:detail", args=[dbid]),
            "memory_url": reverse("ai_assistant:memory", args=[dbid]),
            "item_url": item_url(dbid),
            "action_url": reverse("ai_assistant:action", args=[dbid]),
        },
    )


def item_url(dbid: int) -> str:
    """The address of one memory on the memory tab, less the memory's id (appended)."""
    return f"{reverse('ai_assistant:memory', args=[dbid])}?part=item&id="


def _recalled_row(item, names: dict) -> dict:
    scores = getattr(item, "scores", None) or {}
    provenance = getattr(item, "provenance", None) or {}
    return {
        "id": item.id,
        "kind": item.kind,
        "text": item.text,
        "score": f"{float(item.score):.3f}",
        "scores": ", ".join(
            f"{clip(name, 20)} {float(value):.2f}"
            for name, value in list(scores.items())[:10]
            if isinstance(value, (int, float))
        ),
        "sources": ", ".join(clip(i, 40) for i in (item.entry_ids or [])[:20]),
        "audience": audience_words(item.audience, names),
        "private": bool(item.audience),
        "trust": f"{float(item.trust):.2f}" if item.trust is not None else "",
        "via": item.via or "",
        "time": getattr(item, "time", None),
        "heard_from": provenance.get("heard_from") or "",
        "importance": item.importance,
    }


def _memory_row(memory: dict, names: dict) -> dict:
    row = views._memory_row(memory)
    row["audience"] = audience_words(memory.get("audience"), names)
    row["private"] = bool(memory.get("audience"))
    row["trust"] = memory.get("trust")
    return row


# the parts of the memory tab, one shown at a time (its sub-tabs): (part, label)
MEMORY_PARTS = (
    ("journal", "Journal"),
    ("memories", "Memories"),
    ("people", "People"),
    ("links", "Links"),
    ("reflections", "Reflections"),
    ("digests", "Digests"),
    ("reminders", "Reminders"),
    ("gossip", "Gossip"),
    ("corrections", "Corrections"),
    ("core", "Core memory"),
    ("lore", "Lore"),
)
# the page parameter of each part's list
PART_PAGES = {
    "journal": "journal_page",
    "memories": "memories_page",
    "people": "people_page",
    "reflections": "reflections_page",
    "digests": "digests_page",
    "reminders": "reminders_page",
    "gossip": "gossip_page",
    "corrections": "corrections_page",
}
# the journal's filters on the memory tab, as typed
JOURNAL_FILTERS = ("speaker", "text", "audience")


def memory_part(query) -> str:
    """The part of the memory tab a request asks for: its `part`, else the part its other
    parameters belong to (a search, a page of one list, a filter), else the journal.

    Args:
        query (QueryDict): The request's GET parameters.

    Returns:
        str: One of MEMORY_PARTS' names, "search" for a search's results or "item" for one
            memory (its `id`).

    """
    part = query.get("part", "")
    if part in dict(MEMORY_PARTS) or part in ("search", "item"):
        return part
    if query.get("q"):
        return "search"
    if query.get("gossip_person"):
        return "gossip"
    for name, param in PART_PAGES.items():
        if query.get(param):
            return name
    return "journal"


def memory_url(dbid: int, part: str) -> str:
    """The address of one part of an assistant's memory tab."""
    return f"{reverse('ai_assistant:memory', args=[dbid])}?{urlencode({'part': part})}"


@dashboard_view
@builder_required
def memory(request, dbid: int):
    """Search, page through and correct an assistant's memory, one part at a time.

    The tab's sub-tabs each show one part (journal, memories, people, links, reflections,
    digests, reminders, gossip, corrections, core memory, lore), each list paged; only what
    the part shows is read.

    Args:
        request (HttpRequest): The request; `part` picks the part; `q` searches (the recall
            the assistant uses); `speaker`, `text` and `audience` filter the journal;
            `<list>_page` pages a list (`journal_page`, `memories_page`, `people_page`,
            `reflections_page`, `digests_page`, `reminders_page`, `gossip_page`,
            `corrections_page`); `gossip_person` keeps the gossip that names a person.
        dbid (int): The assistant's database id.

    Returns:
        HttpResponse: The page.

    """
    obj = on_reactor(get_assistant, dbid)
    part = memory_part(request.GET)
    query = request.GET.get("q", "")[:MAX_QUERY_CHARS].strip()
    found, search_error = None, ""
    if part == "search" and query:
        try:
            found = _waited(on_reactor(obj.assistant.memory.search_deferred, query))
        except Refused as err:
            search_error = str(err)
    journal = {
        name: request.GET.get(name, "")[:MAX_QUERY_CHARS].strip() for name in JOURNAL_FILTERS
    }
    if journal["audience"] not in ("private", "public"):
        journal["audience"] = ""
    seqs = None
    if part == "journal" and any(journal.values()):
        seqs = views.journal_matches(
            obj.assistant.memory, journal["speaker"], journal["text"], journal["audience"]
        )
    item, item_error = None, ""
    if part == "item":
        try:
            item = on_reactor(_memory_shown, obj, request.GET.get("id", "")[:60].strip())["memory"]
        except Refused as err:
            item_error = clip(err, TEXT_CHARS)
    gossip_person = request.GET.get("gossip_person", "")[: people.MAX_PERSON_CHARS].strip()
    param = PART_PAGES.get(part)
    data = on_reactor(
        _memory_data, obj, part, request.GET.get(param) if param else None, gossip_person, seqs
    )
    names = data["names"]
    list_page = data.get("list_page")
    state = {"part": part, "gossip_person": gossip_person, **journal}
    extra = urlencode([(name, value) for name, value in state.items() if value])
    rows = list_page.object_list if list_page is not None else []
    dbid_ = obj.id
    context = {
        **data,
        "tabs": tabs(dbid_, "memory"),
        "part": part,
        "parts": [
            {"name": name, "label": label, "url": memory_url(dbid_, name), "active": name == part}
            for name, label in MEMORY_PARTS
        ],
        "page_param": param,
        "page_extra": extra,
        "query": query,
        "item": item,
        "item_error": item_error,
        "journal_filters": journal,
        "search_error": search_error,
        "how": "by meaning and words" if data["by_meaning"] else "by words, BM25",
        "found": None if found is None else [_recalled_row(i, names) for i in found],
        "gossip_person": gossip_person,
        "dimensions": people.DIMENSIONS,
        "action_url": reverse("ai_assistant:action", args=[dbid_]),
        "confirm_url": reverse("ai_assistant:confirm", args=[dbid_]),
        "dbid": dbid_,
    }
    if part == "journal":
        context["journal_rows"] = [
            views._worded(views._journal_row(entry), entry, names) for entry in rows
        ]
    elif part == "memories":
        context["memories"] = [_memory_row(m, names) for m in rows]
    elif part == "people":
        context["people"] = [
            {**row, "url": views._person_url(dbid_, row["key"])} for row in data["people_rows"]
        ]
    elif part == "gossip":
        context["gossip"] = [people.gossip_row(r, names) for r in rows]
    elif part == "links":
        context["links_graph"] = mark_safe(
            charts.links_svg(data["links"], views._max_graph_nodes())
        )
    elif part == "reflections":
        context["reflections"] = [
            {**views._journal_row(e), "audience": audience_words(e.get("audience"), names)}
            for e in rows
        ]
    elif part == "digests":
        context["digests"] = [
            {
                "day": d.get("day"),
                "summary": d.get("summary"),
                "audience": audience_words(d.get("audience"), names),
                "private": bool(d.get("audience")),
            }
            for d in rows
        ]
    elif part == "reminders":
        context["reminders"] = [
            {
                "id": r.get("id"),
                "pattern": r.get("pattern"),
                "reminder": r.get("reminder"),
                "fires": f"{r.get('fired_count', 0)} of {r.get('max_fires')}",
                "audience": audience_words(r.get("audience"), names),
                "private": bool(r.get("audience")),
            }
            for r in rows
        ]
    elif part == "corrections":
        context["reviews"] = rows
    return render(request, "ai_assistant/memory.html", context)


def _memory_data(obj, part: str, number, gossip_person: str = "", seqs=None) -> dict:
    """What one part of the memory page shows, read on the reactor (nothing is written):
    `list_page` is the page `number` of the part's list."""
    handler = obj.assistant
    mem = handler.memory
    names = _names(handler)
    data = {
        "key": obj.key,
        "dbref": obj.dbref,
        "names": names,
        "by_meaning": mem.admin.searches_by_meaning(),
        "list_page": None,
    }
    size = None
    if part == "journal":
        items = mem.admin.kind("journal").newest(seqs)
    elif part == "memories":
        items = mem.admin.kind("long_term").newest()
    elif part == "people":
        # every relationship, read once (each is one cached Attribute)
        relationships = mem.admin.kind("relationships").all()
        items = people.everyone(mem, relationships)
        for state in relationships:  # someone known only by a relationship, named
            names.setdefault(str(state["key"]), str(state.get("name") or state["key"]))
    elif part == "gossip":
        items = mem.admin.kind("gossip_log").records(None, people.person_key(mem, gossip_person))
        size = people.GOSSIP_PAGE
    elif part == "reflections":
        items = mem.admin.kind("journal").reflections()
    elif part == "digests":
        items = list(reversed(mem.digests()))
    elif part == "reminders":
        items = list(mem.admin.kind("reminders").all())
    elif part == "corrections":
        reviews = mem.admin.kind("review_log")
        items = reviews.latest(reviews.count())
    else:
        items = None
    if items is not None:
        data["list_page"] = views._get_page(items, number, size)
    if part == "people":
        data["people_rows"] = people.people_rows(
            relationships, data["list_page"].object_list, names
        )
    elif part == "links":
        data["links"] = mem.admin.kind("links").strongest(200)
    elif part == "lore":
        data["lore"] = known_preview(handler, LORE_PREVIEW)
    elif part == "core":
        core_items, core_tokens, core_budget = mem.admin.kind("core_notes").notes()
        data.update(
            core_items=sorted(core_items.items()), core_tokens=core_tokens, core_budget=core_budget
        )
    return data


@dashboard_view
@builder_required
def context(request, dbid: int):
    """The next request laid open: its parts and their tokens against the budget.

    Args:
        request (HttpRequest): The request.
        dbid (int): The assistant's database id.

    Returns:
        HttpResponse: The page.

    """
    obj = on_reactor(get_assistant, dbid)

    def read():
        handler = obj.assistant
        return handler.overview.next_request(), _names(handler)

    data, names = on_reactor(read)
    tokens, budget = data["tokens"], max(int(data["budget"]), 1)
    parts = [
        ("System prompt", tokens["system"]),
        ("Tool schemas", tokens["tools"]),
        ("Core memory", tokens["core"]),
        ("History", tokens["history"]),
        ("Recalled memories", tokens["recalled"]),
        ("New events", tokens["events"]),
    ]
    return render(
        request,
        "ai_assistant/context.html",
        {
            "key": obj.key,
            "dbref": obj.dbref,
            "tabs": tabs(dbid, "context"),
            "model": data["model"],
            "budget": budget,
            "total": tokens["total"],
            "percent": round(100 * tokens["total"] / budget, 1),
            "parts": [
                {"name": name, "tokens": count, "percent": round(100 * count / budget, 1)}
                for name, count in parts
            ],
            "budget_bar": mark_safe(charts.budget_svg(parts, budget)),
            "system": _content(data["system"]),
            "core": _content(data["core"]) if data["core"] else "",
            "tools": [
                {
                    "name": (schema.get("function") or {}).get("name") or schema.get("name"),
                    "schema": json.dumps(schema, indent=1, ensure_ascii=False),
                }
                for schema in data["tools"]
            ],
            "history": [_message_row(message) for message in data["history"][-200:]],
            "history_count": len(data["history"]),
            "events": [
                {
                    "at": event.time,
                    "type": event.type,
                    "speaker": event.speaker,
                    "audience": audience_words(event.audience, names),
                    "private": bool(event.audience),
                    "text": event.text,
                }
                for event in data["events"][:200]
            ],
            "event_count": len(data["events"]),
            "unqueued": data["unqueued"],
            "query": data["query"],
            "recalled": [_recalled_row(item, names) for item in data["recalled"]],
        },
    )


def _content(message) -> str:
    if not message:
        return ""
    content = message.get("content")
    if isinstance(content, list):  # parts of a message: their texts
        content = "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _message_row(message: dict) -> dict:
    calls = message.get("tool_calls") or []
    named = [
        f"{(c.get('function') or {}).get('name')}({(c.get('function') or {}).get('arguments')})"
        for c in calls[:20]
        if isinstance(c, dict)
    ]
    return {"role": message.get("role"), "text": _content(message), "calls": "; ".join(named)}


@dashboard_view
@builder_required
def sleep(request, dbid: int):
    """The timeline with its legend and axis, each sleep's record, the debt, and rollback.

    Args:
        request (HttpRequest): The request.
        dbid (int): The assistant's database id.

    Returns:
        HttpResponse: The page.

    """
    obj = on_reactor(get_assistant, dbid)

    def read():
        handler = obj.assistant
        mem = handler.memory
        return {
            "now": handler.now(),
            "game_now": handler.overview.game_now(),
            "transitions": handler.overview.transitions(200),
            "sleeps": mem.admin.kind("sleep_history").recent(SLEEPS_SHOWN),
            "kept": {snapshot["sleep_id"] for snapshot in mem.admin.snapshots()},
            "debt": mem.admin.debt(),
            "status": handler.status(flush=False),
        }

    data = on_reactor(read)
    sleeps = data["sleeps"]
    return render(
        request,
        "ai_assistant/sleep.html",
        {
            "key": obj.key,
            "dbref": obj.dbref,
            "tabs": tabs(dbid, "sleep"),
            "status": data["status"],
            "now": data["now"],
            "game_now": game_time(data["game_now"].isoformat()),
            "debt": data["debt"],
            "timeline": mark_safe(charts.timeline_svg(data["transitions"], data["now"])),
            "transitions": list(reversed(data["transitions"][-50:])),
            "debt_chart": mark_safe(charts.debt_svg(sleeps, data["status"].sleep_debt)),
            "sleeps": [
                {
                    **views._sleep_row(record),
                    "start": game_time(record.get("start")),
                    "end": game_time(record["end"]) if record.get("end") else "asleep",
                    # real time, as the timeline above it (older records kept game time only)
                    "real_start": record.get("real_start"),
                    "real_end": record.get("real_end"),
                    "rollback": record.get("id") in data["kept"],
                    "rolled_back": record.get("rolled_back") or None,
                }
                for record in sleeps
            ],
            "confirm_url": reverse("ai_assistant:confirm", args=[dbid]),
            "action_url": reverse("ai_assistant:action", args=[dbid]),
        },
    )


def _config_groups() -> list:
    """The settings by topic, as `@assistant/set` groups them (`conf.config_groups`)."""
    from ..conf import config_groups

    return config_groups()


def _field_form(key: str) -> dict:
    """How the settings form asks for one key: its meaning (the configuration's own
    description) and its input: a checkbox for true/false, a select for a choice, else a box.

    Args:
        key (str): A configuration key.

    Returns:
        dict: "meaning", "input" ("bool", "choice" or "text") and "choices".

    """
    from typing import Literal, get_args, get_origin

    from ..conf import AssistantConfig

    field = AssistantConfig.model_fields.get(key)
    if field is None:  # a key of a game's own: typed as text
        return {"meaning": "", "input": "text", "choices": []}
    annotation = field.annotation
    form = {"meaning": field.description or "", "input": "text", "choices": []}
    if annotation is bool:
        form["input"] = "bool"
    elif get_origin(annotation) is Literal:
        form.update(input="choice", choices=[str(arg) for arg in get_args(annotation)])
    return form


@dashboard_view
@builder_required
def settings_page(request, dbid: int):
    """Every setting and the persona, each changed with `@assistant/set`'s validation.

    The settings most builders change first (`conf.ESSENTIAL_KEYS`) come first, open; every
    other key is under its topic, folded. Each row says what the key means and what it allows, and asks for
    true/false with a checkbox and for a choice with a select.

    Args:
        request (HttpRequest): The request; `topic` opens that topic's group.
        dbid (int): The assistant's database id.

    Returns:
        HttpResponse: The page.

    """
    from ..conf import ESSENTIAL_KEYS

    obj = on_reactor(get_assistant, dbid)

    def read():
        handler = obj.assistant
        return handler.options(), handler.overrides(), handler.checked_config()[1]

    options, overrides, config_error = on_reactor(read)
    rows = {
        key: {
            "key": key,
            "value": value,
            "allowed": allowed,
            "overridden": key in overrides,
            **_field_form(key),
        }
        for key, value, allowed in options[1:]
    }
    opened = request.GET.get("topic", "")[:MAX_QUERY_CHARS]
    groups = [
        {
            "topic": "the settings most builders change first",
            "rows": [rows.pop(key) for key in ESSENTIAL_KEYS if key in rows],
            "open": True,
            "slug": "essentials",
        }
    ]
    for topic, keys in _config_groups():
        members = [rows.pop(key) for key in keys if key in rows]
        if members:
            groups.append({"topic": topic, "rows": members, "open": topic == opened})
    if rows:  # a key of a game's own, in no topic
        groups.append({"topic": "other", "rows": list(rows.values()), "open": opened == "other"})
    for group in groups[1:]:
        group["slug"] = "topic-" + "-".join(group["topic"].split())
    return render(
        request,
        "ai_assistant/settings.html",
        {
            "key": obj.key,
            "dbref": obj.dbref,
            "tabs": tabs(dbid, "settings"),
            "persona": options[0][1] if options else "",
            "groups": groups,
            "config_error": config_error,
            "action_url": reverse("ai_assistant:action", args=[dbid]),
        },
    )


@dashboard_view
@builder_required
def confirm(request, dbid: int):
    """What an edit would change, with the form that does it (a GET: nothing is changed).

    Args:
        request (HttpRequest): `do` (forget, trust, rollback or relationship) and its fields:
            `id` (a memory's id) and `level` for forget and trust, `sleep` (a sleep's id) for
            rollback, `person`, `dimension`, `value` and `reason` for relationship (and `back`,
            "person" to return to the person's page).
        dbid (int): The assistant's database id.

    Returns:
        HttpResponse: The confirmation page (the plan's refusal, if any, as a message on it).

    """
    obj = on_reactor(get_assistant, dbid)
    do = request.GET.get("do", "")
    if do not in CONFIRMED:
        raise Http404(f"There is nothing to confirm called '{clip(do, 40)}'.")
    memory_id = request.GET.get("id", "")[:60].strip()
    level = request.GET.get("level", "")[:20].strip()
    sleep_id = request.GET.get("sleep", "")[:20].strip()
    context = {
        "key": obj.key,
        "dbref": obj.dbref,
        "tabs": tabs(dbid, "memory" if do != "rollback" else "sleep"),
        "do": do,
        "memory_id": memory_id,
        "level": level,
        "sleep_id": sleep_id,
        "action_url": reverse("ai_assistant:action", args=[dbid]),
        "back_url": reverse(
            "ai_assistant:" + ("sleep" if do == "rollback" else "memory"), args=[dbid]
        ),
        "error": "",
    }
    if do == "relationship":
        person = request.GET.get("person", "")[: views.MAX_KEY_CHARS].strip()
        back = views._person_url(dbid, person) if request.GET.get("back") == "person" else None
        context.update(
            {
                "person": person,
                "back": "person" if back else "memory",
                "back_url": back or reverse("ai_assistant:memory", args=[dbid]) + "#people",
            }
        )
    try:
        if do == "rollback":
            context.update(on_reactor(_rollback_plan, obj, sleep_id or None))
        elif do == "relationship":
            fields = [request.GET.get(name, "")[:1000] for name in ("dimension", "value", "reason")]
            context["plan"] = on_reactor(people.plan, obj.assistant.memory, person, *fields)
        else:
            context.update(on_reactor(_memory_shown, obj, memory_id))
    except Refused as err:
        context["error"] = clip(err, TEXT_CHARS)
    return render(request, "ai_assistant/confirm.html", context)


def _memory_shown(obj, memory_id: str) -> dict:
    """The memory a forget or trust would change, as recall knows it."""
    if not memory_id:
        raise Refused("Name a memory by its id, such as m000003 or j000012.")
    handler = obj.assistant
    item = handler.overview.memory_item(memory_id)
    if item is None:
        raise Refused(f"{obj.key} has no memory '{clip(memory_id, 40)}'.")
    return {
        "memory": {
            **item,
            "audience": audience_words(item["audience"], _names(handler)),
            "private": bool(item["audience"]),
            "sources": ", ".join(clip(i, 40) for i in item["entry_ids"][:20]),
        }
    }


def _rollback_plan(obj, sleep_id) -> dict:
    mem = obj.assistant.memory
    plan = mem.rollback_plan(sleep_id)
    return {
        "plan_sleep": plan["sleep_id"],
        "plan_sleeps": list(plan["sleeps"]),
        "plan_kept": [correction["seq"] for correction in plan.get("kept") or []],
        "plan_lines": mem.describe_rollback(plan),
    }


__all__ = ["conversation", "memory", "context", "sleep", "settings_page", "confirm"]
