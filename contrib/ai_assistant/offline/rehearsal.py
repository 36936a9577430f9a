"""
The offline rehearsal model: a deterministic responder for `LocalModelServer` that picks tools
by simple rules, so a newcomer can watch the whole loop (events in, tool calls out, journal,
tokens) without a key. It is not intelligence and never claims to be: its speech says it is
rehearsing.

Rules, applied to the newest event addressed to the assistant:

- after tool results come back, it ends the turn with `noop`;
- "my name is X" / "call me X": greets X by name, journals it (heard from the speaker) and notes
  it as an observation of the speaker;
- "critical: ..." / "urgent: ..." (or "important: ..."): bookmarks what follows with salience
  3 (or 2) and says so;
- "remember ...": journals what follows, heard from the speaker;
- "wait" / "give me a minute": `wait` for a minute;
- "go to sleep" / "get some rest": `go_to_sleep` for two hours, light; a refusal that comes back
  is said aloud;
- a whisper or page: whispers back (a page cannot be answered aloud);
- asleep, in a sleep turn (its tools are `wake_up` and `stay_asleep`): wakes when what it
  heard names help, fire, danger, an emergency or an attack, is a whisper, a page or a
  builder's instruction, or brought back a reminder; else stays asleep;
- "do you remember ...": says the first memory recalled into the turn's message, or that
  nothing comes back; what another assistant told it is said with its chain ("Aria told me
  that Tobin said: ..."), and the game's lore as what it knows of the world;
- "tell <assistant> about ...", when `tell` is offered (gossip on): tells that assistant the
  first memory recalled into the turn's message, by its id, or says it has nothing to tell;
- "share ... with the <group>", when `share_with_group` is offered (group sharing on): shares
  the first memory recalled into the turn's message with that group, by its id; what a fellow
  member of a group reported is said with who reported it ("Brann of the guards reported to
  me that Mira said: ...");
- a notice from the game (a wait is over): says it is ready again; a scene's opening notice:
  asks its partner, by name, for news (`shell/scenes.py`); a line said to it in a scene: says
  its best recalled memory back to the speaker, by name;
- a reminder riding in the turn's message (a trigger fired): says the first one aloud (whispers
  it in a private exchange);
- anything else addressed to it: says a templated acknowledgement quoting what it heard;
- a builder's instruction is never said aloud: it does what the rules above give without the
  speech, or notes it with `noop`.

What it says back is in its own voice: the speaker's "my key" is "your key" (`_in_my_voice`);
what it journals keeps the speaker's words as theirs ("Mira asked me to remember: my key ...").

The relationships step (`sleep.relationships`) is answered by keyword: an item whose evidence
allows it raises warmth (and, a deed, trust) by 1 when it is kind (help, thanks, please, brought,
mended ...), lowers it when unkind (stole, lied, attacked ...), citing those items.

Context upkeep is answered by rule as well: the pre-compaction prompt gets one journal entry
naming who was heard, and the compaction summary (a structured request) gets a templated one.

Structured requests (sleep-time work) are answered by rule too: importance scores from the
heuristic of `memory.importance` (plus two for what someone told it), facts that are the
entries' own text, one attribute per observation of a person (typed by a keyword), one
reflection naming who told it the most, and a daily digest counting the day's entries, naming
who was heard from and keeping the first entries as its facts.

"""

import html
import json
import re

import threading

from ..memory.importance import heuristic_importance
from ..prompt import SCENE_ANSWER
from .replies import Reply, ResponderClient, text_reply, tool_call, tool_reply

# the model name requests carry and status shows in rehearsal mode
REHEARSAL_MODEL = "offline-rehearsal"
# how a recalled lore entry's text begins (`memory.lore.LoreRecalled.line`)
LORE_LINE = "You know that: "

