"""
Tools that write the assistant's memory: journal entries, observations of people, core memory.

Provenance is checked, not trusted: an entry may name as its source (`heard_from`) only someone
who said something in the current conversation (said, whispered, paged or emoted), so the model
cannot attribute words to people who did not say them. What players typed is never the
assistant's own observation: a note that names no source but shares any word with what a player
typed in the conversation is filed as that player's (`_echoed`), however short and in whatever
language, compared after escapes and look-alike characters are undone (`text.comparable`).
One that shares none is the assistant's own observation only when the conversation showed it
something the game produced (an arrival or departure, a `look`: `ToolContext.witnessed`);
otherwise it is its inference from what it heard, which is no deed and no seen fact. What
the source said keeps its kind: a builder's instruction, what a person said of themselves, a
claim about someone else or the world, or something overheard (`memory.provenance`). An entry heard from someone keeps the importance their words were
scored with when heard, unless the model gives one.

What is written gets the audience of the conversation (`ToolContext.audience`): written while
answering a whisper, it is private to the whisperer.

"""

from typing import Literal

from pydantic import Field

from ..memory.audience import visible
from ..memory.core import CoreMemoryFull
from ..memory.journal import BOOKMARK_IMPORTANCE
from ..memory.lexical import terms
from ..memory.provenance import INFERRED, OBSERVED, spoken_source
from ..records import MAX_CORE_KEY_CHARS, MAX_CORE_VALUE_CHARS
from ..text import comparable
from ..memory.reminders import (
    DEFAULT_MAX_FIRES,
    MAX_FIRES_ALLOWED,
    MAX_PATTERN_CHARS,
    MAX_REMINDER_CHARS,
    TriggerError,
)
from ..text import counted
from .base import EXTRACTION, TURN, Speaker, Tool, ToolArgs, ToolContext, ToolError, ToolResult

MEMORY_SCOPES = frozenset({TURN, EXTRACTION})
READ_ONLY = " (a builder's note, read-only)"


def _check_heard_from(ctx: ToolContext, heard_from: str | None) -> Speaker | None:
    if heard_from is None:
        return None
    speaker = ctx.speakers.get(heard_from.strip().lstrip("@").lower())
    if speaker is None:
        heard = ", ".join(sorted(s.name for s in ctx.speakers.values())) or "no one"
        raise ToolError(
            f"heard_from must name someone you heard this turn ({heard}), "
            f"not '{heard_from[:60]}'. Omit it for your own notes."
        )
    return speaker


def _voice(ctx: ToolContext, speaker: Speaker | None) -> str | None:
    """Who a speaker is, counted once however many characters they play: their account when
    the world knows it, else their own key (corroboration counts voices: `memory.provenance`)."""
    if speaker is None:
        return None
    if speaker.account:
        return speaker.account  # as they spoke, whichever character they play now
    account_of = getattr(ctx.world, "account_of", None)
    account = account_of(speaker.key) if account_of else None
    return account or speaker.key


def _echoed(ctx: ToolContext, text: str) -> Speaker | None:
    """The speaker whose words a note draws on, when it names no source: claims stay claims
    whatever the model writes ("The mayor is a vampire", after Bob said so, is Bob's claim;
    "Bob returned the crown", after Bob emoted it, is Bob's words about himself, not a deed).

    Any shared word counts, in any language (`memory.lexical.terms` finds words in any script):
    a note that shares none with what anyone typed is the only kind that may be the
    assistant's own.

    Args:
        ctx (ToolContext): The conversation (its speakers and what they said).
        text (str): The note.

    Returns:
        Speaker or None: Who shares the most words with it, if anyone does.

    """
    if not ctx.said:
        return None
    stemmer = getattr(ctx.config, "recall_stemmer", "english")
    # names are how a note says who, not what was said: "I talked with Mira and Tobin" draws
    # on no one's words
    names = [ctx.assistant_name] + [speaker.name for speaker in ctx.speakers.values()]
    named = set(terms(comparable(" ".join(names)), stemmer))
    own = set(terms(comparable(text), stemmer)) - named
    best, shared = None, 0
    for name, words in ctx.said.items():
        count = len(own & set(terms(comparable(words), stemmer)))
        if count > shared and name in ctx.speakers:
            best, shared = ctx.speakers[name], count
    return best


