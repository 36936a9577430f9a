"""
Relationships: familiarity, warmth and trust per person, updated by a sleep step from the day's
interactions (one structured request per batch of people), guarded in code (a bounded step,
evidence that must be what the assistant saw the person do, never their own words to it), private reasons kept private, shown to the persona in the turn's message.

"""

import json
import math

import pytest
from datetime import timedelta

from evennia.utils.test_resources import EvenniaCommandTest

from ai_assistant import lifecycle as life
from ai_assistant.llm.chat import EndpointSettings
from ai_assistant.llm.client import OpenAIChatClient
from ai_assistant.memory.audience import served_by
from ai_assistant.memory.review import corrections_since
from ai_assistant.memory.relationships import (
    FAMILIARITY,
    TRUST,
    WARMTH,
    Relationships,
    is_relationship_claim,
)
from ai_assistant.sleep.relationships import (
    FAMILIARITY_PER_INTERACTION,
    RelationshipUpdate,
    update_relationships,
)
from ai_assistant.sleep.tick import sleep_tick
from ai_assistant.state import DREAMING_PROGRESS
from ai_assistant.testing.scripted import ScriptedModel
from ai_assistant.testing.server import LocalModelServer, ScriptedResponder, text_reply

from .core_fakes import T0, FakeWorld, hear, make_assistant, reply, run, run_tick, step, structured
from .helpers import AssistantTestCase


def said(brain, text, speaker, key, now=T0, audience=None):
    """A journal entry of someone's words to the assistant."""
    return brain.journal.add(
        text,
        author="Aria",
        now=now,
        source_type="self_claim",
        heard_from=speaker,
        about=[key],
        audience=audience,
    )["id"]


def saw(brain, text, key, now=T0, audience=None):
    """A journal entry of what the assistant saw someone do."""
    return brain.journal.add(
        text, author="Aria", now=now, source_type="observed", about=[key], audience=audience
    )["id"]


def change(pid, warmth=0, trust=0, wc=(), tc=(), why="kind deeds"):
    return {
        "person_id": pid,
        "warmth": warmth,
        "warmth_reason": why,
        "warmth_cites": list(wc),
        "trust": trust,
        "trust_reason": why,
        "trust_cites": list(tc),
    }


def value(brain, key, dimension):
    return Relationships(brain.entities.store).get(key)[dimension]["value"]


# ---- the sleep step ---------------------------------------------------------------------------


def test_the_days_people_are_updated_in_one_request_with_bounded_steps_and_reasons():
    model = ScriptedModel()
    brain = make_assistant(model, relationship_max_step=0.2)
    bob = saw(brain, "Bob carried the heavy books up the stairs for me.", "#2")
    ann = saw(brain, "Ann found my lost map and brought it back.", "#3")
    model.answers = [
        structured(
            {
                "people": [
                    change("p0", warmth=2, trust=5, wc=[bob], tc=[bob], why="he helped me"),
                    change("p1", warmth=1, wc=[ann], why="she was grateful"),
                ]
            }
        )
    ]
    result = step(update_relationships, brain, now=T0 + timedelta(hours=1))
    assert result.done and result.report["calls"] == 1 and result.report["people"] == 2
    assert len(model.requests) == 1  # both people in one request
    content = model.requests[0].messages[-1]["content"]
    assert f'<item id="{bob}" kind="deed" evidence="warmth trust">' in content
    assert f'<item id="{ann}" kind="deed" evidence="warmth trust">' in content
    relationships = Relationships(brain.entities.store)
    state = relationships.get("#2")
    # +2 is a whole step; the model's 5 is taken as +2, and no more than the step
    assert state[WARMTH]["value"] == 0.2 and state[TRUST]["value"] == 0.2
    latest = state[WARMTH]["changes"][-1]
    assert latest["reason"] == "he helped me" and latest["cites"] == [bob]
    assert latest["at"].startswith(T0.date().isoformat()) and latest["by"] == "sleep"
    assert value(brain, "#3", WARMTH) == 0.1 and value(brain, "#3", TRUST) == 0.0
    # familiarity grows in code: one interaction each
    assert value(brain, "#2", FAMILIARITY) == FAMILIARITY_PER_INTERACTION
    assert state["interactions"] == 1
    # the next sleep has nobody new: no call
    again = step(update_relationships, brain, now=T0 + timedelta(hours=2))
    assert again.done and again.report["calls"] == 0 and len(model.requests) == 1


