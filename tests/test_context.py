"""Context compaction, pre-compaction extraction, the budget rule and core memory (pure core)."""

import json
from datetime import timedelta

import pytest

from ai_assistant.context.compaction import (
    CONTEXT_SIGNALS,
    SUMMARY_PREFIX,
    compact_history,
    extract_then_compact,
    pre_compaction_extraction,
    render_transcript,
    split_history,
)
from ai_assistant.llm.chat import (
    BAD_REQUEST,
    SERVER_ERROR,
    ChatReply,
    LLMError,
    TokenUsage,
    ToolCall,
)
from ai_assistant.memory.core import CoreMemoryFull
from ai_assistant import lifecycle as life
from ai_assistant.sleep.tick import sleep_tick

from .core_fakes import T0, hear, make_assistant, reply, run, run_tick, ScriptedModel


def text(content):
    return ChatReply(content=content, tool_calls=[], finish_reason="stop", usage=TokenUsage(10, 5))


def summarised(summary, **parts):
    """The structured compaction reply: a `CompactionSummary` as JSON."""
    return text(json.dumps({"summary": summary, **parts}))


def exchange(i, size=40):
    """A user event message and the assistant's say + tool result: three valid messages."""
    words = " ".join(f"word{i}x{j}" for j in range(size))
    return [
        {
            "role": "user",
            "content": f'<event type="say" from="Mira">{words}</event>',
            # what an awake turn keeps with its events message: who spoke
            "metadata": {"speakers": {"mira": {"name": "Mira", "key": "name:mira"}}},
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"c{i}",
                    "type": "function",
                    "function": {"name": "say", "arguments": '{"text": "ok"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": f"c{i}", "content": "You said it."},
    ]


def with_history(assistant, exchanges, size=40):
    messages = [m for i in range(exchanges) for m in exchange(i, size)]
    assistant.history.extend(messages)
    return messages


# ---- the split -------------------------------------------------------------------------------------


def test_split_reference_example():
    history = [{"role": "user", "content": str(i)} for i in range(50)]
    old, kept = split_history(history, 20)
    assert len(old) == 30 and len(kept) == 20 and kept[0]["content"] == "30"


def test_split_never_separates_tool_call_from_result():
    history = [m for i in range(10) for m in exchange(i)]  # 30 messages
    old, kept = split_history(history, 19)
    # 30 - 19 = 11 would start the window at a tool result; it moves back to its call
    assert history[11]["role"] == "tool"
    assert kept[0]["role"] == "assistant" and kept[1]["role"] == "tool"
    assert len(old) == 10 and len(kept) == 20 and old[-1]["role"] == "user"
    ids = {c["id"] for m in kept if m.get("tool_calls") for c in m["tool_calls"]}
    assert {m["tool_call_id"] for m in kept if m["role"] == "tool"} <= ids


def test_split_with_several_results_in_a_row():
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "look", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "noop", "arguments": "{}"}},
        ],
    }
    history = [
        {"role": "user", "content": "x"},
        call,
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "tool", "tool_call_id": "b", "content": "2"},
    ]
    old, kept = split_history(history, 1)
    assert old == history[:1] and kept[0] is call


# ---- compaction ------------------------------------------------------------------------------------


def test_skips_below_threshold_and_within_window():
    assistant = make_assistant(max_context_tokens=100000)
    with_history(assistant, 10)
    assert run(compact_history(assistant, T0))["skipped"] == "below threshold"
    small = make_assistant(max_context_tokens=1000)
    with_history(small, 2)  # 6 messages <= preserve window 20
    assert run(compact_history(small, T0, force=True))["skipped"].startswith("history within")
    disabled = make_assistant(compact_enabled=False)
    assert run(compact_history(disabled, T0, force=True))["skipped"] == "compaction disabled"


