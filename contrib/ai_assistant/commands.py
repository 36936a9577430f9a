"""
Commands: `@assistant` for builders, and a `page` that also reaches assistants.

Add `AssistantCmdSet` to your `CharacterCmdSet` (see the README).

"""

import re

from django.conf import settings
from evennia.commands.cmdset import CmdSet
from evennia.commands.default.comms import CmdPage
from evennia.utils import create, search
from evennia.utils.evmore import EvMore
from evennia.utils.evtable import EvTable
from evennia.utils.utils import class_from_module, crop

from .characters import ASSISTANT_TAG
from .conf import ConfigError, config_keys, describe_key, parse_override
from .memory.core import CoreMemoryFull
from .driver import default_runner
from .lifecycle import DEFAULT_HOURS, DEPTHS, LIGHT, MAX_HOURS, MIN_HOURS, SleepRefused

_DEFAULT_COMMAND_CLASS = class_from_module(settings.COMMAND_DEFAULT_CLASS)
_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9 '\-]{0,39}$")
MAX_PERSONA_CHARS = 2000
MAX_INSTRUCTION_CHARS = 2000
PROGRESS_WIDTH = 20
# the least room a budget must leave for the conversation itself
MIN_CONVERSATION_TOKENS = 500


def find_assistants() -> list:
    return list(search.search_tag(ASSISTANT_TAG[0], category=ASSISTANT_TAG[1]))


def progress_bar(done: int, total: int, width: int = PROGRESS_WIDTH) -> str:
    """A text bar such as `[#####-----] 5/10`."""
    filled = int(width * done / total) if total else width
    return f"[{'#' * filled}{'-' * (width - filled)}] {done}/{total}"


