"""
Knowledge a group shares (issue 38): in a real (test) Evennia world, a guard shares what it
learned with its group and another guard, who never heard it, recalls it as what the first
reported, with the chain and less trust; a whisper, or anything said in a conversation that
saw private words, never reaches the group; an assistant outside the group, or a group switched
off, recalls nothing of it; forgetting a person reaches it; builders list, remove and switch;
it is kept once (a kind of memory: the member's file and status hold it).

"""

from evennia.utils import create
from evennia.utils.test_resources import EvenniaCommandTest

from ai_assistant import forget_person
from ai_assistant.driver import inline
from ai_assistant.memory import kinds
from ai_assistant.memory.groups import (
    MAX_SHARED,
    SHARED_KEY,
    GroupIndex,
    GroupShares,
    group_id,
)
from ai_assistant.memory.provenance import CLAIM
from ai_assistant.memory.recall_weights import RecallWeights
from ai_assistant.memory.store import DictStore
from ai_assistant.shell.groups import GROUP_CATEGORY, set_sharing
from ai_assistant.testing.server import tool_call, tool_reply
from ai_assistant.conf import AssistantConfig

from .core_fakes import T0
from .helpers import AssistantTestCase

GATE = "The east gate is left unlocked at midnight."
CODE = "The vault code is 7-3-1."
SHARING = {**AssistantTestCase.overrides, "group_sharing_enabled": True}


class GroupCase(AssistantTestCase, EvenniaCommandTest):
    overrides = SHARING

    def setUp(self):
        super().setUp()
        # Aria and Bruno are guards; Bruno heard Bob's claim about the gate, in another room
        self.aria.tags.add("guards", category=GROUP_CATEGORY)
        self.bruno = self.assistant("Bruno", self.room2, "guards")
        self.bob = f"#{self.char1.id}"
        journal = self.bruno.assistant.brain.journal
        journal.add(
            GATE,
            author="Bruno",
            now=self.clock.now(),
            source_type=CLAIM,
            heard_from=self.char1.key,
            voice=self.bob,
            location=self.room2.key,
        )
        journal.add(
            CODE,
            author="Bruno",
            now=self.clock.now(),
            source_type=CLAIM,
            heard_from=self.char1.key,
            voice=self.bob,
            audience=[self.bob],
        )

    def assistant(self, name, room, group=None):
        obj = create.create_object(
            "ai_assistant.characters.AssistantCharacter", key=name, location=room, home=room
        )
        obj.db.persona = "A guard."
        obj.assistant.script.db.config_overrides = dict(self.overrides)
        obj.assistant.clock = self.clock
        obj.assistant.runner = inline
        if group:
            obj.tags.add(group, category=GROUP_CATEGORY)
        return obj

    def bruno_turn(self, *calls, event="say"):
        self.responder.add(tool_reply(*calls), tool_reply(tool_call("noop", {})))
        self.bruno.assistant.hearing.hear(event, self.char2, "Bruno, anything to report?")
        self.clock.advance(5)
        self.bruno.assistant.script.at_assistant_tick()
        return self.tool_results(self.sent_messages())[-len(calls) :]

    def share(self, memory_id="j000000"):
        return self.bruno_turn(tool_call("share_with_group", {"memory_id": memory_id}))

    def recall(self, handler=None, query="east gate midnight"):
        handler = handler or self.handler
        return handler.brain.recall(query, now=self.clock.now(), served=None)

    def cmd(self, args):
        from ai_assistant import commands

        return self.call(commands.CmdAssistant(), args)


def offered(handler) -> list[str]:
    """The tools an assistant's turn is offered, as its requests carry them."""
    brain = handler.brain
    return [
        tool["function"]["name"] for tool in brain.registry.schemas("turn", brain.tool_settings())
    ]


