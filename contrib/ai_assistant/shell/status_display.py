"""
How `@assistant` shows how assistants are doing: the list of them, one's status (`/status`), its
sleep debt and its sleeps, what its model use spends and costs, and the server's queue of model
calls and limits on players (shared by every assistant).

"""

from evennia.utils.utils import crop, fill

from ..text import counted
from .game_settings import redacted
from .screen import NAME_CHARS, TEXT_CHARS, render_table, shown, shown_list
from .time_display import game_when, game_zone, short_game_when, when

PROGRESS_WIDTH = 20
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


class StatusDisplay:
    """The `format_*` methods of how assistants are doing: data in, text out."""

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
                ("scheduled wake", when(status.scheduled_wake_time)),
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
            ("last tick", f"{when(status.last_tick)} ({status.tick_count} ticks)"),
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
                f"{when(status.last_sleep) if status.last_sleep else 'never'}, "
                f"{counted(status.turns_since_sleep, 'turn')} since",
            ),
            *(
                (
                    f"sleep {record.get('id')}",
                    f"game time {game_when(record.get('start'))} -> "
                    f"{game_when(record.get('end'))}, "
                    f"{record.get('began')}, debt {record.get('debt_before')} -> "
                    f"{record.get('debt_after')}, {record.get('calls', 0)} calls",
                )
                for record in status.recent_sleeps
            ),
            *(
                (
                    f"batch {batch['id']}",
                    f"{batch['requests']} sleep-time requests, sent "
                    f"{when(batch['submitted_at'])}",
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
            rows.append(("waiting until", f"{when(status.wait_until)}{why}"))
        if status.retry_after:
            rows.append(("backing off until", when(status.retry_after)))
        last = status.last_turn
        if last:
            # what the model named (tools) and why the turn stopped are shown cropped
            tools = shown_list(last.get("tools") or []) or "no tools"
            rows.append(
                (
                    "last turn",
                    f"{when(last.get('at'))}: {counted(last.get('events') or 0, 'event')}, "
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
                    f"{when(compaction['at'])} "
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
    def format_debt(assistant, debt: dict) -> str:
        """Render an assistant's sleep debt for `/debt`.

        Args:
            assistant (Object): The assistant character.
            debt (dict): As `character.assistant.memory.admin.debt()` gives it.

        Returns:
            str: One fact a line.

        """
        last = when(debt["last_sleep"]) if debt["last_sleep"] else "never"
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
                    f"ASLEEP NOW, wakes {when(record.get('wakes_at'))} real time; "
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
                    f"{short_game_when(record.get('start'))}\n"
                    + ("asleep" if under_way else short_game_when(record.get("end"))),
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