class CmdAssistant(_DEFAULT_COMMAND_CLASS):
    """
    create, inspect and manage AI assistants

    Usage:
      @assistant
      @assistant/list
      @assistant/create <name>[=<persona>]
      @assistant/status <name>
      @assistant/set <name>/<key>=<value>
      @assistant/journal <name>
      @assistant/memory <name>[=<query>]
      @assistant/core <name>[/<key>[=<value>]]
      @assistant/sleep <name>[=<hours> [light|deep] [<reason>]]
      @assistant/wake <name>[=<reason>]
      @assistant/instruct <name>=<instruction>
      @assistant/tick <name>
      @assistant/pause <name>
      @assistant/resume <name>

    Switches:
      list     - list all assistants.
      create   - create an assistant here; prints its dbref.
      status   - mode, tick rate, pending events, context use, model usage, errors.
      set      - change one setting of this assistant (validated). Use the value
                 'default' to drop an override. <key> 'persona' sets its persona.
                 Without '=<value>', lists the keys with their current values.
      journal  - show the assistant's journal entries, newest first.
      memory   - list its long-term memories, or search them for <query>.
      core     - its core memory: the notes in every prompt. <key>=<value> sets
                 a note, <key>= removes it (within the memory_block_tokens budget).
      sleep    - put it to sleep now (default 4 hours, light). Light sleep
                 wakes on urgent events, deep only when the time is up. The
                 safeguards the assistant itself must pass do not bind you.
      wake     - wake it now.
      instruct - give the assistant a builder instruction (heard as a direct message
                 with builder authority).
      tick     - run one tick now.
      pause    - stop ticking (it keeps hearing; events wait in its queue).
      resume   - start ticking again.

    Examples:
      @assistant/create Aria=A cheerful librarian who loves riddles.
      @assistant/set Aria/tick_rate=10
      @assistant/set Aria/respond_to_ambient=true
      @assistant/instruct Aria=Greet newcomers and tell them about the library.
      @assistant/status Aria
      @assistant/sleep Aria=2 deep quiet hours
      @assistant/memory Aria=east door

    Assistants act only through their tools (speak, emote, whisper, journal); what
    players tell them is treated as information, never as orders.
    """

    key = "@assistant"
    aliases = ["assistant"]
    switch_options = (
        "list",
        "create",
        "status",
        "set",
        "journal",
        "memory",
        "core",
        "sleep",
        "wake",
        "instruct",
        "tick",
        "pause",
        "resume",
    )
    locks = "cmd:perm(Builder)"
    help_category = "Building"

    def func(self):
        if not self.switches:
            self.msg(
                f"Usage: {self.key}/<switch> [<name>...]. Switches: "
                f"{', '.join(self.switch_options)}. See 'help {self.key}'."
            )
            return
        handler = getattr(self, f"switch_{self.switches[0]}")
        handler()

    # ---- helpers --------------------------------------------------------------------------

    def find(self, name: str):
        """The assistant called `name` (or with dbref `name`), or None after telling why."""
        name = (name or "").strip()
        if not name:
            self.msg(f"Name an assistant. Usage: {self.key}/{self.switches[0]} <name>")
            return None
        assistants = find_assistants()
        wanted = name.lower()
        matches = [
            obj
            for obj in assistants
            if obj.key.lower() == wanted or obj.dbref == name or wanted in obj.aliases.all()
        ]
        if len(matches) == 1:
            return matches[0]
        known = ", ".join(f"{obj.key}({obj.dbref})" for obj in assistants) or "none yet"
        if matches:
            self.msg(f"Several assistants are called '{name}': {known}. Use the dbref.")
        else:
            self.msg(f"No assistant called '{name}'. Assistants: {known}.")
        return None

    def script_of(self, assistant):
        script = assistant.ensure_assistant_script()
        if script is None:
            self.msg(f"{assistant.key} has no assistant script and one could not be created.")
        return script

    # ---- switches -------------------------------------------------------------------------

    def switch_list(self):
        assistants = find_assistants()
        if not assistants:
            self.msg("There are no assistants yet. Create one with @assistant/create <name>.")
            return
        table = EvTable("|wname|n", "|wdbref|n", "|wlocation|n", "|wmode|n", "|wpending|n")
        for obj in assistants:
            script = obj.assistant_script
            status = script.status() if script else {}
            table.add_row(
                obj.key,
                obj.dbref,
                obj.location.key if obj.location else "-",
                status.get("mode", "-") + (" (paused)" if status.get("paused") else ""),
                status.get("pending_events", "-"),
            )
        self.msg(str(table))

    def switch_create(self):
        name = (self.lhs or "").strip()
        persona = (self.rhs or "").strip()
        if not _NAME_RE.match(name):
            self.msg(
                "Give the assistant a name of 1-40 characters: letters first, then letters, "
                "digits, spaces, ' or -. Usage: @assistant/create <name>[=<persona>]"
            )
            return
        if len(persona) > MAX_PERSONA_CHARS:
            self.msg(f"The persona is {len(persona)} characters; at most {MAX_PERSONA_CHARS}.")
            return
        location = self.caller.location
        if not location:
            self.msg("You must be in a room to create an assistant there.")
            return
        typeclass = getattr(
            settings, "AI_ASSISTANT_TYPECLASS", "ai_assistant.characters.AssistantCharacter"
        )
        assistant = create.create_object(typeclass, key=name, location=location, home=location)
        if persona:
            assistant.db.persona = persona
        self.msg(f"Created assistant {assistant.key} ({assistant.dbref}) in {location.key}.")

    def switch_status(self):
        assistant = self.find(self.args)
        script = assistant and self.script_of(assistant)
        if not script:
            return
        status = script.status()
        usage = status["usage"]
        table = EvTable(border="cells")
        mode = status["mode"] + (" (paused)" if status["paused"] else "")
        if status["phase"]:
            mode += f", phase {status['phase']}, {status['depth']} sleep"
        rows = [("mode", mode)]
        if status["mode"] == "sleep":
            progress = status["consolidation_progress"]
            rows += [
                ("scheduled wake", status["scheduled_wake_time"]),
                ("initiated by", f"{status['initiated_by']}: {status['sleep_reason']}"),
                (
                    "consolidation",
                    progress_bar(
                        progress.get("processed_entries", 0), progress.get("total_entries", 0)
                    ),
                ),
            ]
            if status["wake_deferred_reason"]:
                rows.append(("wake deferred", status["wake_deferred_reason"]))
        rows += [
            ("tick rate", f"{status['tick_rate']} s" if status["tick_rate"] else "not ticking"),
            ("pending events", f"{status['pending_events']} ({status['events_dropped']} dropped)"),
            ("last tick", f"{status['last_tick'] or 'never'} ({status['tick_count']} ticks)"),
            ("turn in flight", "yes" if status["in_flight"] else "no"),
            ("activity since wake", status["activity_since_wake"]),
            (
                "context tokens",
                f"{status['context_tokens']} of {status['max_context_tokens']} "
                f"({100 * status['context_tokens'] / status['max_context_tokens']:.1f}%)",
            ),
            (
                "core memory",
                f"{status['core_memory_tokens']} of {status['memory_block_tokens']} tokens",
            ),
            ("journal entries", status["journal_size"]),
            ("long-term memories", status["long_term_memories"]),
            (
                "sleep cooldown",
                (
                    f"{status['cooldown_minutes_left']} min left"
                    if status["cooldown_minutes_left"]
                    else "none"
                ),
            ),
            ("sleep schedule", status["schedule"]),
            ("model usage", usage.summary()),
            ("model problems", usage.problems()),
        ]
        if status["wait_until"]:
            rows.append(("waiting until", status["wait_until"]))
        if status["retry_after"]:
            rows.append(("backing off until", status["retry_after"]))
        if status["last_turn"]:
            turn = status["last_turn"]
            rows.append(
                (
                    "last turn",
                    crop(
                        f"{turn.get('at', '')[:19]}: {turn.get('events')} events, "
                        f"{turn.get('model_calls')} calls, tools "
                        f"{', '.join(turn.get('tools') or [])} -> {turn.get('stop_reason')}",
                        80,
                    ),
                )
            )
        if status["last_compaction"]:
            last = status["last_compaction"]
            rows.append(
                (
                    "last compaction",
                    f"{last['at'][:19]} ({'emergency' if last['emergency'] else 'sleep'}): "
                    f"{last['result']}, {last['compacted']} messages, {last['facts_recorded']} "
                    f"facts journaled first, tokens {last['tokens_before']} -> {last['tokens_after']}",
                )
            )
        rows.append(("tick errors", f"{status['tick_errors']} {status['last_error'] or ''}"))
        if status["config_error"]:
            rows.append(("|rconfig error|n", status["config_error"]))
        if status["overrides"]:
            rows.append(
                ("overrides", ", ".join(f"{k}={v!r}" for k, v in status["overrides"].items()))
            )
        for label, value in rows:
            table.add_row(f"|w{label}|n", value)
        self.msg(f"|wAssistant {assistant.key} ({assistant.dbref})|n\n{table}")

    def switch_set(self):
        target, _, key = (self.lhs or "").partition("/")
        key = key.strip()
        if not target.strip() or not key:
            self.msg(
                "Usage: @assistant/set <name>/<key>=<value>. Keys: " + ", ".join(config_keys())
            )
            return
        assistant = self.find(target)
        script = assistant and self.script_of(assistant)
        if not script:
            return
        if self.rhs is None:
            self.msg(
                describe_key(key)
                if key in config_keys()
                else f"Unknown key '{key}'. Keys: {', '.join(config_keys())}, persona."
            )
            return
        value = self.rhs.strip()
        if key == "persona":
            if not value or len(value) > MAX_PERSONA_CHARS:
                self.msg(f"A persona must be 1-{MAX_PERSONA_CHARS} characters; got {len(value)}.")
                return
            assistant.db.persona = value
            self.msg(f"{assistant.key}'s persona is now: {value}")
            return
        overrides = dict(script.db.config_overrides or {})
        if value.lower() == "default":
            if key not in config_keys():
                self.msg(f"Unknown key '{key}'. Keys: {', '.join(config_keys())}, persona.")
                return
            overrides.pop(key, None)
            shown = "its default"
        else:
            try:
                typed = parse_override(key, value, overrides)
            except ConfigError as err:
                self.msg(f"Not changed. {err}")
                return
            if key == "max_context_tokens":
                needed = script.assistant().fixed_tokens() + MIN_CONVERSATION_TOKENS
                if typed < needed:
                    self.msg(
                        f"Not changed. max_context_tokens={typed} cannot hold the system prompt, "
                        f"core memory and tools ({needed - MIN_CONVERSATION_TOKENS} tokens) plus "
                        f"{MIN_CONVERSATION_TOKENS} for the conversation: at least {needed}."
                    )
                    return
            overrides[key] = typed
            shown = repr(typed)
        script.db.config_overrides = overrides
        if key in ("tick_rate", "tick_rate_sleep"):
            script.ensure_ticker()
        self.msg(f"{assistant.key}: {key} set to {shown}.")

    def switch_journal(self):
        assistant = self.find(self.args)
        script = assistant and self.script_of(assistant)
        if not script:
            return
        entries = script.assistant().journal.all()
        if not entries:
            self.msg(f"{assistant.key}'s journal is empty.")
            return
        table = EvTable("|wid|n", "|wwhen|n", "|wimp|n", "|wsource|n", "|wentry|n", width=100)
        for entry in reversed(entries):
            source = entry["source_type"]
            if entry.get("heard_from"):
                source += f" ({entry['heard_from']})"
            table.add_row(
                entry["id"],
                (entry.get("created_at") or "")[:16].replace("T", " "),
                entry["importance"],
                source,
                crop(entry["content"], 60),
            )
        for column, width in ((0, 11), (1, 18), (2, 6), (3, 18)):
            table.reformat_column(column, width=width)
        EvMore(self.caller, f"|w{assistant.key}'s journal ({len(entries)} entries)|n\n{table}")

    def switch_memory(self):
        assistant = self.find(self.lhs)
        script = assistant and self.script_of(assistant)
        if not script:
            return
        core = script.assistant()
        query = (self.rhs or "").strip()
        if not query:
            memories = core.long_term.recent(50)
            if not memories:
                self.msg(f"{assistant.key} has no long-term memories yet (they form in sleep).")
                return
            self._show_memories(
                assistant, memories, f"{core.long_term.count()} memories, newest first"
            )
            return
        if len(query) > 200:
            self.msg(f"The query is {len(query)} characters; at most 200.")
            return
        limit = core.config.memory_search_limit
        if not core.embedding_model:
            self._show_memories(
                assistant, core.long_term.search(query, limit), f"matching '{query}' (lexical)"
            )
            return
        # the query's embedding is an HTTP call: off the reactor thread, answer when it comes
        runner = script.ndb.runner or default_runner()
        runner(core.embed([query])).addCallbacks(
            lambda vectors: self._show_memories(
                assistant,
                core.long_term.search(query, limit, query_vector=vectors[0]),
                f"matching '{query}' (embeddings)",
            ),
            lambda failure: self.msg(f"Memory search failed: {failure.getErrorMessage()}"),
        )

    def _show_memories(self, assistant, memories: list, title: str):
        if not memories:
            self.msg(f"No long-term memories of {assistant.key} {title.split(' (')[0]}.")
            return
        table = EvTable("|wid|n", "|wimp|n", "|wfrom|n", "|wmemory|n", width=100)
        for memory in memories:
            source = (memory.get("provenance") or {}).get("heard_from") or "self"
            table.add_row(memory["id"], memory["importance"], source, crop(memory["text"], 70))
        for column, width in ((0, 11), (1, 6), (2, 12)):
            table.reformat_column(column, width=width)
        self.msg(f"|w{assistant.key}'s long-term memory: {title}|n\n{table}")

    def switch_core(self):
        target, _, key = (self.lhs or "").partition("/")
        assistant = self.find(target)
        script = assistant and self.script_of(assistant)
        if not script:
            return
        core = script.assistant()
        memory = core.core_memory
        budget = core.config.memory_block_tokens
        key = key.strip()
        if not key:
            items = memory.items()
            if not items:
                self.msg(f"{assistant.key}'s core memory is empty (budget {budget} tokens).")
                return
            table = EvTable("|wkey|n", "|wvalue|n", "|wrecorded|n", width=100)
            for name, item in sorted(items.items()):
                table.add_row(name, item["value"], (item.get("recorded") or "")[:16])
            self.msg(
                f"|w{assistant.key}'s core memory ({memory.tokens()}/{budget} tokens)|n\n{table}"
            )
            return
        if len(key) > 60:
            self.msg(f"A key is at most 60 characters; '{key[:20]}...' has {len(key)}.")
            return
        if self.rhs is None:
            item = memory.items().get(key)
            self.msg(f"{key}: {item['value']}" if item else f"No core memory '{key}'.")
            return
        value = self.rhs.strip()
        if not value:
            if memory.remove(key):
                self.msg(f"Removed '{key}' from {assistant.key}'s core memory.")
            else:
                self.msg(f"No core memory '{key}' to remove.")
            return
        if len(value) > 1000:
            self.msg(f"A value is at most 1000 characters; this one has {len(value)}.")
            return
        try:
            tokens = memory.set(key, value, script.clock.now(), budget)
        except CoreMemoryFull as full:
            self.msg(f"Not changed: {full}")
            return
        self.msg(f"{assistant.key}: core memory '{key}' set ({tokens}/{budget} tokens).")

    def switch_sleep(self):
        assistant = self.find(self.lhs)
        script = assistant and self.script_of(assistant)
        if not script:
            return
        words = (self.rhs or "").split()
        hours, depth = DEFAULT_HOURS, LIGHT
        usage = (
            f"Usage: @assistant/sleep <name>[=<hours> [light|deep] [<reason>]], hours a whole "
            f"number from {MIN_HOURS} to {MAX_HOURS}."
        )
        if words:
            if not words[0].isdigit():
                self.msg(f"'{words[0]}' is not a number of hours. {usage}")
                return
            hours = int(words.pop(0))
            if words and words[0].lower() in DEPTHS:
                depth = words.pop(0).lower()
        reason = " ".join(words) or f"put to sleep by {self.caller.key}"
        try:
            phase = script.assistant().lifecycle.go_to_sleep(
                script.clock.now(),
                hours=hours,
                depth=depth,
                reason=reason,
                initiated_by="builder",
                enforce_safeguards=False,
            )
        except SleepRefused as refusal:
            self.msg(f"{assistant.key} was not put to sleep: {refusal} {usage}")
            return
        self.msg(f"{assistant.key} is asleep ({depth}, {hours} h), starting with {phase}.")

    def switch_wake(self):
        assistant = self.find(self.lhs)
        script = assistant and self.script_of(assistant)
        if not script:
            return
        reason = (self.rhs or "").strip() or f"woken by {self.caller.key}"
        try:
            script.assistant().lifecycle.wake_up(script.clock.now(), reason[:300])
        except SleepRefused:
            self.msg(f"{assistant.key} is not asleep.")
            return
        self.msg(f"{assistant.key} is awake.")

    def switch_instruct(self):
        assistant = self.find(self.lhs)
        script = assistant and self.script_of(assistant)
        if not script:
            return
        text = (self.rhs or "").strip()
        if not text:
            self.msg("Usage: @assistant/instruct <name>=<instruction>")
            return
        if len(text) > MAX_INSTRUCTION_CHARS:
            self.msg(f"The instruction is {len(text)} characters; at most {MAX_INSTRUCTION_CHARS}.")
            return
        assistant.hear("instruction", self.caller, text)
        self.msg(f"{assistant.key} received your instruction; it is handled on its next tick.")

    def switch_tick(self):
        assistant = self.find(self.args)
        script = assistant and self.script_of(assistant)
        if not script:
            return
        if script.db.paused:
            self.msg(f"{assistant.key} is paused; @assistant/resume {assistant.key} first.")
            return
        script.ndb.last_outcome = None
        script.run_tick()
        outcome = script.ndb.last_outcome
        if script.ndb.in_flight:
            self.msg(f"{assistant.key} is thinking (a model call is in flight).")
        elif outcome is None:
            self.msg(
                f"{assistant.key} ticked: nothing needed the model "
                f"({script.status()['pending_events']} events pending)."
            )
        else:
            tools = ", ".join(call["name"] for call in outcome.tool_calls) or "none"
            self.msg(
                f"{assistant.key} ticked: {outcome.model_calls} model calls, tools: {tools}, "
                f"ended by {outcome.stop_reason}" + (f" ({outcome.error})" if outcome.error else "")
            )

    def switch_pause(self):
        assistant = self.find(self.args)
        script = assistant and self.script_of(assistant)
        if script:
            script.db.paused = True
            self.msg(f"{assistant.key} is paused; it keeps hearing, and acts after resume.")

    def switch_resume(self):
        assistant = self.find(self.args)
        script = assistant and self.script_of(assistant)
        if script:
            script.db.paused = False
            script.ensure_ticker()
            self.msg(f"{assistant.key} resumed.")


