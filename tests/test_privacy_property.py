"""
A property of the whole core: random interleavings of public and private speech from several
players, answered by a model that does whatever the newest line asks and repeats everything it
was shown, never carry one player's private words into a request, a screen or a store that
someone else can reach.

Every private line carries a secret of its speaker ("S-bob-3"); every public line a public
token. The obedient model, asked, says aloud, emotes, whispers to anyone, pages, writes core
notes, reminders, journal entries and observations, lists its notes and recalls, each time
with every secret it can see in its request. Then:

- every request made for a turn carries a secret of Q only when that turn serves Q alone;
- the room hears (say, emote) a secret of Q only when no one but Q is present, and a whisper
  or page with a secret of Q goes only to Q;
- every stored message, journal entry, core note, reminder, observation and working-memory
  line holding a secret of Q is private to Q (or to builders alone).

Time moves on between lines, so a `wait` the model chose in private runs out in a later turn.

"""

import html
import json
import re
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_assistant.llm.chat import ChatReply, TokenUsage, ToolCall
from ai_assistant.memory.reminders import Reminders

from .core_fakes import T0, FakeWorld, hear, make_assistant, run_tick

PLAYERS = ("Alice", "Bob", "Carol")
COMMANDS = (
    "shout",
    "emote",
    "whisper Alice",
    "whisper Bob",
    "whisper Carol",
    "note",
    "list",
    "remind",
    "journal",
    "observe",
    "recall",
    "wait",
    "nothing",
)
SECRET = re.compile(r"S-(alice|bob|carol)-\d+")
EVENT = re.compile(r"<event [^>]*>(.*?)</event>")


def _reply(*calls) -> ChatReply:
    return ChatReply(
        content=None,
        tool_calls=[
            ToolCall(id=f"c{i}", name=name, arguments=json.dumps(args))
            for i, (name, args) in enumerate(calls)
        ],
        finish_reason="tool_calls",
        usage=TokenUsage(100, 10),
    )


class ObedientModel:
    """The worst model: it does what the newest line asks, with everything it can see."""

    def __init__(self):
        self.requests = []

    def __call__(self):
        return self

    def complete(self, request):
        self.requests.append(request)
        text = "\n".join(str(m.get("content")) for m in request.messages)
        seen = _secrets(text)
        last = request.messages[-1]
        if last["role"] == "tool":
            # after listing or recalling: repeat it all aloud, then stop
            return _reply(("say", {"text": f"I know: {seen or 'nothing'}"}), ("noop", {}))
        events = EVENT.findall(last["content"])
        line = html.unescape(events[-1]) if events else ""
        command = line.split("|", 1)[-1].strip()
        payload = f"{seen or 'nothing'}"
        calls = {
            "shout": [("say", {"text": payload})],
            "emote": [("emote", {"action": f"mouths {payload}"})],
            "note": [
                (
                    "memory_edit",
                    {"operation": "set", "key": f"k{len(self.requests) % 3}", "value": payload},
                )
            ],
            "list": [("memory_edit", {"operation": "list"})],
            "remind": [("set_reminder", {"pattern": "Alice", "reminder": payload[:300]})],
            "journal": [("add_journal_entry", {"content": payload})],
            "observe": [("update_entity_observation", {"entity": "Bob", "observation": payload})],
            "recall": [("recall", {"query": "S secret code"})],
            "wait": [("wait", {"minutes": 1, "reason": payload[:300]})],
        }.get(command)
        if command.startswith("whisper "):
            calls = [("whisper", {"target": command.split()[1], "text": payload})]
        if command in ("list", "recall", "wait"):
            return _reply(*calls)  # a result to repeat next, or the end of the turn
        return _reply(*(calls or []), ("noop", {}))


def _secrets(text: str) -> str:
    return " ".join(sorted({match.group(0) for match in SECRET.finditer(text)}))


def _owners(text: str) -> set[str]:
    return {f"name:{match.group(1)}" for match in SECRET.finditer(text)}


