"""Routines and today's plan: the pure core (`memory.plans`) and the game side (`shell.plans`):
walking through exits with the assistant's own rights, a locked exit refused, the plan giving
way to whoever speaks to it, a routine's sleep, `@assistant/plan`, no model call."""

import json
from datetime import datetime, timezone

import pytest
from evennia.objects.objects import DefaultExit, DefaultRoom
from evennia.utils import create
from evennia.utils.test_resources import EvenniaCommandTest

from ai_assistant.memory.plans import (
    MAX_ITEMS,
    DayPlan,
    PlanError,
    find_path,
    format_routine,
    parse_routine,
    statuses,
)
from ai_assistant.clock import ManualClock
from ai_assistant.memory.store import DictStore
from ai_assistant.testing.server import text_reply, tool_call, tool_reply

from .helpers import AssistantTestCase

ROOMS = {"library": ("#5", "Library"), "tavern": ("#6", "Tavern")}


def resolve(name):
    try:
        return ROOMS[name.strip().lower()]
    except KeyError:
        raise PlanError(f"No room called '{name}'.") from None


def at(hour, minute=0, day=1):
    return datetime(2026, 3, day, hour, minute, tzinfo=timezone.utc)


# ---- the pure core -------------------------------------------------------------------------


def test_a_routine_is_read_by_time_and_written_back():
    items = parse_routine(
        "12:00 tavern: has lunch\n8:00 Library: opens the library;22:00 sleep", resolve
    )
    assert [(i["at"], i["room"], i["activity"]) for i in items] == [
        ("08:00", "#5", "opens the library"),
        ("12:00", "#6", "has lunch"),
        ("22:00", None, "sleep"),
    ]
    assert parse_routine(format_routine(items), resolve) == items


@pytest.mark.parametrize(
    "text, says",
    [
        ("25:00 Library: reads", "is not a time"),
        ("8 Library", "is not a time"),
        ("08:00 Cellar: hides", "No room called 'Cellar'"),
        ("08:00 : reads", "names no room"),
        ("08:00 Library: a; 08:00 Tavern: b", "Two items at 08:00"),
        ("08:00 Library: " + "x" * 121, "at most 120 characters"),
        (";".join(f"{h:02d}:{m:02d} Library" for h in range(13) for m in (0, 30)), "at most 24"),
        ("x" * 4001, "at most 4000 characters"),
    ],
)
def test_bad_routines_are_refused_with_what_is_allowed(text, says):
    with pytest.raises(PlanError, match=says):
        parse_routine(text, resolve)


def test_todays_plan_comes_from_the_routine_each_day_and_clearing_lasts_the_day():
    day = DayPlan(DictStore())
    assert day.today(at(9))["items"] == [] and day.due(at(9)) is None
    day.set_routine(parse_routine("08:00 Library: reads; 12:00 Tavern: eats", resolve), at(9))
    index, item = day.due(at(9))
    assert (index, item["room_name"], item["source"]) == (0, "Library", "routine")
    assert day.due(at(7)) is None and day.due(at(12, 30))[1]["room_name"] == "Tavern"
    day.mark(at(9), 0, "arrived")
    assert statuses(day.today(at(12, 5))["items"], at(12, 5)) == ["done", "now"]
    assert day.clear(at(12, 5)) == 2
    assert day.today(at(13))["items"] == []  # cleared for the day
    tomorrow = day.today(at(8, day=2))["items"]
    assert [i["room_name"] for i in tomorrow] == ["Library", "Tavern"]
    assert not any(i.get("status") for i in tomorrow)


def test_a_sleep_item_ends_at_the_next_item_or_tomorrows_first():
    day = DayPlan(DictStore())
    day.set_routine(
        parse_routine("08:00 Library; 13:00 sleep; 15:00 Tavern; 22:00 sleep", resolve), at(13)
    )
    assert day.sleep_until(at(13), 1, 4) == at(15)
    assert day.sleep_until(at(22), 3, 4) == at(8, day=2)
    alone = DayPlan(DictStore())
    alone.set_routine(parse_routine("22:00 sleep", resolve), at(22))
    assert alone.sleep_until(at(22), 0, 4) == at(22).replace(day=2, hour=2)


