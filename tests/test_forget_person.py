"""
Forgetting a person (issue 31): everything an assistant holds of them goes (what they said,
what is about them, their whispers, what was drawn from those, their profile, relationship,
gossip, reminders and queued lines, their traces in snapshots); other people's memories stay;
what still names them is listed by id; a rollback does not bring them back.

"""

import json
from datetime import timedelta

import pytest

from ai_assistant.errors import Refused
from ai_assistant.events import Event
from ai_assistant.memory.core import KEY as CORE_KEY
from ai_assistant.memory.digests import DayDigest
from ai_assistant.memory.journal import REFLECTION_KIND
from ai_assistant.memory.relationships import Relationships
from ai_assistant.memory.snapshots import Snapshots, describe
from ai_assistant.memory_admin import MemoryAdmin
from ai_assistant.memory.reminders import Reminders

from .core_fakes import T0, make_assistant
from .test_snapshots import reloaded

# Bob's words and what is about him: none of it may be stored anywhere after he is forgotten
BOBS = (
    "lighthouse",
    "quillfeather",
    "marigolds",
    "brass buttons",
    "cheats at dice",
    "lantern oil",
    "silver compass",
    "ferry",
    "cobalt",
    "rowboat",
    "periwinkle",
)
BOB = {"keys": ["#12", "account#3"], "names": ["Bob", "Bobby"]}


class Admin(MemoryAdmin):
    def __init__(self, brain, now=T0 + timedelta(hours=14)):
        super().__init__(brain, now=lambda: now)


def dump(brain) -> str:
    return json.dumps([brain.memory_store.inner.data, brain.state.data]).lower()


def bobs_words_in(brain) -> list[str]:
    stored = dump(brain)
    return [word for word in BOBS if word in stored]


