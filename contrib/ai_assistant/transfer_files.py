"""
The game's side of memory files (`memory.transfer`): where they may be read and written, and
which game this is.

A memory file holds private words (whispers, pages, what the assistant was told in confidence),
so it is kept like a database backup: written only in the game's `server/assistant_memory/`
folder (`EXPORT_FOLDER`), which carries a `.gitignore` of its own so that version control never
takes it in (a game's repository would otherwise show every export as a new file), never in a
folder the website serves (static files and media), never over an existing file, readable by the
server's user alone (mode 0600). A file is read from that folder first, else from anywhere in
the game's folder, at most `transfer.MAX_FILE_BYTES`. The path rules are those of a lore file
(`lore_book.read_lore_file`), for `.json` files.

The game's id (`game_identity`) is a random id made once and kept in Evennia's `ServerConfig`
(`ai_assistant_game_id`), with `settings.SERVERNAME` beside it for people to read: a file whose
id is another's came from another game, and its person keys are re-keyed on import.

"""

import json
import os
import uuid
from pathlib import Path

from django.conf import settings

from .memory.transfer import MAX_FILE_BYTES, TransferError

GAME_ID_KEY = "ai_assistant_game_id"
# where exports go, inside the game's folder; its own .gitignore keeps it out of version control
EXPORT_FOLDER = "server/assistant_memory"
_IGNORE_ALL = "# memory files hold private words: never in version control\n*\n"


def game_identity() -> dict:
    """This game's id and name, the id made and kept the first time it is asked for.

    Returns:
        dict: "id" (str) and "name" (`settings.SERVERNAME`).

    """
    from evennia.server.models import ServerConfig

    game_id = ServerConfig.objects.conf(GAME_ID_KEY)
    if not game_id:
        game_id = uuid.uuid4().hex
        ServerConfig.objects.conf(GAME_ID_KEY, game_id)
    return {"id": str(game_id), "name": str(getattr(settings, "SERVERNAME", ""))[:200]}


def export_folder(make: bool = False) -> Path:
    """The game's folder for memory files (`EXPORT_FOLDER`), with its `.gitignore`.

    Args:
        make (bool, optional): Create the folder (for the server's user alone) and its
            `.gitignore` when they are missing.

    Returns:
        Path: The folder's resolved path.

    """
    folder = (Path(settings.GAME_DIR) / EXPORT_FOLDER).resolve()
    if make:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text(_IGNORE_ALL, encoding="utf-8")
    return folder


def game_path(path: str, base: Path | None = None) -> Path:
    """A `.json` path inside the game's folder (`settings.GAME_DIR`), or inside `base`.

    Args:
        path (str): The path given, relative to `base` (by default the game's folder).
        base (Path, optional): The folder the path must stay in.

    Returns:
        Path: The resolved path.

    Raises:
        TransferError: No path, a path outside the folder, or not a .json file.

    """
    game = Path(settings.GAME_DIR).resolve()
    given = str(path or "").strip()
    if not given:
        raise TransferError("Give the path of a .json file in the game's folder.")
    file = ((base or game) / given).resolve()
    if game != file and game not in file.parents:
        raise TransferError("Memory files are read and written only in the game's folder.")
    if base is not None and base not in file.parents:
        raise TransferError(
            f"Memory files are written only in the game's {EXPORT_FOLDER} folder (version "
            "control ignores it); give a path inside it."
        )
    if file.suffix.lower() != ".json":
        raise TransferError("A memory file is a .json file.")
    return file


def read_memory_file(path: str) -> bytes:
    """The content of a memory file in the game's folder.

    Args:
        path (str): Its path, relative to the game's memory folder (`EXPORT_FOLDER`: where
            exports are) or, when not there, to the game's folder.

    Returns:
        bytes: What it holds.

    Raises:
        TransferError: As `game_path`, no such file, too large, or not readable.

    """
    try:
        file = game_path(path, export_folder())
    except TransferError:
        file = None
    if file is None or not file.is_file():
        file = game_path(path)
    if not file.is_file():
        raise TransferError(f"There is no file {str(path).strip()[:100]} in the game's folder.")
    if file.stat().st_size > MAX_FILE_BYTES:
        raise TransferError(f"A memory file is at most {MAX_FILE_BYTES} bytes.")
    try:
        return file.read_bytes()
    except OSError as err:
        raise TransferError(f"{str(path)[:100]} cannot be read ({type(err).__name__}).") from None


def write_memory_file(path: str, data: dict) -> Path:
    """Write a memory file in the game's folder, readable by the server's user alone.

    Args:
        path (str): Its path, relative to the game's memory folder (`EXPORT_FOLDER`, made
            with its `.gitignore` when missing; a folder inside it must exist).
        data (dict): The file's data.

    Returns:
        Path: Where it was written.

    Raises:
        TransferError: As `game_path`, a file already there, no such folder, or too large.

    """
    file = game_path(path, export_folder(make=True))
    for setting in ("STATIC_ROOT", "MEDIA_ROOT", "STATICFILES_DIRS"):
        served = getattr(settings, setting, None) or []
        for folder in [served] if isinstance(served, (str, Path)) else served:
            folder = Path(folder[-1] if isinstance(folder, (list, tuple)) else folder).resolve()
            if folder == file.parent or folder in file.parents:
                # the website serves these folders to anyone: private words never go there
                raise TransferError(
                    f"{str(path).strip()[:100]} is in a folder the website serves to everyone "
                    f"({setting}); write memory files elsewhere in the game's folder."
                )
    if file.exists():
        raise TransferError(
            f"{str(path).strip()[:100]} already exists; choose another name (an export never "
            "writes over a file)."
        )
    if not file.parent.is_dir():
        raise TransferError(f"There is no folder {file.parent.name[:100]} in the game's folder.")
    text = json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8")
    if len(text) > MAX_FILE_BYTES:
        raise TransferError(
            f"The memory would take {len(text)} bytes, more than a file may hold "
            f"({MAX_FILE_BYTES}); nothing was written."
        )
    try:
        # created exclusively, for the server's user alone: it holds private words
        handle = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(handle, "wb") as out:
            out.write(text)
    except OSError as err:
        raise TransferError(
            f"{str(path)[:100]} cannot be written ({type(err).__name__})."
        ) from None
    return file