def test_find_path_is_shortest_avoids_what_is_not_given_and_is_bounded():
    graph = {"a": [("ab", "b"), ("ac", "c")], "b": [("bd", "d")], "c": [("cd", "d")], "d": []}
    assert find_path("a", "d", lambda room: graph[room]) == ["ab", "bd"]
    assert find_path("a", "a", lambda room: graph[room]) == []
    graph["a"] = [("ac", "c")]  # the exit to b is locked: not given
    assert find_path("a", "d", lambda room: graph[room]) == ["ac", "cd"]
    assert find_path("d", "a", lambda room: graph[room]) is None
    # a corridor of 1000 rooms: the search gives up after the bound, not at the end
    visited = []

    def corridor(room):
        visited.append(room)
        return [(f"e{room}", room + 1)] if room < 1000 else []

    assert find_path(0, 1000, corridor, max_rooms=50) is None
    assert len(visited) < 50


# ---- in the game -------------------------------------------------------------------------


class PlanWorld(AssistantTestCase, EvenniaCommandTest):
    def setUp(self):
        super().setUp()
        # Room -out-> Room2 -east-> Hall; Hall -> Room by a locked door
        self.hall = create.create_object(DefaultRoom, key="Hall")
        self.east = create.create_object(
            DefaultExit, key="east", location=self.room2, destination=self.hall
        )
        self.game = ManualClock(datetime(2026, 3, 1, 7, 0, tzinfo=timezone.utc))
        self.handler.game_clock = self.game

    def cmd(self, args):
        from ai_assistant import commands

        return self.call(commands.CmdAssistant(), args)

    def walk(self, ticks=1):
        for _ in range(ticks):
            self.tick(advance=5)