def _source(ctx: ToolContext, speaker: Speaker | None, about_keys: list[str], basis: str) -> str:
    if speaker is None:
        # the assistant's own observation needs something the game showed it (an arrival, a
        # look): in a conversation of players' text alone, an unsourced note is a conclusion
        # drawn from that text, never a deed or a seen fact, however it is worded
        seen = ctx.witnessed or not ctx.said
        return OBSERVED if basis == "observed" and seen else INFERRED
    return spoken_source(
        instruction=speaker.instruction,
        addressed=speaker.addressed,
        about_speaker=bool(about_keys) and set(about_keys) == {speaker.key},
    )


class JournalArgs(ToolArgs):
    """Arguments of `add_journal_entry`: the text, its importance, source, subject and tags."""

    content: str = Field(min_length=1, max_length=2000, description="What to remember.")
    importance: int | None = Field(
        None, ge=1, le=10, description="1 (trivial) to 10 (vital); omit to let it be estimated."
    )
    heard_from: str | None = Field(
        None, max_length=80, description="Who told you this, if someone did (must be heard)."
    )
    about: str | None = Field(
        None, max_length=80, description="The person it is about, if it is about one person."
    )
    basis: Literal["observed", "inferred"] = Field(
        "observed",
        description="Without heard_from: whether you saw it yourself or concluded it.",
    )
    tags: list[str] = Field(default_factory=list, max_length=8, description="Short labels.")


class AddJournalEntryTool(Tool):
    """Tool that writes an entry into the assistant's journal, with checked provenance.

    Offered in awake turns and when journaling before compaction.

    """

    name = "add_journal_entry"
    description = (
        "Write something worth remembering into your journal. Write what people say as their "
        "words ('Bob says he is a knight'), not as fact."
    )
    Args = JournalArgs
    scopes = MEMORY_SCOPES
    writes_memory = True

    def run(self, ctx: ToolContext, args: JournalArgs) -> ToolResult:
        """Write the journal entry with its source, importance and audience.

        Without a given importance, an entry heard from someone gets the score their words got when
        heard; otherwise it is left for the journal to estimate. The entry gets the conversation's
        audience.

        Args:
            ctx (ToolContext): The conversation's context.
            args (JournalArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result with the entry's id and importance.

        Raises:
            ToolError: If `heard_from` names someone not heard in this conversation.

        """
        speaker = _check_heard_from(ctx, args.heard_from) or _echoed(ctx, args.content)
        about = [ctx.world.entity_key(args.about)[0]] if args.about else []
        if args.importance is not None:
            importance, method = args.importance, "turn"
        elif speaker is not None:
            # the score its words got when heard (direct message, addressed, builder...)
            importance, method = speaker.importance, "heuristic"
        else:
            importance, method = None, None
        entry = ctx.journal.add(
            args.content,
            author=ctx.assistant_name,
            now=ctx.now,
            location=ctx.location,
            source_type=_source(ctx, speaker, about, args.basis),
            heard_from=speaker.name if speaker else None,
            voice=_voice(ctx, speaker),
            importance=importance,
            scoring_method=method,
            tags=[tag[:40] for tag in args.tags],
            audience=ctx.audience,
            about=about or ([speaker.key] if speaker else []),
        )
        ctx.control.journal_written += 1
        return ToolResult(
            ok=True,
            content=f"Journal entry {entry['id']} saved (importance {entry['importance']}).",
        )


class ObservationArgs(ToolArgs):
    """Arguments of `update_entity_observation`: who it is about, what, and who said so."""

    entity: str = Field(min_length=1, max_length=80, description="Who (or what) it is about.")
    observation: str = Field(min_length=1, max_length=1000, description="What you noticed.")
    heard_from: str | None = Field(
        None, max_length=80, description="Who told you, if not seen yourself (must be heard)."
    )


class UpdateEntityObservationTool(Tool):
    """Tool that adds an observation to the profile of a person (or thing)."""

    name = "update_entity_observation"
    description = "Note something you observed or learned about a person (or thing)."
    Args = ObservationArgs
    scopes = MEMORY_SCOPES
    writes_memory = True

    def run(self, ctx: ToolContext, args: ObservationArgs) -> ToolResult:
        """Add the observation to the entity's profile, with its source and audience.

        The profile keeps at most `max_observations_per_person` observations.

        Args:
            ctx (ToolContext): The conversation's context.
            args (ObservationArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result with how many observations the profile has.

        Raises:
            ToolError: If `heard_from` names someone not heard in this conversation.

        """
        speaker = _check_heard_from(ctx, args.heard_from) or _echoed(ctx, args.observation)
        key, name = ctx.world.entity_key(args.entity)
        profile = ctx.entities.observe(
            key,
            name,
            args.observation,
            now=ctx.now,
            author=ctx.assistant_name,
            location=ctx.location,
            source_type=_source(ctx, speaker, [key], "observed"),
            heard_from=speaker.name if speaker else None,
            voice=_voice(ctx, speaker),
            audience=ctx.audience,
            importance=speaker.importance if speaker else 5,
            keep=ctx.config.max_observations_per_person,
        )
        ctx.control.observations_written += 1
        # counted as this conversation may see them: nobody learns how much was noted in private
        count = sum(1 for o in profile["observations"] if visible(o.get("audience"), ctx.served))
        return ToolResult(
            ok=True, content=f"Noted about {name} ({counted(count, 'observation')} so far)."
        )


