"""The turn log (`memory.turn_log`): every turn kept, bounded by whole chunks, paged newest first
reading only the chunks a page needs, and what a turn's record says of the model's own text."""

from ai_assistant.memory.store import DictStore
from ai_assistant.memory.turn_log import TurnLog, last_turn
from ai_assistant.state import RECENT_TURNS, TURN_LOG, TURN_LOG_CHUNK, TURN_LOG_KEPT
from tests.core_fakes import ScriptedModel, hear, make_assistant, reply, run_tick


class CountingStore(DictStore):
    """A store that counts the reads of each key."""

    def __init__(self):
        super().__init__()
        self.reads: list[str] = []

    def get(self, key, default=None):
        self.reads.append(key)
        return super().get(key, default)


def turns(count: int, start: int = 0) -> list[dict]:
    return [{"at": f"t{n:05d}", "tools": ["noop"]} for n in range(start, start + count)]


def test_every_turn_is_kept_up_to_the_bound_then_the_oldest_chunk_goes():
    store = DictStore()
    log = TurnLog(store)
    for turn in turns(TURN_LOG_KEPT):
        log.add(turn)
    assert len(log) == TURN_LOG_KEPT and log.all()[0]["at"] == "t00000"
    total = TURN_LOG_KEPT + 3 * TURN_LOG_CHUNK + 4
    for turn in turns(total - TURN_LOG_KEPT, TURN_LOG_KEPT):
        log.add(turn)
    log = TurnLog(store)  # as stored
    kept = log.all()
    assert TURN_LOG_KEPT <= len(log) < TURN_LOG_KEPT + TURN_LOG_CHUNK
    assert len(kept) == len(log) and kept[-1]["at"] == f"t{total - 1:05d}"
    assert [t["at"] for t in kept] == [f"t{n:05d}" for n in range(total - len(log), total)]
    # the dropped chunks are deleted, not left behind
    chunks = [key for key in store.data if key.startswith(f"{TURN_LOG}:0")]
    assert len(chunks) == -(-len(log) // TURN_LOG_CHUNK)
    assert last_turn(store)["at"] == f"t{total - 1:05d}"


def test_a_page_newest_first_reads_only_its_chunks():
    store = CountingStore()
    log = TurnLog(store)
    for turn in turns(300):
        log.add(turn)
    newest = TurnLog(store).newest_first()
    store.reads.clear()
    page = newest[0:25]
    assert [t["at"] for t in page] == [f"t{n:05d}" for n in range(299, 274, -1)]
    read_chunks = {key for key in store.reads if key != f"{TURN_LOG}:meta"}
    assert len(read_chunks) <= 25 // TURN_LOG_CHUNK + 2  # not the 30 chunks of the log
    assert newest[299]["at"] == "t00000" and newest[-1]["at"] == "t00000"
    assert len(newest) == 300 and newest[300:310] == []


def test_replace_and_rewrite_keep_the_log_whole():
    store = DictStore()
    log = TurnLog(store)
    for turn in turns(TURN_LOG_KEPT + TURN_LOG_CHUNK):
        log.add(turn)  # the oldest chunk dropped: the log starts past position 0
    kept = [t for t in log.all() if not t["at"].endswith("7")]
    log.replace(kept)
    log = TurnLog(store)
    assert log.all() == kept and len(log) == len(kept)
    assert log.newest_first()[0] == kept[-1]
    # a rewrite writes only the chunks it changes
    store.data = dict(store.data)
    before = {key: value for key, value in store.data.items()}
    assert log.rewrite(lambda t: {**t, "at": "x"} if t["at"] == kept[3]["at"] else t)
    changed = [key for key in store.data if store.data[key] != before.get(key)]
    assert changed == [f"{TURN_LOG}:000000"]
    assert TurnLog(store).all()[3]["at"] == "x"
    assert not log.rewrite(lambda t: t)


def test_an_earlier_versions_ten_turns_are_read_then_moved_in():
    store = DictStore()
    store.set(RECENT_TURNS, turns(10))
    log = TurnLog(store)
    assert len(log) == 10 and log.newest_first()[0]["at"] == "t00009"
    log.add({"at": "new"})
    assert store.get(RECENT_TURNS) is None
    assert [t["at"] for t in TurnLog(store).all()] == [*(f"t{n:05d}" for n in range(10)), "new"]


def test_a_turn_keeps_the_models_own_text_beside_its_tool_calls():
    model = ScriptedModel(
        reply(("say", {"text": "Welcome."}), content="Alice seems lost; I will greet her."),
        reply(("noop", {})),
    )
    assistant = make_assistant(model)
    hear(assistant, "Aria, hello")
    run_tick(assistant)
    (turn,) = TurnLog(assistant.state).all()
    assert turn["texts"] == ["Alice seems lost; I will greet her."]
    assert [call["name"] for call in turn["calls"]] == ["say", "noop"]


def test_a_plain_text_reply_spoken_is_not_kept_twice():
    assistant = make_assistant(
        ScriptedModel(reply(content="Hello, Alice.")), plain_text_reply="say"
    )
    hear(assistant, "Aria, hello")
    run_tick(assistant)
    turn = last_turn(assistant.state)
    assert assistant.world.said == ["Hello, Alice."]
    assert turn["texts"] == [] and turn["calls"][0]["name"] == "say"
    # what the model wrote and did not say is kept
    assistant = make_assistant(
        ScriptedModel(reply(content="I'd rather not.")), plain_text_reply="drop"
    )
    hear(assistant, "Aria, hello")
    run_tick(assistant)
    assert last_turn(assistant.state)["texts"] == ["I'd rather not."]