_EVENT_RE = re.compile(
    r'<event type="(?P<type>\w+)" from="(?P<speaker>[^"]*)"[^>]*?'
    r'(?P<to_you> to_you="\w+")?>(?P<text>.*?)</event>',
    re.DOTALL,
)
_NAME_RE = re.compile(r"\b(?i:my name is|call me|i am|i'm)\s+([A-Z][\w'-]{1,30})")
_REMEMBER_RE = re.compile(r"\bremember(?: that)?\s+(.{3,300})", re.IGNORECASE)
_SELF_NAME_RE = re.compile(r"You are ([^,\n]{1,80}), a character")
_SCENE_RE = re.compile(r"open a short exchange with (?P<partner>[^:]{1,80}):")
_ENTRY_RE = re.compile(
    r'<entry id="(?P<id>[^"]+)"(?: source="(?P<source>[^"]*)")?(?: heard_from="(?P<heard>[^"]*)")?>'
    r"(?P<text>.*?)</entry>",
    re.DOTALL,
)
_PERSON_RE = re.compile(
    r'<person id="(?P<id>[^"]+)" name="(?P<name>[^"]*)">(?P<body>.*?)</person>', re.DOTALL
)
# a person of the relationships step (`sleep.relationships`) and the day's items
_FEELING_PERSON_RE = re.compile(
    r'<person id="(?P<id>[^"]+)" name="[^"]*" familiarity="[^"]*"[^>]*>(?P<body>.*?)</person>',
    re.DOTALL,
)
_FEELING_ITEM_RE = re.compile(
    r'<item id="(?P<id>[^"]+)" kind="(?P<kind>\w+)" evidence="(?P<evidence>[^"]*)">'
    r"(?P<text>.*?)</item>",
    re.DOTALL,
)
_KIND_RE = re.compile(
    r"\b(help\w*|thank\w*|please|gave|brought|bring\w*|return\w*|kept|kind\w*|gift\w*|share\w*|"
    r"mend\w*|carr\w*|fix\w*|saved)\b",
    re.I,
)
_UNKIND_RE = re.compile(
    r"\b(stole|steal\w*|lie[ds]?|lying|broke|attack\w*|rude|insult\w*|threat\w*)\b", re.I
)
_OBSERVATION_RE = re.compile(
    r'<observation id="(?P<id>[^"]+)"[^>]*?(?: heard_from="(?P<heard>[^"]*)")?>(?P<text>.*?)</observation>',
    re.DOTALL,
)
_RECALL_RE = re.compile(
    r"\b(do you remember|what do you (?:remember|know)|what did (?:i|we) tell you)\b", re.I
)
_REMEMBERED_RE = re.compile(
    r"^- \[(?!reminder t\d)(?P<tags>[^\]]*)\] (?P<text>.+?)(?: \(id (?P<id>[^)\s]+)\))?$",
    re.MULTILINE,
)
_TELL_RE = re.compile(r"\btell (?P<to>[A-Z][\w'-]{1,30}) (?:about|what you know about)\b", re.I)
# a memory another assistant told: "Aria told you that Tobin said"
_TOLD_RE = re.compile(r"^(?P<who>[^;]+?) told you (?P<chain>that [^;]+)")
_SHARE_RE = re.compile(r"\bshare\b.*?\bwith (?:the |your )?(?P<group>[a-z][\w'-]{0,39})\b", re.I)
# what a fellow member of a group reported: "Brann of the guards reported that Mira said"
_REPORTED_RE = re.compile(r"^(?P<who>[^;]+? of the [^;]+?) reported (?P<chain>that [^;]+)")
_BOOKMARK_RE = re.compile(r"\b(?P<level>critical|urgent|important)\s*:\s*(?P<what>.{3,300})", re.I)
_REMINDER_RE = re.compile(
    r"^- \[reminder t\d+, set by .{1,200}?, when '.{1,200}?' comes up\] (?P<text>.+)$",
    re.MULTILINE,
)
_NOTE_RE = re.compile(r'<note key="(?P<key>[^"]*)"[^>]*>(?P<value>.*?)</note>')
_CANDIDATE_RE = re.compile(
    r'<candidate id="(?P<id>[^"]+)" kind="(?P<kind>[^"]+)"[^>]*>(?P<text>.*?)</candidate>'
)
_CORE_LIMITS_RE = re.compile(r"at most (\d+) notes, about (\d+) tokens")
_URGENT_RE = re.compile(r"\b(help|fire|danger|emergency|attack\w*)\b", re.I)
# the speaker's words in the assistant's voice: "my key" said to it is "your key" said back
_VOICE = {
    "i": "you",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "i'm": "you're",
    "i've": "you've",
    "i'll": "you'll",
    "i'd": "you'd",
    "am": "are",
    "we": "you",
    "us": "you",
    "our": "your",
    "ours": "yours",
    "you": "I",
    "your": "my",
    "yours": "mine",
    "yourself": "myself",
    "you're": "I'm",
    "you've": "I've",
    "you'll": "I'll",
    "you'd": "I'd",
}
_VOICE_RE = re.compile(
    r"\b(?:" + "|".join(sorted(map(re.escape, _VOICE), key=len, reverse=True)) + r")\b", re.I
)
_SLEEP_RE = re.compile(r"\b(go to sleep|get some rest|go (?:and )?rest|take a rest)\b", re.I)