class CmdPageAssistant(CmdPage):
    """
    send a private message to another account, or to an assistant

    Usage:
      page <account or assistant> <message>
      page[/switches] [<account>,<account>,... = <message>]

    Works like the ordinary page; an assistant's name as the only target
    delivers the page to that assistant, who may answer when it is near you.
    """

    MAX_CHARS = 2000

    def func(self):
        if "=" in self.args:
            targets, _, message = self.args.partition("=")
        else:
            targets, _, message = self.args.strip().partition(" ")
        wanted = [name.strip().lower() for name in targets.split(",") if name.strip()]
        assistants = {obj.key.lower(): obj for obj in find_assistants()}
        if self.switches or not wanted or not all(name in assistants for name in wanted):
            super().func()
            return
        message = message.strip()
        if not message:
            (self.caller or self.obj).msg(
                "What do you want to page? Usage: page <assistant> <message>"
            )
            return
        # page runs with the account as caller; the assistant hears the character played
        # (self.obj is the character whose cmdset holds this command)
        sender = (self.session.puppet if self.session else None) or self.obj or self.caller
        for name in wanted:
            assistant = assistants[name]
            assistant.msg(
                text=(f"{sender.key} pages: {message}", {"type": "page"}),
                from_obj=sender,
                ai_speech=message[: self.MAX_CHARS],
            )
        # the caller is the sender's account; a character without one hears it itself
        (self.caller or self.obj).msg(
            f"You paged {', '.join(assistants[n].key for n in wanted)} with: '{message}'."
        )


class AssistantCmdSet(CmdSet):
    """`@assistant` for builders and a `page` that reaches assistants."""

    key = "ai_assistant"

    def at_cmdset_creation(self):
        self.add(CmdAssistant())
        self.add(CmdPageAssistant())
