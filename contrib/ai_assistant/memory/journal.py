"""
The journal: the assistant's episodic memory.

Entries are written by the `add_journal_entry` tool, by compaction (a summary of past talk) and
by reflection (insights drawn in sleep). Each keeps its provenance (`memory.provenance`: who
said it and how it was learned, where and when) and its audience (`memory.audience`: who may
know it). Entries live in a `ChunkedList`, so the cost of a write does not grow with the
journal; an entry's id (`j000042`) is its position, so it can be found without a scan.

Entries are never moved. Pruning empties an old, unimportant entry in place (its text is
gone, its id stays), and consolidation only marks entries.

An entry:

| field | meaning |
| --- | --- |
| `id`, `seq` | `j000042`, and its position 42 |
| `content` | the text |
| `kind` | `experience` (what happened), `reflection` or `synthesis` (a summary) |
| `source_type`, `heard_from`, `about` | provenance (see `memory.provenance`) |
| `voice` | who said it, counted once however many characters they play (`provenance.voice_of`) |
| `rests_on`, `claims_of`, `voices` | a reflection's: what it inherits from what it cites (`provenance.derived`) |
| `audience`, `witnesses` | who may know it (None: public), who was present |
| `location`, `created_at` | where and when (real time) |
| `game_at` | when, on the game clock (which game day a digest puts it in) |
| `importance`, `scoring_method` | 1-10; `heuristic`, `turn` (the awake model's), `llm` |
| `consolidated`, `skipped`, `memory_ids` | what consolidation did with it |
| `compacting_failures`, `rested` | failed consolidation calls it was in; resting after too many |
| `cites` | the entries a reflection rests on |
| `pruned` | emptied by episodic pruning |
| `gossip` | told by another assistant: its chain of sources and trust (`memory.gossip`) |

"""

from collections.abc import Callable, Iterator
from datetime import datetime
from itertools import islice

from ..clock import from_iso, to_iso
from ..records import JournalEntry
from .importance import heuristic_importance
from .provenance import OBSERVED, REFLECTION, SUMMARY
from .store import ChunkedList, KeyValueStore

EXPERIENCE = "experience"
REFLECTION_KIND = "reflection"
SYNTHESIS = "synthesis"
SYNTHESIS_PREFIXES = ("[SYNTHESIS]", "[CONTEXT SYNTHESIS]")
# the running sum of importance since the last reflection, kept with the journal's meta
REFLECTION_COUNTER = "importance_since_reflection"
# a bookmark's importance by its salience (1-3), given when it is written and kept as a floor
# when sleep scores it again: it was marked to matter, and stays above the usual threshold
BOOKMARK_IMPORTANCE = {1: 6, 2: 8, 3: 10}
# a line said this soon after the one before it, of one audience, goes on its conversation
# (`Journal.talk_from`)
NEIGHBOUR_SECONDS = 600
# the most lines of other conversations passed over between two lines of one
# (`Journal.talk_from`)
BESIDE_REACH = 8
# the most characters of the neighbours' words kept with a fact (`Journal.talk_around`)
TALK_CHARS = 600
# the most characters of an entry's own words, and of the end of the line before, in its
# embedding (`Journal.passage`): within what small embedding models read (512 tokens)
PASSAGE_CHARS = 600
PASSAGE_CONTEXT_CHARS = 150
# the question marks of any script: a line that asks (`Journal.passage`, `recall._asks`)
QUESTION_MARKS = ("?", "\uff1f", "\u061f")
# in the journal's meta: {"model", "through"}, where embedding goes on (`Journal.unembedded`)
EMBEDDED = "embedded"
# ids of critical bookmarks (salience 3), checked cheaply at every turn until consolidated
CRITICAL_BOOKMARKS = "critical_bookmarks"
MAX_CRITICAL_BOOKMARKS = 20
# how many entries rest from consolidation (`count_failure`)
RESTED_COUNT = "rested"
# its storage: chunked lists on the character, the entries and their embeddings by position
ENTRIES = "journal"
VECTORS = "journal_vectors"
CHUNK = 100