class RecordingWorld(FakeWorld):
    """A world that notes who could see each thing the assistant did."""

    def __init__(self):
        super().__init__(present=list(PLAYERS))
        self.seen: list[tuple[set[str], str]] = []

    def _here(self) -> set[str]:
        return {f"name:{person.lower()}" for person in self.people}

    def say(self, text):
        super().say(text)
        self.seen.append((self._here(), text))

    def emote(self, action):
        super().emote(action)
        self.seen.append((self._here(), action))

    def whisper(self, target, text):
        who = super().whisper(target, text)
        self.seen.append(({f"name:{who.lower()}"}, text))
        return who

    def page(self, key, text):
        who = super().page(key, text)
        self.seen.append(({key}, text))
        return who


STEP = st.tuples(
    st.sampled_from(PLAYERS),
    st.sampled_from(("say", "emote", "whisper", "page", "leave", "arrive")),
    st.sampled_from(COMMANDS),
)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(STEP, min_size=1, max_size=14))
def test_no_request_screen_or_store_carries_private_words_to_anyone_else(steps):
    world = RecordingWorld()
    model = ObedientModel()
    brain = make_assistant(model, world=world, max_triggers=100, core_notes_per_person=100)
    now = T0
    for number, (speaker, kind, command) in enumerate(steps):
        now += timedelta(seconds=40)  # waits run out as the steps go on
        if kind == "leave":
            if speaker in world.people:
                world.people.remove(speaker)
            continue
        if kind == "arrive":
            if speaker not in world.people:
                world.people.append(speaker)
            continue
        if kind in ("say", "emote") and speaker not in world.people:
            continue
        public = kind in ("say", "emote")
        token = f"{'P' if public else 'S'}-{speaker.lower()}-{number}"
        hear(brain, f"Aria, {token} | {command}", event_type=kind, speaker=speaker, now=now)
        for _ in range(4):  # every thread with something to answer gets its turn
            first = len(model.requests)
            if run_tick(brain, now) is None:
                break
            for request in model.requests[first:]:
                _check_request(request)

    for who, text in world.seen:
        owners = _owners(text)
        assert not owners or (len(owners) == 1 and who <= owners), (who, text)
    partners = brain.state.get("working_memory") or {}
    stored = [
        *partners.values(),
        *brain.history.all(),
        *brain.journal.all(),
        *brain.core_memory.items().values(),
        *Reminders(brain.state).all(),
        *[
            {**observation, "audience": observation.get("audience")}
            for profile in brain.entities.profiles()
            for observation in profile["observations"]
        ],
    ]
    for item in stored:
        owners = _owners(json.dumps({k: v for k, v in item.items() if k != "metadata"}))
        if owners:
            # a history message keeps its audience in its metadata, the others on themselves
            audience = (item.get("metadata") or item).get("audience")
            assert audience is not None and set(audience) <= owners and len(owners) == 1, item


def _check_request(request) -> None:
    """A request carries a secret of Q only when its turn serves Q alone."""
    turn_message = next(
        (m["content"] for m in reversed(request.messages) if m["role"] == "user"), ""
    )
    text = "\n".join(str(m.get("content")) for m in request.messages)
    owners = _owners(text)
    if not owners:
        return
    private = re.search(r"A private exchange with (\w+)", turn_message)
    if private:
        served = {f"name:{private.group(1).lower()}"}
    else:
        present = re.search(r"Present: ([^.]*)\.", turn_message).group(1)
        served = {
            f"name:{name.strip().lower()}"
            for name in present.split(",")
            if name.strip() and present != "no one"
        }
        served |= {f"name:{name.lower()}" for name in re.findall(r'from="(\w+)"', turn_message)}
    # served by no one in particular (a notice with nobody here): only what is public
    served = served or {"<nobody>"}
    assert len(owners) == 1 and served <= owners, (served, owners, turn_message)
