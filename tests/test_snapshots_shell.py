"""
Rolling back a sleep in a real (test) Evennia world: a night that consolidated, linked and
pruned over HTTP, then `@assistant/rollback` with its confirmation puts the memory Attributes
back as they were, except what a builder corrected since (kept, and listed before confirming);
its refusals change nothing.

"""

import json
import re
from datetime import timedelta

import pytest

from evennia.utils.test_resources import EvenniaCommandTest

from ai_assistant.testing.server import text_reply

from .helpers import AssistantTestCase


def commands():
    from ai_assistant import commands

    return commands


def memory_attributes(obj) -> dict:
    """The assistant's memory as stored in the database (its `ai_assistant` Attributes; one
    holding None reads as nothing stored, as the indexes a new assistant is made with)."""
    return {
        attr.db_key: attr.value
        for attr in obj.db_attributes.filter(db_category="ai_assistant").order_by("db_key")
        if attr.value is not None
    }


class TestRollback(AssistantTestCase, EvenniaCommandTest):
    overrides = {
        **AssistantTestCase.overrides,
        "min_activity_before_sleep": 0,
        "reflection_threshold": 100000,
        "prune_age_days": 30,
        "prune_max_importance": 3,
        "link_min_importance": 5,
        # the day's entries are written on today's game day: no digest gates the pruning
        "digest_enabled": False,
        # the night's replies are scripted in order (relationships: test_relationships.py)
        "relationships_enabled": False,
    }

    def cmd(self, args, inputs=None):
        return self.call(commands().CmdAssistant(), args, caller=self.char1, inputs=inputs)

    def setUp(self):
        super().setUp()
        self.char1.permissions.add("Builder")

    def remember_a_day(self):
        brain = self.handler.brain
        now = self.clock.now()
        old = brain.journal.add(
            "small talk about the weather", author="Aria", now=now - timedelta(days=40)
        )
        brain.journal.update([{**old, "consolidated": True, "importance": 2}])
        for text in ("Tobin says the east door sticks", "Tobin says the east door creaks"):
            brain.journal.add(
                text,
                author="Aria",
                now=now,
                heard_from="Tobin",
                importance=6,
                source_type="claim",
                scoring_method="llm",
            )
        # a builder's note (pinned: sleep's consolidation of core memory leaves it be)
        brain.core_memory.set("motto", "books first", now, 500, pinned=True)

    def sleep_through_the_night(self, *more):
        self.responder.add(
            text_reply(
                json.dumps(
                    {
                        "entries": [
                            {"entry_id": "j000001", "facts": ["The east door sticks."]},
                            {"entry_id": "j000002", "facts": ["The east door creaks."]},
                        ]
                    }
                )
            ),
            *more,
        )
        self.handler.sleep(hours=1, reason="night", by="Char")
        for _ in range(20):
            self.clock.advance(600)
            self.script.at_assistant_tick()
            if self.script.db.operating_mode == "awake":
                return
        raise AssertionError("did not wake")

    def test_a_night_that_pruned_and_linked_is_rolled_back_after_a_reload(self):
        self.remember_a_day()
        before = memory_attributes(self.aria)
        self.sleep_through_the_night()
        brain = self.handler.brain
        journal = {entry["id"]: entry for entry in brain.journal.all()}
        assert journal["j000000"]["pruned"] and journal["j000001"]["consolidated"]
        assert len(brain.long_term.all()) == 2 and brain.links.count() >= 1
        # a reload: the snapshot is read back from the database, not from a cache
        self.aria.attributes.reset_cache()
        self.script.attributes.reset_cache()
        self.handler._brain = None
        assert [s["sleep_id"] for s in self.script.db.memory_snapshots] == ["s1"]
        assert self.script.db.memory_snapshot_open == "s1"
        shown = self.cmd("/rollback Aria", inputs=["y"])
        assert "Rolling back Aria to before sleep s1 undoes sleeps s1" in shown
        assert "2 journal entries whose consolidated flag changed" in shown
        assert "2 long-term memories removed" in shown
        assert "1 journal entry given back its text (pruned since)" in shown
        assert "Aria's memory is back to before sleep s1 (undone: s1)" in shown
        assert memory_attributes(self.aria) == before
        brain = self.handler.brain  # rebuilt from the restored Attributes
        journal = {entry["id"]: entry for entry in brain.journal.all()}
        assert journal["j000000"]["content"] == "small talk about the weather"
        assert not journal["j000000"].get("pruned")
        assert not journal["j000001"]["consolidated"] and not journal["j000002"]["consolidated"]
        assert brain.long_term.all() == [] and brain.links.count() == 0
        assert brain.core_memory.items()["motto"]["value"] == "books first"
        assert self.script.db.memory_snapshots == []
        assert (
            self.handler.memory.admin.kind("sleep_history").recent(1)[0]["rolled_back"]["by"]
            == "Char"
        )
        assert "back by Char" in self.cmd("/sleeps Aria")  # wrapped in its column
        # the next night consolidates the same entries again, and core memory's consolidation
        # weighs the memories afresh (it had read up to two that are gone)
        assert len(brain.journal.unconsolidated()) == 2
        assert self.script.attributes.get("core_memory_consolidation") is None

    def test_what_the_assistant_learns_after_a_rollback_is_kept_until_the_next_sleep(self):
        self.remember_a_day()
        self.sleep_through_the_night()
        self.cmd("/rollback Aria", inputs=["yes"])
        brain = self.handler.brain
        brain.journal.add("Mira lost her cat", author="Aria", now=self.clock.now())
        assert brain.journal.all()[-1]["content"] == "Mira lost her cat"
        assert "has no memory snapshot" in self.cmd("/rollback Aria")
        assert brain.journal.all()[-1]["content"] == "Mira lost her cat"

    def test_a_rollback_not_confirmed_changes_nothing(self):
        self.remember_a_day()
        self.sleep_through_the_night()
        after = memory_attributes(self.aria)
        text = self.cmd("/rollback Aria=s1", inputs=["n"])
        assert "Rollback cancelled; Aria's memory is unchanged." in text
        assert memory_attributes(self.aria) == after
        assert [s["sleep_id"] for s in self.script.db.memory_snapshots] == ["s1"]

    def test_a_sleep_that_came_and_went_while_asked_is_not_undone_unseen(self):
        from ai_assistant.errors import Refused

        self.remember_a_day()
        self.sleep_through_the_night()
        shown = self.handler.memory.rollback_plan("s1")["sleeps"]
        assert shown == ["s1"]
        # while the builder answers, another night with something new comes and goes
        self.handler.brain.journal.add("Mira lost her atlas", author="Aria", now=self.clock.now())
        self.handler.sleep(hours=1, reason="again", by="Char")
        self.handler.wake()
        after = memory_attributes(self.aria)
        with pytest.raises(Refused, match="changed since you were asked"):
            self.handler.memory.rollback("s1", by="Char", expected=shown)
        assert memory_attributes(self.aria) == after

    def test_a_rollback_waits_for_a_turn_under_way_around_the_admins(self):
        from ai_assistant.errors import Refused

        self.remember_a_day()
        self.sleep_through_the_night()
        after = memory_attributes(self.aria)
        memory = self.handler.memory
        self.handler.in_flight = True
        try:
            with pytest.raises(Refused, match="in the middle of a turn"):
                memory.rollback_plan("s1")
            with pytest.raises(Refused, match="in the middle of a turn"):
                memory.rollback("s1", by="Char")
        finally:
            self.handler.in_flight = False
        assert memory_attributes(self.aria) == after
        # the live memory wraps the builders' view it holds: the same plan, the same memory
        assert memory.admin.rollback_plan("s1") == memory.rollback_plan("s1")

    def test_bad_input_is_refused_and_changes_nothing(self):
        before = memory_attributes(self.aria)
        assert "Not changed. Aria has no memory snapshot" in self.cmd("/rollback Aria")
        self.remember_a_day()
        self.sleep_through_the_night()
        after = memory_attributes(self.aria)
        state = dict(self.script.db.memory_snapshots[0])
        # cells wrap in columns, beside the other columns' lines (times, numbers)
        listed = re.sub(r"[|+\s\-\d:~]", "", self.cmd("/sleeps Aria"))
        assert "tokens;canberolledback" in listed
        assert [s["sleep_id"] for s in self.handler.memory.admin.snapshots()] == ["s1"]
        assert "No assistant called 'Nobody'" in self.cmd("/rollback Nobody")
        assert "Name an assistant" in self.cmd("/rollback")
        text = self.cmd("/rollback Aria=banana")
        assert "Not changed. 'banana' is not a sleep id: one looks like s3" in text
        text = self.cmd("/rollback Aria=s9")
        assert "Not changed. There is no snapshot of sleep 's9'. Snapshots kept: s1." in text
        assert "Usage: @assistant/rollback <name>[=<sleep id>]" in self.cmd("/rollback Aria=")
        assert "Usage: @assistant/rollback" in self.cmd("/rollback Aria/s1")
        self.handler.sleep(hours=1, reason="nap", by="Char")
        text = self.cmd("/rollback Aria=s1", inputs=["y"])
        assert "Not changed. Aria is asleep" in text and "@assistant/wake Aria" in text
        self.handler.wake()
        # the nap had nothing new: no snapshot of its own, the night's goes on recording
        assert [s["sleep_id"] for s in self.script.db.memory_snapshots] == ["s1"]
        assert dict(self.script.db.memory_snapshots[0]) == state
        assert memory_attributes(self.aria) == after
        assert before != after

    def test_snapshots_kept_zero_takes_none(self):
        self.script.db.config_overrides = {**self.overrides, "snapshots_kept": 0}
        self.remember_a_day()
        self.sleep_through_the_night()
        assert not self.script.db.memory_snapshots
        assert "has no memory snapshot" in self.cmd("/rollback Aria")

    # ---- what a builder corrected since the night began is kept, and so is the review log --

    VAULT = "Bob whispered that the vault code is 4-1-7, behind the tapestry"

    def remember_a_secret(self):
        """A private entry, consolidated before the night (so the night leaves it be)."""
        brain = self.handler.brain
        secret = brain.journal.add(
            self.VAULT,
            author="Aria",
            now=self.clock.now(),
            heard_from="Bob",
            importance=8,
            audience=["name:bob"],
            scoring_method="llm",
        )
        brain.journal.update([{**secret, "consolidated": True}])
        return secret["id"]

    def test_a_forget_since_the_night_stays_forgotten_and_its_record_stays(self):
        self.remember_a_day()
        secret = self.remember_a_secret()
        self.sleep_through_the_night()
        unreviewed = self.handler.memory.rollback_plan()
        self.clock.advance(3600)
        assert f"Aria forgot {secret} (recorded)." in self.cmd(f"/memory Aria/forget={secret}")
        assert "now trusts j000001 at 0.30" in self.cmd("/memory Aria/trust=j000001 low")
        reviews = self.handler.memory.admin.kind("review_log").latest()
        when = reviews[0]["at"][:16].replace("T", " ")
        shown = self.cmd("/rollback Aria", inputs=["y"])
        assert "The builders' corrections made since are kept." in shown
        # the forget took the words out of the snapshot too: none to quote
        assert f"kept forgotten: {secret} (forgotten by Char at {when})" in shown
        assert "vault code" not in shown
        assert f"kept trust: j000001 at 0.30 (set by Char at {when})" in shown
        assert "Aria's memory is back to before sleep s1 (undone: s1)" in shown
        # the review log is neither restored nor counted: the same values change as before
        # the corrections (they touched only the journal's chunk, which the night changed too)
        assert f"It would change {unreviewed['values']} stored values:" in shown
        assert f"{unreviewed['changes']['other']} other stored value" in shown
        brain = self.handler.brain  # rebuilt from the restored Attributes
        entry = brain.journal.get(secret)
        assert entry["content"] == "" and entry["forgotten"]["by"] == "Char"
        assert "4-1-7" not in self.cmd("/memory Aria=vault code tapestry")
        assert "4-1-7" not in self.cmd("/journal Aria")
        assert brain.journal.get("j000001")["trust_set"]["trust"] == 0.3
        assert not brain.journal.get("j000001")["consolidated"]  # the night is undone
        assert self.handler.memory.admin.kind("review_log").latest() == reviews
        listed = self.cmd("/memory Aria/reviews")
        assert f"forgot {secret}" in listed and "trust 0.30" in listed

    def test_a_builders_core_note_edits_since_the_night_outlive_the_rollback(self):
        self.remember_a_day()
        # before the night the model kept Bob's code in a note everyone sees
        self.handler.brain.core_memory.set("gossip", "Bob's code is 4-1-7", self.clock.now(), 500)
        # the night's consolidation of core memory keeps it (after the facts' reply)
        gossip = {"key": "gossip", "value": "Bob's code is 4-1-7"}
        self.sleep_through_the_night(text_reply(json.dumps({"notes": [gossip]})))
        self.clock.advance(3600)
        assert "Removed 'gossip'" in self.cmd("/core Aria/gossip=")
        assert "core memory 'hours' set, pinned" in self.cmd("/core Aria/hours=Open at dawn.")
        when = self.handler.memory.admin.kind("review_log").latest()[0]["at"][:16].replace("T", " ")
        shown = self.cmd("/rollback Aria", inputs=["y"])
        assert "The builders' corrections made since are kept." in shown
        assert (
            f"kept removed: core note gossip (removed by Char at {when}: 'Bob's code is "
            "4-1-7')" in shown
        )
        assert f"kept core note: hours (pinned by Char at {when}: 'Open at dawn.')" in shown
        assert "Aria's memory is back to before sleep s1 (undone: s1)" in shown
        notes = self.handler.brain.core_memory.items()  # rebuilt from the restored Attributes
        assert "gossip" not in notes and notes["hours"]["value"] == "Open at dawn."
        assert notes["motto"]["value"] == "books first"
        assert "4-1-7" not in self.cmd("/core Aria")
        assert [r["action"] for r in self.handler.memory.admin.kind("review_log").latest()] == [
            "core_set",
            "core_remove",
        ]
        listed = self.cmd("/memory Aria/reviews")
        assert "pinned core note hours" in listed and "removed core note gossip" in listed
        assert "4-1-7" not in listed

    def test_a_correction_made_while_asked_is_not_kept_unseen(self):
        from ai_assistant.errors import Refused

        self.remember_a_day()
        secret = self.remember_a_secret()
        self.sleep_through_the_night()
        plan = self.handler.memory.rollback_plan("s1")
        assert plan["kept"] == []
        # while the builder answers, another builder forgets the secret
        self.handler.memory.admin.forget(secret, by="Ann")
        after = memory_attributes(self.aria)
        with pytest.raises(Refused, match="corrections it would keep changed"):
            self.handler.memory.rollback("s1", by="Char", expected=plan["sleeps"], expected_kept=[])
        assert memory_attributes(self.aria) == after
