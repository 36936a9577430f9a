"""
The game-wide limits on players (issue 29): a line over the turns a minute is deferred, not
dropped, and answered when the player's minute has room; a player's turns have a token budget
per hour and game day, across assistants, keyed by account.

"""

from datetime import datetime, timedelta, timezone
from unittest.mock import patch

import pytest
from django.test import override_settings
from evennia.scripts.tickerhandler import TICKER_HANDLER
from evennia.utils import create
from evennia.utils.test_resources import EvenniaCommandTest
from twisted.internet import defer

from ai_assistant.budget import PlayerTokenBudget, TurnRateLimiter
from ai_assistant.driver import inline
from ai_assistant.events import DEFERRED_UNTIL, EventQueue, make_event
from ai_assistant.shell.hearing import PLAYER_TOKENS, PLAYER_TURNS
from ai_assistant.memory.store import DictStore
from ai_assistant.shell.storage import AttributeStore
from ai_assistant.testing.server import error_reply, slow, text_reply, tool_call, tool_reply

from .helpers import AssistantTestCase

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
SECOND = timedelta(seconds=1)


# ---- the limiter, the budget and the queue, alone ------------------------------------------------


def test_lines_over_the_limit_are_given_later_moments_in_order():
    limiter = TurnRateLimiter()
    moments = [limiter.slot("#5", T0 + i * SECOND, 3) for i in range(7)]
    # three at once, then each when the line three before it leaves the minute
    assert moments[:3] == [T0, T0 + SECOND, T0 + 2 * SECOND]
    assert moments[3:] == [
        T0 + 60 * SECOND,
        T0 + 61 * SECOND,
        T0 + 62 * SECOND,
        T0 + 120 * SECOND,
    ]
    assert limiter.deferred(T0 + 6 * SECOND) == 4
    assert limiter.slot("#6", T0, 3) == T0  # someone else is not held back
    assert limiter.slot("#5", T0, 0) == T0  # 0: no limit