def _asks_for_summary(request: dict) -> bool:
    """Whether a structured request is the compaction summary (by its schema's name, or in JSON
    mode by the schema in the prompt)."""
    schema = request["response_format"].get("json_schema") or {}
    if schema.get("name"):
        return schema["name"] == "CompactionSummary"
    return '"open_threads"' in str(request["messages"][-1].get("content") or "")


class RehearsalResponder:
    """Deterministic replies by rule (see module doc)."""

    def __init__(self):
        self.requests = 0

    def respond(self, request: dict) -> Reply:
        """Answer a chat request by rule, with no model.

        Structured requests (the compaction summary among them), requests after tool results
        and memory upkeep each get their own answer. Otherwise it answers the last event addressed to
        it with tool calls chosen by keyword (recall, a name, "remember", sleep, wait, ...),
        or calls `noop` when no event is addressed to it.

        Args:
            request (dict): The request's JSON body.

        Returns:
            Reply: The reply.

        """
        self.requests += 1
        messages = request.get("messages", [])
        offered = {tool.get("function", {}).get("name") for tool in request.get("tools") or ()}
        if "wake_up" in offered:
            return self._sleep_turn(messages)
        if request.get("response_format"):
            if _asks_for_summary(request):
                return self._summary(messages)
            return self._structured(request)
        if not messages or messages[-1].get("role") == "tool":
            return self._after_tools(messages)
        if "[Memory upkeep]" in (messages[-1].get("content") or ""):
            return self._upkeep(messages)
        system = messages[0].get("content", "") if messages[0].get("role") == "system" else ""
        match = _SELF_NAME_RE.search(system)
        myself = match.group(1) if match else "the assistant"
        events = [m for m in _EVENT_RE.finditer(messages[-1].get("content") or "")]
        addressed = [m for m in events if m.group("to_you")]
        if not addressed:
            return tool_reply(tool_call("noop", {"reason": "nothing addressed to me"}))
        event = addressed[-1]
        speaker = html.unescape(event.group("speaker"))
        text = html.unescape(event.group("text"))
        if _RECALL_RE.search(text):
            return tool_reply(self._recollection(event.group("type"), speaker, messages[-1]))
        if SCENE_ANSWER in (messages[-1].get("content") or "") and event.group("type") == "say":
            return tool_reply(self._scene_line(speaker, messages[-1]))
        tell = _TELL_RE.search(text)
        if tell and "tell" in offered:
            return tool_reply(self._telling(tell.group("to"), speaker, messages[-1]))
        share = _SHARE_RE.search(text)
        if share and "share_with_group" in offered:
            return tool_reply(self._sharing(share.group("group"), messages[-1]))
        reminder = _REMINDER_RE.search(messages[-1].get("content") or "")
        reminded = html.unescape(reminder.group("text")) if reminder else None
        if event.group("type") == "instruction":
            return tool_reply(*self._instructed(speaker, text, myself))
        return tool_reply(*self._calls_for(event.group("type"), speaker, text, myself, reminded))

    @staticmethod
    def _sleep_turn(messages: list[dict]) -> Reply:
        """Asleep, asked whether what it heard needs it awake: wake for an urgent word, a
        direct message or a reminder; else stay asleep."""
        content = (messages[-1].get("content") or "") if messages else ""
        events = list(_EVENT_RE.finditer(content))
        for event in events:
            words = html.unescape(event.group("text"))
            urgent = _URGENT_RE.search(words)
            if urgent:
                reason = f"I heard '{urgent.group(0)}' (rehearsal)"
                return tool_reply(tool_call("wake_up", {"reason": reason}))
            if event.group("type") in ("whisper", "page", "instruction"):
                who = html.unescape(event.group("speaker"))
                reason = f"a {event.group('type')} from {who} (rehearsal)"
                return tool_reply(tool_call("wake_up", {"reason": reason}))
        if _REMINDER_RE.search(content):
            return tool_reply(tool_call("wake_up", {"reason": "a reminder came up (rehearsal)"}))
        return tool_reply(tool_call("stay_asleep", {"reason": "it can wait (rehearsal)"}))

    @staticmethod
    def _remembered(message: dict) -> list:
        """The memories recalled into the turn's message, best first (matches of
        `_REMEMBERED_RE`: tags, text and id when shown)."""
        section = (message.get("content") or "").split("What you remember", 1)
        return list(_REMEMBERED_RE.finditer(section[1])) if len(section) > 1 else []

    def _telling(self, to: str, speaker: str, message: dict) -> dict:
        """Tell another assistant the best recalled memory, by its id; or say there is none."""
        found = [m for m in self._remembered(message) if m.group("id")]
        if not found:
            return tool_call("say", {"text": f"I have nothing to tell {to}. (rehearsal)"})
        best = found[0]
        words = f"{to}, {speaker} asked me to pass this on: {html.unescape(best.group('text'))}"
        return tool_call(
            "tell", {"to": to, "memory_id": best.group("id"), "text": f"{words[:470]} (rehearsal)"}
        )

    def _sharing(self, group: str, message: dict) -> dict:
        """Share the best recalled memory with a group, by its id; or say there is none."""
        found = [m for m in self._remembered(message) if m.group("id")]
        if not found:
            return tool_call(
                "say", {"text": f"I have nothing to share with the {group}. (rehearsal)"}
            )
        return tool_call("share_with_group", {"memory_id": found[0].group("id"), "group": group})

    @classmethod
    def _scene_line(cls, speaker: str, message: dict) -> dict:
        """Answer another character in a scene with the best recalled memory, by name."""
        remembered = cls._remembered(message)
        if not remembered:
            return tool_call("say", {"text": f"{speaker}, nothing new with me. (rehearsal)"})
        text = html.unescape(remembered[0].group("text"))[:300]
        return tool_call("say", {"text": f"{speaker}, that reminds me: {text} (rehearsal)"})

    @classmethod
    def _recollection(cls, event_type: str, speaker: str, message: dict) -> dict:
        """Say the best recalled memory of the turn's message, or that nothing comes back."""
        remembered = cls._remembered(message)
        words = "Nothing comes back to me about that. (rehearsal)"
        if remembered:
            text = html.unescape(remembered[0].group("text"))
            tags = html.unescape(remembered[0].group("tags"))
            told = _TOLD_RE.match(tags)
            reported = _REPORTED_RE.match(tags)
            if told:
                # another assistant told it: say who, and whose words they were
                text = f"{told.group('who')} told me {told.group('chain')}: {text}"
            elif reported:
                # a fellow member of its group reported it (`memory.groups`)
                text = f"{reported.group('who')} reported to me {reported.group('chain')}: {text}"
            words = f"I remember this: {text} (rehearsal)"
            if text.startswith(LORE_LINE):
                # the game's lore (`memory.lore`): known, not told by anyone
                words = f"I know this of our world: {text.removeprefix(LORE_LINE)} (rehearsal)"
        if event_type in ("whisper", "page"):
            return tool_call("whisper", {"target": speaker, "text": words})
        return tool_call("say", {"text": words})

    @staticmethod
    def _speakers(text: str) -> list[str]:
        return sorted(set(html.unescape(name) for name in re.findall(r'from="([^"]+)"', text)))

    def _summary(self, messages: list[dict]) -> Reply:
        transcript = next(
            (m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), ""
        )
        lines = [line for line in transcript.splitlines() if line.strip()]
        said = re.findall(r'"text": "([^"\\]{1,60})', transcript)
        speakers = self._speakers(transcript)
        people = ", ".join(speakers) or "no one"
        text = (
            f"(rehearsal summary) {len(lines)} earlier lines of conversation with {people}. "
            f"Things said in reply included: {'; '.join(said[-3:]) or 'nothing'}."
        )
        summary = {
            "summary": text,
            "people": [f"{name}: spoke with me (rehearsal)" for name in speakers[:20]],
            "open_threads": [],
            "key_facts": [],
        }
        return text_reply(json.dumps(summary))

    def _upkeep(self, messages: list[dict]) -> Reply:
        history = "\n".join(str(m.get("content") or "") for m in messages)
        people = ", ".join(self._speakers(history)) or "no one"
        return tool_reply(
            tool_call(
                "add_journal_entry",
                {
                    "content": f"Before my memory was compacted, I had been talking with {people}.",
                    "importance": 5,
                    "tags": ["upkeep"],
                },
            )
        )

    @staticmethod
    def _after_tools(messages: list[dict]) -> Reply:
        results = {
            m.get("tool_call_id"): m.get("content", "") for m in messages if m.get("role") == "tool"
        }
        calls = next(
            (m.get("tool_calls") or [] for m in reversed(messages) if m.get("role") == "assistant"),
            [],
        )
        for call in calls:
            result = results.get(call.get("id"), "")
            if call["function"]["name"] == "go_to_sleep" and result.startswith("Error"):
                refusal = result.split("you cannot sleep now.", 1)[-1].strip()
                return tool_reply(
                    tool_call("say", {"text": f"I cannot rest yet. {refusal} (rehearsal)"})
                )
        return tool_reply(tool_call("noop", {"reason": "rehearsal turn complete"}))

    @staticmethod
    def _structured(request: dict) -> Reply:
        fmt = request["response_format"]
        name = (fmt.get("json_schema") or {}).get("name", "")
        text = "\n".join(str(m.get("content") or "") for m in request.get("messages", []))
        if not name:  # JSON mode: the schema is in the prompt
            for candidate, marker in (
                ("DayDigest", '"people_met"'),
                ("ImportanceScores", '"scores"'),
                ("EntitySynthesis", '"entities"'),
                ("Reflection", '"insights"'),
                ("ConsolidatedCore", '"notes"'),
                ("RelationshipUpdate", '"warmth_cites"'),
            ):
                if marker in text:
                    name = candidate
                    break
            name = name or "FactExtraction"
        data = request["messages"][-1].get("content") or ""
        if name == "EntitySynthesis":
            return text_reply(json.dumps({"entities": _attributes(data)}))
        if name == "RelationshipUpdate":
            return text_reply(json.dumps({"people": _feelings(data)}))
        if name == "Reflection":
            return text_reply(json.dumps({"insights": _insights(data)}))
        if name == "ConsolidatedCore":
            return text_reply(json.dumps({"notes": _core_notes(text, data)}))
        if name == "DayDigest":
            return text_reply(json.dumps(_digest(data)))
        entries = list(_ENTRY_RE.finditer(data))
        if not entries:
            entries = list(_ENTRY_RE.finditer(text))
        if name == "ImportanceScores":
            scores = [
                {
                    "entry_id": m.group("id"),
                    "importance": min(
                        10,
                        heuristic_importance(html.unescape(m.group("text")))
                        + (2 if m.group("heard") else 0),
                    ),
                }
                for m in entries
            ]
            return text_reply(json.dumps({"scores": scores}))
        facts = []
        for m in entries:
            content = html.unescape(m.group("text")).strip()
            if ":" in content and "remember" in content.lower():
                content = content.split(":", 1)[1].strip()
                content = content[0].upper() + content[1:]
            if m.group("heard") and re.match(r"(i|i'm|i've|i'd|i'll|me|my)\b", content, re.I):
                # someone's own words are theirs: "I" is the speaker, not the assistant
                content = f"{html.unescape(m.group('heard'))} said: {content}"
            facts.append({"entry_id": m.group("id"), "facts": [content.rstrip(".") + "."]})
        return text_reply(json.dumps({"entries": facts}))

    @staticmethod
    def _calls_for(
        event_type: str, speaker: str, text: str, myself: str, reminder: str | None = None
    ) -> list[dict]:
        private = event_type in ("whisper", "page")

        def speak(words: str) -> dict:
            if private:
                return tool_call("whisper", {"target": speaker, "text": words})
            return tool_call("say", {"text": words})

        if event_type == "notice":  # the game tells it something, e.g. its wait is over
            scene = _SCENE_RE.search(text)
            if scene:  # a scene opens: a line to its partner, by name
                partner = scene.group("partner")
                return [tool_call("say", {"text": f"{partner}, what news today? (rehearsal)"})]
            return [tool_call("say", {"text": "I am ready again. (rehearsal)"})]
        if reminder:  # a trigger fired: what it was set for comes first
            return [speak(f"{speaker}, a reminder: {reminder.rstrip('.')}. (rehearsal)")]
        name = _NAME_RE.search(text)
        if name:
            given = name.group(1)
            return [
                speak(f"Welcome, {given}. I will remember your name. (rehearsal)"),
                tool_call(
                    "add_journal_entry",
                    {
                        "content": f"{speaker} told me their name is {given}.",
                        "heard_from": speaker,
                        "tags": ["names"],
                    },
                ),
                tool_call(
                    "update_entity_observation",
                    {"entity": speaker, "observation": f"Introduced themselves as {given}."},
                ),
            ]
        bookmark = _BOOKMARK_RE.search(text)
        if bookmark:
            what = bookmark.group("what").strip().rstrip(".!")
            salience = 2 if bookmark.group("level").lower() == "important" else 3
            return [
                speak(f"I have bookmarked that, {speaker}: {_in_my_voice(what)}. (rehearsal)"),
                tool_call(
                    "bookmark", {"text": f"{speaker} warned me: {what}.", "salience": salience}
                ),
            ]
        remember = _REMEMBER_RE.search(text)
        if remember:
            fact = remember.group(1).strip().rstrip(".!")
            return [
                speak(f"Noted, {speaker}: {_in_my_voice(fact)}. (rehearsal)"),
                tool_call(
                    "add_journal_entry",
                    {
                        "content": f"{speaker} asked me to remember: {fact}",
                        "heard_from": speaker,
                        "importance": 7,
                    },
                ),
            ]
        if _SLEEP_RE.search(text):
            return [
                tool_call(
                    "go_to_sleep",
                    {
                        "duration_hours": 2,
                        "depth": "light",
                        "reason": f"{speaker} suggested I rest",
                    },
                )
            ]
        if re.search(r"\b(wait|give me a minute|one moment)\b", text, re.IGNORECASE):
            return [
                speak("Of course, I will wait. (rehearsal)"),
                tool_call("wait", {"minutes": 1, "reason": f"{speaker} asked me to wait"}),
            ]
        quoted = text if len(text) <= 80 else text[:77] + "..."
        return [speak(f'{myself} heard you, {speaker}: "{quoted}" (rehearsal model)')]

    @classmethod
    def _instructed(cls, speaker: str, text: str, myself: str) -> list[dict]:
        """A builder's instruction is for the assistant, not for the room: it does what the
        rules give without a word aloud, or notes it with `noop`."""
        calls = [
            call
            for call in cls._calls_for("instruction", speaker, text, myself)
            if call["function"]["name"] not in ("say", "whisper", "emote")
        ]
        quoted = text if len(text) <= 80 else text[:77] + "..."
        return calls or [
            tool_call("noop", {"reason": f'instruction noted: "{quoted}" (rehearsal)'})
        ]