def test_compaction_payload_replacement_and_archive():
    model = ScriptedModel(summarised("Mira chatted about many things."))
    assistant = make_assistant(model, compact_preserve_window=6, compact_model="small-model")
    messages = with_history(assistant, 10)
    report = run(compact_history(assistant, T0, force=True))
    (request,) = model.requests
    assert request.model == "small-model" and request.tools == []
    # the summary call holds only the messages being compacted
    transcript = request.messages[1]["content"]
    assert "word0x0" in transcript and "word7x0" in transcript
    assert "word8x0" not in transcript and "word9x0" not in transcript
    assert report["compacted"] == 24 and report["preserved"] == 6
    assert report["tokens_after"] < report["tokens_before"]
    history = assistant.history.all()
    assert history[0]["role"] == "system"
    assert history[0]["content"] == f"{SUMMARY_PREFIX}\nMira chatted about many things."
    assert history[0]["metadata"]["type"] == "compaction"
    assert history[0]["metadata"]["compacted_count"] == 24
    assert history[1:] == messages[-6:]
    # the marker's metadata is never sent
    sent = assistant.build_request([]).messages
    assert all("metadata" not in m for m in sent)
    # archived as a synthesis entry, never consolidated again as raw experience
    (entry,) = assistant.journal.all()
    assert entry["content"].startswith("[CONTEXT SYNTHESIS]\nMira chatted")
    assert entry["source_type"] == "summary" and entry["importance"] == 7
    assert entry["tags"] == ["compaction", "synthesis"]
    assert assistant.journal.unconsolidated() == []
    # the running token total matches a full recount
    assert assistant.history.tokens() == assistant.history._count(assistant.history.all())


def test_custom_compaction_prompt():
    model = ScriptedModel(summarised("summary"))
    assistant = make_assistant(
        model, compact_prompt="Summarise for {name} in haiku.", compact_preserve_window=2
    )
    with_history(assistant, 3)
    run(compact_history(assistant, T0, force=True))
    assert model.requests[0].messages[0]["content"] == "Summarise for Aria in haiku."


@pytest.mark.parametrize(
    "answer, error",
    [
        (LLMError(SERVER_ERROR, "down"), "server_error: down"),
        (text("   "), "invalid_response"),
        (text("They talked about the weather."), "invalid_response"),
        (text('{"people": ["Mira"]}'), "summary: Field required"),
        (text('{"summary": "ok", "people": "Mira"}'), "people: Input should be a valid array"),
        (summarised("x" * 4001), "summary: String should have at most 4000 characters"),
        (summarised("ok", key_facts=["f"] * 21), "key_facts: List should have at most 20"),
        (summarised("   "), "the summary came back empty"),
        (ChatReply(None, [], "stop", refusal="no"), "invalid_response: The model refused"),
    ],
)
def test_failed_summary_keeps_history(answer, error):
    assistant = make_assistant(ScriptedModel(answer), compact_preserve_window=4)
    messages = with_history(assistant, 5)
    report = run(compact_history(assistant, T0, force=True))
    assert error in report["error"]
    assert assistant.history.all() == messages
    assert len(assistant.journal) == 0


def test_the_summary_is_a_structured_reply_rendered_as_text():
    model = ScriptedModel(
        summarised(
            "Mira asked about the <b>map</b>.",
            people=["Mira: a cartographer, wants the old map", "  "],
            open_threads=["Aria promised to find the map by dusk"],
            key_facts=["The map is in the east wing"],
        )
    )
    assistant = make_assistant(model, compact_preserve_window=6)
    with_history(assistant, 10)
    report = run(compact_history(assistant, T0, force=True))
    (request,) = model.requests
    assert request.response_format["type"] == "json_schema"
    assert request.response_format["json_schema"]["name"] == "CompactionSummary"
    expected = (
        "Mira asked about the <b>map</b>.\n\n"
        "People:\n- Mira: a cartographer, wants the old map\n\n"
        "Open threads and promises:\n- Aria promised to find the map by dusk\n\n"
        "Key facts:\n- The map is in the east wing"
    )
    assert report["summary"] == expected
    # in the history, model-written text is escaped like any text entering a prompt
    marker = assistant.history.all()[0]["content"]
    assert marker.startswith(f"{SUMMARY_PREFIX}\nMira asked about the &lt;b&gt;map")
    assert "\nOpen threads and promises:\n- Aria promised" in marker
    (entry,) = assistant.journal.all()
    assert entry["content"] == f"[CONTEXT SYNTHESIS]\n{expected}"
    assert assistant.usage().calls == 1


def test_the_summary_falls_back_to_json_mode():
    model = ScriptedModel(LLMError(BAD_REQUEST, "no json_schema here"), summarised("In JSON mode."))
    assistant = make_assistant(model, compact_preserve_window=4)
    with_history(assistant, 5)
    report = run(compact_history(assistant, T0, force=True))
    assert report["summary"] == "In JSON mode."
    assert model.requests[1].response_format["type"] == "json_object"
    assert '"open_threads"' in model.requests[1].messages[-1]["content"]


# ---- pre-compaction extraction -------------------------------------------------------------------------