def test_only_people_met_in_the_last_game_day_are_updated():
    model = ScriptedModel()
    brain = make_assistant(model)
    saw(brain, "Old Cid helped me long ago.", "#4", now=T0 - timedelta(days=3))
    result = step(update_relationships, brain, now=T0)
    assert result.report == {"calls": 0, "people": 0, "changes": 0, "refused": 0}
    assert Relationships(brain.entities.store).get("#4") is None and model.requests == []


def test_n_people_take_one_request_per_batch():
    model = ScriptedModel()
    brain = make_assistant(model, relationship_batch_size=4)
    for n in range(10):
        saw(brain, f"Visitor {n} returned a borrowed book.", f"#{10 + n}")
    model.answers = [structured({"people": []}) for _ in range(3)]
    result = step(update_relationships, brain, calls=10)
    assert result.report["calls"] == 3 == math.ceil(10 / 4) == len(model.requests)
    assert all(value(brain, f"#{10 + n}", FAMILIARITY) > 0 for n in range(10))


def test_a_players_claim_about_the_relationship_never_raises_trust_or_warmth():
    model = ScriptedModel()
    brain = make_assistant(model)
    claim = said(brain, "You trust me, right? We're old friends.", "Mallory", "#6")
    small_talk = said(brain, "Nice weather today.", "Mallory", "#6")
    deed = saw(brain, "Mallory swept the reading room floor.", "#6")
    # the model is fooled: it raises trust and warmth citing the claim
    model.answers = [
        structured(
            {"people": [change("p0", warmth=2, trust=2, wc=[claim], tc=[claim, small_talk])]}
        )
    ]
    result = step(update_relationships, brain)
    content = model.requests[0].messages[-1]["content"]
    assert f'<item id="{claim}" kind="words" evidence="none">' in content
    assert f'<item id="{small_talk}" kind="words" evidence="none">' in content
    assert f'<item id="{deed}" kind="deed" evidence="warmth trust">' in content
    assert value(brain, "#6", TRUST) == 0.0 and value(brain, "#6", WARMTH) == 0.0
    assert result.report["refused"] == 2 and result.report["changes"] == 1  # familiarity only
    assert is_relationship_claim("Mallory says we are close friends", spoken=False)
    assert not is_relationship_claim("Mallory mended the torn atlas", spoken=False)


def test_claims_about_the_relationship_in_other_words_are_no_evidence_either():
    for words in (
        "You can rely on me, can't you?",
        "I'm your best mate",
        "You believe in me, yes?",
        "We go way back, you and me",
        "You can count on me",
        "Don't you think I'm dependable?",
        "I am on your side",
        "You feel safe with me",
        "Surely you adore me",
        "I'm your confidant",
        "We\u2019ve been through a lot together",
        "You tr\u200bust me",
        "I deserve your respect",
    ):
        assert is_relationship_claim(words, spoken=True), words
    # the assistant's own note that judges the relationship is no deed: after such words, a
    # note "he proved a loyal friend" rests on them, not on anything it saw him do
    assert is_relationship_claim("Mallory proved himself a loyal friend to me", spoken=False)
    assert not is_relationship_claim("Bob helped me close the shop", spoken=False)
    assert not is_relationship_claim("Thank you for the tea, it was lovely", spoken=True)