def _in_my_voice(text: str) -> str:
    """A speaker's words turned for the assistant to say back: "my vault code" is "your vault
    code", "you owe me" is "I owe you" (word by word: simple rules, as the whole model is)."""

    def turned(match: re.Match) -> str:
        word = match.group(0)
        said = _VOICE[word.lower()]
        if word.lower() == "you" and match.start() > 0:
            # "you" after a verb or a preposition is an object: "told you" is "told me"
            before = text[: match.start()].rstrip()
            if before and before[-1].isalpha() and not before.endswith((" and", " that")):
                said = "me"
        return said

    return _VOICE_RE.sub(turned, text)


def _attributes(data: str) -> list[dict]:
    """One attribute per observation, typed by a keyword; told things stay the teller's."""
    people = []
    for person in _PERSON_RE.finditer(data):
        attributes = []
        for observation in _OBSERVATION_RE.finditer(person.group("body")):
            text = html.unescape(observation.group("text")).strip().rstrip(".")
            lowered = text.lower()
            if re.search(r"\b(likes?|loves?|prefers?|hates?|dislikes?)\b", lowered):
                kind = "preference"
            elif re.search(r"\b(friend|sister|brother|mother|father|cousin|works? for)\b", lowered):
                kind = "relationship"
            elif re.search(r"\b(is|seems|was) (a|an|very|quite)\b", lowered):
                kind = "trait"
            else:
                kind = "fact"
            if observation.group("heard"):
                text = f"{html.unescape(observation.group('heard'))} says: {text}"
            attributes.append(
                {"type": kind, "value": text + ".", "cites": [observation.group("id")]}
            )
        people.append({"entity_id": person.group("id"), "attributes": attributes[:5]})
    return people