class PlanCase(PlanWorld):
    def test_it_walks_one_exit_a_tick_and_emotes_on_arrival_without_the_model(self):
        self.cmd("/plan Aria=08:00 Hall: dusts the shelves; 12:00 Room: rests")
        self.walk()
        assert self.aria.location == self.room1  # 07:00: nothing due yet
        self.game.advance(3600)
        self.walk()
        assert self.aria.location == self.room2
        self.walk()
        assert self.aria.location == self.hall
        self.walk(3)
        assert self.aria.location == self.hall
        plan = self.script.db.day_plan
        assert plan["items"][0]["status"] == "arrived"
        assert self.responder.requests == []  # no model call

    def test_the_emote_is_seen_once_by_the_room(self):
        self.aria.location = self.room2
        self.char2.location = self.hall
        self.game.advance(3600)
        self.cmd("/plan Aria=08:00 Hall: dusts the shelves")
        self.walk(4)
        seen = [line for line in self.received(self.char2) if "dusts the shelves" in line]
        assert seen == ["Aria dusts the shelves."]

    def test_markup_in_an_activity_is_shown_as_typed(self):
        self.game.advance(3600)
        self.cmd("/plan Aria=08:00 Room: waves a |rred|n flag")
        self.walk()
        assert "Aria waves a |rred|n flag." in self.received(self.char2)

    def test_a_locked_exit_is_never_passed_and_the_item_is_blocked(self):
        self.exit.locks.add("traverse:false()")
        self.game.advance(3600)
        self.cmd("/plan Aria=08:00 Hall: dusts the shelves")
        self.walk(3)
        assert self.aria.location == self.room1
        text = self.cmd("/plan Aria")
        assert "blocked: no" in text and "08:00" in text
        assert self.script.db.day_plan["items"][0]["status"] == "blocked"

    def test_another_way_round_a_locked_exit_is_taken(self):
        self.exit.locks.add("traverse:false()")
        create.create_object(DefaultExit, key="hatch", location=self.room1, destination=self.hall)
        self.game.advance(3600)
        self.cmd("/plan Aria=08:00 Hall")
        self.walk()
        assert self.aria.location == self.hall

    def test_the_plan_gives_way_to_a_speaker(self):
        self.game.advance(3600)
        self.cmd("/plan Aria=08:00 Hall: dusts the shelves")
        self.responder.add(text_reply("Hello! I was just leaving."))
        self.char1.execute_cmd("say Aria, wait a moment")
        self.walk()  # the turn answers; the plan waits
        assert self.aria.location == self.room1
        assert len(self.responder.requests) == 1
        self.walk(5)  # 25 seconds after the talk: still waiting for it to go on
        assert self.aria.location == self.room1
        self.walk(8)  # a minute on: off it goes
        assert self.aria.location in (self.room2, self.hall)
        assert len(self.responder.requests) == 1

    def test_a_routine_sleep_is_a_scheduled_sleep_until_the_next_item(self):
        self.game.advance(15 * 3600)  # 22:00
        self.cmd("/plan Aria=08:00 Room: opens up; 22:00 sleep")
        self.walk()
        assert self.script.db.operating_mode == "sleep"
        assert self.script.db.sleep_initiated_by == "schedule"
        assert "until 08:00 game time" in self.script.db.sleep_reason
        assert self.responder.requests == []

    def test_the_command_shows_sets_and_clears_and_refuses_bad_input(self):
        before = self.script.db.routine
        text = self.cmd("/plan Aria=08:00 Nowhere: waits")
        assert "Not changed." in text and "No room called 'Nowhere'" in text
        assert self.script.db.routine == before
        text = self.cmd("/plan Aria=09:00 Hall: dusts the shelves; 12:00 #%d: eats" % self.room2.id)
        assert "routine (2 items) is set" in text
        text = self.cmd("/plan Aria")
        for word in ("09:00", "Hall", "dusts the shelves", "routine", "Room2", "later"):
            assert word in text, word
        assert "12:00 Room2: eats" in self.cmd("/plan Aria/routine")
        assert "cleared (2 items)" in self.cmd("/plan Aria/clear")
        assert "Nothing planned" in self.cmd("/plan Aria")
        assert "Not changed." in self.cmd("/plan Aria/bogus")
        assert "no routine now" in self.cmd("/plan Aria=")
        assert self.script.db.routine == []

    def test_the_dashboard_shows_todays_plan_and_reading_it_writes_nothing(self):
        from django.test import Client
        from django.urls import reverse

        self.cmd("/plan Aria=09:00 Hall: dusts the shelves")
        DayPlan(self.handler.brain.state).add(
            [{"at": "11:00", "room": self.room2.dbref, "room_name": "Room2", "activity": "meets"}],
            "agreed with Char",
            self.game.now(),
            [self.char1.dbref],
        )
        builder = Client()
        builder.force_login(self.account)
        text = builder.get(reverse("ai_assistant:detail", args=[self.aria.id])).content.decode()
        section = text[text.index('id="plan"') :][:2000]
        for shown in ("2026-03-01", "09:00", "Hall", "dusts the shelves", "routine", "later"):
            assert shown in section, shown
        assert "agreed with Char" in section and "private" in section
        self.game.advance(24 * 3600)  # a new game day: the page shows it, keeps nothing
        text = builder.get(reverse("ai_assistant:detail", args=[self.aria.id])).content.decode()
        assert "2026-03-02" in text[text.index('id="plan"') :][:300]
        assert self.script.db.day_plan["day"] == "2026-03-01"

    def test_help_has_a_plan_topic_named_on_the_main_page(self):
        from evennia.commands.default.help import CmdHelp
        from evennia.utils.ansi import parse_ansi

        from ai_assistant import commands

        cmdset = commands.AssistantCmdSet()
        cmdset.add(CmdHelp())

        def help_text(args):
            text = self.call(CmdHelp(), args, caller=self.char1, cmdset=cmdset)
            return parse_ansi(text, strip_ansi=True)

        assert "help @assistant/plan" in help_text("@assistant")
        topic = help_text("@assistant/plan")
        assert "'HH:MM <room>: <activity>'" in topic and "/clear empties today's plan" in topic

    def test_an_assistant_without_a_routine_writes_no_plan(self):
        self.walk(2)
        assert self.script.attributes.get("day_plan") is None