def remembering_bob(sleep: bool = True):
    """An assistant that knows Bob well: his words, a whisper of his, what Carol said of him,
    what was drawn from all that, his profile, relationship, gossip, a reminder and a queued
    line; and Carol's own memories. With `sleep`, a sleep began (its snapshot holds it all)."""
    brain = make_assistant(digest_enabled=False)
    journal = brain.journal

    def add(text, **kwargs):
        return journal.add(text, author="Aria", now=T0, importance=6, **kwargs)["id"]

    said = add(
        "The lighthouse key hides under the blue stone.",
        heard_from="Bob",
        voice="account#3",
        source_type="claim",
        about=["#12"],
        witnesses=["#12", "#13"],
    )
    whisper = add(
        "My secret name is Quillfeather.", heard_from="Bob", voice="account#3", audience=["#12"]
    )
    about = add("Carol says Bob owes her eleven marigolds.", heard_from="Carol", about=["#12"])
    told = add(
        "Mira told you that someone found a silver compass.",
        heard_from="Mira",
        voice="#40",
        gossip={"people": ["#12", "#40"], "origin": {"name": "Bobby", "key": "#12"}},
    )
    carols = add("The baker sells rye on Tuesdays.", heard_from="Carol", about=["#13"])
    naming = add("Carol saw Bob near the mill.", heard_from="Carol", about=["#13"])
    heard = add(
        "Carol sings at the well.", heard_from="Carol", witnesses=["#12", "#13"], about=["#13"]
    )
    reflection = add("Someone hides things by the lighthouse.", kind=REFLECTION_KIND, cites=[said])
    memory = brain.long_term.add(
        "Bob says the lighthouse key hides under the blue stone.",
        importance=7,
        now=T0,
        source_entry_ids=[said],
        provenance={"source_type": "claim", "heard_from": "Bob", "voice": "account#3"},
    )
    carols_memory = brain.long_term.add(
        "The baker sells rye on Tuesdays.",
        importance=5,
        now=T0,
        source_entry_ids=[carols],
        provenance={"source_type": "claim", "heard_from": "Carol"},
    )
    journal.update(
        [
            {**journal.get(said), "consolidated": True, "memory_ids": [memory]},
            {**journal.get(carols), "consolidated": True, "memory_ids": [carols_memory]},
        ]
    )
    brain.digests.add(
        DayDigest(summary="A day of talk about the lighthouse and the baker."),
        day="2026-01-01",
        audience=None,
        entries=[journal.get(said), journal.get(carols)],
        now=T0,
    )
    notes = {
        "harbour": {
            "key": "harbour",
            "value": "The lighthouse key is under a stone.",
            "recorded": "2026-01-01T00:00:00+00:00",
            "audience": None,
            "sources": [memory],
        },
        "rowing": {
            "key": "rowing",
            "value": "He wants a rowboat.",
            "recorded": "2026-01-01T00:00:00+00:00",
            "audience": None,
            "owners": {"#12": "Bob"},
        },
        "bread": {
            "key": "bread",
            "value": "Rye on Tuesdays.",
            "recorded": "2026-01-01T00:00:00+00:00",
            "audience": None,
            "owners": {"#13": "Carol"},
        },
    }
    brain.memory_store.set(CORE_KEY, notes)
    brain.entities.observe("#12", "Bob", "Bob collects brass buttons", now=T0, author="Aria")
    brain.entities.observe(
        "#13",
        "Carol",
        "Carol cheats at dice",
        now=T0,
        author="Aria",
        heard_from="Bob",
        source_type="claim",
    )
    brain.entities.observe("#13", "Carol", "Carol bakes rye", now=T0, author="Aria")
    Relationships(brain.memory_store).change(
        "#12", "Bob", "warmth", value=0.5, reason="shared his lantern oil", at=T0, by="sleep"
    )
    brain.gossip_log.add(
        {
            "at": "2026-01-01T00:00:00+00:00",
            "direction": "heard",
            "teller": "Mira",
            "text": "Bob found a silver compass",
            "people": ["#12", "#40"],
        }
    )
    Reminders(brain.state).add(
        "ferry",
        "ask Bob about the ferry",
        now=T0,
        by="Aria",
        limit=10,
        audience=["#12"],
        owners={"#12": "Bob"},
    )
    Reminders(brain.state).add("bread", "buy rye", now=T0, by="Aria", limit=10)
    brain.history.extend(
        [
            {"role": "user", "content": "Bob whispers: My secret name is Quillfeather."},
            {
                "role": "user",
                "content": '<event type="say" from="Bob" time="2026-01-01T12:00:00">My boat '
                'is painted periwinkle.</event><event type="say" from="Carol" '
                'time="2026-01-01T12:00:00">Nice day.</event>',
            },
        ]
    )
    if sleep:
        night = T0 + timedelta(hours=8)
        brain.lifecycle.go_to_sleep(
            night, reason="night", initiated_by="builder", enforce_safeguards=False
        )
        brain.lifecycle.wake_up(night + timedelta(hours=4), "morning")
    brain.events.push(
        Event(
            id=1,
            type="whisper",
            speaker="Bob",
            speaker_key="#12",
            text="Meet me at the cobalt door.",
            time="2026-01-01T13:00:00+00:00",
            audience=["#12"],
        ),
        50,
    )
    brain.events.push(
        Event(
            id=2,
            type="say",
            speaker="Carol",
            speaker_key="#13",
            text="Fine weather.",
            time="2026-01-01T13:00:00+00:00",
        ),
        50,
    )
    ids = dict(
        said=said,
        whisper=whisper,
        about=about,
        told=told,
        carols=carols,
        naming=naming,
        heard=heard,
        reflection=reflection,
        memory=memory,
        carols_memory=carols_memory,
    )
    return brain, ids