class Journal:
    """The journal of one assistant.

    Args:
        store (KeyValueStore): The assistant character's store.
        chunk_size (int): Entries per stored chunk.

    Attributes:
        watchers (list): Callables told of every new or changed entry (the recall index).
        game_clock (callable or None): `game_clock(now)` -> the game time, written on each new
            entry as `game_at` (the brain sets it); None writes the real time.

    """

    def __init__(self, store: KeyValueStore, chunk_size: int = CHUNK):
        self.entries = ChunkedList(store, ENTRIES, chunk_size)
        # the entries' embeddings, by position (`embedded`)
        self.vectors = ChunkedList(store, VECTORS, chunk_size)
        self.watchers: list[Callable[[dict], None]] = []
        self.game_clock: Callable[[datetime], datetime] | None = None

    def __len__(self) -> int:
        return len(self.entries)

    def add(
        self,
        content: str,
        *,
        author: str,
        now: datetime,
        location: str | None = None,
        source_type: str = OBSERVED,
        heard_from: str | None = None,
        importance: int | None = None,
        scoring_method: str | None = None,
        tags: list[str] | None = None,
        audience: list[str] | None = None,
        witnesses: list[str] | None = None,
        about: list[str] | None = None,
        kind: str = EXPERIENCE,
        cites: list[str] | None = None,
        salience: int | None = None,
        voice: str | None = None,
        derived: dict | None = None,
        gossip: dict | None = None,
    ) -> JournalEntry:
        """Append an entry and return it.

        Args:
            content (str): The text.
            author (str): Who wrote it (the assistant's name).
            now (datetime): When.
            location (str, optional): Where.
            source_type (str): How it was learned (`memory.provenance`).
            heard_from (str, optional): Whose words it records.
            importance (int, optional): 1-10; without it, a heuristic score.
            scoring_method (str, optional): Where the importance came from: "heuristic",
                "turn" (the awake model's or the heard event's), "llm" (sleep-time scoring).
            tags (list, optional): Short labels.
            audience (list, optional): Who may know it; None for public.
            witnesses (list, optional): Who was present, for speech in a room.
            about (list, optional): Keys of the people it is about.
            kind (str): EXPERIENCE, REFLECTION_KIND or SYNTHESIS.
            cites (list, optional): Entry ids it rests on (reflections).
            salience (int, optional): 1-3 for a bookmark (what matters now; 3 is critical):
                sleep consolidates bookmarks first, the most salient first.
            voice (str, optional): Who said it, counted once however many characters they
                play: their account when known, else their key (`provenance.voice_of`).
            derived (dict, optional): What an entry drawn from others inherits from them
                (`provenance.derived`: `rests_on`, `claims_of`, `voices`).
            gossip (dict, optional): What another assistant told: its chain of sources and
                trust (`memory.gossip`).

        Returns:
            dict: The entry.

        """
        seq = len(self.entries)
        score = importance or heuristic_importance(content)
        entry = {
            "id": f"j{seq:06d}",
            "seq": seq,
            "content": content,
            "kind": kind,
            "author": author,
            "source_type": source_type,
            "heard_from": heard_from,
            "about": sorted(set(about or [])),
            "audience": None if audience is None else sorted(set(audience)),
            "witnesses": sorted(set(witnesses or [])),
            "location": location,
            "created_at": to_iso(now),
            "game_at": to_iso(self.game_clock(now) if self.game_clock else now),
            "importance": score,
            "scoring_method": scoring_method or ("turn" if importance else "heuristic"),
            "tags": list(tags or []),
            "cites": list(cites or []),
            "consolidated": kind != EXPERIENCE,  # reflections and summaries are not raw
            "memory_ids": [],
        }
        if salience is not None:
            entry["salience"] = salience
        if voice:
            entry["voice"] = voice[:80]
        for key in ("rests_on", "claims_of", "voices"):
            if (derived or {}).get(key):
                entry[key] = derived[key]
        if gossip:
            entry["gossip"] = gossip
        if kind == EXPERIENCE:
            extra = self.entries.extra
            extra[REFLECTION_COUNTER] = extra.get(REFLECTION_COUNTER, 0) + score
            if salience == 3:
                kept = extra.get(CRITICAL_BOOKMARKS, [])[1 - MAX_CRITICAL_BOOKMARKS :]
                extra[CRITICAL_BOOKMARKS] = [*kept, entry["id"]]
        self.entries.append(entry)
        self._tell(entry)
        return entry

    def count_failure(self, entries: list[dict], error: str, limit: int) -> int:
        """Count a failed consolidation call against each of its entries; an entry at `limit`
        failures rests (`rested`): it is left out of consolidation, kept as it is.

        Args:
            entries (list): The entries the call was about.
            error (str): What went wrong (kept, clipped, on a resting entry).
            limit (int): Failures after which an entry rests.

        Returns:
            int: How many entries rest from now on.

        """
        changed, newly = [], 0
        for entry in entries:
            current = self.get(entry["id"]) or entry
            if current.get("rested"):
                continue
            failures = int(current.get("compacting_failures") or 0) + 1
            updated = {**current, "compacting_failures": failures}
            if failures >= limit:
                updated["rested"] = {"failures": failures, "error": error[:300]}
                newly += 1
            changed.append(updated)
        if newly:
            self.entries.extra[RESTED_COUNT] = self.rested_count() + newly
        self.update(changed)  # writes the meta (and its count) with the entries
        return newly

    def rested_count(self) -> int:
        """How many entries rest from consolidation (read from a count, not the entries).

        Returns:
            int: The number.

        """
        return int(self.entries.extra.get(RESTED_COUNT) or 0)

    def lift_rests(self) -> int:
        """Let the resting entries be consolidated again (the cause was fixed), their failures
        forgotten.

        Returns:
            int: How many entries were resting.

        """
        if not self.rested_count():
            return 0
        resting = [entry for entry in self.entries.all() if entry.get("rested")]
        self.entries.extra[RESTED_COUNT] = 0
        self.update(
            [
                {
                    key: value
                    for key, value in entry.items()
                    if key not in ("rested", "compacting_failures")
                }
                for entry in resting
            ]
        )
        self.entries.save_meta()
        return len(resting)

    def critical_bookmark_pending(self) -> bool:
        """Whether a critical bookmark (salience 3) waits for consolidation.

        Returns:
            bool: True while one is neither consolidated nor skipped.

        """
        for entry_id in self.entries.extra.get(CRITICAL_BOOKMARKS, []):
            entry = self.get(entry_id)
            if entry is not None and not (
                entry.get("consolidated") or entry.get("skipped") or entry.get("rested")
            ):
                return True
        return False

    def at(self, seq: int) -> JournalEntry | None:
        """The entry at position `seq`, or None past either end.

        Args:
            seq (int): Its position.

        Returns:
            dict or None: The entry.

        """
        return self.entries.get(seq) if 0 <= seq < len(self.entries) else None

    def neighbours(self, entry: dict) -> list[JournalEntry]:
        """The entries with words just before and after `entry` in its conversation (`beside`,
        `talk_from`). A question's words are often in the line before its answer, so each is
        searched with the other's.

        Args:
            entry (dict): The entry.

        Returns:
            list: Zero, one or two entries, the earlier first.

        """
        return [other for other in self.beside(entry) if other is not None and other["content"]]

    def beside(self, entry: dict) -> tuple[JournalEntry | None, JournalEntry | None]:
        """The entries said just before and after `entry` in its conversation (`talk_from`),
        emptied ones too.

        Args:
            entry (dict): The entry.

        Returns:
            tuple: (the entry before or None, the entry after or None).

        """
        return next(self.talk_from(entry, -1), None), next(self.talk_from(entry, 1), None)

    def talk_from(self, entry: dict, step: int) -> Iterator[JournalEntry]:
        """The entries of `entry`'s conversation one way from it, nearest first, emptied ones
        too. A conversation is a run of lines of one audience (experience, not reflections),
        each said within `NEIGHBOUR_SECONDS` of the one before it; lines of others between two
        of its lines (a whisper among public talk) are passed over, up to `BESIDE_REACH` of
        them. So a line is beside another exactly when that one is beside it, whatever the
        order their times were written in.

        Args:
            entry (dict): The entry.
            step (int): -1 for those said before it, 1 for those after.

        Yields:
            dict: The entries.

        """
        place = entry.get("seq")
        if place is None:
            return
        last = entry
        while True:
            for place in range(place + step, place + step * (BESIDE_REACH + 2), step):
                other = self.at(place)
                if other is None:
                    return
                if _another_talk(other, entry):
                    continue
                if _paused(other, last):
                    return
                yield other
                last = other
                break
            else:
                return

    def around(self, entry: dict, reach: int) -> list[tuple[int, JournalEntry]]:
        """The entries with words of `entry`'s conversation (`talk_from`) up to `reach` of its
        lines before and after it, each with how many of its lines away it is.

        Args:
            entry (dict): The entry.
            reach (int): The most lines away.

        Returns:
            list: (distance, entry) pairs, nearest first.

        """
        found = []
        for step in (-1, 1):
            for distance, other in enumerate(islice(self.talk_from(entry, step), reach), 1):
                if other["content"]:
                    found.append((distance, other))
        return sorted(found, key=lambda pair: pair[0])

    def talk_around(self, entry: dict, limit: int = TALK_CHARS) -> str:
        """The words of `entry`'s neighbours (see `neighbours`), at most `limit` characters:
        kept with the facts drawn from it, so they are found by the same words once the entry
        itself is pruned.

        Args:
            entry (dict): The entry.
            limit (int, optional): The most characters kept.

        Returns:
            str: The neighbours' words.

        """
        return " ".join(other["content"] for other in self.neighbours(entry))[:limit]

    def passage(self, entry: dict) -> str:
        """What an entry's embedding is made of: its own words after the name of who said them,
        and before them the question it answers, when the line said just before it in the same
        conversation (see `neighbours`) asks one. An embedding of a bare line ("Paris, with my
        sister.") knows neither who spoke nor of what; the question before an answer tells it.
        Of that line only its end is kept, where its question is ("...Where did you go?"), and
        only when that end asks: its start, or a line before that asks nothing, cost time to
        embed and found no more. The line after is left out: it cost a third of the time of
        embedding and found no more (performance.md, 9).

        Args:
            entry (dict): The entry.

        Returns:
            str: The passage: the entry's first `PASSAGE_CHARS` characters, after at most the
                last `PASSAGE_CONTEXT_CHARS` of the line before when they ask a question.

        """
        lines = []
        for other in self.neighbours(entry):
            if other["seq"] < entry["seq"]:
                words = " ".join(other["content"].split())
                end = words[-PASSAGE_CONTEXT_CHARS:]
                if len(end) < len(words) and " " in end:
                    end = end.split(" ", 1)[1]  # from a word's start, not the middle of one
                if any(mark in end for mark in QUESTION_MARKS):
                    lines.append(self._passage_line(other, end))
        words = " ".join(entry["content"].split())
        lines.append(self._passage_line(entry, words[:PASSAGE_CHARS]))
        return "\n".join(lines)

    @staticmethod
    def _passage_line(entry: dict, words: str) -> str:
        speaker = entry.get("heard_from")
        return f"{speaker}: {words}" if speaker else words

    def unembedded(self, model: str, limit: int) -> tuple[list[JournalEntry], int]:
        """Entries with words and no embedding by `model`, oldest first, from where the last
        `embedded` left off (from the start for another model).

        Args:
            model (str): The embeddings model.
            limit (int): The most entries to return.

        Returns:
            tuple: The entries, and the position through which every entry is among them or
                needs no embedding (for `embedded`).

        """
        seq = self.embedded_through(model)
        total = len(self.entries)
        found: list[JournalEntry] = []
        while seq < total:
            for entry in self.entries.slice(seq, min(seq + self.entries.chunk_size, total)):
                seq = entry["seq"] + 1
                if entry.get("content") and not self.vector(entry, model):
                    found.append(entry)
                    if len(found) == limit:
                        return found, seq
        return found, seq

    def embedded(self, model: str, vectors: dict[str, str], through: int) -> None:
        """Keep the embeddings of entries and where the next `unembedded` starts. The vectors
        of another model are let go first. Watchers are told of each entry.

        Vectors live in a list of their own, beside the entries (an entry's chunk is written
        at every new entry; a vector is written once, in sleep).

        Args:
            model (str): The embeddings model that made them.
            vectors (dict): Entry id -> packed vector (`memory.semantic.pack_vector`).
            through (int): The position `unembedded` returned.

        """
        if self.entries.extra.get(EMBEDDED, {}).get("model") != model:
            self.vectors.replace_all([])
        changed = {}
        for entry_id, packed in vectors.items():
            entry = self.get(entry_id)
            if entry is not None and entry.get("content"):
                changed[entry["seq"]] = entry
        if changed:
            missing = max(changed) + 1 - len(self.vectors)
            if missing > 0:
                self.vectors.extend([None] * missing)
            self.vectors.update({seq: vectors[entry["id"]] for seq, entry in changed.items()})
        self.entries.extra[EMBEDDED] = {"model": model, "through": through}
        self.entries.save_meta()
        for entry in changed.values():
            self._tell(entry)

    def forget_vectors(self, seqs: list[int]) -> None:
        """Let go of some entries' embeddings (their passage held words now forgotten): they
        are embedded again, from their words as they are now, by the next `unembedded`.

        Args:
            seqs (list): The entries' positions.

        """
        held = {seq: None for seq in seqs if 0 <= seq < len(self.vectors) and self.vectors.get(seq)}
        if not held:
            return
        self.vectors.update(held)
        mark = self.entries.extra.get(EMBEDDED)
        if mark:
            self.entries.extra[EMBEDDED] = {**mark, "through": min(mark["through"], min(held))}
            self.entries.save_meta()

    def embedded_through(self, model: str) -> int:
        """How many entries, from the first, `model` has embedded or found nothing to embed in.

        Args:
            model (str): The embeddings model.

        Returns:
            int: The position where embedding goes on (0 for another model).

        """
        mark = self.entries.extra.get(EMBEDDED) or {}
        return mark.get("through", 0) if mark.get("model") == model else 0

    def vector(self, entry: dict, model: str | None) -> str | None:
        """An entry's embedding by `model`, packed, if it has one.

        Args:
            entry (dict): The entry.
            model (str or None): The embeddings model; None has none.

        Returns:
            str or None: The packed vector.

        """
        seq = entry.get("seq", -1)
        if not model or not 0 <= seq < len(self.vectors):
            return None
        if (self.entries.extra.get(EMBEDDED) or {}).get("model") != model:
            return None
        return self.vectors.get(seq)

    def get(self, entry_id: str) -> JournalEntry | None:
        """The entry with this id, or None.

        Args:
            entry_id (str): The entry's id, such as `j000042`.

        Returns:
            dict or None: The entry, or None if the id is unknown or malformed.

        """
        try:
            seq = int(entry_id.removeprefix("j"))
            entry = self.entries.get(seq)
        except (ValueError, IndexError):
            return None
        return entry if entry.get("id") == entry_id else None

    def update(self, entries: list[dict]) -> None:
        """Write back changed entries (each found by its `seq`), each touched chunk once.

        Watchers are told of each entry.

        Args:
            entries (list): The changed entries; an empty list does nothing.

        """
        if not entries:
            return
        self.entries.update({entry["seq"]: entry for entry in entries})
        # an emptied entry (pruned, forgotten) leaves no trace of its words, its embedding
        # neither
        emptied = {
            entry["seq"]: None
            for entry in entries
            if not entry.get("content")
            and entry["seq"] < len(self.vectors)
            and self.vectors.get(entry["seq"])
        }
        self.vectors.update(emptied)
        for entry in entries:
            self._tell(entry)

    def _tell(self, entry: dict) -> None:
        for watcher in self.watchers:
            watcher(entry)

    def recent(self, count: int) -> list[JournalEntry]:
        """The newest entries, pruned ones included.

        Args:
            count (int): How many entries to return from the end.

        Returns:
            list: Up to `count` entries, oldest first.

        """
        return self.entries.tail(count)

    def all(self) -> list[JournalEntry]:
        """Every entry, pruned ones included, oldest first.

        Returns:
            list: The entries.

        """
        return self.entries.all()

    def live(self) -> list[JournalEntry]:
        """Every entry not emptied by pruning.

        Returns:
            list: The entries, oldest first.

        """
        return [entry for entry in self.entries.all() if not entry.get("pruned")]

    @staticmethod
    def is_synthesis(entry: dict) -> bool:
        """Whether an entry is a summary: of kind SYNTHESIS, or with a synthesis prefix.

        Args:
            entry (dict): The entry to check.

        Returns:
            bool: True for a summary.

        """
        return entry.get("kind") == SYNTHESIS or entry.get("content", "").startswith(
            SYNTHESIS_PREFIXES
        )

    @staticmethod
    def is_reflection(entry: dict) -> bool:
        """Whether an entry is a reflection, by its kind or its source type.

        Args:
            entry (dict): The entry to check.

        Returns:
            bool: True for a reflection.

        """
        return entry.get("kind") == REFLECTION_KIND or entry.get("source_type") == REFLECTION

    def unconsolidated(self) -> list[JournalEntry]:
        """Raw experience not yet consolidated (nor skipped): reflections and summaries are
        never consolidated as raw experience.

        Pruned entries, entries that rest after the model failed on them (`rested`, see
        `sleep.consolidating`) and entries whose source is a summary are left out too.

        Returns:
            list: The entries, oldest first.

        """
        return [
            entry
            for entry in self.entries.all()
            if not entry.get("consolidated")
            and not entry.get("skipped")
            and not entry.get("rested")
            and not entry.get("pruned")
            and not self.is_synthesis(entry)
            and not self.is_reflection(entry)
            and entry.get("source_type") != SUMMARY
        ]

    @property
    def importance_since_reflection(self) -> int:
        """The sum of the importance of experience entries added since the last reflection.

        Returns:
            int: The running sum (0 after a reset).

        """
        return self.entries.extra.get(REFLECTION_COUNTER, 0)

    def reset_reflection_counter(self) -> None:
        """Set the importance sum since the last reflection back to 0, and save it."""
        self.entries.extra[REFLECTION_COUNTER] = 0
        self.entries.save_meta()


def _another_talk(line: dict, entry: dict) -> bool:
    """Whether `line` is not of `entry`'s conversation whatever its time: another audience (a
    whisper among public talk), or either is not experience (a reflection, a summary).

    Args:
        line (dict): A journal entry.
        entry (dict): Another.

    Returns:
        bool: True when it is not.

    """
    if line.get("audience") != entry.get("audience"):
        return True
    return line.get("kind", EXPERIENCE) != EXPERIENCE or entry.get("kind", EXPERIENCE) != EXPERIENCE


def _paused(one: dict, other: dict) -> bool:
    """Whether more than `NEIGHBOUR_SECONDS` part two lines: a pause that ends a conversation."""
    apart = abs((from_iso(one["created_at"]) - from_iso(other["created_at"])).total_seconds())
    return apart > NEIGHBOUR_SECONDS