class PlanningCase(PlanWorld):
    overrides = {**AssistantTestCase.overrides, "planning_enabled": True}

    def plan_reply(self, *items):
        self.responder.add(text_reply(json.dumps({"items": [dict(i) for i in items]})))

    def test_it_plans_its_day_once_a_game_day_from_public_material(self):
        brain, now = self.handler.brain, self.clock.now()
        key = self.char1.dbref
        brain.journal.add("Bob's password is swordfish.", author="Aria", now=now, audience=[key])
        brain.journal.add("The Hall's shelves are dusty.", author="Aria", now=now)
        brain.core_memory.set("secret", "the vault code is 4471", now, 2000, audience=[key])
        brain.core_memory.set("duty", "keep the library tidy", now, 2000)
        self.cmd("/plan Aria=09:00 Hall: dusts the shelves")
        self.plan_reply(
            {"at": "10:30", "room": "room2", "activity": "reads by the window"},
            {"at": "11:00", "room": "The Moon", "activity": "flies"},  # not a room it may name
            {"at": "09:00", "room": "Room", "activity": "naps"},  # the routine's time
            {"at": "06:00", "room": "Room", "activity": "ate breakfast"},  # already past
        )
        self.tick(advance=5)  # the day's planning call
        assert len(self.responder.requests) == 1
        sent = json.dumps(self.responder.requests[-1]["messages"])
        assert "swordfish" not in sent and "4471" not in sent  # private to Char
        for public in ("shelves are dusty", "keep the library tidy", "Hall", "Room2"):
            assert public in sent, public
        plan = self.script.db.day_plan
        assert [(i["at"], i["room_name"], i["source"]) for i in plan["items"]] == [
            ("09:00", "Hall", "routine"),
            ("10:30", "Room2", "own plan"),
        ]
        assert self.handler.last_plan_report["dropped"] == 3
        self.walk(10)
        self.game.advance(6 * 3600)  # the same game day: no second call
        self.walk(3)
        assert len(self.responder.requests) == 1
        self.game.advance(20 * 3600)  # the next game day: one more
        self.plan_reply()
        self.walk(1)
        assert len(self.responder.requests) == 2
        self.walk(3)
        assert len(self.responder.requests) == 2
        text = self.cmd("/plan Aria")
        assert "routine" in text

    def test_no_planning_call_with_the_budget_spent_nor_later_that_day(self):
        self.script.db.config_overrides = {**self.overrides, "token_budget_per_day": 1}
        self.handler.brain.budget().add(5, self.clock.now(), self.game.now())
        self.walk(3)
        assert self.responder.requests == []
        self.script.db.config_overrides = dict(self.overrides)
        self.walk(3)
        assert self.responder.requests == []  # one try a game day
        assert self.script.db.day_plan["planned"] is True

    def test_a_failed_planning_call_is_not_repeated_all_day(self):
        self.responder.add(text_reply("not json"))
        self.walk(1)
        calls = len(self.responder.requests)
        assert calls >= 1
        self.walk(5)
        assert len(self.responder.requests) == calls
        assert self.handler.last_plan_report["error"]

    def agree(self, how, **args):
        self.responder.add(
            tool_reply(tool_call("agree_to_meet", args)), tool_reply(tool_call("noop", {}))
        )
        self.char1.execute_cmd(how)
        self.tick(advance=5)
        return self.tool_results(self.sent_messages())[-1]  # the agree_to_meet call's

    def test_agreed_in_a_whisper_it_goes_there_and_shows_it_to_no_one_else(self):
        self.day_planned()
        self.game.advance(2 * 3600)  # 09:00
        result = self.agree(
            "whisper Aria = meet me in the hall at ten",
            at="10:00",
            place="hall",
            activity="meets Char",
        )
        assert "Added to your plan: Hall at 10:00" in result
        (item,) = self.script.db.day_plan["items"]
        assert item["source"] == "agreed with Char" and item["audience"] == [self.char1.dbref]
        text = self.cmd("/plan Aria")
        assert "agreed with" in text and "private" in text
        self.char2.location = self.hall
        self.game.advance(3600)
        self.walk(15)  # a minute after the talk, then two exits
        assert self.aria.location == self.hall
        assert self.script.db.day_plan["items"][0]["status"] == "arrived"
        seen = " ".join(self.received(self.char2))
        assert "Aria arrives to Hall" in seen
        assert "meets Char" not in seen  # the private item's activity is never emoted

    def asked(self, how: str) -> str:
        """The turn's message when a line is said to Aria (the model answers with noop)."""
        self.responder.add(tool_reply(tool_call("noop", {})))
        before = len(self.responder.requests)
        self.char1.execute_cmd(how) if how.startswith("whisper") else self.char2.execute_cmd(how)
        self.tick(advance=5)
        request = self.responder.requests[before]
        return [m["content"] for m in request["messages"] if m["role"] == "user"][-1]

    def test_a_turn_knows_its_plan_and_a_whispered_item_only_to_that_player(self):
        self.day_planned()
        self.game.advance(2 * 3600)  # 09:00
        self.cmd("/plan Aria=08:00 Room: opens the library; 12:00 Hall: has lunch")
        self.agree(
            "whisper Aria = meet me in the hall at ten",
            at="10:00",
            place="hall",
            activity="meets Char about the key",
        )
        self.game.advance(90 * 60)  # 10:30: the morning's item is behind her
        # Char2 asks in the room (Char there too): the routine's items, never the whispered one
        said = self.asked("say Aria, where are you off to today?")
        assert "Your plan for today" in said and "12:00 Hall: has lunch" in said
        assert "meets Char" not in said
        assert "08:00 Room" not in said  # done: a turn needs where it is headed
        # Char whispers: the item agreed with him is his to hear of
        whispered = self.asked("whisper Aria = where do we meet?")
        assert "10:00 Hall: meets Char about the key" in whispered

    def test_a_turn_without_a_routine_or_plan_shows_none(self):
        self.day_planned()
        said = self.asked("say Aria, hello")
        assert "Your plan for today" not in said

    def test_a_room_behind_a_locked_exit_cannot_be_agreed(self):
        self.day_planned()
        self.exit.locks.add("traverse:false()")
        self.game.advance(2 * 3600)
        result = self.agree("say Aria, meet me in the Hall at ten", at="10:00", place="Hall")
        assert "no way to a place called 'Hall'" in result
        assert self.script.db.day_plan["items"] == []

    def test_agreements_are_bounded_per_person_and_in_time(self):
        self.day_planned()
        self.game.advance(2 * 3600)  # 09:00
        past = self.agree("say Aria, meet me at eight", at="08:00", place="Room")
        assert "It is already 09:00" in past
        for hour in (10, 11, 12):
            ok = self.agree("say Aria, and then?", at=f"{hour}:00", place="Room2")
            assert "Added" in ok
        refused = self.agree("say Aria, and at one?", at="13:00", place="Room2")
        assert "at most 3" in refused
        assert len(self.script.db.day_plan["items"]) == 3
        assert {i["source"] for i in self.script.db.day_plan["items"]} == {"agreed with Char"}

    def day_planned(self):
        """Today's planning call made (an empty plan), so the tests' turns are the only calls."""
        self.plan_reply()
        self.walk(1)
        assert len(self.responder.requests) == 1

    def test_forgetting_a_person_takes_what_was_agreed_with_them_out_of_the_plan(self):
        self.day_planned()
        self.game.advance(2 * 3600)  # 09:00
        self.cmd("/plan Aria=15:00 Hall: dusts the shelves")
        self.agree("whisper Aria = meet me in the hall at ten", at="10:00", place="Hall")
        assert [i["at"] for i in self.script.db.day_plan["items"]] == ["10:00", "15:00"]
        report = self.handler.memory.forget_person(
            None, by="a builder", keys=[self.char1.dbref], names=["Char"]
        )
        assert report.counts["plan items"] == 1
        (left,) = self.script.db.day_plan["items"]
        assert left["source"] == "routine" and "Char" not in repr(dict(left))
