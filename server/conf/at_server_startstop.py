"""
The demo game's start and stop hooks (Evennia's `AT_SERVER_STARTSTOP_MODULE`).

"""

from django.conf import settings


def at_server_start():
    """Every start of the server process, reloads included."""
    if getattr(settings, "AI_ASSISTANT_REHEARSAL", False):
        from world.rehearsal import start_rehearsal_model

        start_rehearsal_model()


def at_server_stop():
    """Every stop of the server process, reloads included."""
    from world.rehearsal import stop_rehearsal_model

    stop_rehearsal_model()
