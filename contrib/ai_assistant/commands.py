"""
Commands: `@assistant` for builders, and a `page` that also reaches assistants.

Add `AssistantCmdSet` to your `CharacterCmdSet` (see the README). The commands parse, ask and
show: every read and operation goes through the assistant's handler (`character.assistant`, its
`memory` part for memory), which validates it and raises `errors.Refused` with a message for the
builder; what is shown is drawn by `display.AssistantDisplay`, a mixin of the command that games
may override.

"""

import re

from django.conf import settings
from evennia.commands.cmdset import CmdSet
from evennia.commands.default.comms import CmdPage
from evennia.utils.evmore import EvMore
from evennia.utils.utils import class_from_module

from .clock import to_iso
from .conf import AssistantConfig, unknown_key_message
from .shell.game_settings import game_defaults
from .shell.display import AssistantDisplay
from .shell.screen import NAME_CHARS, TEXT_CHARS, YES, shown, shown_list
from .shell.time_display import when
from .errors import Refused
from .assistants import (
    assistant_holdings,
    create_assistant,
    delete_assistant,
    find_assistants,
)
from .shell.group_commands import GroupSwitch
from .shell.lore_commands import LoreSwitch
from .shell.memory_commands import MemorySwitches
from .shell.plan_commands import PlanSwitch
from .text import counted

_DEFAULT_COMMAND_CLASS = class_from_module(settings.COMMAND_DEFAULT_CLASS)
_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9 '\-]{0,39}$")
# switches whose refusals say that nothing was changed
SWITCHES_WITH_TARGET = (
    "status",
    "set",
    "journal",
    "memory",
    "core",
    "sleep",
    "wake",
    "wait",
    "instruct",
    "tick",
    "pause",
    "resume",
    "clear",
    "debt",
    "sleeps",
    "trigger",
    "rollback",
    "delete",
    "export",
    "import",
    "plan",
)
SWITCHES_THAT_EDIT = (
    "set",
    "core",
    "debt",
    "trigger",
    "rollback",
    "delete",
    "wait",
    "import",
    "plan",
)


# what `assistant_holdings` counts, by the noun for one of each
_HELD_NOUNS = {
    "journal entries": "journal entry",
    "memories": "memory",
    "people": "person",
    "snapshots": "snapshot",
}


def _counted(counts: dict[str, int]) -> str:
    """Counts in words: {"memories": 3, "people": 1} is "3 memories, 1 person"."""
    return ", ".join(
        counted(count, _HELD_NOUNS.get(what, what), what) for what, count in counts.items()
    )