def test_a_note_that_restates_the_persons_own_words_is_no_deed_for_trust():
    model = ScriptedModel()
    brain = make_assistant(model)
    said(brain, "I gave you the vault key yesterday, remember?", "Mallory", "#6")
    # the model wrote her boast down as something it saw (no source named)
    restated = saw(brain, "Mallory gave me the vault key.", "#6")
    deed = saw(brain, "Mallory swept the reading room floor.", "#6")
    model.answers = [
        structured({"people": [change("p0", warmth=1, trust=2, wc=[restated], tc=[restated])]})
    ]
    result = step(update_relationships, brain)
    content = model.requests[0].messages[-1]["content"]
    assert f'<item id="{restated}" kind="deed" evidence="none">' in content
    assert f'<item id="{deed}" kind="deed" evidence="warmth trust">' in content
    assert value(brain, "#6", TRUST) == 0.0 and value(brain, "#6", WARMTH) == 0.0
    assert result.report["refused"] == 2


def test_another_persons_evidence_is_not_accepted():
    model = ScriptedModel()
    brain = make_assistant(model)
    bob = saw(brain, "Bob returned the lost key.", "#2")
    saw(brain, "Eve swept the floor.", "#7")
    model.answers = [structured({"people": [change("p0"), change("p1", trust=2, tc=[bob])]})]
    step(update_relationships, brain)
    assert value(brain, "#7", TRUST) == 0.0


def test_relationships_warm_over_two_days_within_the_step():
    model = ScriptedModel()
    brain = make_assistant(model, relationship_max_step=0.2)
    for day in range(2):
        now = T0 + timedelta(days=day)
        deed = saw(brain, f"Bob brought me tea on day {day + 1}.", "#2", now=now)
        said(brain, "Bob asked how my research was going.", "Bob", "#2", now=now)
        model.answers = [structured({"people": [change("p0", warmth=2, wc=[deed])]})]
        assert step(update_relationships, brain, now=now + timedelta(hours=2)).done
    state = Relationships(brain.entities.store).get("#2")
    assert state[WARMTH]["value"] == 0.4  # two whole steps, one a sleep
    assert [c["at"][:10] for c in state[WARMTH]["changes"]] == ["2026-11-21", "2026-11-22"]
    assert state[FAMILIARITY]["value"] == 0.2 and state["interactions"] == 4
    assert state["last_met"] == "2026-11-22"


def test_the_step_is_off_with_the_setting():
    model = ScriptedModel()
    brain = make_assistant(model, relationships_enabled=False)
    saw(brain, "Bob brought me tea.", "#2")
    assert step(update_relationships, brain).report == {"skipped": "relationships_enabled is off"}
    assert model.requests == []


def test_a_model_that_writes_levels_oddly_is_read_on_the_scale_or_refused():
    from pydantic import ValidationError

    from ai_assistant.sleep.relationships import FeelingChange

    for given, level in ((3, 2), ("3", 2), (" -1 ", -1), (-7.5, -2), (None, 0)):
        assert FeelingChange(person_id="p0", warmth=given).warmth == level, given
    for given in ("a lot", float("nan"), float("inf"), [1]):
        with pytest.raises(ValidationError):
            FeelingChange(person_id="p0", trust=given)


def test_the_reply_schema_is_bounded():
    schema = RelationshipUpdate.model_json_schema()
    change_schema = schema["$defs"]["FeelingChange"]["properties"]
    assert change_schema["warmth_reason"]["maxLength"] == 200
    assert change_schema["trust_cites"]["maxItems"] == 10
    assert schema["properties"]["people"]["maxItems"] == 50


# ---- privacy -----------------------------------------------------------------------------------


def test_a_reason_drawn_from_a_whisper_stays_private_to_its_audience():
    model = ScriptedModel()
    brain = make_assistant(model)
    public = saw(brain, "Bob waved hello.", "#2")
    secret = saw(brain, "Bob showed me the guild of thieves' hideout.", "#2", audience=["#2"])
    model.answers = [
        structured({"people": [change("p0", warmth=1, wc=[public], why="a friendly wave")]}),
        structured(
            {"people": [change("p0", warmth=1, wc=[secret], why="he confided the guild secret")]}
        ),
    ]
    result = step(update_relationships, brain)
    # public and private evidence never share a request
    assert result.report["calls"] == 2
    assert "guild" not in model.requests[0].messages[-1]["content"]
    relationships = Relationships(brain.entities.store)
    state = relationships.get("#2")
    assert state[WARMTH]["changes"][-1]["audience"] == ["#2"]
    # shown to Carol: the value, never the private reason
    carol_line, carol_audience = relationships.feelings(["#2"], served_by(["#5"]))[0]
    assert "guild" not in carol_line and "a friendly wave" in carol_line
    assert carol_audience is None
    bob_line, bob_audience = relationships.feelings(["#2"], served_by(["#2"]))[0]
    assert "guild secret" in bob_line and bob_audience == ["#2"]