def _feelings(data: str) -> list[dict]:
    """Warmth and trust by keyword: a kind deed raises both (+1), kind words warmth, an unkind
    one lowers them; each change cites only items whose evidence allows it."""
    people = []
    for person in _FEELING_PERSON_RE.finditer(data):
        change = {"person_id": person.group("id")}
        for dimension in ("warmth", "trust"):
            up, down = [], []
            for item in _FEELING_ITEM_RE.finditer(person.group("body")):
                if dimension not in item.group("evidence").split():
                    continue
                text = html.unescape(item.group("text"))
                if _UNKIND_RE.search(text):
                    down.append(item.group("id"))
                elif _KIND_RE.search(text):
                    up.append(item.group("id"))
            level = (1 if up else 0) - (1 if down else 0)
            change[dimension] = level
            change[f"{dimension}_cites"] = (up if level > 0 else down if level < 0 else [])[:10]
            change[f"{dimension}_reason"] = (
                ("rehearsal: kindness seen" if level > 0 else "rehearsal: unkindness seen")
                if level
                else ""
            )
        people.append(change)
    return people


def _core_notes(text: str, data: str) -> list[dict]:
    """Every note kept as it is, then the candidates, most important first, while the limits
    the prompt names allow (a token counted as 4 characters, with room to spare)."""
    limits = _CORE_LIMITS_RE.search(text)
    most, tokens = (int(limits.group(1)), int(limits.group(2))) if limits else (0, 0)
    notes = [
        {"key": html.unescape(m.group("key")), "value": html.unescape(m.group("value"))}
        for m in _NOTE_RE.finditer(data)
    ]
    used = sum(len(n["key"]) + len(n["value"]) + 6 for n in notes)
    for m in _CANDIDATE_RE.finditer(data):
        value = html.unescape(m.group("text"))[:300]
        cost = len(value) + 20
        if len(notes) >= most or (used + cost) / 4 > tokens * 0.8:
            break
        notes.append({"key": f"{m.group('kind')} {m.group('id')}", "value": value})
        used += cost
    return notes