class CmdAssistant(
    MemorySwitches, LoreSwitch, GroupSwitch, PlanSwitch, AssistantDisplay, _DEFAULT_COMMAND_CLASS
):
    """
    create, inspect and manage AI assistants

    Usage:
      @assistant[/list]
      @assistant/create <name>[=<persona>]
      @assistant/status <name>
      @assistant/set <name>[/<key>[=<value>]]
      @assistant/instruct <name>=<instruction>
      @assistant/memory <name>[=<query>]
      @assistant/sleep <name>, @assistant/wake <name>
      @assistant/lore [<page>||<lore id>||=<words>]
      @assistant/group [<group>[=on||off||remove <id>]]

    An assistant is a character that hears its room and answers when it is
    named or spoken to privately (say, whisper, page). It acts only through
    its tools; what players tell it is information, never orders. Name one
    by its name, an alias or its dbref (#12). Every switch is in a topic:

      help @assistant/manage     create, status, instruct, pause, delete...
      help @assistant/memory     journal, memory, people, core, export...
      help @assistant/sleep      sleep, wake, wait, debt, sleeps, rollback
      help @assistant/lore       the game's lore book, shared by all
      help @assistant/group      what groups of assistants share
      help @assistant/plan       its routine and today's plan
      help @assistant/settings   its settings, the ones to change first
      help @assistant/dashboard  the builders' web pages

    Example:
      @assistant/create Aria=A cheerful librarian who loves riddles.

    # SUBTOPICS

    ## manage

    Usage:
      @assistant[/list]
      @assistant/create <name>[=<persona>]
      @assistant/delete <name>
      @assistant/status <name>
      @assistant/instruct <name>=<instruction>
      @assistant/tick <name>
      @assistant/pause <name>
      @assistant/resume <name>
      @assistant/clear <name>

    Switches:
      list     - list all assistants.
      create   - create an assistant here; prints its dbref. A name (or alias)
                 another assistant has is refused.
      delete   - delete an assistant: its character, script, ticker, journal,
                 memories and snapshots. Says what it holds and asks first.
      status   - mode, tick rate, pending events, context use, model usage, errors.
      instruct - give the assistant a builder instruction (heard as a direct
                 message with builder authority).
      tick     - run one tick now.
      pause    - stop acting (it keeps hearing; events wait in its queue).
      resume   - start acting again.
      clear    - reset its error counts, last error and back-off: after
                 fixing the model's settings, its next tick tries again
                 (and journal entries the model failed on are tried again
                 at the next sleep).

    Examples:
      @assistant/create Aria=A cheerful librarian who loves riddles.
      @assistant/instruct Aria=Greet newcomers and tell them about the library.
      @assistant/status Aria

    ## memory

    Usage:
      @assistant/journal <name>[/<page>]
      @assistant/memory <name>[/<page>]  or  @assistant/memory <name>=<query>
      @assistant/memory <name>/people[/<page>][=<person>]
      @assistant/memory <name>/reflections[/<page>]
      @assistant/memory <name>/reviews[/<page>]  (and /gossip, /links)
      @assistant/memory <name>/people=<person>/<dimension>=<value> <reason>
      @assistant/memory <name>/forget=<id>, /trust=<id> <low||medium||high||0-1>
      @assistant/forgetperson <person>
      @assistant/core <name>[/<key>[=<value>]]
      @assistant/trigger <name>[[/<fires>]=<pattern>: <reminder>]
      @assistant/export <name>=<file>, @assistant/import[/replace] <name>=<file>

    Switches:
      journal  - the assistant's journal entries, newest first, 20 a page.
      memory   - its long-term memories; =<query>: what it would recall,
                 ranked, with sources and who may know each; /people
                 (=<person>: a profile, and how it feels: familiarity,
                 warmth, trust), /reflections, /reviews (the corrections),
                 /gossip, /links; /forget=<id> (j000012, m000003, #12/o3).
      forgetperson - forget everything about a person, in every assistant
                 that knows them (/memory <name>/forgetperson=: in one).
      core     - the notes in every prompt; yours are pinned. <key>= removes.
      trigger  - reminders that ride in a turn when <pattern> comes up;
                 /remove=<id> removes one.
      export   - all it remembers to a new .json file in server/assistant_memory
                 (never a key); import replaces its memory from one.
    Each asks before it forgets or replaces. Every detail: docs/using.md.

    Examples:
      @assistant/memory Aria=east door
      @assistant/memory Aria/people=Bob/trust=0.5 kept every promise
      @assistant/trigger Aria=Mira: give her the letter from her brother

    ## sleep

    Usage:
      @assistant/sleep <name>[=<hours> [light||deep] [<reason>]]
      @assistant/wake <name>[=<reason>]
      @assistant/wait <name>=<minutes> [<reason>]
      @assistant/debt <name>[=<1-3> <reason>]
      @assistant/sleeps <name>
      @assistant/rollback <name>[=<sleep id>]

    Asleep, an assistant files its journal into long-term memory, links
    memories, learns about the people it met and lets small talk go.

    Switches:
      sleep    - put it to sleep now (default 4 hours, light). Light sleep
                 wakes on urgent events (a whisper, a page, its name, an
                 instruction); deep sleep when the time is up.
      wake     - wake it now.
      wait     - hold its turns for <minutes>, as its own wait tool does: a
                 direct word is still answered.
      debt     - its sleep debt: each turn adds 0-3; from 7 it is told to
                 consider sleep, from 10 to sleep. =<1-3> adds points.
      sleeps   - its sleeps, newest first, the one under way first.
      rollback - restore its memory as it was when a sleep began (default:
                 the latest), undoing that sleep and all since. Asks first.
    Every detail: docs/lifecycle.md.

    Examples:
      @assistant/sleep Aria=2 deep quiet hours
      @assistant/wait Aria=15 the play is on, let the actors speak
      @assistant/debt Aria=2 ran the harvest festival all day
      @assistant/rollback Aria=s4

    ## plan

    Usage:
      @assistant/plan <name>
      @assistant/plan <name>=<routine>
      @assistant/plan <name>/routine
      @assistant/plan <name>/clear

    A routine says where an assistant goes and what it does by the game's
    clock. Each game day its plan is made from it; awake, with no one to
    answer, it walks there one exit a tick through exits its own rights
    pass (locks hold; it never teleports) and emotes the activity once
    on arrival, with no model call. Whoever speaks to it comes first: it
    walks on a minute after the talk. An item with no way it may pass is
    marked blocked. A sleep item puts it to sleep until the next item.

    Switches:
      plan     - today's plan: time (game time), where, what, where each
                 item came from (routine, its own plan, agreed with
                 someone) and what became of it (now, here, done, later,
                 missed, blocked and why).
                 =<routine> sets its routine, replacing the old one, and
                 today's plan follows it: one item a line or separated by
                 ;, 'HH:MM <room>: <activity>' (the activity is optional,
                 the room a name or #dbref) or 'HH:MM sleep'. At most 24
                 items, an activity 120 characters. = with nothing after
                 it removes the routine.
                 /routine shows the routine as you would type it.
                 /clear empties today's plan (the routine makes tomorrow's).

    Examples:
      @assistant/plan Aria=08:00 Library: opens the library; 22:00 sleep
      @assistant/plan Aria
      @assistant/plan Aria/clear

    ## lore

    Usage:
      @assistant/lore [<page>]
      @assistant/lore <lore id>
      @assistant/lore =<words>
      @assistant/lore add <title>[;<tags>[;<who>]]=<text>
      @assistant/lore edit <lore id>/<field>=<value>
      @assistant/lore remove <lore id>
      @assistant/lore import <file>

    The game's lore book, shared by every assistant: what builders write
    once and assistants recall as they recall their own memories, marked as
    lore ("You know that: ..."), never as someone's words. Lists 20 a page;
    <lore id> (L12) shows one; =<words> searches. edit changes one field
    (title, text, tags or who). add: <tags> separated by commas; <who> may know it, separated by commas: an assistant's name or
    #dbref, room:<room name or #dbref>, tag:<tag of assistants>, or everyone
    (the default). remove asks first. import adds
    every entry of a .txt or .json file in the game's folder (path relative
    to it, at most 2 MB), all or none. A text file: entries separated by a
    line ---, each with lines title: ..., tags: ..., who: ... first, then
    its text. A JSON file: a list of {"title", "text", "tags": [...],
    "who": [...]}. Bounds: a title 120 characters, a text 1000, 10 tags,
    20 items of who, 20000 entries.

    Examples:
      @assistant/lore add The founding;history,town;room:Square=Oda founded it.
      @assistant/lore edit L1/who=Aria, tag:guards
      @assistant/lore import world/lore.txt

    ## group

    Usage:
      @assistant/group
      @assistant/group <group>
      @assistant/group <group>=on||off
      @assistant/group <group>=remove <share id>

    Assistants tagged with one name in the category ai_assistant_group
    form a group (the guards, a guild). A member whose setting
    group_sharing_enabled is on may share a memory anyone may know with
    its group (never a whisper or anything drawn from one); the others
    recall it as what that member reported, with its chain of sources and
    less trust per hand. Each share is kept once, by its member. Without a
    group: every group, its members, what it holds and whether it shares.
    <group>: what it shares (id, chain, trust, text). on/off switches its
    sharing (off: nothing is shared or recalled, what it holds is kept);
    remove takes one share away (its id, as g17.3). Forgetting a person
    removes their shares too.

    Examples:
      @tag Aria = guards:ai_assistant_group
      @assistant/set Aria/group_sharing_enabled=true
      @assistant/group guards
      @assistant/group guards=remove g17.3

    ## settings

    Usage:
      @assistant/set <name>
      @assistant/set <name>/<key>
      @assistant/set <name>/<key>=<value>

    set - without a key, its settings by topic, the few most builders change
          first, each with its value and what is allowed; /<key> shows one
          in full (value, where it comes from, default, allowed, meaning);
          <key>=<value> changes one (validated). The value 'default' drops
          this assistant's own value. <key> 'persona' sets its persona.
    Game-wide settings (the model, the key, players' budgets) are in the
    game's settings file; docs/configuration.md lists them all.

    Examples:
      @assistant/set Aria
      @assistant/set Aria/tick_rate
      @assistant/set Aria/tick_rate=10
      @assistant/set Aria/respond_to_ambient=true

    ## dashboard

    Builders (and higher) see every assistant in the game's website at
    /assistants/ (the menu's "Assistants" link): its status and tokens, its
    conversation with each tool call, its memory with search, forget and
    trust, the next request laid open, its sleeps with rollback, and its
    settings, each change validated as @assistant does it and recorded as
    "<account> (web)". The game's lore book is at /assistants/lore/.
    """

    key = "@assistant"
    aliases = ["assistant"]
    switch_options = (
        "list",
        "create",
        *SWITCHES_WITH_TARGET,
        "lore",
        "group",
        "forgetperson",
        "replace",
    )
    locks = "cmd:perm(Builder)"
    help_category = "Building"

    def parse(self):
        """Split `<name>[/<key>]` off the left-hand side."""
        super().parse()
        name, _, sub = (self.lhs or "").partition("/")
        self.target_name = name.strip()
        self.subkey = sub.strip()
        self.target = None

    def func(self):
        """Run the switch given (default /list) on the assistant named, if any."""
        switch = self.switches[0] if self.switches else "list"
        if switch in SWITCHES_WITH_TARGET:
            self.target = self.find_target()
            if self.target is None:
                return
        try:
            # a switch that asks a question returns its generator (Evennia's `yield` prompt)
            return getattr(self, f"do_{switch}")()
        except Refused as err:
            if switch in SWITCHES_THAT_EDIT:
                self.msg(f"Not changed. {err}")
            else:
                said = str(err)
                name = self.target.key if self.target else "Assistant"
                # "Aria is not asleep." names her already: no "Aria: " before it
                self.msg(said if said.startswith(f"{name} ") else f"{name}: {said}")

    def find_target(self):
        """Find the one assistant the arguments name; say why when there is none.

        Returns:
            Object or None: The assistant, or None when none or several match.

        """
        name = self.target_name
        if not name:
            self.msg(f"Name an assistant. Usage: {self.key}/{self.switches[0]} <name>")
            return None
        matches = find_assistants(name)
        if len(matches) == 1:
            return matches[0]
        if matches:
            listed = ", ".join(f"{obj.key}({obj.dbref})" for obj in matches)
            self.msg(f"Several assistants are called '{name}': {listed}. Use the dbref.")
            return None
        known = ", ".join(f"{obj.key}({obj.dbref})" for obj in find_assistants()) or "none yet"
        self.msg(f"No assistant called '{name}'. Assistants: {known}.")
        return None

    @property
    def handler(self):
        """The handler of the target assistant.

        Returns:
            AssistantHandler: `self.target.assistant`.

        """
        return self.target.assistant

    def more(self, text: str) -> None:
        """Long output, paged with EvMore for a player; at once for a caller without a
        session (a script, a headless demo), whom EvMore would show nothing.

        Args:
            text (str): What to show.

        """
        if self.caller.sessions.get():
            EvMore(self.caller, text)
        else:
            self.msg(text)

    # ---- switches -------------------------------------------------------------------------

    def do_list(self):
        """Show every assistant in a table, and the usage when no switch was given."""
        assistants = find_assistants()
        if not assistants:
            self.msg("There are no assistants yet. Create one with @assistant/create <name>.")
            return
        # a summary reads the script alone: listing writes nothing and builds no brain
        self.msg(self.format_list([(obj, obj.assistant.overview.summary()) for obj in assistants]))
        if not self.switches:
            self.msg(
                f"Usage: {self.key}/<switch> [<name>...]. Switches: "
                f"{', '.join(self.switch_options)}. See 'help {self.key}'."
            )

    def do_create(self):
        """Create an assistant in the caller's room, with the persona after `=`."""
        name = self.target_name
        if not _NAME_RE.match(name):
            self.msg(
                "Give the assistant a name of 1-40 characters: letters first, then letters, "
                "digits, spaces, ' or -. Usage: @assistant/create <name>[=<persona>]"
            )
            return
        location = self.caller.location
        if not location:
            self.msg("You must be in a room to create an assistant there.")
            return
        same = find_assistants(name)
        if same:
            # two of one name would make every command by that name ambiguous
            listed = ", ".join(f"{obj.key}({obj.dbref})" for obj in same)
            self.msg(
                f"Not created: an assistant called '{name}' already exists: {listed}. Choose "
                f"another name, or delete it first with @assistant/delete {same[0].dbref}."
            )
            return
        assistant = create_assistant(name, location, self.rhs or "")
        self.msg(f"Created assistant {assistant.key} ({assistant.dbref}) in {location.key}.")

    def do_status(self):
        """Show the target assistant's status."""
        self.msg(self.format_status(self.target, self.handler.status()))

    def do_set(self):
        """Show every setting of the assistant, one setting, or change one."""
        if not self.subkey:
            if self.rhs is not None:
                self.msg("Usage: @assistant/set <name>/<key>=<value>, or @assistant/set <name>.")
                return
            own = self.handler.overrides()
            self.more(self.format_options(self.target, self.handler.options(), own))
            return
        if self.rhs is None:
            self.show_option(self.subkey)
            return
        value = self.handler.set_option(self.subkey, self.rhs)
        if self.subkey == "persona":
            self.msg(f"{self.target.key}'s persona is now: {value}")
        elif self.rhs.strip().lower() == "default":
            self.msg(f"{self.target.key}: {self.subkey} set to its default.")
        else:
            self.msg(f"{self.target.key}: {self.subkey} set to {value!r}.")

    def show_option(self, key: str) -> None:
        """Show one setting in full: value, where it comes from, default, allowed, meaning."""
        row = next((r for r in self.handler.options() if r[0] == key), None)
        if row is None:
            self.msg(unknown_key_message(key))
            return
        game = game_defaults() or {}
        if key == "persona":
            default, source = "(a default persona)", "this assistant (its db.persona)"
        else:
            field_default = AssistantConfig.model_fields[key].default
            default = game.get(key, field_default)
            if key in self.handler.overrides():
                source = "this assistant's own value"
            elif key in game:
                source = "the game's AI_ASSISTANT_DEFAULTS"
            else:
                source = "the default"
        self.msg(self.format_option(self.target, row, default, source))

    def do_sleep(self):
        """Put the assistant to sleep for the hours and depth given (4 hours, light by default)."""
        words = (self.rhs or "").split()
        hours, depth = 4, "light"
        usage = "Usage: @assistant/sleep <name>[=<hours> [light||deep] [<reason>]], hours 1-24."
        if words:
            if not words[0].isdigit():
                self.msg(f"'{words[0]}' is not a number of hours. {usage}")
                return
            hours = int(words.pop(0))
            if words and words[0].lower() in ("light", "deep"):
                depth = words.pop(0).lower()
        reason = " ".join(words) or f"put to sleep by {self.caller.key}"
        try:
            phase = self.handler.sleep(hours, depth, reason, by=self.caller.key)
        except Refused as err:
            self.msg(f"{self.target.key} was not put to sleep: {err} {usage}")
            return
        self.msg(f"{self.target.key} is asleep ({depth}, {hours} h), starting with {phase}.")

    def do_debt(self):
        """Show the assistant's sleep debt, or add 1-3 points with a reason."""
        usage = "Usage: @assistant/debt <name>[=<1-3> <reason>]"
        if self.rhs is None:
            self.msg(self.format_debt(self.target, self.handler.memory.admin.debt()))
            return
        words = self.rhs.split(None, 1)
        if not words or not words[0].lstrip("-").isdigit():
            self.msg(f"Not changed. Give 1 to 3 points and a reason. {usage}")
            return
        reason = words[1] if len(words) > 1 else ""
        debt = self.handler.memory.admin.add_debt(int(words[0]), reason)
        self.msg(
            f"Added {int(words[0])} to {self.target.key}'s sleep debt: now {debt['points']} "
            f"({debt['level']})."
        )

    def do_trigger(self):
        """List the assistant's reminders, set one, or remove one."""
        usage = (
            "Usage: @assistant/trigger <name>[[/<max fires>]=<pattern>: <reminder>] or "
            "@assistant/trigger <name>/remove=<reminder id>"
        )
        if self.rhs is None:
            if self.subkey:
                self.msg(f"Not changed. {usage}")
                return
            reminders = self.handler.memory.admin.kind("reminders").all()
            self.more(self.format_reminders(self.target, reminders))
            return
        if self.subkey.lower() == "remove":
            removed = self.handler.memory.admin.kind("reminders").remove(self.rhs)
            self.msg(f"Removed reminder {removed['id']} ({removed['pattern']}).")
            return
        if self.subkey and not self.subkey.isdigit():
            self.msg(f"Not changed. Max fires must be a whole number from 1 to 20. {usage}")
            return
        pattern, colon, reminder = self.rhs.partition(":")
        if not colon:
            self.msg(f"Not changed. Separate the pattern and the reminder with ':'. {usage}")
            return
        added = self.handler.memory.admin.kind("reminders").add(
            pattern, reminder, int(self.subkey) if self.subkey else 3, by=self.caller.key
        )
        self.msg(
            f"{self.target.key}: reminder {added['id']} set: when {added['pattern']} comes up "
            f"(at most {added['max_fires']} times)."
        )

    def do_sleeps(self):
        """List the assistant's sleeps, newest first."""
        if self.rhs is not None:
            self.msg("Usage: @assistant/sleeps <name>")
            return
        kept = {snapshot["sleep_id"] for snapshot in self.handler.memory.admin.snapshots()}
        sleeps = self.handler.memory.admin.kind("sleep_history").recent(50, current=True)
        self.more(self.format_sleeps(self.target, sleeps, kept))

    def do_rollback(self):
        """Show what rolling back a sleep would change, then ask before doing it.

        Returns:
            generator: The confirmation (Evennia runs it: `yield` asks the question).

        """
        sleep_id = (self.rhs or "").strip() or None
        if self.subkey or (self.rhs is not None and not sleep_id):
            self.msg("Not changed. Usage: @assistant/rollback <name>[=<sleep id>]")
            return None
        memory = self.handler.memory
        plan = memory.rollback_plan(sleep_id)
        self.msg(self.format_rollback(self.target, plan, False, memory.describe_rollback(plan)))
        # what was shown is what is confirmed: the sleeps undone and the corrections kept
        shown_kept = [correction["seq"] for correction in plan.get("kept") or []]
        return self._confirm_rollback(plan["sleep_id"], plan["sleeps"], shown_kept)

    def _confirm_rollback(self, sleep_id: str, shown: list, shown_kept: list):
        answer = yield f"Roll back {self.target.key}'s memory to before sleep {sleep_id}? [y/N]"
        if (answer or "").strip().lower() not in YES:
            self.msg(f"Rollback cancelled; {self.target.key}'s memory is unchanged.")
            return
        try:
            result = self.handler.memory.rollback(
                sleep_id, by=self.caller.key, expected=shown, expected_kept=shown_kept
            )
        except Refused as err:  # it fell asleep, or a turn began, while we asked
            self.msg(f"Not changed. {err}")
            return
        changes = self.handler.memory.describe_rollback(result)
        self.msg(self.format_rollback(self.target, result, True, changes))

    def do_delete(self):
        """Say what deleting the assistant would remove, then ask before doing it.

        Returns:
            generator: The confirmation (Evennia runs it: `yield` asks the question).

        """
        if self.subkey or self.rhs is not None:
            self.msg("Not changed. Usage: @assistant/delete <name>")
            return None
        target = self.target
        held = _counted(assistant_holdings(target))
        place = target.location.key if target.location else "nowhere"
        self.msg(f"{target.key} ({target.dbref}) in {place} holds {held}.")
        return self._confirm_delete(target)

    def _confirm_delete(self, target):
        answer = yield (
            f"Delete {target.key} ({target.dbref}) with everything it remembers? "
            "This cannot be undone. [y/N]"
        )
        if (answer or "").strip().lower() not in YES:
            self.msg(f"Deletion cancelled; {target.key} is unchanged.")
            return
        name, dbref = target.key, target.dbref
        try:
            held = delete_assistant(target)
        except Refused as err:
            self.msg(f"Not deleted. {err}")
            return
        self.msg(
            f"Deleted assistant {name} ({dbref}): its character, script and ticker, and "
            f"{_counted(held)}."
        )

    def do_wake(self):
        """Wake the assistant now."""
        self.handler.wake((self.rhs or "").strip() or f"woken by {self.caller.key}")
        self.msg(f"{self.target.key} is awake.")

    def do_wait(self):
        """Hold the assistant's turns for some minutes, as its `wait` tool does."""
        usage = "Usage: @assistant/wait <name>=<minutes> [<reason>]"
        words = (self.rhs or "").split(None, 1)
        if not words:
            self.msg(f"Not changed. Give the minutes to wait. {usage}")
            return
        until = self.handler.wait(words[0], words[1] if len(words) > 1 else "", by=self.caller.key)
        self.msg(
            f"{self.target.key} waits until {when(to_iso(until))}, unless someone speaks to "
            "it directly."
        )

    def do_instruct(self):
        """Give the assistant a builder instruction, handled on its next tick."""
        if self.rhs is None:
            self.msg("Usage: @assistant/instruct <name>=<instruction>")
            return
        self.handler.instruct(self.caller, self.rhs)
        self.msg(f"{self.target.key} received your instruction; it is handled on its next tick.")

    def do_tick(self):
        """Run one tick now and say what it did."""
        report = self.handler.tick_now()
        name = self.target.key
        outcome = report.outcome
        if report.in_flight:
            self.msg(f"{name} is thinking (a model call is in flight).")
        elif outcome is not None:
            # tool names and the stop reason come from the model: cropped, markup as typed
            tools = shown_list([call["name"] for call in outcome.tool_calls]) or "none"
            error = f" ({shown(outcome.error, TEXT_CHARS)})" if outcome.error else ""
            self.msg(
                f"{name} ticked: {outcome.model_calls} model calls, tools: {tools}, "
                f"ended by {shown(outcome.stop_reason, NAME_CHARS)}{error}"
            )
        elif report.retry_after:
            self.msg(
                f"{name} is backing off after model errors until {when(report.retry_after)} "
                f"({report.pending_events} events wait). See @assistant/status {name}."
            )
        elif report.asleep:
            self.msg(f"{name} is asleep; the tick did its sleep work.")
        else:
            self.msg(
                f"{name} ticked: nothing needed the model ({report.pending_events} events pending)."
            )

    def do_pause(self):
        """Pause the assistant: it keeps hearing but does not act."""
        self.handler.pause()
        self.msg(f"{self.target.key} is paused; it keeps hearing, and acts after resume.")

    def do_resume(self):
        """Resume a paused assistant."""
        self.handler.resume()
        self.msg(f"{self.target.key} resumed.")

    def do_clear(self):
        """Reset the assistant's error counts and last error."""
        lifted = self.handler.clear_errors()
        again = (
            f"; {counted(lifted, 'journal entry')} that rested will be consolidated at the "
            "next sleep"
            if lifted
            else ""
        )
        self.msg(f"{self.target.key}: error counts and back-off cleared{again}.")

    # ---- formatting -----------------------------------------------------------------------


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
        """Page the assistants named, or fall back to the ordinary page for anyone else."""
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
        """Add `@assistant` and the assistant-aware `page`."""
        self.add(CmdAssistant())
        self.add(CmdPageAssistant())