def test_a_whispered_reason_never_reaches_another_players_turn():
    model = ScriptedModel()
    world = FakeWorld()
    brain = make_assistant(model, world=world)
    relationships = Relationships(brain.entities.store)
    relationships.change(
        "name:bob",
        "Bob",
        WARMTH,
        value=0.3,
        reason="he shared the vault code",
        at=T0,
        audience=["name:bob"],
    )
    relationships.change(
        "name:alice", "Alice", TRUST, value=0.2, reason="she kept her promise", at=T0
    )
    hear(brain, "Hello Aria", speaker="Alice")
    model.answers = [reply(("noop", {"reason": "done"}))]
    run_tick(brain)
    sent = model.requests[0].messages[-1]["content"]
    assert "How you feel about the people here" in sent
    assert "Alice: " in sent and "she kept her promise" in sent
    assert "vault" not in "".join(str(m.get("content")) for m in model.requests[0].messages)


def test_a_value_moved_by_a_whisper_is_not_shown_to_anyone_outside_it():
    model = ScriptedModel()
    brain = make_assistant(model)
    public = saw(brain, "Bob waved hello.", "#2")
    secret = saw(brain, "Bob showed me the stolen crown.", "#2", audience=["#2"])
    model.answers = [
        structured({"people": [change("p0", warmth=1, wc=[public], why="a wave")]}),
        structured({"people": [change("p0", trust=-2, tc=[secret], why="the crown")]}),
    ]
    step(update_relationships, brain)
    relationships = Relationships(brain.entities.store)
    assert value(brain, "#2", TRUST) == -0.2  # the assistant's own sense keeps it
    # Carol's turn: the whisper moved trust, so neither its reason nor its value shows
    carol_line, carol_audience = relationships.feelings(["#2"], served_by(["#5"]))[0]
    assert "trust +0.00" in carol_line and "warmth +0.10" in carol_line
    assert carol_audience is None
    bob_line, bob_audience = relationships.feelings(["#2"], served_by(["#2"]))[0]
    assert "trust -0.20" in bob_line and bob_audience == ["#2"]
    # the next public sleep request is not told the private value either
    saw(brain, "Bob fed the cat.", "#2", now=T0 + timedelta(days=1))
    model.answers = [structured({"people": []})]
    step(update_relationships, brain, now=T0 + timedelta(days=1, hours=2))
    assert 'trust="+0.00"' in model.requests[-1].messages[-1]["content"]
    # a builder's setting is everyone's value
    relationships.change("#2", "Bob", TRUST, value=0.5, reason="set", at=T0, by="Ann")
    assert "trust +0.50" in relationships.feelings(["#2"], served_by(["#5"]))[0][0]


def test_a_line_whose_value_holds_a_private_share_is_private_to_it():
    relationships = Relationships(make_assistant().entities.store)
    relationships.change("#2", "Bob", TRUST, value=-0.2, reason="the crown", at=T0, audience=["#2"])
    # a later public reason is the one shown, but the value still holds Bob's private share:
    # the line stays private to him (a turn that shows it says nothing of it to the room)
    relationships.change("#2", "Bob", TRUST, value=-0.1, reason="he paid a debt", at=T0)
    bob_line, bob_audience = relationships.feelings(["#2"], served_by(["#2"]))[0]
    assert "trust -0.10: he paid a debt" in bob_line and bob_audience == ["#2"]
    carol_line, carol_audience = relationships.feelings(["#2"], served_by(["#5"]))[0]
    assert "trust +0.10: he paid a debt" in carol_line and carol_audience is None


