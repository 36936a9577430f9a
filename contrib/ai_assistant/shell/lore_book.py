"""
The game's lore book in Evennia: kept once for the whole game on one global script's
Attributes, shared by every assistant (`memory.lore` is the core).

- `game_lore()`: the game's `LoreBook` (the script `ai_assistant_lore` is made the first time;
  its Attributes in the `ai_assistant_lore` category hold the book). One book, and so one
  index, per server process, whatever the number of assistants.
- `AssistantLore` (`character.assistant.lore`): what one assistant may know of it, where it
  stands now (its name, aliases, dbref, room and tags): what its recall searches, and what the
  dashboard may list for it.
- `warm_lore()`: build that index at a server start (`scripts`), not in the first turn.
- `read_lore_file(path)`: the entries of a text or JSON file under the game's folder, for
  `@assistant/lore import` (formats: `memory.lore.parse_lore_text`, `parse_lore_json`).

"""

from pathlib import Path

from django.conf import settings
from evennia.utils import create, search

from ..conf import AssistantConfig
from .game_settings import game_defaults
from ..memory.lexical import DEFAULT_STEMMER
from ..memory.lore import (
    MAX_FILE_BYTES,
    Knower,
    LoreBook,
    LoreError,
    parse_lore_json,
    parse_lore_text,
)
from .storage import AttributeStore

LORE_SCRIPT_KEY = "ai_assistant_lore"
LORE_CATEGORY = "ai_assistant_lore"
# the one book of this process, with what identifies the script it was read from
_book: tuple[tuple, LoreBook] | None = None
# the lore script found last (checked against Evennia's object cache before it is used), and
# whether a recall found none (the game has no lore: its recalls look for no script again)
_script = None
_none = False


def lore_script(make: bool = True):
    """The global script that holds the lore book (made the first time it is asked for).

    Args:
        make (bool): Make it when there is none (a recall does not: no lore, no script).

    Returns:
        Script or None: The script keyed `LORE_SCRIPT_KEY` (None: none, and not made).

    """
    global _script
    script = _script
    # the script found before, while Evennia's object cache still holds it (a deleted script,
    # or a flushed cache, leaves it): no query a recall
    if script is not None and script.pk and type(script).get_cached_instance(script.pk) is script:
        return script
    global _none
    if not make and _none:
        return None  # looked for already: lore begins with a builder's command, here
    found = search.search_script(LORE_SCRIPT_KEY)
    if found:
        _script = found[0]
        return _script
    if not make:
        _none = True
        return None
    _none = False
    _script = create.create_script(
        "evennia.scripts.scripts.DefaultScript",
        key=LORE_SCRIPT_KEY,
        desc="The AI assistants' shared lore book (@assistant/lore).",
        persistent=True,
    )
    return _script


def _stemmer() -> str:
    """The game's language for lore's words: the game's default `recall_stemmer`."""
    stemmer = (game_defaults() or {}).get("recall_stemmer")
    return stemmer or AssistantConfig.model_fields["recall_stemmer"].default or DEFAULT_STEMMER


def game_lore(make: bool = True) -> LoreBook | None:
    """The game's lore book: one for the process, its index built once and kept current.

    Args:
        make (bool): Make the lore script when there is none yet.

    Returns:
        LoreBook or None: The book over the lore script's Attributes (None: no script, and
            `make` is False).

    """
    global _book
    script = lore_script(make)
    if script is None:
        return None
    # a script made again (another database, a test's) is another book
    identity = (script.pk, script.db_date_created, _stemmer())
    if _book is None or _book[0] != identity:
        book = LoreBook(AttributeStore(script, LORE_CATEGORY), stemmer=identity[2])
        # a rolled-back step leaves the book's cache ahead of the database: read it again
        book.store.on_rollback = book.forget_cache
        _book = (identity, book)
    return _book[1]


def warm_lore() -> None:
    """Read the game's lore book and build its one index now (a server start's warm-up,
    `scripts`): else the first recall after a start or reload pays for it in a player's turn
    (about 0.4 s for 10,000 entries). A game without lore reads nothing more."""
    book = game_lore(make=False)
    if book is not None:
        len(book)  # reads the entries and builds the index


def knower_of(character) -> Knower:
    """Who an assistant is to the lore book, where it stands now.

    Args:
        character (Object): The assistant.

    Returns:
        Knower: Its name, aliases, dbref, room (name and dbref) and tags.

    """
    room = character.location
    return Knower.of(
        character.key,
        aliases=character.aliases.all(),
        dbref=character.dbref,
        room=room.key if room else None,
        room_dbref=room.dbref if room else None,
        tags=character.tags.all(),
    )


class AssistantLore:
    """What one assistant may know of the game's lore (`character.assistant.lore`).

    Args:
        character (Object): The assistant.

    """

    def __init__(self, character):
        self.character = character

    @property
    def book(self) -> LoreBook:
        """The game's lore book (every entry; for builders)."""
        return game_lore()

    def knower(self) -> Knower:
        """Who it is to the lore book now (see `knower_of`)."""
        return knower_of(self.character)

    def recall(self, query: str, limit: int, weights) -> list:
        """The lore it recalls for `query` (what its brain's recall merges in).

        Args:
            query (str): What is recalled.
            limit (int): The most entries.
            weights (RecallWeights): Its recall weights.

        Returns:
            list: `memory.lore.LoreRecalled` items, best first.

        """
        book = game_lore(make=False)  # a game without lore has no lore script
        return book.recall(query, self.knower(), limit, weights) if book is not None else []

    def known(self, limit: int = 100) -> list[dict]:
        """The entries it may know, by id (a dashboard's list).

        Args:
            limit (int): The most to return.

        Returns:
            list: Copies of the entries.

        """
        book = game_lore(make=False)  # a read: a game without lore gets no lore script
        return book.known_to(self.knower(), limit) if book is not None else []


def read_lore_file(path: str) -> list[dict]:
    """The entries of a lore file in the game's folder, parsed but not yet checked (the
    book checks every entry before it adds any).

    Args:
        path (str): The file's path, relative to the game's folder (`settings.GAME_DIR`);
            `.json` for JSON, `.txt` for text.

    Returns:
        list: The entries' fields.

    Raises:
        LoreError: A path outside the game's folder, another kind of file, a file too large
            or not readable, or one that does not parse.

    """
    base = Path(settings.GAME_DIR).resolve()
    given = str(path or "").strip()
    if not given:
        raise LoreError("Give the path of a .txt or .json file in the game's folder.")
    file = (base / given).resolve()
    if base != file and base not in file.parents:
        raise LoreError("Lore is imported only from files in the game's folder.")
    if file.suffix.lower() not in (".txt", ".json"):
        raise LoreError("A lore file is a .txt or a .json file.")
    if not file.is_file():
        raise LoreError(f"There is no file {given[:100]} in the game's folder.")
    if file.stat().st_size > MAX_FILE_BYTES:
        raise LoreError(f"A lore file is at most {MAX_FILE_BYTES} bytes.")
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise LoreError(f"{given[:100]} cannot be read as UTF-8 text ({type(err).__name__}).")
    if file.suffix.lower() == ".json":
        return parse_lore_json(text)
    return parse_lore_text(text)
