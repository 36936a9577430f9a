"""
Batch requests: sleep-time structured work sent through the provider's Batch API, at its
discount (OpenAI bills a batch at half the price of direct calls).

With `batch_enabled`, the structured calls a sleep tick's steps make (scoring, extraction,
people, reflection, and any step that asks through `ask` or its budget's `structured`) are not
sent one by one: the tick makes one `BatchRound` and hands it to its steps, as their budget.
Each request is known by a key: a hash of its model, messages, options and output schema, so
the same question asked again on a later tick has the same key. One tick (`BatchRound`):

1. `poll`: each batch submitted earlier is asked where it stands. A finished one's replies are
   kept in the script's state by key (`batch_results`); each request it did not answer (the
   batch failed, expired or was cancelled, or its line errored) is marked to be called
   directly.
2. The steps run as always. A structured call whose reply is kept gets it at once, validated
   with the same pydantic model, as if the call had just been made; one marked direct is called
   directly; one waiting in a batch, or new, raises `BatchDeferred`: the step stops for this
   tick, having changed nothing, and the compacting and dreaming loops treat that as "wait",
   not as an error.
3. `submit`: the requests new this tick go out as one batch: a JSONL file uploaded to the Files
   API (`purpose="batch"`), then a batch of `/v1/chat/completions` over it. Its id and keys are
   kept (`batches`).

A step that needs an earlier result (extraction after scoring) asks once that result is in: a
next batch round. Waking while a batch is pending loses nothing: nothing was applied, the batch
stays in the state and the next sleep polls it. A batch still unfinished after
`batch_max_wait_hours`, or one the provider no longer knows, is given up: its requests are
called directly. An endpoint without the Batch API (404 on the upload) turns batch mode off
for the assistant for a day, with a log line; its requests are called directly. With
`MAX_UNDER_WAY` batches under way, a new request is called directly (a request that changed
since it was batched, e.g. the journal grew, does not wait behind them).

Every HTTP call here runs as blocking work off the reactor, like any model call; the state is
read and written only between yields, on the reactor thread.

"""

import asyncio
import hashlib
import json
from collections.abc import Generator
from datetime import datetime, timedelta

from twisted.python import log

from ..clock import from_iso, to_iso
from ..driver import ModelWork
from ..llm.chat import BAD_REQUEST, ChatReply, ChatRequest, LLMError, TokenUsage
from ..llm.client import _body
from ..llm.replies import reply_from_completion
from ..llm.model_json import ModelJSONError, decode_model_json
from ..llm.structured import _requests, parse_reply
from ..state import BATCH_RESULTS, BATCH_UNSUPPORTED, BATCHES

# a batch in one of these states will not change any more
SETTLED = ("completed", "failed", "expired", "cancelled")
# what an endpoint without the Files or Batches API answers
NO_BATCH_API = (404, 405, 501)
# how long batch mode stays off after the endpoint said it has no Batch API
UNSUPPORTED_FOR = timedelta(days=1)
BATCH_ENDPOINT = "/v1/chat/completions"
# batches under way at once; past it, a new request is called directly. A step whose request
# changes from tick to tick (never finding its answer) then still gets on, and the waste is
# bounded
MAX_UNDER_WAY = 3
# the most characters of one line of a batch's output or error file: a reply's text is kept to
# `MAX_REPLY_CHARS` (256,000) anyway, and this leaves room for its escapes (up to six
# characters for one) and the completion around it. A longer line is not read: its request is
# called directly
MAX_BATCH_LINE_CHARS = 2_000_000


class BatchDeferred(Exception):
    """A sleep-time request waits for a batch: the step stops for this tick, changing nothing.

    Args:
        key (str): The request's key.

    """

    # not a failure: telemetry marks the span as waiting, not as an error
    waiting = True

    def __init__(self, key: str):
        super().__init__(f"request {key} waits for a batch")
        self.key = key


def request_key(request: ChatRequest, output_model) -> str:
    """The key of a structured request: the same question always has the same key.

    Args:
        request (ChatRequest): The request, without `response_format`.
        output_model (type): The pydantic model the answer must fit.

    Returns:
        str: "q" and 32 hex digits of a SHA-256 of the model, messages, tools, options and
            output schema.

    """
    data = {
        "model": request.model,
        "messages": request.messages,
        "tools": request.tools,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "output": output_model.__name__,
        "schema": output_model.model_json_schema(),
    }
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return "q" + hashlib.sha256(text.encode()).hexdigest()[:32]


