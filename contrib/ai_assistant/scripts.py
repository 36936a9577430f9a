"""
The assistant's script: its clock on the game's ticker, and the frame around each step.

The script does three things. It keeps one `TICKER_HANDLER` subscription at the current mode's
rate; it wraps every step of the assistant's work in a database transaction (a step's writes
commit once); and it records what went wrong. What a tick does is the character's handler's
business (`character.assistant.tick()`), reached at run time.

The subscription's exact arguments are stored in `db.ticker_subscription`, so it is always
removed with the arguments it was added with, and re-adding after `evennia reload` replaces the
restored subscription instead of doubling it. Evennia calls `at_start` only for scripts with a
timer of their own, which this one does not have: the subscription is made in
`at_script_creation` and checked in `at_server_start`.

A tick never blocks and never returns a Deferred (the ticker would wait on it and stall every
other subscriber on that interval). No exception escapes a tick: each is logged with context and
counted in `db.tick_errors`, secrets redacted.

"""

from django.db import DatabaseError, transaction
from django.db.transaction import TransactionManagementError
from evennia.scripts.scripts import DefaultScript
from evennia.scripts.tickerhandler import TICKER_HANDLER
from evennia.utils import logger
from twisted.internet import reactor

from .shell import game_settings, heap
from .shell.assembly import chat_model_for, endpoint_for
from .driver import drive, in_thread, inline, reactor_steps
from .lifecycle import AWAKE
from .llm.chat import LLMError
from .llm.client import client_for
from .llm.tokens import encoding_for
from .memory.lexical import prepare as prepare_words
from .shell.lore_book import warm_lore
from .shell.storage import step_transaction
from .shell.model_queue import model_queue, queued_runner
from .state import (
    FIRST_TURN_VALUES,
    ACTIVITY,
    CONFIG_OVERRIDES,
    LAST_ERROR,
    MODE,
    PAUSED,
    TICK_ERRORS,
    TICKER_SUBSCRIPTION,
)
from .text import redact

# the offset of an assistant's tick within the interval: a fixed, well-spread share
_GOLDEN = 0.6180339887


