"""
The dashboard's charts, drawn as inline SVG on the server (no script, nothing fetched): the
awake and asleep timeline, tokens and calls per hour, the links between memories, the sleep
debt over the sleeps and the next request against its budget.

Every text in a chart was stored by the game, the players or the model: it is clipped and
escaped here. Real times are shown in the dashboard's clock (`filters.real_time`).

"""

import math
from datetime import datetime, timedelta, timezone

from django.utils.html import escape

from ..shell.time_display import game_zone
from .filters import NAME_CHARS, clip, parse_time

AWAKE_COLOUR = "#f2c94c"
ASLEEP_COLOUR = "#2f80ed"
TOKENS_COLOUR = "#6fcf97"
CALLS_COLOUR = "#eb5757"
# hours the usage chart spans at most (the usage is kept a week)
MAX_HOURS = 168
# the width of one hour's bar at most: one hour of data is a bar, not the whole chart
MAX_BAR = 24
# characters of a memory's text shown beside its node in the link graph
LABEL_CHARS = 28
PART_COLOURS = ("#9b51e0", "#f2994a", "#2d9cdb", "#27ae60", "#eb5757", "#828282")


def _short(moment: datetime, span: float = 3600.0) -> str:
    """A real time as an axis label in the viewer's zone: "01-01 12:00", with the seconds
    when the axis spans less than an hour (its ticks would read alike)."""
    return moment.astimezone(game_zone()).strftime(
        "%m-%d %H:%M:%S" if span < 3600 else "%m-%d %H:%M"
    )


def timeline_svg(transitions: list, now: datetime, width: int = 720, height: int = 40) -> str:
    """The awake and asleep periods as a band of coloured blocks over a time axis.

    Args:
        transitions (list): {"mode", "at", "reason"} dicts, oldest first.
        now (datetime): Where the last period ends.
        width (int, optional): Pixels.
        height (int, optional): Pixels of the band.

    Returns:
        str: An `<svg>` element (escaped text inside); its legend is the page's.

    """
    points = [(t, parse_time(t.get("at"))) for t in transitions]
    points = [(t, at) for t, at in points if at is not None]
    parts = [
        f'<svg class="timeline" width="{width + 20}" height="{height + 30}" role="img" '
        'aria-label="awake and asleep over time">'
    ]
    if not points:
        parts.append(
            f'<text x="4" y="{height // 2}">No transitions yet: awake since created.</text>'
        )
        parts.append("</svg>")
        return "".join(parts)
    begin = points[0][1]
    span = max((now - begin).total_seconds(), 1.0)
    for index, (transition, at) in enumerate(points):
        end = points[index + 1][1] if index + 1 < len(points) else now
        x = (at - begin).total_seconds() / span * width
        w = max((end - at).total_seconds() / span * width, 1.0)
        mode = clip(transition.get("mode", "?"), 20)
        colour = AWAKE_COLOUR if mode == "awake" else ASLEEP_COLOUR
        # a reason may quote what the model said when it chose to sleep
        title = escape(
            f"{mode} from {_short(at)}: {clip(transition.get('reason', ''), NAME_CHARS)}"
        )
        parts.append(
            f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" fill="{colour}">'
            f"<title>{title}</title></rect>"
        )
    # the axis: five ticks from the first transition to now, in the dashboard's clock
    ticks = []
    for step in range(5):
        x = step * width / 4
        moment = begin + timedelta(seconds=span * step / 4)
        ticks.append(f"M{x:.1f},{height} v5")
        anchor = "start" if step == 0 else "end" if step == 4 else "middle"
        parts.append(
            f'<text x="{x:.1f}" y="{height + 18}" font-size="10" text-anchor="{anchor}">'
            f"{escape(_short(moment, span))}</text>"
        )
    parts.append(f'<path d="M0,{height} H{width} {" ".join(ticks)}" stroke="#333" fill="none"/>')
    parts.append("</svg>")
    return "".join(parts)


def _hour(key: str) -> datetime | None:
    try:
        moment = datetime.strptime(str(key)[:13], "%Y-%m-%dT%H")
    except ValueError:
        return None
    return moment.replace(tzinfo=timezone.utc)


def hour_label(key: str) -> str:
    """A usage hour ("2026-01-01T11", UTC) in the dashboard's clock: "2026-01-01 11:00 UTC"."""
    moment = _hour(key)
    if moment is None:
        return clip(key, 40)
    return moment.astimezone(game_zone()).strftime("%Y-%m-%d %H:%M %Z")