def test_forgetting_a_person_leaves_nothing_of_theirs_and_keeps_everyone_elses():
    brain, ids = remembering_bob(sleep=False)
    assert bobs_words_in(brain) == list(BOBS)  # all of it is stored before
    report = Admin(brain).forget_person("Bob", by="Ann", reason="he asked", keys=["account#3"])
    assert bobs_words_in(brain) == []
    # what was his, what was about him, his whisper, the told chain naming him, and what
    # rests on them: the reflection, the memory, the digest and the core note drawn from it
    for name in ("said", "whisper", "about", "told", "reflection", "memory"):
        assert ids[name] in report.forgotten
    assert "core:harbour" in report.forgotten and "core:rowing" in report.forgotten
    assert report.counts["digests"] == 1
    assert report.counts["profiles"] == 1 and report.counts["relationships"] == 1
    assert report.counts["gossip log records"] == 1
    assert report.counts["reminders"] == 1 and report.counts["queued lines"] == 1
    assert report.counts["the conversation history"] == 1
    assert "Nice day." in json.dumps(brain.history.all())  # Carol's line stays
    # nothing of his is recallable
    later = T0 + timedelta(days=1)
    for query in ("lighthouse key", "Quillfeather", "marigolds", "silver compass"):
        assert brain.recall(query, now=later, served=None, limit=20) == []
    assert brain.entities.profile("#12") is None and "#12" not in brain.entities.index()
    assert Relationships(brain.memory_store).get("#12") is None
    assert brain.gossip_log.records() == []
    assert [e.speaker for e in brain.events.peek()] == ["Carol"]
    assert [t["pattern"] for t in Reminders(brain.state).all()] == ["bread"]
    # the forgotten entries no longer say whose they were
    said = brain.journal.get(ids["said"])
    assert said["heard_from"] is None and "voice" not in said and said["about"] == []
    # everyone else's memories stay
    assert brain.journal.get(ids["carols"])["content"] == "The baker sells rye on Tuesdays."
    assert brain.long_term.get(ids["carols_memory"])["text"]
    assert "bread" in brain.core_memory.items()
    carol = brain.entities.profile("#13")
    assert [o["text"] for o in carol["observations"]] == ["Carol bakes rye"]
    assert brain.recall("baker rye", now=later, served=None, limit=5)
    # what still names him is listed, by id, never by its words
    assert report.remains["journal entries naming them"] == [ids["naming"]]
    assert ids["heard"] in report.remains["entries they heard (another's words)"]
    assert "near the mill" not in json.dumps(report.remains)
    # recorded as one correction: his keys and ids, never his words nor his name
    (record,) = brain.review.history()
    assert record["action"] == "forget_person" and "#12" in record["keys"]
    assert "account#3" in record["keys"] and record["by"] == "Ann"
    assert "bob" not in json.dumps(record).lower()  # neither his name nor a name key


def test_a_rollback_does_not_bring_a_forgotten_person_back():
    brain, ids = remembering_bob(sleep=True)
    assert "quillfeather" in json.dumps(brain.state.data).lower()  # the snapshot holds him
    Admin(brain).forget_person("Bob", by="Ann", keys=["account#3"])
    assert bobs_words_in(brain) == []  # not in the snapshots either
    result = Snapshots(brain.state).rollback("s1", brain.memory_store.inner)
    (kept,) = result["kept"]
    assert kept["action"] == "forget_person" and kept["text"] == ""
    assert describe(result)[-1].startswith("kept forgotten: the person #12 (by Ann at")
    assert bobs_words_in(brain) == []
    brain = reloaded(brain)
    assert brain.entities.profile("#12") is None and "#12" not in brain.entities.index()
    assert Relationships(brain.memory_store).get("#12") is None
    assert brain.gossip_log.records() == []
    later = T0 + timedelta(days=1)
    assert brain.recall("lighthouse Quillfeather", now=later, served=None, limit=20) == []
    assert brain.journal.get(ids["whisper"])["forgotten"]
    assert brain.journal.get(ids["carols"])["content"] == "The baker sells rye on Tuesdays."


def test_an_unknown_person_is_refused_naming_who_is_known_and_nothing_changes():
    brain, _ = remembering_bob(sleep=False)
    before = dump(brain)
    with pytest.raises(Refused) as err:
        Admin(brain).forget_person("Zed", by="Ann")
    assert "knows no one called 'Zed'" in str(err.value)
    assert "Bob" in str(err.value) and "Carol" in str(err.value)
    with pytest.raises(Refused):
        Admin(brain).forget_person("x" * 500, by="Ann")
    with pytest.raises(Refused):
        Admin(brain).forget_person(None, by="Ann")
    assert dump(brain) == before