def _digest(data: str) -> dict:
    """A day's digest: how many entries, who was heard from, the first entries as facts."""
    entries = list(_ENTRY_RE.finditer(data))
    people = list(
        dict.fromkeys(html.unescape(e.group("heard")) for e in entries if e.group("heard"))
    )
    texts = [" ".join(html.unescape(e.group("text")).split())[:300] for e in entries]
    return {
        "summary": f"A day of {len(entries)} journal entries"
        + (f", with {', '.join(people[:5])}" if people else "")
        + ". (rehearsal)",
        "people_met": people[:20],
        "open_threads": [text for text in texts if text.endswith("?")][:10],
        "new_facts": [text for text in texts if text][:5],
    }


def _insights(data: str) -> list[dict]:
    """One insight: who was heard from most, citing their entries."""
    entries = list(_ENTRY_RE.finditer(data))
    by_person: dict[str, list[str]] = {}
    for entry in entries:
        if entry.group("heard"):
            by_person.setdefault(html.unescape(entry.group("heard")), []).append(entry.group("id"))
    if not by_person:
        return []
    person, cites = max(by_person.items(), key=lambda item: len(item[1]))
    return [
        {
            "question": "Who has been telling me the most lately?",
            "insight": f"{person} has told me the most lately ({len(cites)} things); "
            f"what {person} says matters to my work. (rehearsal)",
            "cites": cites,
        }
    ]


_client: ResponderClient | None = None
_client_lock = threading.Lock()


def rehearsal_client() -> ResponderClient:
    """The process's one rehearsal model, answering in process (no server, no port): every
    assistant's client when the game sets `AI_ASSISTANT_REHEARSAL` (see
    `assembly.build_brain`). Called from the model queue's worker threads, hence the lock.

    Returns:
        ResponderClient: A `ChatClient` over a `RehearsalResponder`.

    """
    global _client
    with _client_lock:
        if _client is None:
            _client = ResponderClient(RehearsalResponder())
        return _client