def batch_mode(config, state, now: datetime) -> bool:
    """Whether this sleep tick's structured calls go into a batch.

    Args:
        config (AssistantConfig): The assistant's configuration (`batch_enabled`).
        state (KeyValueStore): The script's store (whether the endpoint lacked the Batch API).
        now (datetime): The time.

    Returns:
        bool: True with `batch_enabled`, unless the endpoint said within a day that it has no
            Batch API.

    """
    if not config.batch_enabled:
        return False
    unsupported = state.get(BATCH_UNSUPPORTED)
    since = from_iso((unsupported or {}).get("at"))
    return since is None or now - since >= UNSUPPORTED_FOR


class BatchRound:
    """One sleep tick in batch mode: poll, let the steps ask, submit what is new.

    Args:
        brain (Brain): The sleeping assistant.
        now (datetime): The tick's time.

    Attributes:
        report (dict): What the round did: "submitted" (requests in the new batch), "batch"
            (its id), "waiting" (requests still in a batch), "applied" (batch replies used),
            "direct" (requests called directly instead), "fallbacks" (why, one line per batch
            or submission that fell back).

    """

    def __init__(self, brain, now: datetime):
        self.brain = brain
        self.now = now
        self.new: dict[str, tuple[ChatRequest, type]] = {}
        self.used: set[str] = set()
        self.report = {"submitted": 0, "waiting": 0, "applied": 0, "direct": 0, "fallbacks": []}

    # ---- what the steps' structured calls get ----------------------------------------------

    def structured(self, request: ChatRequest, output_model, direct):
        """A structured call in batch mode: the kept reply, a direct call, or a deferral.

        Args:
            request (ChatRequest): The request, without `response_format`.
            output_model (type): The pydantic model the answer must fit.
            direct (callable): `direct(request, output_model)` -> the direct call's work.

        Returns:
            ModelWork: Work returning `(object, replies)`, as `Brain.structured`'s.

        Raises:
            BatchDeferred: When the answer is not in yet (it goes, or went, into a batch).

        """
        key = request_key(request, output_model)
        kept = (self.brain.state.get(BATCH_RESULTS) or {}).get(key)
        if kept is not None:
            self.used.add(key)
            if "reply" in kept:
                reply = _reply_from(kept["reply"])
                try:
                    value = parse_reply(reply, output_model)
                except LLMError as err:
                    # billed all the same: counted, then asked again directly
                    self.brain.record_reply(reply, self.now)
                    self.brain.usage().record_malformed("batch_reply")
                    self.report["direct"] += 1
                    self.report["fallbacks"].append(f"a batch reply did not fit: {err}"[:300])
                    return direct(request, output_model)
                self.report["applied"] += 1
                return ModelWork(_ready, _aready, (value, [reply]))
            self.report["direct"] += 1
            return direct(request, output_model)
        under_way = self.brain.state.get(BATCHES) or []
        if any(key in batch["keys"] for batch in under_way):
            self.report["waiting"] += 1
        elif len(under_way) >= MAX_UNDER_WAY:
            self.report["direct"] += 1
            return direct(request, output_model)
        else:
            self.new[key] = (request, output_model)
        raise BatchDeferred(key)

    # ---- before the steps: the batches under way ---------------------------------------------

    def poll(self) -> Generator:
        """Ask each batch under way where it stands; keep what settled ones answered.

        Returns:
            Generator: Work yielding one blocking call per batch (its status, and its output
                and error files once settled).

        """
        state = self.brain.state
        for batch in list(state.get(BATCHES) or []):
            age = self.now - (from_iso(batch.get("submitted_at")) or self.now)
            too_old = age >= timedelta(hours=self.brain.config.batch_max_wait_hours)
            try:
                outcome = yield ModelWork(_poll, _apoll, self.brain.client_factory, batch["id"])
            except LLMError as err:
                if err.status == 404:
                    self._settle(batch, {}, f"batch {batch['id']} is unknown to the provider")
                elif too_old:
                    self._settle(batch, {}, f"batch {batch['id']} unreachable: {err}")
                continue  # a passing fault: asked again next tick
            status = outcome["status"]
            if status in SETTLED:
                reason = None if status == "completed" else f"batch {batch['id']} {status}"
                self._settle(batch, outcome["lines"], reason)
            elif too_old:
                hours = self.brain.config.batch_max_wait_hours
                self._settle(batch, {}, f"batch {batch['id']} still {status} after {hours} h")

    def _settle(self, batch: dict, lines: dict, reason: str | None) -> None:
        """Keep a batch's replies; mark the requests it did not answer to be called directly."""
        state = self.brain.state
        results = dict(state.get(BATCH_RESULTS) or {})
        at = to_iso(self.now)
        failed = []
        for key in batch["keys"]:
            line = lines.get(key)
            if isinstance(line, dict):
                results[key] = {"reply": line, "at": at}
            else:
                why = line or reason or f"batch {batch['id']} gave no answer"
                results[key] = {"direct": why, "at": at}
                failed.append(why)
        if failed:
            self.report["fallbacks"].append(
                f"{reason or 'batch ' + batch['id'] + ' completed'}: {len(failed)} of "
                f"{len(batch['keys'])} requests called directly ({failed[0]})"[:300]
            )
        state.set(BATCH_RESULTS, results)
        state.set(BATCHES, [b for b in state.get(BATCHES) or [] if b["id"] != batch["id"]])

    # ---- after the steps: what is new goes out as one batch ----------------------------------

    def submit(self) -> Generator:
        """Submit the requests new this tick as one batch.

        Returns:
            Generator: Work yielding the blocking upload and creation (nothing when no request
                is new).

        """
        if not self.new:
            return
        state = self.brain.state
        asked = [(key, request, model) for key, (request, model) in self.new.items()]
        try:
            batch_id = yield ModelWork(_submit, _asubmit, self.brain.client_factory, asked)
        except LLMError as err:
            reason = f"batch not submitted: {err.kind}: {err}"[:300]
            if err.status in NO_BATCH_API:
                state.set(BATCH_UNSUPPORTED, {"at": to_iso(self.now), "reason": reason})
                log.msg(
                    f"ai_assistant {self.brain.name}: the endpoint has no Batch API ({reason}); "
                    "batch mode is off for a day, sleep work calls the model directly"
                )
            results = dict(state.get(BATCH_RESULTS) or {})
            for key in self.new:
                results[key] = {"direct": reason, "at": to_iso(self.now)}
            state.set(BATCH_RESULTS, results)
            self.report["fallbacks"].append(f"{reason}: {len(self.new)} requests go direct")
            return
        batches = list(state.get(BATCHES) or [])
        batches.append({"id": batch_id, "keys": list(self.new), "submitted_at": to_iso(self.now)})
        state.set(BATCHES, batches)
        self.report["submitted"] = len(self.new)
        self.report["batch"] = batch_id

    def finish(self) -> None:
        """Forget the replies used this tick and those kept past `batch_max_wait_hours`."""
        state = self.brain.state
        results = state.get(BATCH_RESULTS) or {}
        oldest = self.now - timedelta(hours=self.brain.config.batch_max_wait_hours)
        kept = {
            key: result
            for key, result in results.items()
            if key not in self.used and (from_iso(result.get("at")) or self.now) >= oldest
        }
        if kept != results:
            state.set(BATCH_RESULTS, kept)

    def summary(self) -> dict:
        """The round's report, with an `error` line when something fell back (the sleep
        history counts it).

        Returns:
            dict: `report`, plus "error" when there were fallbacks.

        """
        report = dict(self.report)
        if report["fallbacks"]:
            report["error"] = "; ".join(report["fallbacks"])[:300]
        return report