def test_the_plan_counts_what_would_go_and_changes_nothing():
    brain, ids = remembering_bob(sleep=False)
    before = dump(brain)
    plan = Admin(brain).forget_person_plan("bob")
    assert plan["names"] == ["Bob"] and "#12" in plan["keys"]
    found = plan["found"]
    # his line, his whisper and the memory of his line; Carol's line about him; the chain
    assert found["said"] == 3 and found["about"] == 1 and found["gossip"] == 1
    assert found["profiles"] == 1 and found["relationships"] == 1
    assert dump(brain) == before


def test_a_name_heard_but_never_profiled_is_found_by_that_name():
    brain = make_assistant()
    brain.journal.add("I sail at dawn.", author="Aria", now=T0, heard_from="Dora")
    brain.journal.add("Nice day.", author="Aria", now=T0, heard_from="Eve")
    report = Admin(brain).forget_person("dora", by="Ann")
    assert report.counts["journal entries"] == 1
    assert "dawn" not in dump(brain) and "Nice day." in json.dumps(brain.memory_store.inner.data)


def test_the_report_never_holds_another_players_private_words():
    brain, ids = remembering_bob(sleep=False)
    # Carol whispered something naming Bob: it is hers, it stays, and is listed by id only
    carols_whisper = brain.journal.add(
        "Bob cheated me; keep it between us, the password is heron.",
        author="Aria",
        now=T0,
        heard_from="Carol",
        audience=["#13"],
    )["id"]
    report = Admin(brain).forget_person("Bob", by="Ann")
    shown = json.dumps([report.counts, report.remains, report.forgotten, report.keys])
    assert carols_whisper in report.remains["journal entries naming them"]
    assert "heron" not in shown and "cheated" not in shown
    assert report.words == []
    assert "heron" in json.dumps(brain.memory_store.inner.data)  # hers, kept


# ---- the shell: the builder's command, asked first, and the game's API -----------------------

try:
    from evennia.utils.test_resources import EvenniaCommandTest

    from .helpers import AssistantTestCase
except Exception:  # pragma: no cover - the core tests run without Evennia too
    EvenniaCommandTest = AssistantTestCase = None


def _stored(obj) -> str:
    return json.dumps(
        {
            attr.db_key: attr.value
            for attr in obj.db_attributes.filter(db_category="ai_assistant")
            if attr.value is not None
        },
        default=str,
    ).lower()