class AssistantScript(DefaultScript):
    """Ticks one assistant character. Created by the character's handler."""

    def at_script_creation(self):
        """Set the script's key and starting Attributes, and subscribe to the ticker."""
        self.key = "ai_assistant"
        self.desc = "AI assistant brain (ticks via TICKER_HANDLER)"
        self.persistent = True
        for key, value in (
            (MODE, AWAKE),
            (ACTIVITY, 0),
            (CONFIG_OVERRIDES, {}),
            (PAUSED, False),
            (TICK_ERRORS, 0),
        ):
            self.attributes.add(key, value)
        for key in FIRST_TURN_VALUES:
            self.attributes.add(key, None)
        self.ensure_ticker()
        _freeze_startup_objects()
        _warm_up(self)

    # ---- the ticker -----------------------------------------------------------------------

    @property
    def ticker_idstring(self) -> str:
        """The id that tells this script's ticker subscription apart.

        Returns:
            str: "ai_assistant_<script id>".

        """
        return f"ai_assistant_{self.id}"

    def at_server_start(self):
        """Re-subscribe to the ticker after a start or reload, at the current rate."""
        # after a start or reload: the ticker store restored our subscription; re-adding it
        # with the same arguments replaces it, and a changed rate is corrected here
        self.ensure_ticker()
        _freeze_startup_objects()
        _warm_up(self)

    def at_script_delete(self):
        """Remove the ticker subscription before the script is deleted.

        Returns:
            bool: Always True, so the deletion goes ahead.

        """
        self.remove_ticker()
        return True

    def at_server_reload(self):
        """Queue what the assistant heard before the server reloads."""
        self._flush_heard()

    def at_server_shutdown(self):
        """Queue what the assistant heard before the server shuts down."""
        self._flush_heard()

    def _flush_heard(self) -> None:
        handler = getattr(self.obj, "assistant", None)
        if handler is not None:
            handler.hearing.flush()

    def ensure_ticker(self, rate: int | None = None) -> None:
        """Subscribe to the ticker at `rate`, replacing any other subscription.

        Args:
            rate (int, optional): Seconds between ticks; by default the rate of the
                assistant's current mode.

        """
        if rate is None:
            handler = getattr(self.obj, "assistant", None)
            rate = handler.tick_rate() if handler is not None else 5
        current = self.attributes.get(TICKER_SUBSCRIPTION)
        if current and current["interval"] != rate:
            self.remove_ticker()
        subscription = {"interval": rate, "idstring": self.ticker_idstring, "persistent": True}
        TICKER_HANDLER.add(callback=self.at_assistant_tick, **subscription)
        self.attributes.add(TICKER_SUBSCRIPTION, subscription)
        self._tick_offset = None

    def remove_ticker(self) -> None:
        """Drop this script's ticker subscription, if it has one."""
        current = self.attributes.get(TICKER_SUBSCRIPTION)
        if not current:
            return
        try:
            TICKER_HANDLER.remove(callback=self.at_assistant_tick, **dict(current))
        except KeyError:
            pass  # already gone (e.g. the ticker store was reset)
        self.attributes.add(TICKER_SUBSCRIPTION, None)
        self._tick_offset = None

    def at_assistant_tick(self, *args, **kwargs):
        """The ticker's callback. Returns None always (a Deferred would stall the ticker).

        Every assistant on the same tick rate shares one ticker, which calls all of them in one
        go: this must stay tiny (no Attribute read). On a live server each assistant runs its
        work at its own offset within the interval, so a hundred assistants do not all take the
        reactor in the same instant.

        Args:
            *args: Passed by the ticker; unused.
            **kwargs: Passed by the ticker; unused.

        Returns:
            None: Always.

        """
        offset = self.tick_offset()
        if offset:
            # behind prompt starts and turns under way: a tick hears ambient speech, which
            # can wait a little while someone waits for an answer
            reactor.callLater(offset, reactor_steps.submit_background, self.run_tick)
        else:
            self.run_tick()
        return None

    def tick_offset(self) -> float:
        """Seconds to wait before this tick's work: a fixed share of the interval (live only).

        Remembered on the script instance, not read from Attributes or `ndb` (each such read
        goes through a handler, and an Attribute unpickles its value): the ticker calls every
        assistant on a rate in one reactor step. `ensure_ticker` and `remove_ticker` reset it.

        Returns:
            float: The delay in seconds; 0.0 when the reactor is not running or a test
                drives the ticks.

        """
        if not reactor.running:
            return 0.0  # tests and headless runs drive ticks themselves
        offset = getattr(self, "_tick_offset", None)
        if offset is None:
            handler = getattr(self.obj, "assistant", None)
            if handler is not None and handler.runner is not None:
                return 0.0  # a test drives this assistant's ticks
            rate = (self.attributes.get(TICKER_SUBSCRIPTION) or {}).get("interval") or 5
            offset = self._tick_offset = ((self.id or 0) * _GOLDEN % 1.0) * rate
        return offset

    # ---- steps ----------------------------------------------------------------------------

    def schedule_prompt_start(self, submit=None) -> bool:
        """Queue a prompt start: this assistant's tick step, as an answer to a direct event.

        It joins the reactor's step queue, so it runs within a few reactor iterations (after
        the speaker's command has finished, and after the steps queued before it) instead of
        at the next tick. It goes through `run_tick`, the tick's own frame and gates.

        Args:
            submit (callable, optional): How to queue it, called as `submit(func, *args)`; by
                default `reactor_steps.submit` when the reactor runs (tests pass their own).

        Returns:
            bool: True when it was queued; False without a running reactor and no `submit`
                (tests and headless runs drive the ticks themselves).

        """
        if submit is None:
            if not reactor.running:
                return False
            submit = reactor_steps.submit
        submit(self.run_tick, True)
        return True

    def run_tick(self, prompt: bool = False) -> None:
        """One tick's work, now, in one transaction. Never raises.

        The tick's writes (the heard events, the start of a turn) commit together: each
        commit is a wait on the database, and this runs on the reactor thread. An error is
        recorded after the transaction: a database error leaves it unusable.

        Args:
            prompt (bool, optional): A prompt start (see `AssistantHandler.tick`) instead of
                a tick of the ticker.

        """
        error = None
        try:
            with step_transaction():
                # caught inside the transaction, so what was written before an error is kept
                try:
                    self.obj.assistant.tick(prompt=prompt)
                except Exception as err:
                    error = err
                    if isinstance(err, DatabaseError):
                        # the database refused a statement: PostgreSQL has aborted the
                        # transaction (Django marks it so on SQLite too), so nothing more can
                        # be written in it
                        transaction.set_rollback(True)
        except DatabaseError as err:
            # the tick's writes, sent as it ended, were refused, or its transaction was
            # marked for rollback (after an error already caught: that one is reported)
            error = error or err
        if error is not None:
            handler = getattr(self.obj, "assistant", None)
            if handler is not None:
                handler.tick_failed()
            self.record_error("prompt start" if prompt else "tick", error)

    def drive(self, work, on_done, on_failure, runner, opening: bool = False) -> None:
        """Run a turn or sleep step generator to its end.

        Each stretch between two model calls runs on the reactor thread inside a transaction;
        on a live server the stretches are queued one per reactor iteration, so players'
        commands come in between. What goes wrong is recorded, then `on_failure(failure)` runs.

        Args:
            work (Generator): Yields blocking work (see `ai_assistant.driver`).
            on_done (callable): Called with the generator's result.
            on_failure (callable): Called with the Failure when it raised.
            runner (callable): How blocking work runs (`in_thread` or `inline`).
            opening (bool, optional): A prompt start began it: its first stretch goes ahead
                of every other step (`StepQueue.submit_opening`).

        """
        if runner is in_thread:
            # a live server: the server-wide queue, many calls in flight, fair across assistants
            runner = queued_runner(self.obj.id, *_queue_settings())
        schedule = (
            reactor_steps.submit_continuation if runner is not inline and reactor.running else None
        )

        def failed(failure):
            self.record_error("turn", failure.value)
            on_failure(failure)

        done = drive(
            work,
            runner,
            step=step_transaction,
            schedule=schedule,
            start_later=True,
            schedule_closing=reactor_steps.submit_closing if schedule else None,
            schedule_first=reactor_steps.submit_opening if schedule and opening else None,
        )
        done.addCallbacks(on_done, failed)
        done.addErrback(lambda failure: self.record_error("after a turn", failure.value))

    def record_error(self, where: str, err: BaseException) -> None:
        """Count and log an error, secrets redacted, and keep it as the last error.

        Args:
            where (str): What failed, e.g. "tick" or "turn".
            err (BaseException): The error.

        """
        while isinstance(err, TransactionManagementError) and err.__context__ is not None:
            # clean-up code that wrote after a database error met the transaction it had
            # broken: the error that broke it is the one worth reporting
            err = err.__context__
        message = redact(f"{type(err).__name__}: {err}", game_settings.secrets())
        self.attributes.add(TICK_ERRORS, (self.attributes.get(TICK_ERRORS) or 0) + 1)
        self.attributes.add(LAST_ERROR, f"{where}: {message[:300]}")
        handler = getattr(self.obj, "assistant", None)
        if handler is not None:
            handler.log("err", f"{where} failed: {message}")
        else:  # a script left without its character has no assistant to log about
            logger.log_err(f"ai_assistant script #{self.id}: {where} failed: {message}")