def ask(brain, request: ChatRequest, output_model, batch_round: "BatchRound | None"):
    """A sleep step's structured call: through the tick's batch round in batch mode, else sent
    now (`Brain.structured`).

    Args:
        brain (Brain): The sleeping assistant.
        request (ChatRequest): What to ask.
        output_model (type): The pydantic model the answer must fit.
        batch_round (BatchRound or None): The tick's round; None: not in batch mode.

    Returns:
        ModelWork: Work returning `(object, replies)`.

    Raises:
        BatchDeferred: In batch mode, when the answer is not in yet.

    """
    if batch_round is None:
        return brain.structured(request, output_model)
    return batch_round.structured(request, output_model, brain.structured)


def in_batches(batch_round: BatchRound, work: Generator) -> Generator:
    """A sleep tick's work in batch mode: poll, run the steps, submit what is new.

    Args:
        batch_round (BatchRound): The tick's round, which the steps of `work` were given.
        work (Generator): The tick's steps (compacting or dreaming).

    Returns:
        Generator: The same work; its report gets the round's (under "batch" in a compacting
            report, as a `{"step": "batch", ...}` item in a dreaming one).

    """
    yield from batch_round.poll()
    report = yield from work
    yield from batch_round.submit()
    batch_round.finish()
    summary = batch_round.summary()
    if isinstance(report, dict):
        report["batch"] = summary
    elif isinstance(report, list):
        report.append({"step": "batch", **summary})
    return report


