"""
An in-process Evennia on a throwaway SQLite database, for the headless demo and the benchmarks.

"""

import os


def setup_evennia(db_path: str) -> None:
    """Configure Django for the demo game's settings on `db_path`, migrate, and init Evennia."""
    os.environ["TEST_DB_PATH"] = db_path  # read by Evennia's default DATABASES setting
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "server.conf.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    import evennia

    evennia._init()


def create_home_room(key: str = "Reading Room"):
    """A first room, made the default home (a fresh database has no Limbo)."""
    from django.conf import settings
    from evennia.utils import create

    room = create.create_object("typeclasses.rooms.Room", key=key, nohome=True)
    settings.DEFAULT_HOME = room.dbref
    return room


def connect(character):
    """Give a character a session, as a player's client would (no network, no account): the
    game then counts it as a player present (a scene starts only where one listens). What the
    character is sent still goes to its `msg`, which the demo and benchmarks replace.

    Args:
        character (Object): The character.

    Returns:
        ServerSession: Its session.

    """
    import evennia
    from evennia.server.serversession import ServerSession

    sessions = evennia.SESSION_HANDLER
    session = ServerSession()
    session.init_session("telnet", ("localhost", "headless"), sessions)
    session.sessid = max(sessions, default=0) + 1
    sessions[session.sessid] = session
    character.sessions.add(session)
    return session