class SignalWatcher(ScriptedModel):
    def __init__(self, assistant_ref, *answers):
        super().__init__(*answers)
        self.ref = assistant_ref
        self.signals = []

    def complete(self, request):
        self.signals.append(dict(self.ref[0].state.get(CONTEXT_SIGNALS) or {}))
        return super().complete(request)


def test_extraction_journals_then_stops_on_noop_with_signal():
    ref = []
    model = SignalWatcher(
        ref,
        reply(
            ("add_journal_entry", {"content": "Mira's words matter", "heard_from": "Mira"}),
            ("update_entity_observation", {"entity": "Mira", "observation": "talkative"}),
        ),
        reply(("noop", {})),
    )
    assistant = make_assistant(model)
    ref.append(assistant)
    with_history(assistant, 3)
    report = run(pre_compaction_extraction(assistant, T0, 5))
    assert report == {"facts_recorded": 2, "iterations": 2, "stop_reason": "noop"}
    assert model.signals == [{"pre_compaction": True}] * 2
    assert assistant.state.get(CONTEXT_SIGNALS) == {"pre_compaction": False}
    # it saw the full history, only the extraction tools, and the prompt
    first = model.requests[0]
    assert {t["function"]["name"] for t in first.tools} == {
        "noop",
        "add_journal_entry",
        "update_entity_observation",
        "recall",
    }
    assert "word0x0" in first.messages[1]["content"]
    assert "[Memory upkeep]" in first.messages[-1]["content"]
    assert assistant.journal.all()[0]["heard_from"] == "Mira"


def test_extraction_stops_on_other_tools_without_running_them():
    model = ScriptedModel(
        reply(("say", {"text": "Hello!"}), ("add_journal_entry", {"content": "x"}))
    )
    assistant = make_assistant(model)
    with_history(assistant, 3)
    report = run(pre_compaction_extraction(assistant, T0, 5))
    assert report["stop_reason"] == "out_of_scope: say" and report["facts_recorded"] == 0
    assert assistant.world.said == [] and len(assistant.journal) == 0
    tail = assistant.history.all()[-2:]
    assert all(m["role"] == "tool" and m["content"].startswith("Error: only") for m in tail)


def test_extraction_stops_without_tool_call_and_at_limit():
    assistant = make_assistant(ScriptedModel(text("nothing to add")))
    with_history(assistant, 3)
    assert run(pre_compaction_extraction(assistant, T0, 5))["stop_reason"] == "no_tool_call"
    looping = make_assistant(
        ScriptedModel(*[reply(("add_journal_entry", {"content": f"f{i}"})) for i in range(3)])
    )
    with_history(looping, 3)
    report = run(pre_compaction_extraction(looping, T0, 3))
    assert report == {"facts_recorded": 3, "iterations": 3, "stop_reason": "iteration_limit"}


def test_extraction_skips_short_history_and_when_disabled():
    short = make_assistant()
    short.history.extend(exchange(0)[:3])
    assert run(pre_compaction_extraction(short, T0, 5))["skipped"] == "history too short"
    off = make_assistant(pre_compact_extraction_enabled=False)
    with_history(off, 3)
    assert run(pre_compaction_extraction(off, T0, 5))["skipped"] == "extraction disabled"


# ---- triggers --------------------------------------------------------------------------------------


def test_emergency_compaction_at_awake_tick_uses_three_iterations():
    model = ScriptedModel(
        *[reply(("add_journal_entry", {"content": f"fact {i}"})) for i in range(3)],
        summarised("Summary of the long chat."),
    )
    assistant = make_assistant(model, max_context_tokens=4000, compact_preserve_window=6)
    with_history(assistant, 12)
    assert assistant.context_tokens() / 4000 >= 0.8
    outcome = run_tick(assistant)  # no events at all: compaction only
    assert outcome.stop_reason == "compaction_only"
    report = outcome.compaction
    assert report["extraction"]["iterations"] == 3 and report["extraction"]["facts_recorded"] == 3
    assert report["compaction"]["compacted"] > 0
    assert assistant.context_tokens() / 4000 < 0.8
    assert assistant.state.get("last_compaction")["emergency"] is True


def test_sleep_compaction_in_dreaming_at_seventy_percent():
    model = ScriptedModel(reply(("noop", {})), summarised("Sleep summary."))
    assistant = make_assistant(model, max_context_tokens=5000, compact_preserve_window=6)
    with_history(assistant, 12)
    ratio = assistant.context_tokens() / 5000
    assert 0.7 <= ratio
    assistant.lifecycle.go_to_sleep(
        T0, reason="x", initiated_by="builder", enforce_safeguards=False
    )
    assert assistant.lifecycle.phase == life.DREAMING
    run(sleep_tick(assistant, T0))
    assert assistant.history.all()[0]["content"].startswith(SUMMARY_PREFIX)
    assert assistant.state.get("last_compaction")["emergency"] is False
    assert sleep_tick(assistant, T0) is None  # below the threshold now: nothing to do


