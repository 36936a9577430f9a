"""
Tools that write the assistant's memory: journal entries and observations of people.

Provenance is checked, not trusted: an entry may say it was heard from someone only when that
person spoke to the assistant in the current turn, so the model cannot attribute words to people
who did not say them.

"""

from typing import Literal

from pydantic import Field

from ..memory.core import CoreMemoryFull

from .base import TURN, EXTRACTION, Tool, ToolArgs, ToolContext, ToolError, ToolResult

MEMORY_SCOPES = frozenset({TURN, EXTRACTION})


def _check_heard_from(ctx: ToolContext, heard_from: str | None) -> str | None:
    if heard_from is None:
        return None
    speaker = ctx.speakers.get(heard_from.strip().lower())
    if speaker is None:
        heard = ", ".join(sorted(ctx.speakers.values())) or "no one"
        raise ToolError(
            f"heard_from must name someone you heard this turn ({heard}), "
            f"not '{heard_from[:60]}'. Omit it for your own notes."
        )
    return speaker


class JournalArgs(ToolArgs):
    content: str = Field(min_length=1, max_length=2000, description="What to remember.")
    importance: int | None = Field(
        None, ge=1, le=10, description="1 (trivial) to 10 (vital); omit to let it be estimated."
    )
    heard_from: str | None = Field(
        None, max_length=80, description="Who told you this, if someone did (must be heard)."
    )
    tags: list[str] = Field(default_factory=list, max_length=8, description="Short labels.")


class AddJournalEntryTool(Tool):
    name = "add_journal_entry"
    description = "Write something worth remembering into your journal."
    Args = JournalArgs
    scopes = MEMORY_SCOPES

    def run(self, ctx: ToolContext, args: JournalArgs) -> ToolResult:
        speaker = _check_heard_from(ctx, args.heard_from)
        entry = ctx.journal.add(
            args.content,
            author=ctx.assistant_name,
            now=ctx.now,
            location=ctx.location,
            source_type="heard" if speaker else "self",
            heard_from=speaker,
            importance=args.importance,
            tags=[tag[:40] for tag in args.tags],
        )
        ctx.control.journal_written += 1
        return ToolResult(
            ok=True,
            content=f"Journal entry {entry['id']} saved (importance {entry['importance']}).",
        )


class ObservationArgs(ToolArgs):
    entity: str = Field(min_length=1, max_length=80, description="Who (or what) it is about.")
    observation: str = Field(min_length=1, max_length=1000, description="What you noticed.")
    heard_from: str | None = Field(
        None, max_length=80, description="Who told you, if not seen yourself (must be heard)."
    )


class UpdateEntityObservationTool(Tool):
    name = "update_entity_observation"
    description = "Note something you observed or learned about a person (or thing)."
    Args = ObservationArgs
    scopes = MEMORY_SCOPES

    def run(self, ctx: ToolContext, args: ObservationArgs) -> ToolResult:
        speaker = _check_heard_from(ctx, args.heard_from)
        key, name = ctx.world.entity_key(args.entity)
        profile = ctx.entities.observe(
            key,
            name,
            args.observation,
            now=ctx.now,
            author=ctx.assistant_name,
            location=ctx.location,
            source_type="heard" if speaker else "self",
            heard_from=speaker,
        )
        ctx.control.observations_written += 1
        count = len(profile["observations"])
        return ToolResult(ok=True, content=f"Noted about {name} ({count} observations so far).")


class MemoryEditArgs(ToolArgs):
    operation: Literal["set", "remove", "list"] = Field(description="What to do.")
    key: str | None = Field(
        None, min_length=1, max_length=60, description="The note's name (set and remove)."
    )
    value: str | None = Field(
        None, min_length=1, max_length=1000, description="The note's text (set)."
    )


class MemoryEditTool(Tool):
    name = "memory_edit"
    description = (
        "Edit your core memory: a few short notes that stay in view in every conversation "
        "(who you serve, standing requests, key facts). It has a fixed size; remove notes to "
        "make room."
    )
    Args = MemoryEditArgs
    scopes = frozenset({TURN})

    def run(self, ctx: ToolContext, args: MemoryEditArgs) -> ToolResult:
        core = ctx.core_memory
        budget = ctx.config.memory_block_tokens
        if args.operation == "list":
            items = core.items()
            if not items:
                return ToolResult(
                    ok=True, content=f"Core memory is empty (budget {budget} tokens)."
                )
            lines = [f"- {key}: {item['value']}" for key, item in sorted(items.items())]
            return ToolResult(
                ok=True,
                content=f"Core memory ({core.tokens()}/{budget} tokens):\n" + "\n".join(lines),
            )
        if not args.key:
            raise ToolError(f"'{args.operation}' needs a key.")
        if args.operation == "remove":
            if not core.remove(args.key):
                raise ToolError(
                    f"there is no core memory '{args.key}'. Keys: {', '.join(core.items()) or 'none'}."
                )
            return ToolResult(
                ok=True, content=f"Removed '{args.key}' ({core.tokens()}/{budget} tokens)."
            )
        if not args.value:
            raise ToolError("'set' needs a value.")
        try:
            tokens = core.set(args.key, args.value, ctx.now, budget)
        except CoreMemoryFull as full:
            raise ToolError(str(full)) from None
        return ToolResult(ok=True, content=f"Saved '{args.key}' ({tokens}/{budget} tokens).")


MEMORY_TOOLS = [AddJournalEntryTool(), UpdateEntityObservationTool(), MemoryEditTool()]