def usage_svg(by_hour: dict, width: int = 720, height: int = 160, costs: dict | None = None) -> str:
    """Tokens per hour as bars and model calls per hour as a line, over the hours from the
    first with use to the last (at most a week), each hour its own slot.

    Args:
        by_hour (dict): Hour ("2026-01-01T11", UTC) -> {"calls", "prompt", "completion"}.
        width (int, optional): Pixels.
        height (int, optional): Pixels.
        costs (dict, optional): Hour -> money, added to each bar's title.

    Returns:
        str: An `<svg>` element.

    """
    known = sorted((moment, key) for key in by_hour if (moment := _hour(key)) is not None)
    parts = [
        f'<svg class="usage" width="{width + 60}" height="{height + 34}" role="img" '
        'aria-label="tokens and model calls per hour">'
    ]
    if not known:
        parts.append(f'<text x="4" y="{height // 2}">No model calls recorded yet.</text>')
        parts.append("</svg>")
        return "".join(parts)
    first, last = known[0][0], known[-1][0]
    first = max(first, last - timedelta(hours=MAX_HOURS - 1))
    # only the hours with data and those between them: the axis never runs past the last
    # hour used (one hour of data is one bar of at most MAX_BAR, not a solid block)
    slots = int((last - first).total_seconds() // 3600) + 1
    step = width / slots
    bar_width = max(min(step * 0.8, MAX_BAR), 1.0)
    rows = [(m, k) for m, k in known if m >= first]
    tokens = {k: by_hour[k].get("prompt", 0) + by_hour[k].get("completion", 0) for _, k in rows}
    calls = {k: by_hour[k].get("calls", 0) for _, k in rows}
    top_tokens, top_calls = max(max(tokens.values()), 1), max(max(calls.values()), 1)
    left = 50
    line = []
    for moment, key in rows:
        slot = int((moment - first).total_seconds() // 3600)
        x = left + slot * step + (step - bar_width) / 2
        bar = tokens[key] / top_tokens * height
        money = ""
        if costs and key in costs:
            money = f", {costs[key]:.4f} in money"
        title = escape(f"{hour_label(key)}: {tokens[key]} tokens, {calls[key]} calls{money}")
        parts.append(
            f'<rect x="{x:.1f}" y="{height - bar:.1f}" width="{bar_width:.1f}" '
            f'height="{bar:.1f}" fill="{TOKENS_COLOUR}"><title>{title}</title></rect>'
        )
        line.append(f"{x + bar_width / 2:.1f},{height - calls[key] / top_calls * height:.1f}")
    parts.append(f'<polyline points="{" ".join(line)}" fill="none" stroke="{CALLS_COLOUR}" />')
    # axes: the tokens' scale on the left, the hours below
    parts.append(
        f'<path d="M{left},0 V{height} H{left + width}" stroke="#333" fill="none"/>'
        f'<text x="{left - 4}" y="10" font-size="10" text-anchor="end">{top_tokens}</text>'
        f'<text x="{left - 4}" y="{height}" font-size="10" text-anchor="end">0</text>'
    )
    for index in range(0, slots, max(slots // 6, 1)):
        x = left + index * step
        moment = first + timedelta(hours=index)
        parts.append(
            f'<text x="{x:.1f}" y="{height + 14}" font-size="10">{escape(_short(moment))}</text>'
        )
    parts.append(
        f'<text x="{left}" y="{height + 28}" font-size="10">green bars: tokens per hour (max '
        f"{top_tokens}); red line: model calls per hour (max {top_calls})</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


def links_svg(links: list, max_nodes: int, width: int = 760, height: int = 520) -> str:
    """Memory links as a graph: memories on a circle, each labelled with the start of its
    text (its id and whole text in its hover title), a line per link.

    Args:
        links (list): (id, id, strength, text, text) tuples, strongest first.
        max_nodes (int): The most memories drawn; links to others are left out.
        width (int, optional): Pixels.
        height (int, optional): Pixels.

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
    parts = [
        f'<svg class="links" width="{width}" height="{height}" role="img" '
        'aria-label="links between memories">'
    ]
    if not nodes:
        parts.append(f'<text x="4" y="{height // 2}">No links between memories yet.</text>')
        parts.append("</svg>")
        return "".join(parts)
    cx, cy = width / 2, height / 2
    radius = min(height / 2 - 20, width / 2 - 190)
    where = {}
    for index, key in enumerate(nodes):
        angle = 2 * math.pi * index / len(nodes)
        where[key] = (cx + radius * math.cos(angle), cy + radius * math.sin(angle))
    for one, other, strength in kept:
        (x1, y1), (x2, y2) = where[one], where[other]
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#828282" '
            f'stroke-width="{0.5 + 3 * max(0.0, min(float(strength), 1.0)):.1f}" />'
        )
    for key, (x, y) in where.items():
        text = " ".join(str(nodes[key] or "").split())
        title = escape(f"{clip(key, 40)}: {clip(text, NAME_CHARS)}")
        # redacted first (a secret cut in two would no longer be recognised), then cut
        label = escape(
            clip(text, NAME_CHARS)[:LABEL_CHARS] + ("…" if len(text) > LABEL_CHARS else "")
        )
        right = x >= cx
        # one hover title for the node and its label
        parts.append(
            f"<g><title>{title}</title>"
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="#2d9cdb"></circle>'
            f'<text x="{x + (8 if right else -8):.1f}" y="{y + 3:.1f}" font-size="10" '
            f'text-anchor="{"start" if right else "end"}">{label}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def debt_svg(sleeps: list, now_debt: int, width: int = 720, height: int = 120) -> str:
    """The sleep debt over the sleeps: before and after each (oldest first), then now.

    Args:
        sleeps (list): Sleep records, newest first (`memory.admin.kind("sleep_history").recent`).
        now_debt (int): The debt now.
        width (int, optional): Pixels.
        height (int, optional): Pixels.

    Returns:
        str: An `<svg>` element.

    """
    points = []
    for record in reversed(sleeps):
        label = clip(record.get("id"), 20)
        for when, value in (
            ("before", record.get("debt_before")),
            ("after", record.get("debt_after")),
        ):
            if isinstance(value, (int, float)):
                points.append((f"{label} {when}", float(value)))
    points.append(("now", float(now_debt or 0)))
    top = max(max(value for _, value in points), 1.0)
    left = 40
    step = width / max(len(points) - 1, 1)
    parts = [
        f'<svg class="debt" width="{width + left + 20}" height="{height + 30}" role="img" '
        'aria-label="sleep debt over the sleeps">'
    ]
    coords = []
    for index, (label, value) in enumerate(points):
        x = left + index * step if len(points) > 1 else left + width / 2
        y = height - value / top * height
        coords.append(f"{x:.1f},{y:.1f}")
        parts.append(
            f'<rect x="{x - 3:.1f}" y="{y - 3:.1f}" width="6" height="6" fill="{ASLEEP_COLOUR}">'
            f"<title>{escape(label)}: {value:g}</title></rect>"
        )
    parts.append(f'<polyline points="{" ".join(coords)}" fill="none" stroke="{ASLEEP_COLOUR}"/>')
    parts.append(
        f'<path d="M{left},0 V{height} H{left + width}" stroke="#333" fill="none"/>'
        f'<text x="{left - 4}" y="10" font-size="10" text-anchor="end">{top:g}</text>'
        f'<text x="{left - 4}" y="{height}" font-size="10" text-anchor="end">0</text>'
        f'<text x="{left}" y="{height + 16}" font-size="10">debt before and after each sleep, '
        "oldest first, then now</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


def budget_svg(parts_tokens: list, budget: int, width: int = 720, height: int = 28) -> str:
    """The next request's parts as one stacked bar against the context budget.

    Args:
        parts_tokens (list): (name, tokens) pairs.
        budget (int): The most tokens a request may hold.
        width (int, optional): Pixels of the whole budget.
        height (int, optional): Pixels.

    Returns:
        str: An `<svg>` element, with a legend.

    """
    budget = max(int(budget), 1)
    parts = [
        f'<svg class="budget" width="{width + 2}" height="{height + 40}" role="img" '
        'aria-label="the next request against the budget">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#f2f2f2" stroke="#333">'
        f"<title>budget: {budget} tokens</title></rect>",
    ]
    x = 0.0
    legend_x = 0
    for index, (name, tokens) in enumerate(parts_tokens):
        colour = PART_COLOURS[index % len(PART_COLOURS)]
        w = min(tokens / budget * width, max(width - x, 0))
        if w > 0:
            parts.append(
                f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" fill="{colour}">'
                f"<title>{escape(name)}: {tokens} tokens</title></rect>"
            )
        x += w
        parts.append(
            f'<rect x="{legend_x}" y="{height + 8}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{legend_x + 14}" y="{height + 17}" font-size="10">{escape(name)}</text>'
        )
        legend_x += 14 + 7 * len(name) + 16
    parts.append("</svg>")
    return "".join(parts)
