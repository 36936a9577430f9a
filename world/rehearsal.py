"""
Rehearsal mode for the demo game: the assistants talk to the offline rehearsal model, a
deterministic OpenAI-compatible server on 127.0.0.1 inside the game's own process, so a newcomer
can play without an API key. It picks tools by simple rules: it is not intelligence, and every
line it makes its assistants say ends with "(rehearsal)".

`make serve REHEARSAL=1` turns it on (`AI_ASSISTANT_REHEARSAL` in the settings);
`server/conf/at_server_startstop.py` starts it at every server start, reloads included.

"""

from django.conf import settings
from evennia.utils import logger

REHEARSAL_MODEL = "offline-rehearsal"

_running = []


def start_rehearsal_model():
    """Serve the rehearsal model and point the game's model settings at it.

    Returns:
        LocalModelServer: The running server (stopped with `stop_rehearsal_model`).

    """
    from ai_assistant.offline.rehearsal import RehearsalResponder
    from ai_assistant.testing.server import LocalModelServer

    stop_rehearsal_model()
    server = LocalModelServer(RehearsalResponder()).start()
    _running.append(server)
    # every AI_ASSISTANT_ setting is read at call time: the next model call goes here
    settings.AI_ASSISTANT_BASE_URL = server.base_url
    settings.AI_ASSISTANT_API_KEY = "rehearsal"
    settings.AI_ASSISTANT_MODEL = REHEARSAL_MODEL
    settings.AI_ASSISTANT_REHEARSAL = True
    logger.log_info(
        f"ai_assistant: REHEARSAL mode, the assistants use the offline rehearsal model at "
        f"{server.base_url} (deterministic rules, not intelligence)"
    )
    return server


def stop_rehearsal_model():
    """Stop the rehearsal model, if it runs."""
    while _running:
        _running.pop().stop()