if EvenniaCommandTest is not None:

    class TestForgetPersonShell(AssistantTestCase, EvenniaCommandTest):
        def cmd(self, args, inputs=None):
            from ai_assistant import commands

            return self.call(commands.CmdAssistant(), args, caller=self.char1, inputs=inputs)

        def setUp(self):
            super().setUp()
            self.char1.permissions.add("Builder")
            self.remember(self.aria)

        def remember(self, assistant):
            """The assistant heard char2 whisper, and Carol speak of char2 and of rye."""
            brain = assistant.assistant.brain
            bob, name = self.char2.dbref, self.char2.key
            brain.journal.add(
                "Meet me by the lighthouse.",
                author=assistant.key,
                now=T0,
                heard_from=name,
                audience=[bob],
                about=[bob],
            )
            brain.journal.add(
                f"I saw {name} at the well; the password is heron.",
                author=assistant.key,
                now=T0,
                heard_from="Carol",
                audience=["#999"],
            )
            brain.journal.add(
                "The baker sells rye.", author=assistant.key, now=T0, heard_from="Carol"
            )
            brain.entities.observe(bob, name, "collects brass buttons", now=T0, author="Aria")

        def test_a_builder_is_asked_first_and_no_changes_nothing(self):
            before = _stored(self.aria)
            text = self.cmd(f"/memory Aria/forgetperson={self.char2.key}", inputs=["n"])
            assert "Aria knows" in text and "profiles" in text
            assert "Cancelled; nothing was forgotten." in text
            assert _stored(self.aria) == before and "lighthouse" in before

        def test_yes_forgets_them_and_lists_what_remains_by_id_only(self):
            text = self.cmd(f"/memory Aria/forgetperson={self.char2.key}", inputs=["y"])
            assert "Aria forgot" in text and "(recorded)" in text
            assert "Remains: 1 journal entry naming them: j000001" in text
            # Carol's whisper stays hers: its id is shown, never its words
            assert "heron" not in text and "at the well" not in text
            stored = _stored(self.aria)
            assert "lighthouse" not in stored and "brass buttons" not in stored
            assert "heron" in stored and "rye" in stored

        def test_bad_input_is_refused_naming_who_is_known(self):
            before = _stored(self.aria)
            text = self.cmd("/memory Aria/forgetperson=Zed")
            assert "Not changed. Aria knows no one called 'Zed'. Known:" in text
            assert self.char2.key in text
            assert "Usage: @assistant/memory <name>/forgetperson=<person>" in self.cmd(
                "/memory Aria/forgetperson="
            )
            assert "Not changed. No assistant knows anyone called 'Zed'" in self.cmd(
                "/forgetperson Zed"
            )
            assert "Usage: @assistant/forgetperson <person>" in self.cmd("/forgetperson")
            assert _stored(self.aria) == before

        def test_every_assistant_that_knows_them_forgets_them_when_asked(self):
            from ai_assistant.assistants import create_assistant

            mira = create_assistant("Mira", self.room1)
            mira.assistant.clock = self.clock
            self.remember(mira)
            text = self.cmd(f"/forgetperson {self.char2.key}", inputs=["yes"])
            assert "Aria knows" in text and "Mira knows" in text
            assert "Aria forgot" in text and "Mira forgot" in text
            for assistant in (self.aria, mira):
                assert "lighthouse" not in _stored(assistant)

        def test_the_command_asks_an_assistant_that_knew_them_only_through_gossip(self):
            from ai_assistant.assistants import create_assistant

            mira = create_assistant("Mira", self.room1)
            mira.assistant.clock = self.clock
            bob, name = self.char2.dbref, self.char2.key
            brain = mira.assistant.brain
            brain.journal.add(
                "He keeps a spare key under the tortoise statue.",
                author="Mira",
                now=T0,
                source_type="claim",
                heard_from="Aria",
                about=[bob],
                gossip={
                    "origin": {"name": name, "key": bob},
                    "tellers": [{"name": "Aria", "key": self.aria.dbref}],
                    "to": "Mira",
                    "people": [bob, self.aria.dbref],
                },
            )
            brain.gossip_log.add(
                {
                    "teller": "Aria",
                    "to": "Mira",
                    "text": "He keeps a spare key under the tortoise statue.",
                    "chain": f"{name} > Aria > Mira",
                    "people": [bob, self.aria.dbref],
                }
            )
            mira.assistant.forget_brain()
            text = self.cmd(f"/forgetperson {name}", inputs=["yes"])
            assert "Mira knows" in text and "Mira forgot" in text
            stored = _stored(mira)
            assert "tortoise" not in stored and name.lower() not in stored

        def test_a_name_two_characters_share_is_refused_in_every_assistant(self):
            other = f"#{self.char2.id + 1000}"
            self.aria.assistant.brain.entities.observe(
                other, self.char2.key, "keeps bees", now=T0, author="Aria"
            )
            before = _stored(self.aria)
            for command in (
                f"/forgetperson {self.char2.key}",
                f"/memory Aria/forgetperson={self.char2.key}",
            ):
                text = self.cmd(command, inputs=["y"])
                assert "Not changed." in text and self.char2.dbref in text and other in text
                assert "forgot" not in text
            assert _stored(self.aria) == before
            # named by its dbref, the one goes and the other stays
            text = self.cmd(f"/forgetperson {self.char2.dbref}", inputs=["y"])
            assert "Aria forgot" in text
            stored = _stored(self.aria)
            assert "lighthouse" not in stored and "keeps bees" in stored

        def test_a_games_own_command_forgets_a_player_in_every_assistant(self):
            import ai_assistant

            done = ai_assistant.forget_person(self.char2, by="player request")
            report = done["Aria"]
            assert report.counts["journal entries"] == 1 and report.counts["profiles"] == 1
            assert self.char2.dbref in report.keys
            assert "lighthouse" not in _stored(self.aria)
            (record,) = self.aria.assistant.memory.admin.kind("review_log").latest(5)
            assert record["action"] == "forget_person" and record["by"] == "player request"
            text = self.cmd("/memory Aria/reviews")
            assert f"forgot the person {self.char2.dbref}" in text