# ---- blocking work: HTTP only, in a worker thread ---------------------------------------------


def _ready(value):
    return value


async def _aready(value):
    return value


def _client_with_batches(client_factory):
    client = client_factory()
    if not hasattr(client, "submit_batch"):
        raise LLMError(BAD_REQUEST, "the model client has no Batch API", 501)
    return client


def _submit(client_factory, asked: list) -> str:
    client = _client_with_batches(client_factory)
    lines = []
    for key, request, output_model in asked:
        # the first request a direct call would send (json_schema, or JSON mode on an endpoint
        # known to lack it)
        first = next(_requests(client, request, output_model))
        lines.append(
            {"custom_id": key, "method": "POST", "url": BATCH_ENDPOINT, "body": _body(first)}
        )
    return client.submit_batch(lines)


async def _asubmit(client_factory, asked: list) -> str:
    return await asyncio.to_thread(_submit, client_factory, asked)


def _poll(client_factory, batch_id: str) -> dict:
    client = _client_with_batches(client_factory)
    status = client.batch_status(batch_id)
    lines: dict = {}
    if status["status"] in SETTLED:
        # the error file first: a line in the output file (answered) wins
        for file_id in (status.get("error_file_id"), status.get("output_file_id")):
            if file_id:
                lines.update(read_lines(client.file_text(file_id)))
    return {"status": status["status"], "lines": lines}


async def _apoll(client_factory, batch_id: str) -> dict:
    return await asyncio.to_thread(_poll, client_factory, batch_id)


def read_lines(text: str) -> dict:
    """A batch output (or error) file's lines, by key.

    Args:
        text (str): The JSONL file.

    Returns:
        dict: Key -> the reply as a plain dict (`reply_dict`) for a line answered with HTTP 200,
            or a short text saying why the line failed. A line that cannot be read (not JSON,
            over `MAX_BATCH_LINE_CHARS`, nested deeper than `MAX_JSON_DEPTH`, not an object
            with a text `custom_id`) is left out: its request is called directly.

    """
    from openai.types.chat import ChatCompletion

    lines: dict = {}
    for raw in text.splitlines():
        if not raw.strip():
            continue
        try:
            item = decode_model_json(
                raw, "the contents of a batch output line", max_chars=MAX_BATCH_LINE_CHARS
            )
        except ModelJSONError:
            continue
        key = item.get("custom_id") if isinstance(item, dict) else None
        if not key or not isinstance(key, str):
            continue
        response = item.get("response") or {}
        error = item.get("error")
        if not isinstance(response, dict) or (error is not None and not isinstance(error, dict)):
            lines[key] = "line unreadable: its response or error is not an object"
            continue
        if error or response.get("status_code") != 200:
            body = response.get("body") or {}
            detail = error or (body.get("error") if isinstance(body, dict) else None) or {}
            message = detail.get("message") if isinstance(detail, dict) else None
            status = str(response.get("status_code"))[:10]
            lines[key] = f"line failed (HTTP {status}): {message or 'no answer'}"[:200]
            continue
        try:
            completion = ChatCompletion.model_validate(response.get("body") or {})
            reply = reply_from_completion(completion, 0.0)
        except (LLMError, ValueError) as exc:
            lines[key] = f"line unreadable: {exc}"[:200]
            continue
        lines[key] = reply_dict(reply)
    return lines


def reply_dict(reply: ChatReply) -> dict:
    """A structured reply as plain data, to keep in the state.

    Args:
        reply (ChatReply): The reply (no tool calls: structured replies have none).

    Returns:
        dict: Its content, refusal, finish reason, model, usage (with whether its figures had
            to be clamped) and what the client cut from it.

    """
    return {
        "content": reply.content,
        "refusal": reply.refusal,
        "finish_reason": reply.finish_reason,
        "model": reply.model,
        "usage": [reply.usage.prompt, reply.usage.completion, reply.usage.cached],
        "usage_invalid": reply.usage.invalid,
        "malformed": list(reply.malformed),
    }


def _reply_from(data: dict) -> ChatReply:
    # a reply kept before the figures were checked may hold any figure: `TokenUsage` checks
    prompt, completion, cached = data.get("usage") or (0, 0, 0)
    return ChatReply(
        content=data.get("content"),
        tool_calls=[],
        finish_reason=data.get("finish_reason"),
        refusal=data.get("refusal"),
        usage=TokenUsage(prompt, completion, cached, invalid=bool(data.get("usage_invalid"))),
        model=data.get("model") or "",
        batch=True,
        malformed=tuple(data.get("malformed") or ()),
    )