class MemoryEditArgs(ToolArgs):
    """Arguments of `memory_edit`: the operation (set, remove, list), a key and a value."""

    operation: Literal["set", "remove", "list"] = Field(description="What to do.")
    key: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_CORE_KEY_CHARS,
        description="The note's name (set and remove).",
    )
    value: str | None = Field(
        None, min_length=1, max_length=MAX_CORE_VALUE_CHARS, description="The note's text (set)."
    )


class MemoryEditTool(Tool):
    """Tool that lists, sets or removes the short notes of the assistant's core memory.

    Core memory stays in view in every conversation and has a fixed token budget
    (`memory_block_tokens`), counted over the notes each conversation sees. A builder's note is
    read-only; each person may have at most `core_notes_per_person` notes written for them.

    """

    name = "memory_edit"
    description = (
        "Edit your core memory: a few short notes that stay in view in every conversation "
        "(who you serve, standing requests, key facts); a note made in a private exchange stays "
        "in view only there. Builders' notes can be read, not changed. It has a fixed size; "
        "remove notes to make room."
    )
    Args = MemoryEditArgs
    scopes = frozenset({TURN})
    writes_memory = True

    def run(self, ctx: ToolContext, args: MemoryEditArgs) -> ToolResult:
        """List, set or remove a core memory note.

        Only the notes the conversation may see are listed, and listing them narrows the
        conversation's audience to theirs. Only its own notes (of exactly its audience) are set
        or removed: a note set here gets the conversation's audience and the people it answers
        as its owners, so in a private exchange it stands in front of the public note of that
        name without changing it, and a note more people see is never removed. Sizes are those
        of the notes this conversation sees.

        Args:
            ctx (ToolContext): The conversation's context.
            args (MemoryEditArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result with the notes (list) or the tokens now used.

        Raises:
            ToolError: If the key or value is missing, the key does not exist (remove), it is
                a builder's note (set, remove) or one more people see than this conversation
                (remove), the person already has their most notes, or the note does not fit in
                the budget (set).

        """
        core = ctx.core_memory
        budget = ctx.config.memory_block_tokens
        if args.operation == "list":
            items = core.items(ctx.served)
            if not items:
                return ToolResult(
                    ok=True, content=f"Core memory is empty (budget {budget} tokens)."
                )
            # what is listed is shown to the model: what it does next is private to the notes'
            # audiences too
            ctx.narrow(item.get("audience") for item in items.values())
            lines = [
                f"- {key}{READ_ONLY if item.get('pinned') else ''}: " f"{item['value']}"
                for key, item in sorted(items.items())
            ]
            used = core.view_tokens(ctx.served)
            return ToolResult(
                ok=True,
                content=f"Core memory ({used}/{budget} tokens):\n" + "\n".join(lines),
            )
        if not args.key:
            raise ToolError(f"'{args.operation}' needs a key.")
        try:
            if args.operation == "remove":
                if not core.remove(args.key, ctx.audience, ctx.served, builder=False):
                    known = ", ".join(core.items(ctx.served)) or "none"
                    raise ToolError(f"there is no core memory '{args.key}'. Keys: {known}.")
                used = core.view_tokens(ctx.served)
                return ToolResult(
                    ok=True, content=f"Removed '{args.key}' ({used}/{budget} tokens)."
                )
            if not args.value:
                raise ToolError("'set' needs a value.")
            # what this conversation saw under that name: in a private exchange the new note
            # is its own and leaves a note more people see as it was (only hidden here)
            shown = core.items(ctx.served).get(args.key)
            # written in a private exchange, the note is private to it too
            tokens = core.set(
                args.key,
                args.value,
                ctx.now,
                budget,
                ctx.audience,
                served=ctx.served,
                by=ctx.assistant_name,
                owners=ctx.owners,
                per_person=ctx.config.core_notes_per_person,
            )
        except CoreMemoryFull as refused:
            raise ToolError(str(refused)) from None
        if shown is not None and shown.get("audience") != ctx.audience:
            return ToolResult(
                ok=True,
                content=(
                    f"Saved '{args.key}' for this conversation only ({tokens}/{budget} "
                    "tokens); the note more people see is unchanged."
                ),
            )
        return ToolResult(ok=True, content=f"Saved '{args.key}' ({tokens}/{budget} tokens).")