def two_bobs():
    """An assistant that knows two characters called Bob (#12 and #15), each with his words."""
    brain = make_assistant()
    journal = brain.journal
    owl = journal.add(
        "I keep an owl named Hoot.",
        author="Aria",
        now=T0,
        heard_from="Bob",
        voice="account#3",
        about=["#12"],
    )["id"]
    turnips = journal.add(
        "I grow turnips in winter.",
        author="Aria",
        now=T0,
        heard_from="Bob",
        voice="account#9",
        about=["#15"],
    )["id"]
    brain.entities.observe("#12", "Bob", "Bob has an owl", now=T0, author="Aria")
    brain.entities.observe("#15", "Bob", "Bob grows turnips", now=T0, author="Aria")
    return brain, owl, turnips


def test_a_name_two_characters_share_is_refused_listing_their_dbrefs_and_nothing_changes():
    brain, _, _ = two_bobs()
    before = dump(brain)
    for call in (
        lambda: Admin(brain).forget_person_plan("bob"),
        lambda: Admin(brain).forget_person("Bob", by="Ann"),
    ):
        with pytest.raises(Refused) as err:
            call()
        assert "#12" in str(err.value) and "#15" in str(err.value)
        assert "#dbref" in str(err.value)
    assert dump(brain) == before


def test_forgetting_one_of_two_people_of_one_name_keeps_the_other():
    brain, owl, turnips = two_bobs()
    plan = Admin(brain).forget_person_plan("#12")
    assert "#15" not in plan["keys"] and plan["found"]["said"] == 1
    report = Admin(brain).forget_person("#12", by="Ann")
    assert owl in report.forgotten and turnips not in report.forgotten
    assert "owl" not in dump(brain)
    assert brain.journal.get(turnips)["content"] == "I grow turnips in winter."
    other = brain.entities.profile("#15")
    assert [o["text"] for o in other["observations"]] == ["Bob grows turnips"]
    assert brain.entities.profile("#12") is None


def test_a_summary_resting_on_their_words_is_forgotten():
    brain = make_assistant()
    journal = brain.journal
    journal.add(
        "My secret is the zebra door.",
        author="Aria",
        now=T0,
        heard_from="Bob",
        voice="account#3",
        about=["#12"],
        source_type="claim",
    )
    summary = journal.add(
        "A summary: he told me of a door painted like a zebra.",
        author="Aria",
        now=T0,
        source_type="summary",
        kind="synthesis",
        derived={"rests_on": "claim", "claims_of": ["Bob"], "voices": ["account#3"]},
    )["id"]
    brain.entities.observe("#12", "Bob", "Bob has an owl", now=T0, author="Aria")
    report = Admin(brain).forget_person("Bob", by="Ann")
    assert summary in report.forgotten
    assert "zebra" not in dump(brain)


def test_a_game_naming_by_a_name_two_characters_share_is_refused_and_nothing_changes():
    brain, _, _ = two_bobs()
    before = dump(brain)
    with pytest.raises(Refused) as err:
        Admin(brain).forget_person(None, by="the game", names=["Bob"])
    assert "#12" in str(err.value) and "#15" in str(err.value)
    assert dump(brain) == before
    # named by its character's key, the one Bob goes and the other stays
    report = Admin(brain).forget_person(None, by="the game", keys=["#15"], names=["Bob"])
    assert report.counts["journal entries"] == 1 and "turnips" not in dump(brain)
    assert "owl" in dump(brain)