def test_deferral_is_bounded_and_silent_players_are_forgotten():
    limiter = TurnRateLimiter()
    moments = [limiter.slot("#5", T0, 2) for _ in range(20)]
    # at most MAX_WAIT (5 minutes) ahead: 2 a minute for 6 minutes, then refused
    assert moments[:12] == [T0 + (i // 2) * limiter.WINDOW for i in range(12)]
    assert moments[12:] == [None] * 8
    assert limiter.deferred(T0) == 10
    for player in range(100):
        limiter.slot(f"#{1000 + player}", T0, 2)
        limiter.tell_once(f"#{1000 + player}", T0)
    later = T0 + limiter.MAX_WAIT + 2 * limiter.WINDOW
    limiter.slot("#7", later, 2)
    assert set(limiter._turns) == {"#7"} and limiter._told == {}


def test_player_token_budget_shares_turns_and_forgets_old_players():
    budget = PlayerTokenBudget()
    budget.charge({"account#1": "ann", "account#2": "bob"}, 101, T0, T0)
    assert budget.spent("account#1", T0, T0) == {"day": 51, "hour": 51}
    assert budget.spent("account#2", T0, T0) == {"day": 50, "hour": 50}
    budget.charge({"account#1": "ann"}, 60, T0, T0)
    assert budget.exhausted("account#1", T0, T0, per_hour=100, per_day=0) == "hour"
    assert budget.exhausted("account#2", T0, T0, per_hour=100, per_day=0) is None
    assert budget.exhausted("account#1", T0, T0, per_hour=0, per_day=0) is None
    assert budget.exhausted("account#1", T0, T0, per_hour=0, per_day=100) == "day"
    assert budget.first_telling("account#1", "hour", T0, T0)
    assert not budget.first_telling("account#1", "hour", T0 + SECOND, T0)
    assert budget.top(T0, T0) == {
        "hour": [("ann", 111), ("bob", 50)],
        "day": [("ann", 111), ("bob", 50)],
    }
    # the next hour and game day: spent again, and the silent players are forgotten
    next_day = T0 + timedelta(days=1)
    assert budget.exhausted("account#1", next_day, next_day, 100, 100) is None
    budget.charge({"account#3": "cy"}, 5, next_day, next_day)
    assert len(budget) == 1 and budget.top(next_day, next_day)["hour"] == [("cy", 5)]


def test_an_hour_of_ordinary_conversation_fits_the_default_limits():
    """A line every 6 s for an hour, each turn two calls of a real model's size (5,000 prompt
    tokens, 4,000 from the provider's cache, 100 completion), through the default limits."""
    from ai_assistant.shell import game_settings
    from ai_assistant.budget import billed_tokens
    from ai_assistant.llm.chat import TokenUsage

    per_minute = game_settings.player_turns_per_minute()
    per_hour = game_settings.player_tokens_per_hour()
    per_day = game_settings.player_tokens_per_day()
    limiter, budget = TurnRateLimiter(), PlayerTokenBudget()
    call = TokenUsage(prompt=5000, completion=100, cached=4000)
    start = T0.replace(minute=0)
    for line in range(600):
        now = start + line * 6 * SECOND
        assert budget.exhausted("account#1", now, now, per_hour, per_day) is None, line
        assert limiter.slot("account#1", now, per_minute) == now, line  # never deferred
        budget.charge({"account#1": "ann"}, 2 * billed_tokens(call, "gpt-4o-mini"), now, now)
    assert budget.spent("account#1", now, now)["hour"] == 600 * 2200


def test_what_a_call_costs_leaves_out_cached_prompt_tokens_and_the_rehearsal_model():
    from ai_assistant.budget import billed_tokens
    from ai_assistant.llm.chat import TokenUsage
    from ai_assistant.offline.rehearsal import REHEARSAL_MODEL

    call = TokenUsage(prompt=5000, completion=120, cached=4500)
    assert billed_tokens(call, "gpt-4o-mini") == 620
    assert billed_tokens(TokenUsage(prompt=300, completion=20), "gpt-4o-mini") == 320
    assert billed_tokens(call, REHEARSAL_MODEL) == 0


def _event(event_id, urgent=True, metadata=None):
    event = make_event(
        event_id=event_id,
        event_type="say",
        speaker="Ann",
        speaker_key="#5",
        text=f"line {event_id}",
        now=T0,
        assistant_names=["Aria"],
        max_chars=200,
    )
    event.urgent = urgent
    event.metadata.update(metadata or {})
    return event


def test_the_queue_releases_deferred_lines_and_never_drops_them_for_chatter():
    queue = EventQueue(DictStore())
    later = (T0 + 60 * SECOND).isoformat()
    deferred = {DEFERRED_UNTIL: later, "held_back": "too many turns a minute"}
    queue.push_many([_event(1, False, deferred), _event(2, False)], max_pending=5)
    queue.push_many([_event(i, False) for i in range(3, 8)], max_pending=5)
    assert 1 in [e.id for e in queue.peek()]  # the chatter went, the deferred line stayed
    assert queue.release_deferred(T0) == T0 + 60 * SECOND
    assert not queue.peek()[0].urgent
    assert queue.release_deferred(T0 + 60 * SECOND) is None
    first = queue.peek()[0]
    assert first.id == 1 and first.urgent and first.metadata == {}


# ---- deferred lines in the game -----------------------------------------------------------------


class LimitsCase(AssistantTestCase):
    def setUp(self):
        super().setUp()
        PLAYER_TOKENS.__init__()  # game-wide, like the count of turns a minute
        self.addCleanup(PLAYER_TOKENS.__init__)
        self.as_player()
        self.start_at_the_top_of_an_hour()  # the players' budgets count by the real hour

    def pending(self) -> list:
        self.handler.hearing.flush()
        return EventQueue(AttributeStore(self.script)).peek()

    def answer(self, text: str = "Yes.") -> None:
        self.responder.add(
            tool_reply(tool_call("say", {"text": text})), tool_reply(tool_call("noop", {}))
        )

    def turn_lines(self, since: int = 0) -> str:
        """The events the turns since request `since` were asked about (their last user
        message)."""
        shown = []
        for request in self.responder.requests[since:]:
            users = [m["content"] for m in request["messages"] if m.get("role") == "user"]
            shown.append(users[-1] if users else "")
        return "\n".join(shown)


class TestDeferredLines(LimitsCase):
    def test_a_line_over_the_limit_is_answered_when_the_minute_has_room(self):
        with override_settings(AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE=1):
            self.answer("One.")
            self.char1.execute_cmd("say Aria, one")
            self.tick()
            self.char1.execute_cmd("say Aria, two")
            self.tick()
            assert len(self.responder.requests) == 2  # the first turn only
            (event,) = self.pending()
            assert event.text == "Aria, two" and event.metadata[DEFERRED_UNTIL]
            told = [t for t in self.received(self.char1) if "will answer you in about" in t]
            assert told == [
                "(Aria will answer you in about 55 s: you are speaking faster than the game's "
                "assistants can follow.)"
            ]
            assert not any("will answer you" in t for t in self.received(self.char2))
            for _ in range(10):  # 50 s: not yet
                self.tick()
            assert len(self.responder.requests) == 2
            self.answer("Two.")
            self.tick()  # the player's minute has room: answered, without a word from them
        assert len(self.responder.requests) == 4
        assert "Aria, two" in self.turn_lines(2)
        assert self.pending() == []

    def test_a_released_line_stays_queued_while_the_model_fails(self):
        with override_settings(AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE=1):
            self.answer("One.")
            self.char1.execute_cmd("whisper Aria = one")
            self.tick()
            self.char1.execute_cmd("whisper Aria = two")
            assert self.pending()[0].metadata[DEFERRED_UNTIL]
            self.responder.add(error_reply(500, "boom"))
            self.tick(advance=60)
            assert len(self.responder.requests) == 3 and "two" in self.turn_lines(2)
            (event,) = self.pending()
            assert event.text == "two" and event.urgent and DEFERRED_UNTIL not in event.metadata
            self.answer("Two.")
            self.tick(advance=10)  # after the back-off
        assert "two" in self.turn_lines(3) and self.pending() == []

    def test_one_line_to_many_assistants_is_answered_by_all_at_the_limits_pace(self):
        names = ["Bea", "Cal", "Dee", "Eve"]
        others = [
            create.create_object(
                "ai_assistant.characters.AssistantCharacter", key=name, location=self.room1
            )
            for name in names
        ]
        handlers = [self.handler] + [other.assistant for other in others]
        for handler in handlers:
            handler.clock = self.clock
        with override_settings(AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE=2):
            self.char1.execute_cmd("say Aria, Bea, Cal, Dee and Eve: is the gate open?")
            for handler in handlers:
                handler.hearing.flush()
            queues = [EventQueue(AttributeStore(h.script)) for h in handlers]
            starting = [[e for e in q.peek() if e.urgent] for q in queues]
            assert [len(s) for s in starting] == [1, 1, 0, 0, 0]
            moments = [q.peek()[0].metadata.get(DEFERRED_UNTIL) for q in queues[2:]]
            assert moments == sorted(moments) and len(set(moments)) == 2  # a minute, then two
            self.clock.advance(60)
            for handler in handlers:
                handler.hearing.flush()
            assert [bool(q.peek()[0].urgent) for q in queues] == [True] * 4 + [False]
            self.clock.advance(60)
            for handler in handlers:
                handler.hearing.flush()
            assert all(q.peek()[0].urgent for q in queues)  # every one of them answers

    def test_a_deferred_whisper_keeps_its_audience(self):
        with override_settings(AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE=1):
            self.answer("Hello.")
            self.char1.execute_cmd("whisper Aria = the code is 4-1-7")
            self.tick()
            self.char2.execute_cmd("say Aria, good morning")
            self.char1.execute_cmd("whisper Aria = and the vault is behind the shelf")
            self.answer("Morning!")
            self.tick()
            (whisper,) = self.pending()
            assert whisper.audience == [self.char1.dbref] and whisper.metadata[DEFERRED_UNTIL]
            # the room's turn did not carry it
            assert "vault" not in self.turn_lines(2)
            self.answer("Noted.")
            self.clock.advance(60)
            self.tick()
        assert "vault" in self.turn_lines(4)
        assert self.pending() == []
        assert not any("vault" in text for text in self.received(self.char2))

    def test_deferred_lines_survive_a_reload(self):
        with override_settings(AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE=1):
            self.answer()
            self.char1.execute_cmd("say Aria, one")
            self.tick()
            self.char1.execute_cmd("say Aria, two")
            self.script.at_server_reload()
            # the server's memory is gone: the limiter and the handler are new
            PLAYER_TURNS.__init__()
            self.aria.__dict__.pop("assistant")
            self.handler = self.aria.assistant
            self.handler.clock, self.handler.runner = self.clock, inline
            self.tick()
            assert len(self.responder.requests) == 2  # still deferred
            self.answer("Two.")
            self.tick(advance=60)
        assert "Aria, two" in self.turn_lines(2) and self.pending() == []

    def test_a_player_who_speaks_beyond_the_bound_is_told_and_heard_as_context(self):
        with override_settings(AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE=1):
            for i in range(8):
                self.char1.execute_cmd(f"say Aria, line {i}")
            events = self.pending()
        assert [e.urgent for e in events] == [True] + [False] * 7
        assert [bool(e.metadata.get(DEFERRED_UNTIL)) for e in events] == [False] + [True] * 5 + [
            False
        ] * 2
        assert events[-1].metadata["held_back"] == "too many lines waiting"
        refused = [t for t in self.received(self.char1) if "not answered on its own" in t]
        assert len(refused) == 1
        # every line was heard: the turn's context holds them all
        assert [e.text for e in events] == [f"Aria, line {i}" for i in range(8)]


class TestTheOutsideCheckSequence(LimitsCase):
    """Model faults, hung calls and recovery with the default limit (10 turns a minute) on:
    an outside check lost 9 of 47 lines and heard no answer for 150 s after the provider
    recovered, because its players had spoken more than 10 lines that minute."""

    def test_faults_hung_calls_a_reload_and_recovery_lose_no_line(self):
        self.script.db.config_overrides = {**self.overrides, "request_timeout": 1.0}
        char3 = create.create_object(
            "evennia.objects.objects.DefaultCharacter", key="Cy", location=self.room1
        )
        lines = []

        def speak(who, count):
            for _ in range(count):
                text = f"Aria, question {len(lines) + 1}?"
                who.execute_cmd(f"say {text}")
                lines.append(text)

        # the provider fails
        self.responder.add(error_reply(500, "boom"))
        speak(self.char1, 8)
        speak(self.char2, 8)
        self.tick()
        self.responder.add(error_reply(503, "overloaded"))
        speak(self.char1, 4)  # 12 this minute: 2 wait
        speak(char3, 6)
        self.tick(advance=5)
        # then hangs
        self.responder.add(slow(text_reply("late"), 2.0))
        speak(self.char2, 4)  # 12 this minute: 2 wait
        self.tick()
        self.tick(advance=10)
        assert len(self.responder.requests) == 3 and self.script.db.retry_after
        # a reload while a turn waits on the model: the turn is lost with the process, its
        # events are not
        held = []
        self.handler.runner = lambda work: held.append(work) or defer.Deferred()
        speak(char3, 5)  # 11 this minute: 1 waits
        self.tick(advance=20)
        assert self.handler.in_flight and len(held) == 1
        self.script.at_server_reload()
        TICKER_HANDLER.save()
        TICKER_HANDLER.ticker_storage = {}
        TICKER_HANDLER.restore(server_reload=True)
        PLAYER_TURNS.__init__()
        self.aria.__dict__.pop("assistant")
        self.handler = self.aria.assistant
        self.handler.clock, self.handler.runner = self.clock, inline
        self.script.at_server_start()
        (ticker,) = self.our_tickers()
        assert ticker[3] == 5
        # the provider recovers: the first tick after the back-off answers every line so far
        since = len(self.responder.requests)
        self.answer("Back!")
        self.tick()
        assert len(self.responder.requests) == since + 2
        assert [line for line in lines if line not in self.turn_lines(since)] == []
        assert self.pending() == []
        # the players go on: ten lines answered, then four more in the same minute
        self.answer("More.")
        speak(self.char1, 10)
        self.tick()
        assert self.pending() == []
        spoken_at = self.clock.now()
        speak(self.char1, 4)
        assert len(lines) == 49
        since = len(self.responder.requests)
        # no one speaks again: the four are answered within the limit's pace
        while self.clock.now() - spoken_at < timedelta(seconds=70):
            self.clock.advance(5)
            if any(event.urgent for event in self.pending()):
                self.answer("Later.")
            self.tick(advance=0)
            if not self.pending():
                break
        assert self.pending() == []
        assert all(line in self.turn_lines(since) for line in lines[-4:])
        assert self.clock.now() - spoken_at <= timedelta(seconds=65)


# ---- a token budget per player ------------------------------------------------------------------


class TestPlayerTokenBudget(LimitsCase, EvenniaCommandTest):
    def account_key(self, account) -> str:
        return f"account#{account.id}"

    def spent(self, account) -> int:
        now = self.clock.now()
        return PLAYER_TOKENS.spent(self.account_key(account), now, self.handler.hearing.game_now())[
            "hour"
        ]

    def test_a_player_whose_tokens_are_spent_is_heard_but_starts_no_turn(self):
        # a second character of the same player: one player, one budget
        alt = create.create_object(
            "evennia.objects.objects.DefaultCharacter", key="Alt", location=self.room1
        )
        alt.account = self.account
        alt.msg = self.char1.msg
        with override_settings(AI_ASSISTANT_PLAYER_TOKENS_PER_HOUR=10):
            self.answer("One.")
            self.char1.execute_cmd("say Aria, one")
            self.tick()
            assert len(self.responder.requests) == 2
            charged = self.spent(self.account)
            assert charged > 10 and self.spent(self.account2) == 0
            self.char1.execute_cmd("say Aria, two")
            alt.execute_cmd("say Aria, it is me again")
            self.tick()
            self.char1.execute_cmd("say Aria, three")
            self.tick()
            assert len(self.responder.requests) == 2  # no turn started
            events = self.pending()
            assert [e.metadata.get("held_back") for e in events] == [
                "the player's tokens for the hour are spent"
            ] * 3
            told = [t for t in self.received(self.char1) if "your share" in t]
            assert told == [
                "(You have had your share of the assistants' thought for this hour: they hear "
                "you, and take in what you say with what others say, but will not answer you "
                "on their own until the next hour.)"
            ]
            assert not any("your share" in t for t in self.received(self.char2))
            # another player is answered, and pays alone for the turn their line started
            self.answer("Hello.")
            self.char2.execute_cmd("say Aria, hello")
            self.tick()
            assert len(self.responder.requests) == 4
            assert self.spent(self.account) == charged and self.spent(self.account2) > 0
            # a builder's instruction is never held back by it
            self.answer("Greetings!")
            self.handler.instruct(self.char1, "Greet everyone who comes in.")
            self.tick()
            assert len(self.responder.requests) == 6
            assert self.spent(self.account) == charged
            # the next hour, the player is answered again
            self.answer("Again.")
            self.clock.advance(3600)
            self.char1.execute_cmd("say Aria, four")
            self.tick()
        assert len(self.responder.requests) == 8 and self.pending() == []

    def test_a_deferred_line_released_after_the_players_tokens_are_spent_starts_no_turn(self):
        with override_settings(
            AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE=1, AI_ASSISTANT_PLAYER_TOKENS_PER_HOUR=10
        ):
            self.answer("One.")
            self.char1.execute_cmd("say Aria, one")
            # a second line in the same minute, in a thread of its own: deferred, budget unspent
            self.char1.execute_cmd("whisper Aria = two")
            self.tick()
            assert len(self.responder.requests) == 2
            assert self.spent(self.account) > 10  # the first turn spent the player's hour
            (whisper,) = self.pending()
            assert whisper.metadata[DEFERRED_UNTIL]
            self.tick(advance=60)  # its moment comes: the budget is spent all the same
            assert len(self.responder.requests) == 2  # no turn on a spent budget
            (whisper,) = self.pending()
            assert not whisper.urgent
            assert whisper.metadata["held_back"] == "the player's tokens for the hour are spent"

    def test_with_respond_to_ambient_a_spent_player_starts_no_turn_by_chatting(self):
        self.script.db.config_overrides = {**self.overrides, "respond_to_ambient": True}
        with override_settings(AI_ASSISTANT_PLAYER_TOKENS_PER_HOUR=10):
            self.answer("One.")
            self.char1.execute_cmd("say Aria, one")
            self.tick()
            assert len(self.responder.requests) == 2 and self.spent(self.account) > 10
            self.char1.execute_cmd("say nice weather for ducks")  # names no one
            self.tick()
            assert len(self.responder.requests) == 2  # no turn on a spent budget

    def test_status_shows_the_limits_and_the_top_spenders(self):
        self.char1.permissions.add("Builder")
        self.answer()
        self.char1.execute_cmd("say Aria, one")
        self.tick()
        status = self.call(_commands().CmdAssistant(), "/status Aria", caller=self.char1)
        spent = self.spent(self.account)
        assert (
            "players (server): 10 turns a minute (0 lines deferred); tokens 2000000 an hour, "
            f"10000000 a game day; top this hour: {self.account.key} {spent}; top this game day: "
            f"{self.account.key} {spent}"
        ) in " ".join(status.split())
        assert "Aria, one" not in status  # nothing said is shown

    def test_two_characters_of_one_player_share_the_turns_a_minute(self):
        alt = create.create_object(
            "evennia.objects.objects.DefaultCharacter", key="Alt", location=self.room1
        )
        alt.account = self.account
        alt.msg = self.char1.msg
        with override_settings(AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE=1):
            self.answer("One.")
            self.char1.execute_cmd("say Aria, one")
            self.tick()
            assert len(self.responder.requests) == 2
            alt.execute_cmd("say Aria, it is me again")  # the same player: the minute is spent
            self.tick()
            assert len(self.responder.requests) == 2
            (event,) = self.pending()
            assert event.text == "Aria, it is me again" and event.metadata[DEFERRED_UNTIL]
            self.answer("Hello, Bob.")
            self.char2.execute_cmd("say Aria, hello")  # another player has a minute of their own
            self.tick()
        assert "Aria, hello" in self.turn_lines(2)

    def test_the_turns_a_minute_setting_is_checked_when_read(self):
        from ai_assistant.shell import game_settings

        for bad in (-1, "ten", True, 2.5):
            with override_settings(AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE=bad):
                with pytest.raises(ValueError, match="AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE must"):
                    game_settings.player_turns_per_minute()
        with override_settings(AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE=0):
            assert game_settings.player_turns_per_minute() == 0

    def test_the_settings_are_checked_when_read_and_a_bad_one_loses_nothing(self):
        from ai_assistant.shell import game_settings

        for bad in (-5, "lots", True, 1.5):
            with override_settings(AI_ASSISTANT_PLAYER_TOKENS_PER_DAY=bad):
                with pytest.raises(ValueError, match="AI_ASSISTANT_PLAYER_TOKENS_PER_DAY must be"):
                    game_settings.player_tokens_per_day()
        with override_settings(AI_ASSISTANT_PLAYER_TOKENS_PER_HOUR=0):
            assert game_settings.player_tokens_per_hour() == 0  # no limit
        self.char1.execute_cmd("say Aria, are you there?")
        with override_settings(AI_ASSISTANT_PLAYER_TOKENS_PER_HOUR="lots"):
            with pytest.raises(ValueError, match="whole number of tokens, 0 or more"):
                self.handler.hearing.flush()
            assert len(self.handler.hearing) == 1  # still heard, queued once it is fixed
            assert "AI_ASSISTANT_PLAYER_TOKENS_PER_HOUR must be" in str(
                self.handler.status().player_limits["error"]
            )
        (event,) = self.pending()
        assert event.text == "Aria, are you there?" and event.urgent


# ---- the defaults let people play (issue 40) -----------------------------------------------------


def _billed_as(reply, prompt: int, cached: int, completion: int = 100):
    """A scripted reply whose usage is a real model's: `prompt` tokens, `cached` of them served
    from the provider's prompt cache."""
    reply.body["usage"] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    return reply


class TestTheDefaultsLetPeoplePlay(LimitsCase):
    def converse(self, speaker, lines: int, prompt: int, cached: int, every: float = 6) -> None:
        """`speaker` says `lines` lines to Aria, one every `every` seconds; each turn is a
        spoken answer and a closing call, each call of `prompt` tokens (`cached` from the
        provider's cache) and 100 completion tokens."""
        for number in range(lines):
            self.responder.add(
                _billed_as(
                    tool_reply(tool_call("say", {"text": f"Yes {number}."})), prompt, cached
                ),
                _billed_as(tool_reply(tool_call("noop", {})), prompt, cached),
            )
            speaker.execute_cmd(f"say Aria, line {number}")
            self.tick(advance=every)

    def told(self, character) -> list[str]:
        return [
            text
            for text in self.received(character)
            if "your share" in text or "will answer you" in text or "more than Aria" in text
        ]

    def spent(self, account) -> int:
        now = self.clock.now()
        return PLAYER_TOKENS.spent(f"account#{account.id}", now, self.handler.hearing.game_now())[
            "hour"
        ]

    def test_ordinary_conversation_with_cached_prompts_is_never_refused(self):
        # the defaults, a line every 6 s (the 10 turns a minute) for four minutes: each turn two
        # calls of 5,000 prompt tokens, 4,000 of them from the provider's cache (counted whole,
        # the hour's budget was spent after ten turns)
        self.converse(self.char1, 40, prompt=5000, cached=4000)
        assert len(self.responder.requests) == 80  # every line answered at once
        assert self.told(self.char1) == [] and self.pending() == []
        # what is charged is what costs: uncached prompt and completion tokens
        assert self.spent(self.account) == 40 * 2 * (1000 + 100)

    def test_the_rehearsal_models_turns_cost_nothing(self):
        with override_settings(AI_ASSISTANT_REHEARSAL=True, AI_ASSISTANT_PLAYER_TOKENS_PER_HOUR=1):
            for number in range(3):
                self.char1.execute_cmd(f"say Aria, hello {number}")
                self.tick()
            assert self.spent(self.account) == 0
            assert self.told(self.char1) == []
            answered = [text for text in self.received(self.char2) if text.startswith("Aria says")]
            assert len(answered) == 3, answered

    def test_a_builders_own_lines_are_not_limited(self):
        self.account.permissions.add("Builder")  # a puppeted character has its account's
        with override_settings(
            AI_ASSISTANT_PLAYER_TURNS_PER_MINUTE=1, AI_ASSISTANT_PLAYER_TOKENS_PER_HOUR=10
        ):
            self.converse(self.char1, 4, prompt=5000, cached=0, every=5)
            assert len(self.responder.requests) == 8 and self.pending() == []
            assert self.told(self.char1) == []
            # a player speaking as fast is held back
            self.converse(self.char2, 1, prompt=5000, cached=0)
            self.char2.execute_cmd("say Aria, again")
            self.tick()
            assert len(self.responder.requests) == 10 and self.pending()

    def test_a_flooder_is_still_stopped_and_the_others_are_answered(self):
        # the defaults; a player whose every call is 100,000 prompt tokens the cache misses
        self.converse(self.char1, 12, prompt=100_000, cached=0)
        # ten turns of 200,200 tokens spend the hour's 2,000,000: the rest are heard only
        assert len(self.responder.requests) == 20
        assert [text for text in self.told(self.char1) if "your share" in text] == [
            "(You have had your share of the assistants' thought for this hour: they hear "
            "you, and take in what you say with what others say, but will not answer you "
            "on their own until the next hour.)"
        ]
        self.responder.replies.clear()  # scripted for the lines that were not answered
        self.responder.requests.clear()
        self.converse(self.char2, 1, prompt=5000, cached=4000)
        assert len(self.responder.requests) == 2 and self.told(self.char2) == []


def _commands():
    from ai_assistant import commands

    return commands


class TestWhoSpeaks(LimitsCase):
    """Whose line it is (account, builder) is looked up once for every assistant that heard it:
    in a room of a hundred, that lookup and its lock check were a third of their reactor work."""

    def builder_checks(self):
        from evennia.locks.lockhandler import LockHandler

        from ai_assistant.shell.hearing import BUILDER_LOCK

        checked, real = [], LockHandler.check_lockstring

        def counting(handler, accessing_obj, lockstring, *args, **kwargs):
            if lockstring == BUILDER_LOCK:
                checked.append(accessing_obj)
            return real(handler, accessing_obj, lockstring, *args, **kwargs)

        return checked, patch.object(LockHandler, "check_lockstring", counting)

    def assistants(self, names):
        others = [
            create.create_object(
                "ai_assistant.characters.AssistantCharacter", key=name, location=self.room1
            )
            for name in names
        ]
        for other in others:
            other.assistant.clock = self.clock
        return [self.handler] + [other.assistant for other in others]

    def test_a_line_to_many_assistants_looks_its_speaker_up_once(self):
        handlers = self.assistants(["Bea", "Cal", "Dee"])
        checked, counting = self.builder_checks()
        with counting:
            self.char1.execute_cmd("say Aria, Bea, Cal and Dee: is the gate open?")
            for handler in handlers:
                handler.hearing.flush()
        assert checked == [self.char1]
        for handler in handlers:
            (event,) = EventQueue(AttributeStore(handler.script)).peek()
            assert event.urgent and event.metadata["account"] == f"account#{self.account.id}"

    def test_chatter_that_starts_turns_looks_its_speaker_up_once(self):
        handlers = self.assistants(["Bea", "Cal"])
        for handler in handlers:
            handler.script.db.config_overrides = {**self.overrides, "respond_to_ambient": True}
        checked, counting = self.builder_checks()
        with counting:
            self.char1.execute_cmd("say nice weather for ducks")
            for handler in handlers:
                handler.hearing.flush()
        assert checked == [self.char1]
        for handler in handlers:
            (event,) = EventQueue(AttributeStore(handler.script)).peek()
            assert event.metadata["account"] == f"account#{self.account.id}"

    def test_a_new_builder_is_known_within_seconds(self):
        from types import SimpleNamespace

        from ai_assistant.shell import hearing

        moment = [1000.0]
        with patch.object(hearing, "time", SimpleNamespace(monotonic=lambda: moment[0])):
            assert hearing.BUILDER not in hearing._account(self.char1)
            self.account.permissions.add("Builder")
            assert hearing.BUILDER not in hearing._account(self.char1)  # kept for a moment
            moment[0] += hearing.ACCOUNT_SECONDS + 0.1
            assert hearing._account(self.char1)[hearing.BUILDER] is True