class ChattyModel(ScriptedModel):
    """Answers every awake turn with say then noop, every summary with a short text."""

    def complete(self, request):
        self.requests.append(request)
        names = {t["function"]["name"] for t in request.tools}
        if not names:
            return summarised("They talked a lot; nothing else matters.")
        if "say" not in names:
            return reply(("noop", {}))
        if request.messages[-1]["role"] == "tool":
            return reply(("noop", {}))
        return reply(("say", {"text": "Indeed " * 60}))


def test_no_request_ever_exceeds_the_budget_over_many_ticks():
    model = ChattyModel()
    budget = 5000
    assistant = make_assistant(model, max_context_tokens=budget, compact_preserve_window=8)
    for i in range(60):
        hear(assistant, "Aria, " + "tell me more " * 40, now=T0 + timedelta(seconds=5 * i))
        run_tick(assistant, T0 + timedelta(seconds=5 * i + 1))
    sizes = [assistant.counter.count_request(r.messages, r.tools) for r in model.requests]
    assert len(sizes) > 120
    assert max(sizes) <= budget
    summaries = [r for r in model.requests if not r.tools]
    assert summaries, "the history must have been compacted along the way"


def test_a_dozen_long_lines_on_a_small_window_never_make_it_mute():
    # the lines waiting cannot fit beside the prompt, tools and core memory: the oldest are
    # answered first, the newer stay queued for the next turn (and it is told so)
    fixed = make_assistant(ScriptedModel()).fixed_tokens()
    budget = fixed + 1200
    model = ChattyModel()
    assistant = make_assistant(model, max_context_tokens=budget, compact_preserve_window=4)
    lines = [f"Aria, line {i}: " + "the bridge over the river is old " * 25 for i in range(12)]
    for i, line in enumerate(lines):
        hear(assistant, line, now=T0 + timedelta(seconds=i))
    outcomes = []
    for tick in range(40):
        if not len(assistant.events):
            break
        outcomes.append(run_tick(assistant, T0 + timedelta(seconds=20 + 5 * tick)))
    assert not len(assistant.events), "every line was answered"
    assert all(o is None or o.stop_reason != "over_budget" for o in outcomes)
    turns = [r for r in model.requests if "say" in {t["function"]["name"] for t in r.tools}]
    first = turns[0].messages[-1]["content"]
    assert "line 0:" in first and "line 11:" not in first
    assert "later lines wait for your next turn" in first
    sizes = [assistant.counter.count_request(r.messages, r.tools) for r in model.requests]
    assert max(sizes) <= budget
    answered = [o for o in outcomes if o is not None and o.events]
    assert sum(len(o.events) for o in answered) == 12  # each line answered once


def test_a_single_line_too_long_to_fit_is_cut_and_answered():
    fixed = make_assistant(ScriptedModel()).fixed_tokens()
    model = ChattyModel()
    assistant = make_assistant(model, max_context_tokens=fixed + 400, max_event_chars=8000)
    hear(assistant, "Aria, " + "listen to this long tale of mine " * 200)
    outcome = run_tick(assistant)
    assert outcome.stop_reason != "over_budget" and not len(assistant.events)
    shown = model.requests[0].messages[-1]["content"]
    assert "[cut: " in shown and "more characters]" in shown


def test_over_budget_request_is_not_sent_and_events_stay():
    assistant = make_assistant(ScriptedModel(), max_context_tokens=1000)
    hear(assistant, "Aria?")
    outcome = run_tick(assistant)
    assert outcome.stop_reason == "over_budget"
    assert assistant.client_factory().requests == []
    assert len(assistant.events) == 1
    assert assistant.usage().errors == {"context_budget": 1}


# ---- core memory -----------------------------------------------------------------------------------


def test_core_memory_injected_after_system_prompt_within_budget():
    model = ScriptedModel(
        reply(("memory_edit", {"operation": "set", "key": "owner", "value": "Mira runs the inn"})),
        reply(("noop", {})),
        reply(("noop", {})),
    )
    assistant = make_assistant(model)
    hear(assistant, "Aria, remember I own the inn")
    run_tick(assistant)
    hear(assistant, "Aria?", now=T0 + timedelta(seconds=5))
    run_tick(assistant, T0 + timedelta(seconds=6))
    messages = model.requests[-1].messages
    assert messages[0]["role"] == "system" and "You are Aria" in messages[0]["content"]
    assert (
        messages[1]["role"] == "system" and "- owner: Mira runs the inn" in messages[1]["content"]
    )