class TestSharing(GroupCase):
    def test_another_guard_who_never_heard_it_knows_it_and_says_from_whom(self):
        (result,) = self.share()
        assert "You shared it with the guards" in result
        sent = [tool["function"]["name"] for tool in self.responder.requests[0]["tools"]]
        assert "share_with_group" in sent  # the requests carry what `offered` reads
        # Aria never heard Bob: she recalls it as what Bruno reported, with the chain
        assert len(self.handler.brain.journal) == 0
        (found,) = self.recall()
        assert found.text == GATE and found.id == group_id(self.bruno.dbref, "g1")
        assert found.line().startswith(
            f"- [Bruno of the guards reported that {self.char1.key} said; trust "
        )
        # trust decays per hand: below what Bruno has of it, times the decay
        bruno_trust = self.bruno.assistant.brain.remembered("j000000")["trust"]
        assert found.trust <= round(bruno_trust * AssistantConfig().gossip_trust_decay, 4)
        # and her turn shows it, with what she answers
        self.responder.add(
            tool_reply(tool_call("say", {"text": "Bruno says the gate..."})),
            tool_reply(tool_call("noop", {})),
        )
        self.handler.hearing.hear("say", self.char1, "Aria, is the east gate locked at midnight?")
        self.tick()
        prompt = [m for m in self.sent_messages() if m["role"] == "user"][-1]["content"]
        assert "Bruno of the guards reported" in prompt and "unlocked at midnight" in prompt

    def test_it_is_kept_once_with_its_member_a_kind_of_its_memory(self):
        self.share()
        bruno = self.bruno.assistant.brain
        assert self.handler.brain.memory_store.get(SHARED_KEY) is None
        assert [s["text"] for s in bruno.group_shares.all()] == [GATE]
        assert kinds.sizes(bruno)["group_shares"] == 1
        exported = self.bruno.assistant.memory.admin.export_data(
            {"name": "Bruno", "dbref": self.bruno.dbref, "persona": "", "settings": {}},
            {"id": "g", "name": "G"},
            [],
            [],
        )
        (kept,) = exported["memory"]["group_shares"]["items"]
        assert (kept["id"], kept["group"], kept["text"]) == ("g1", "guards", GATE)
        # sharing it twice is refused, and so is passing on a fellow member's share
        (again,) = self.share()
        assert "already" in again and len(bruno.group_shares.all()) == 1
        (theirs,) = self.share(group_id(self.aria.dbref, "g1"))
        assert "a fellow member of your group reported" in theirs

    def test_a_whisper_never_reaches_the_group(self):
        # the model names the whispered memory, though no one showed it to it here
        (result,) = self.share("j000001")
        assert "private" in result and "Nothing was said" in result
        assert self.bruno.assistant.brain.group_shares.all() == []
        assert self.recall(query="vault code") == []

    def test_nothing_said_in_a_conversation_that_saw_private_words_is_shared(self):
        (result,) = self.bruno_turn(
            tool_call("share_with_group", {"memory_id": "j000000"}), event="whisper"
        )
        assert "saw private words" in result and "Nothing was shared" in result
        assert self.bruno.assistant.brain.group_shares.all() == []

    def test_outside_the_group_or_with_sharing_off_nothing_is_recalled_or_offered(self):
        self.share()
        cid = self.assistant("Cid", self.room1)  # sharing on, but in no group
        assert self.recall(cid.assistant) == []
        set_sharing("guards", False)
        assert self.recall() == []
        (refused,) = self.share()
        assert "no group that shares" in refused
        set_sharing("guards", True)
        assert len(self.recall()) == 1
        # the tool is offered to a member of a sharing group only: not to Cid (in none), nor
        # while the guards' sharing is off, nor to a member whose own setting is off
        assert "share_with_group" in offered(self.handler)
        assert "share_with_group" not in offered(cid.assistant)
        set_sharing("guards", False)
        assert "share_with_group" not in offered(self.handler)
        set_sharing("guards", True)
        self.handler.set_option("group_sharing_enabled", "false")
        assert "share_with_group" not in offered(self.handler) and "recall" in offered(self.handler)
        assert self.recall() == []

    def test_forgetting_a_person_reaches_the_group(self):
        self.share()
        assert len(self.recall()) == 1
        done = forget_person(self.char1, by="Ann", reason="asked")
        assert "shares with a group" in str(done["Bruno"].counts)
        assert self.bruno.assistant.brain.group_shares.all() == []
        assert self.recall() == []


class TestBuilders(GroupCase):
    def test_builders_list_a_group_switch_it_and_remove_a_share(self):
        assert "guards" in self.cmd("/group") and "Bruno" in self.cmd("/group")
        assert "Nothing shared yet" in self.cmd("/group guards")
        self.share()
        gid = group_id(self.bruno.dbref, "g1")
        listed = self.cmd("/group guards")
        assert gid in listed and f"{self.char1.key} > Bruno" in listed
        assert "no longer share" in self.cmd("/group guards=off")
        assert "sharing off" in self.cmd("/group guards") and self.recall() == []
        assert "share what they learn" in self.cmd("/group guards=on")
        assert "Not changed" in self.cmd("/group guards=remove g999.1")
        assert "Removed" in self.cmd(f"/group guards=remove {gid}")
        assert self.recall() == [] and "Nothing shared yet" in self.cmd("/group guards")
        assert "not a group's name" in self.cmd("/group <b>bad</b>")