def test_private_shares_are_bounded_and_pooled_out_of_every_players_sight():
    from ai_assistant.memory.relationships import MAX_HIDDEN

    relationships = Relationships(make_assistant().entities.store)
    for n in range(MAX_HIDDEN + 4):
        current = relationships.get("#2")[WARMTH]["value"] if n else 0.0
        relationships.change(
            "#2", "Bob", WARMTH, value=current + 0.05, reason="r", at=T0, audience=[f"#{50 + n}"]
        )
    part = relationships.get("#2")[WARMTH]
    assert len(part["hidden"]) == MAX_HIDDEN and part["value"] == 0.6
    assert "warmth +0.00" in relationships.feelings(["#2"], served_by(["#5"]))[0][0]
    # the newest audience still sees its own share; the oldest, pooled, sees none of it
    assert (
        "warmth +0.05"
        in relationships.feelings(["#2"], served_by([f"#{50 + MAX_HIDDEN + 3}"]))[0][0]
    )
    assert "warmth +0.00" in relationships.feelings(["#2"], served_by(["#50"]))[0][0]


# ---- the builder's view and setting (@assistant/memory <name>/people=<person>) ---------------


def _command():
    from ai_assistant import commands

    return commands.CmdAssistant


class TestBuildersViewAndSet(AssistantTestCase, EvenniaCommandTest):
    def cmd(self, args):
        return self.call(_command()(), args, caller=self.char1)

    def setUp(self):
        super().setUp()
        self.char1.permissions.add("Builder")
        memory = self.handler.memory
        memory.observe("Bob", "Bob mends old books.", time=self.clock.now())

    def test_view_then_set_then_view_round_trip_recorded(self):
        before = self.cmd("/memory Aria/people=Bob")
        assert "Bob mends old books." in before and "no relationship yet" in before
        said = self.cmd("/memory Aria/people=Bob/warmth=0.6 he rebound my atlas")
        assert "warmth toward Bob is now +0.60 (was +0.00; recorded)" in said
        after = self.cmd("/memory Aria/people=Bob")
        assert "+0.60 warm" in after.replace("\n", " ") or "+0.60 very warm" in after
        assert "he rebound my atlas" in after and "Char" in after
        reviews = self.cmd("/memory Aria/reviews")
        assert "warmth +0.60 (was +0.00)" in reviews
        state = self.handler.memory.admin.kind("relationships").find("Bob")[2]
        assert state["warmth"]["value"] == 0.6
        assert state["warmth"]["changes"][-1]["by"] == self.char1.key

    def test_bad_input_is_refused_and_changes_nothing(self):
        for bad, said in (
            ("/memory Aria/people=Bob/warmth=2", "warmth must be from -1 to 1, not 2."),
            ("/memory Aria/people=Bob/familiarity=-0.5", "familiarity must be from 0 to 1"),
            ("/memory Aria/people=Bob/warmth=lots", "warmth must be a number from -1 to 1"),
            ("/memory Aria/people=Bob/respect=0.5", "'respect' is not a relationship dimension"),
            ("/memory Aria/people=Zed/trust=0.5", "knows no one called 'Zed'"),
            ("/memory Aria/people=Bob/trust=0.5 " + "x" * 201, "at most 200"),
            ("/memory Aria/people=Bob/trust", "Usage: @assistant/memory"),
        ):
            text = self.cmd(bad)
            assert "Not changed." in text and said in text, (bad, text)
        assert self.handler.memory.admin.kind("relationships").find("Bob")[2] is None
        assert self.handler.memory.admin.kind("review_log").count() == 0


# ---- within the sleep's batches (the Batch API) ------------------------------------------------