def test_core_memory_set_over_budget_is_refused_with_numbers():
    assistant = make_assistant(memory_block_tokens=60)
    core = assistant.core_memory
    core.set("a", "short note", T0, 60)
    with pytest.raises(
        CoreMemoryFull, match=r"would use \d+ tokens of notes, over its budget of 60"
    ):
        core.set("b", "a much longer note " * 10, T0, 60)
    assert list(core.items()) == ["a"]


def test_memory_edit_tool_operations():
    model = ScriptedModel(
        reply(
            ("memory_edit", {"operation": "list"}),
            ("memory_edit", {"operation": "set", "key": "k", "value": "v"}),
            ("memory_edit", {"operation": "set", "key": "big", "value": "x " * 400}),
            ("memory_edit", {"operation": "remove", "key": "nope"}),
            ("memory_edit", {"operation": "set", "key": "k"}),
            ("memory_edit", {"operation": "remove", "key": "k"}),
        ),
        reply(("noop", {})),
    )
    assistant = make_assistant(model, memory_block_tokens=100)
    hear(assistant, "Aria?")
    results = [c["result"] for c in run_tick(assistant).tool_calls]
    assert results[0].startswith("Core memory is empty (budget 100 tokens)")
    assert results[1].startswith("Saved 'k' (")
    assert "over its budget of 100" in results[2]
    assert "there is no core memory 'nope'" in results[3]
    assert "'set' needs a value" in results[4]
    assert results[5].startswith("Removed 'k'")
    assert assistant.core_memory.items() == {}


def test_memory_edit_not_offered_during_extraction():
    assistant = make_assistant()
    assert "memory_edit" not in assistant.registry.names("pre_compaction")


def test_prompt_order_system_core_summary_history():
    model = ScriptedModel(summarised("S."), reply(("noop", {})))
    assistant = make_assistant(model, compact_preserve_window=3)
    assistant.core_memory.set("k", "v", T0, 2000)
    with_history(assistant, 3)
    run(compact_history(assistant, T0, force=True))
    hear(assistant, "Aria?")
    run_tick(assistant)
    roles = [m["role"] for m in model.requests[-1].messages]
    contents = [m.get("content") or "" for m in model.requests[-1].messages]
    assert roles[:3] == ["system", "system", "system"]
    assert contents[1].startswith("Core memory") and contents[2].startswith(SUMMARY_PREFIX)
    assert roles[-1] == "user"


def test_fifty_message_reference_shape_reduction():
    """The reference example: 50 messages (~70,000 tokens) -> 21 messages (~15,000), 78%."""
    from ai_assistant.llm.tokens import TokenCounter

    counter = TokenCounter()
    from bench.cases import reference_fifty_message_shape

    old, recent = reference_fifty_message_shape()
    model = ScriptedModel(summarised("A summary of the old conversation. " * 20))
    assistant = make_assistant(model, max_context_tokens=100000)
    assistant.history.extend(old + recent)
    before = assistant.history.tokens()
    assert 60000 < before < 80000
    report = run(compact_history(assistant, T0, force=True))
    after = assistant.history.tokens()
    assert len(assistant.history) == 21 and report["compacted"] == 30
    reduction = 1 - after / before
    assert reduction >= 0.78
    assert counter.count_messages(assistant.history.all()) <= 16000


def test_pending_tokens_equals_a_full_recount():
    model = ScriptedModel(summarised("S."))
    assistant = make_assistant(model, compact_preserve_window=3)
    assistant.core_memory.set("k", "v", T0, 2000)
    with_history(assistant, 4)
    pending = [{"role": "user", "content": "new events here"}]
    full = assistant.request_tokens(assistant.build_request(pending))
    assert assistant.pending_tokens(pending) == full
    run(compact_history(assistant, T0, force=True))
    assert assistant.pending_tokens(pending) == assistant.request_tokens(
        assistant.build_request(pending)
    )


def test_transcript_names_the_tools_the_assistant_called():
    messages = [
        {"role": "user", "content": "Bob says: hello"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "say", "arguments": '{"text": "Hi Bob"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "said"},
    ]
    lines = render_transcript(messages).splitlines()
    assert lines == [
        "user: Bob says: hello",
        'assistant: [called say({"text": "Hi Bob"})]',
        "tool result: said",
    ]