def test_a_member_keeps_at_most_its_bound_the_oldest_going_first():
    shares = GroupShares(DictStore())
    told = {
        "memory_id": "j000000",
        "origin": {"name": "Bob", "key": "#3", "how": "said"},
        "tellers": [{"name": "Bruno", "key": "#7"}],
        "teller": {"name": "Bruno", "key": "#7"},
        "trust": 0.4,
        "origin_trust": 0.4,
        "rests_on": CLAIM,
        "importance": 5,
        "about": [],
        "people": ["#3", "#7"],
        "at": "2026-11-21T12:00:00+00:00",
    }
    for number in range(MAX_SHARED + 1):
        shares.add({**told, "memory_id": f"j{number:06d}", "text": f"fact {number}" * 200}, "x")
    kept = shares.all()
    assert len(kept) == MAX_SHARED and kept[0]["id"] == "g2" and kept[-1]["id"] == "g51"
    assert max(len(s["text"]) for s in kept) == 500


def test_the_group_index_leaves_out_the_recallers_own_and_trusts_each_hand_less():
    def share(member, hands):
        return {
            "gid": f"g{member[1:]}.1",
            "group": "guards",
            "text": GATE,
            "origin": {"name": "Bob", "key": "#3", "how": "said"},
            "tellers": [
                *({"name": f"hand{n}", "key": None} for n in range(hands - 1)),
                {"name": f"M{member[1:]}", "key": member},
            ],
            "member": {"name": f"M{member[1:]}", "key": member},
            "trust": 0.4,
            "origin_trust": 0.4,
            "importance": 5,
            "people": ["#3"],
            "at": T0.isoformat(),
        }

    index = GroupIndex([share("#7", 1), share("#8", 2)])
    weights = RecallWeights.from_config(AssistantConfig())
    found = index.recall(
        "east gate midnight", recaller="#7", limit=5, weights=weights, claim_trust=0.4, decay=0.7
    )
    assert [item.id for item in found] == ["g8.1"]
    assert found[0].trust == round(0.4 * 0.7, 4)
    assert "M8 of the guards reported that hand0 said that Bob said" in found[0].line()


def test_forgetting_a_person_removes_the_shares_from_or_about_them_and_keeps_the_rest():
    from ai_assistant.memory_api import AssistantMemory

    memory = AssistantMemory("Bruno")
    memory.add_entry("Bob says hello.", time=T0, speaker="Bob")
    told = {
        "memory_id": "j000000",
        "origin": {"name": "Carol", "key": "name:carol", "how": "said"},
        "tellers": [{"name": "Bruno", "key": "#7"}],
        "teller": {"name": "Bruno", "key": "#7"},
        "trust": 0.4,
        "origin_trust": 0.4,
        "rests_on": CLAIM,
        "importance": 5,
        "about": [],
        "people": ["name:carol", "#7"],
        "at": T0.isoformat(),
    }
    shares = memory.brain.group_shares
    shares.add({**told, "text": GATE}, "guards")
    # about Bob by key, and by name only
    shares.add({**told, "text": "Bob owes the guards.", "people": ["name:bob"]}, "guards")
    shares.add({**told, "memory_id": "j1", "text": "Bob was seen at the gate."}, "guards")
    memory.admin.forget_person("Bob", by="Ann", reason="asked", keys=["name:bob"])
    assert [share["text"] for share in shares.all()] == [GATE]


def test_a_fellow_members_share_is_found_behind_many_of_the_recallers_own():
    def share(number, member):
        return {
            "gid": f"g{member[1:]}.{number}",
            "group": "guards",
            "text": GATE if member == "#7" else f"{GATE} Bob said so.",
            "origin": {"name": "Bob", "key": "#3", "how": "said"},
            "tellers": [{"name": "M", "key": member}],
            "member": {"name": "M", "key": member},
            "trust": 0.4,
            "origin_trust": 0.4,
            "importance": 5,
            "people": ["#3"],
            "at": T0.isoformat(),
        }

    index = GroupIndex([share(n, "#7") for n in range(40)] + [share(1, "#8")])
    weights = RecallWeights.from_config(AssistantConfig())
    found = index.recall(GATE, recaller="#7", limit=1, weights=weights, claim_trust=0.4, decay=0.7)
    assert [item.id for item in found] == ["g8.1"]