def test_the_conversation_of_the_moment_and_a_builders_reason_about_them_go_too():
    from ai_assistant.memory.working import WorkingMemory

    brain, _ = remembering_bob(sleep=False)
    WorkingMemory(brain.state).note(
        [
            ("#12", "Bob", "my tangerine kite is stuck", ["#12"]),
            ("#13", "Carol", "hello there", None),
        ],
        T0,
    )
    Admin(brain).kind("relationships").set(
        "#12", "trust", "0.5", "he lent me his zeppelin", by="Ann"
    )
    night = T0 + timedelta(hours=8)
    brain.lifecycle.go_to_sleep(
        night, reason="night", initiated_by="builder", enforce_safeguards=False
    )
    brain.lifecycle.wake_up(night + timedelta(hours=4), "morning")
    report = Admin(brain).forget_person("Bob", by="Ann", keys=["account#3"])
    assert report.counts["conversations of the moment"] == 1
    assert list(WorkingMemory(brain.state).partners()) == ["#13"]
    stored = dump(brain)
    assert "tangerine" not in stored and "zeppelin" not in stored
    # the setting stays recorded (a rollback sets it and forgets him again, in order)
    (setting,) = [r for r in brain.review.history() if r["action"] == "relationship"]
    assert setting["id"] == "#12" and setting["reason"] == ""
    Snapshots(brain.state).rollback("s1", brain.memory_store.inner)
    assert "zeppelin" not in dump(brain)
    assert Relationships(brain.memory_store).get("#12") is None


def test_the_turn_log_keeps_nothing_they_said_however_long_and_none_of_their_private_turns():
    from ai_assistant.awake.turn import DETAIL_CHARS
    from ai_assistant.memory.turn_log import TurnLog
    from ai_assistant.state import TURN_LOG_CHUNK, TURN_LOG_KEPT

    brain, _ = remembering_bob(sleep=False)
    # a line longer than a turn's record keeps: the record holds only its beginning
    long = "My grandmother's recipe needs saffron threads. " * 20
    assert len(long) > DETAIL_CHARS
    brain.journal.add(
        long, author="Aria", now=T0, heard_from="Bob", voice="account#3", about=["#12"]
    )
    heard = [
        {"type": "say", "speaker": "Bob", "person": "#12", "audience": None, "text": long[:600]},
        {"type": "say", "speaker": "Carol", "person": "#13", "audience": None, "text": "Nice day."},
    ]
    whisper = [
        {"type": "whisper", "speaker": "Bob", "person": "#12", "audience": ["#12"], "text": "hush"}
    ]
    reply = [{"name": "whisper", "arguments": '{"text": "your juniper is safe"}', "ok": True}]
    log = TurnLog(brain.state)
    # his turns far back in a long log (its oldest chunk already dropped), others' after them
    other = {"at": "2026-01-01T11:00:00+00:00", "heard": [], "calls": [], "audience": None}
    for _ in range(TURN_LOG_KEPT):
        log.add(other)
    log.add({"at": "2026-01-01T12:00:00+00:00", "heard": heard, "calls": [], "audience": None})
    log.add(
        {"at": "2026-01-01T12:01:00+00:00", "heard": whisper, "calls": reply, "audience": ["#12"]}
    )
    for _ in range(TURN_LOG_CHUNK + 3):
        log.add(other)
    before = len(TurnLog(brain.state))
    assert log.first > 0
    report = Admin(brain).forget_person("Bob", by="Ann", keys=["account#3"])
    assert report.counts["the turn log"] == 1
    turns = TurnLog(brain.state).all()
    assert len(turns) == before - 1  # his private turn went whole, the others stay
    (turn,) = [turn for turn in turns if turn["heard"]]
    kept = json.dumps(turns)
    assert "saffron" not in kept and "Bob" not in kept and "#12" not in kept
    assert turn["heard"][1]["text"] == "Nice day."  # Carol's line stays
    assert "juniper" not in dump(brain)