def _queue_settings() -> tuple[int, int, bool]:
    """The game's settings for the server's model call queue, as `model_queue` takes them."""
    return (
        game_settings.model_calls_in_flight(),
        game_settings.model_threads(),
        game_settings.model_io_process(),
    )


_warmed_up = False
# the languages whose words are being or have been prepared (`lexical.prepare`)
_words_prepared: set[str] = set()


def _warm_up(script) -> None:
    """In a running server: load recall's words for each assistant's language (its dictionary
    and stemmer: 0.1 s for English, up to a second for Russian) in a thread of the reactor's
    pool; and once per process, load the token encoding there too, start the model call queue
    (and with it the model I/O process), and have the model client made where the calls will
    be made. The first count reads and builds the encoding (about 0.2 s), the child imports
    the SDK (about half a second), and the client's TLS context and connection pool take tens
    of milliseconds more; without this, the first turn after a start or reload, with a player
    waiting for its answer, would pay for them."""
    global _warmed_up
    if not reactor.running:
        return
    handler = script.obj.assistant
    config, _ = handler.checked_config()
    if config.recall_stemmer not in _words_prepared:
        _words_prepared.add(config.recall_stemmer)
        reactor.callInThread(prepare_words, config.recall_stemmer)
    if _warmed_up:
        return
    _warmed_up = True
    # the game's lore index, built before any turn recalls (`lore_book.warm_lore`)
    reactor.callLater(0, warm_lore)
    reactor.callInThread(encoding_for, chat_model_for(config))
    if game_settings.rehearsal():
        # the offline rehearsal model answers in process: no client to make
        logger.log_info(
            "ai_assistant: REHEARSAL mode (AI_ASSISTANT_REHEARSAL): the assistants use the offline "
            "rehearsal model in this process (deterministic rules, not intelligence)"
        )
        return
    try:
        client = client_for(endpoint_for(config))
    except LLMError:
        return  # not configured: the first turn says so
    model_queue(*_queue_settings()).run_on_loop(client.warm_up)


def _freeze_startup_objects() -> None:
    """Once per process, in a running server, when the game setting allows it (see
    `ai_assistant.shell.heap`). Tests and headless scripts, where no reactor runs, keep Python's
    collections as they are."""
    if not reactor.running or not game_settings.freeze_startup_objects():
        return
    frozen = heap.freeze_startup_objects()
    if frozen is not None:
        logger.log_info(
            f"ai_assistant: {frozen[0]} start-up objects kept out of full garbage collections "
            f"(collected first in {frozen[1] * 1000:.0f} ms; AI_ASSISTANT_FREEZE_STARTUP_OBJECTS)"
        )