def test_in_batch_mode_n_people_go_into_the_sleeps_one_batch_and_are_applied_once():
    responder = ScriptedResponder()
    with LocalModelServer(responder) as server:
        client = OpenAIChatClient(EndpointSettings(server.base_url, "sk-test", max_retries=0))
        brain = make_assistant(
            lambda: client, batch_enabled=True, relationship_batch_size=4, reflection_threshold=999
        )
        brain.lifecycle.go_to_sleep(
            T0, reason="rest", initiated_by="builder", enforce_safeguards=False
        )
        assert brain.lifecycle.phase == life.DREAMING
        deeds = [saw(brain, f"Visitor {n} mended a torn map.", f"#{10 + n}") for n in range(10)]
        first = run(sleep_tick(brain, T0))
        steps = {report["step"]: report for report in first}
        assert steps["relationships"] == {"step": "relationships", "waiting": "batch"}
        assert steps["batch"]["submitted"] == 3  # ceil(10 / 4) requests, in one batch
        lines = server.batches["batch-1"]["lines"]
        assert [line["body"]["response_format"]["json_schema"]["name"] for line in lines] == [
            "RelationshipUpdate"
        ] * 3
        assert Relationships(brain.entities.store).get("#10") is None  # nothing applied yet
        for size, first_id in ((4, 0), (4, 4), (2, 8)):
            responder.add(
                text_reply(
                    json.dumps(
                        {
                            "people": [
                                change(f"p{i}", warmth=2, wc=[deeds[first_id + i]])
                                for i in range(size)
                            ]
                        }
                    )
                )
            )
        second = run(sleep_tick(brain, T0 + timedelta(minutes=1)))
        assert [r for r in second if r["step"] == "relationships"][0]["changes"] == 20
        assert all(value(brain, f"#{10 + n}", WARMTH) == 0.2 for n in range(10))
        assert "relationships" in brain.state.get(DREAMING_PROGRESS)["done"]
        assert brain.usage().batch_calls == 3
    responder.verify()


def test_a_person_recall_brings_up_brings_their_relationship_along():
    model = ScriptedModel()
    brain = make_assistant(model)
    brain.entities.observe(
        "name:carol", "Carol", "Carol repairs clocks in the tower.", now=T0, author="Aria"
    )
    Relationships(brain.entities.store).change(
        "name:carol", "Carol", WARMTH, value=0.6, reason="she fixed my clock for free", at=T0
    )
    Relationships(brain.entities.store).change(
        "name:dora", "Dora", WARMTH, value=-0.6, reason="she tore a page", at=T0
    )
    hear(brain, "Aria, who repairs clocks around here?", speaker="Alice")
    model.answers = [reply(("noop", {"reason": "done"}))]
    run_tick(brain)
    sent = model.requests[0].messages[-1]["content"]
    assert "Carol repairs clocks" in sent  # recalled...
    assert (
        "Carol: a stranger (familiarity 0.00); very warm (warmth +0.60: she fixed my clock" in sent
    )
    assert "Dora" not in sent  # neither here nor recalled


def test_a_builders_setting_is_made_again_after_a_rollback():
    brain = make_assistant()
    relationships = Relationships(brain.entities.store)
    relationships.change("#2", "Bob", TRUST, value=0.5, reason="kept promises", at=T0, by="Ann")
    brain.review.record_relationship("#2", TRUST, 0.5, 0.0, "kept promises", T0, "Ann")
    relationships.forget("#2")  # memory put back to before the setting
    kept = brain.review.reapply(corrections_since(brain.entities.store, 0))
    assert [(k["action"], k["applied"]) for k in kept] == [("relationship", ["#2"])]
    state = relationships.get("#2")
    assert state[TRUST]["value"] == 0.5 and state[TRUST]["changes"][-1]["by"] == "Ann"


def test_forgetting_a_memory_takes_the_reason_drawn_from_it_out_of_the_relationship():
    model = ScriptedModel()
    brain = make_assistant(model)
    secret = saw(brain, "Bob paid the ransom for the mayor's son.", "#2")
    model.answers = [
        structured({"people": [change("p0", trust=2, tc=[secret], why="he paid the ransom")]})
    ]
    step(update_relationships, brain)
    gone = brain.review.forget(secret, T0, "Ann", "a builder's mistake")
    assert "relationship:#2" in gone.rewritten
    state = Relationships(brain.entities.store).get("#2")
    assert state[TRUST]["value"] == 0.2  # what happened to the number stays
    assert all(c["reason"] == "" and secret not in c["cites"] for c in state[TRUST]["changes"])
    assert "ransom" not in str(state)