def test_a_wake_reason_naming_them_goes():
    brain, _ = remembering_bob(sleep=False)
    night = T0 + timedelta(hours=8)
    brain.lifecycle.go_to_sleep(
        night, reason="night", initiated_by="builder", enforce_safeguards=False
    )
    brain.lifecycle.wake_up(night + timedelta(hours=1), "Urgent event: whisper from Bob")
    report = Admin(brain).forget_person("Bob", by="Ann", keys=["account#3"])
    assert report.counts["sleep and wake reasons"] == 1
    reasons = [record["reason"] for record in brain.lifecycle.log().all()]
    assert reasons[-1] == "[forgotten]" and "night" in reasons
    assert "whisper from bob" not in dump(brain)


def test_every_kind_of_memory_holds_nothing_of_a_forgotten_person():
    """Issue 39: two lines from Bob, a sleep, then forgetting him: no kind of memory in the
    registry (what the memory file exports of each) keeps his name, his keys or his words;
    the review log keeps only his keys (the record of the forget), never his name or words."""
    from ai_assistant.memory.kinds import REGISTRY
    from ai_assistant.memory_api import AssistantMemory

    memory = AssistantMemory("Aria")
    memory._now = lambda: T0 + timedelta(hours=14)
    memory.add_entry(
        "The lighthouse key hides under the blue stone.",
        time=T0,
        speaker="Bob",
        account="account#3",
        importance=7,
    )
    memory.add_entry(
        "My rowboat is painted periwinkle.",
        time=T0 + timedelta(minutes=1),
        speaker="Bob",
        account="account#3",
        importance=7,
    )
    memory.add_entry(
        "Carol says the baker sells rye on Tuesdays.",
        time=T0 + timedelta(minutes=2),
        speaker="Carol",
        importance=6,
    )
    memory.consolidate(T0 + timedelta(hours=1))
    brain = memory.brain

    def held() -> dict[str, str]:
        return {
            kind.name: json.dumps(kind.export(brain.memory_store, brain.state)).lower()
            for kind in REGISTRY
        }

    before = held()
    assert "bob" in before["long_term"] and "periwinkle" in before["long_term"]
    memory.admin.forget_person("Bob", by="Ann", reason="he asked", keys=["account#3"])
    marks = ("bob", "name:bob", "account#3", "lighthouse", "periwinkle", "rowboat", "blue stone")
    for kind, text in held().items():
        if kind == "review_log":  # the record of the forget: his keys, never his name or words
            text = text.replace("name:bob", "").replace("account#3", "")
        found = [mark for mark in marks if mark in text]
        assert found == [], f"{kind} still holds {found}"
    # Carol's memory stays, and is still recalled
    assert "rye" in held()["long_term"]
    assert memory.recall("baker rye", k=3, at=T0 + timedelta(hours=2))


def test_their_words_leave_the_talk_sleep_searches_the_lines_around_them_by():
    from ai_assistant.memory_api import AssistantMemory

    memory = AssistantMemory("Aria")
    lines = [
        ("Ann", "Hello there, stranger."),
        ("Bob", "My secret name is Quillfeather."),
        ("Ann", "Nice to meet you."),
        ("Ann", "The weather is fine."),
        ("Ann", "The ferry is late."),
        ("Ann", "The baker sells rye."),
    ]
    for n, (speaker, text) in enumerate(lines):
        memory.add_entry(text, speaker=speaker, time=T0 + timedelta(seconds=30 * n), importance=6)
    # after sleep each line is searched with the talk up to five places around it
    memory.consolidate(now=T0 + timedelta(hours=8))
    later = T0 + timedelta(days=1)
    assert len(memory.recall("Quillfeather", k=8, at=later)) > 3
    memory.admin.forget_person("Bob", by="Builder")
    # the lines two and more places from his were still found by his words
    assert memory.recall("Quillfeather", k=8, at=later) == []
    index = memory.brain.index._lexical
    assert not [doc for doc in index._doc_terms if "quillfeath" in index.terms_of(doc)]
