"""
Keeping the game's start-up objects out of Python's full garbage collections.

A full collection walks every container object the process holds, and the reactor thread waits
for it. In a game server most of those objects are made once at start-up and live until it
stops: modules, classes, functions, settings. The OpenAI SDK this contrib depends on adds about
57,000 of them (its pydantic types), a third of a fresh game's heap, and so makes every full
collection of the game a third longer: about 100 ms of a 2-core machine's time for a server of
220,000 objects, long enough for a player to feel when it lands on a command.

`freeze_startup_objects` collects once, then moves every object alive at that moment into
Python's permanent generation (`gc.freeze`), which later collections skip. The objects stay
where they are and are freed by reference counting as before; only a cycle among them that
becomes garbage later is never collected (Evennia restarts its server process on every
reload, so that can only hold what start-up made). It runs once per process, when the first
assistant script starts or is created; a game turns it off with
`AI_ASSISTANT_FREEZE_STARTUP_OBJECTS = False`.

"""

import gc
import time

_frozen = False


def freeze_startup_objects() -> tuple[int, float] | None:
    """Collect, then freeze what is alive, once per process.

    Returns:
        tuple or None: (objects frozen, seconds the collection took) the first time; None
            after that.

    """
    global _frozen
    if _frozen:
        return None
    _frozen = True
    started = time.perf_counter()
    gc.collect()
    took = time.perf_counter() - started
    gc.freeze()
    return gc.get_freeze_count(), took