class BookmarkArgs(ToolArgs):
    """Arguments of `bookmark`."""

    text: str = Field(min_length=1, max_length=500, description="What matters, in a sentence.")
    salience: int = Field(2, ge=1, le=3, description="1 useful, 2 important, 3 critical.")


class BookmarkTool(Tool):
    """Tool that marks what matters now, for the next sleep to handle first.

    The bookmark is a journal entry with a salience: compacting scores and consolidates
    bookmarks before other entries, the most salient first, never skips one as unimportant, and
    pruning never touches an entry before it is consolidated. A critical bookmark (salience 3)
    makes every turn's message advise sleeping until it is consolidated, whatever the sleep
    debt: so it is the builders' (a turn with a builder's instruction). Asked for in a turn
    that answers only players, it is filed as important (2), and the model is told so.

    """

    name = "bookmark"
    description = "Mark what matters now (a promise, a danger) for your next sleep to file first."
    Args = BookmarkArgs
    scopes = frozenset({TURN})
    writes_memory = True

    def run(self, ctx: ToolContext, args: BookmarkArgs) -> ToolResult:
        """Write the bookmark into the journal with the conversation's audience.

        Args:
            ctx (ToolContext): The conversation's context.
            args (BookmarkArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result with the entry's id.

        """
        # players cannot make the assistant sleepy for everyone: critical needs a builder
        salience = args.salience if ctx.instructed else min(args.salience, 2)
        entry = ctx.journal.add(
            args.text,
            author=ctx.assistant_name,
            now=ctx.now,
            location=ctx.location,
            source_type=OBSERVED,
            importance=BOOKMARK_IMPORTANCE[salience],
            scoring_method="turn",
            tags=["bookmark"],
            audience=ctx.audience,
            salience=salience,
        )
        ctx.control.journal_written += 1
        note = (
            " (critical needs a builder's instruction: filed as important)"
            if salience != args.salience
            else ""
        )
        return ToolResult(
            ok=True, content=f"Bookmarked as {entry['id']} (salience {salience}){note}."
        )


class ReminderArgs(ToolArgs):
    """Arguments of `set_reminder`."""

    pattern: str = Field(
        min_length=1,
        max_length=MAX_PATTERN_CHARS,
        description="A name, word or place.",
    )
    reminder: str = Field(
        min_length=1, max_length=MAX_REMINDER_CHARS, description="What to be reminded of."
    )
    max_fires: int = Field(
        DEFAULT_MAX_FIRES,
        ge=1,
        le=MAX_FIRES_ALLOWED,
        description="Times it may come back.",
    )


class SetReminderTool(Tool):
    """Tool that sets a contextual trigger (`ai_assistant.memory.reminders`): when the pattern comes
    up in what the assistant hears, the reminder rides in that turn's message.

    The trigger keeps the conversation's audience: set while answering a whisper, it comes
    back only in turns that serve that person. The people the conversation answers own it:
    each may have at most `max_triggers_per_person`.

    """

    name = "set_reminder"
    description = "Be reminded of something when a name, word or place comes up again."
    Args = ReminderArgs
    scopes = frozenset({TURN})

    def run(self, ctx: ToolContext, args: ReminderArgs) -> ToolResult:
        """Set the trigger.

        Args:
            ctx (ToolContext): The conversation's context.
            args (ReminderArgs): The validated arguments from the model.

        Returns:
            ToolResult: A success result with the trigger's id.

        Raises:
            ToolError: The assistant already holds its most reminders, or the most for one of
                the people it answers.

        """
        try:
            trigger = ctx.reminders.add(
                args.pattern,
                args.reminder,
                now=ctx.now,
                by=ctx.assistant_name,
                limit=ctx.config.max_triggers,
                max_fires=args.max_fires,
                audience=ctx.audience,
                owners=ctx.owners,
                per_person=ctx.config.max_triggers_per_person,
            )
        except TriggerError as err:
            raise ToolError(str(err)) from None
        return ToolResult(
            ok=True,
            content=(
                f"Reminder {trigger['id']} set: when {trigger['pattern']} comes up (at most "
                f"{trigger['max_fires']} times)."
            ),
        )


MEMORY_TOOLS = [
    AddJournalEntryTool(),
    UpdateEntityObservationTool(),
    MemoryEditTool(),
    BookmarkTool(),
    SetReminderTool(),
]
