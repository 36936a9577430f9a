"""
Scenes: assistants who talk to each other while a player listens.

Assistants do not hear each other (`respond_to_assistants` is off: two of them alone would
answer each other forever). A scene is the one, capped, exception:

- **It opens** at an idle awake tick of an assistant with `scenes_enabled`, by chance
  (`scene_chance`), when another awake assistant with scenes on is in the room and at least one
  player (a character a connected session plays, not an assistant) is there to hear it. No
  player, no scene: the check is code, so a room of assistants alone costs no model call.
  The caps hold first: each member's `scene_gap_minutes` since its last scene and
  `scenes_per_hour`; the game's `AI_ASSISTANT_SCENES_PER_HOUR`; neither member's token budget
  spent (`Brain.budget_spent`), paused, asleep, waiting or backing off after errors.
- **The opener** gets a notice of the game (`SCENE` in its metadata) and answers it in an
  ordinary turn: the room's thread, so its prompt carries only what everyone present may know
  (recall and history by the same audience rules as any turn in the room; whispers stay out).
  It says one line aloud to its partner, which the room hears as any speech.
- **The partner hears it** as an ordinary heard line marked with the scene (`Hearing`), which
  starts its turn at its next tick (never at once, never urgent: it neither wakes a sleeper nor
  ends a wait, and a player's direct line always comes first). It answers aloud; the opener
  hears that the same way; and so on.
- **It ends** when `scene_max_lines` lines (the opener's setting, its opening line included)
  have been said, when no line comes for `IDLE`, when no player is left to hear it, or when a
  player speaks up in the room (a say or an emote): the player has the floor, the scene's lines
  not yet heard at a tick become context, and the assistants answer the player by the usual
  rules (at once when named). Ended, the assistants no longer hear each other.

The scenes and their counts live in memory, one registry for the server (`SCENES`): a reload
ends the scenes under way (nothing of them is stored but what the assistants heard and said).

"""

import random
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from . import game_settings
from ..events import SCENE, Event, make_event, triggers_model
from ..lifecycle import AWAKE
from ..prompt import SCENE_OPENING
from ..state import RETRY_AFTER, WAIT_UNTIL
from ..clock import from_iso

# a scene with no line for this long is over (its members were busy, or said nothing)
IDLE = timedelta(minutes=5)
HOUR = timedelta(hours=1)


@dataclass
class Scene:
    """One scene under way in a room.

    Attributes:
        id (str): Its id, as lines heard in it carry it (`events.SCENE`).
        room (int): The room's id.
        members (frozenset): The ids of the two assistants in it.
        max_lines (int): The most lines said in it (the opener's `scene_max_lines`).
        lines (int): Lines said so far.
        last_at (datetime): When it opened or its last line was said.
        last (tuple, optional): (speaker id, text) of its last line: each hearer of one line
            counts it once.
        ended (str, optional): Why it is over.

    """

    id: str
    room: int
    members: frozenset
    max_lines: int
    last_at: datetime
    lines: int = 0
    last: tuple | None = None
    ended: str | None = None


@dataclass
class Scenes:
    """The game's scenes (one a room at most) and the times its caps count, in memory.

    Attributes:
        rng (random.Random): The chance of a scene (tests seed or replace it).

    """

    rng: random.Random = field(default_factory=random.Random)
    rooms: dict = field(default_factory=dict)
    started: deque = field(default_factory=deque)
    taken: dict = field(default_factory=dict)
    opened: int = 0

    # ---- opening -------------------------------------------------------------------------------

    def open_for(self, handler, brain, now: datetime) -> Event | None:
        """Open a scene for an idle assistant if one may start now (see the module's doc), and
        queue its opening notice, which its turn then answers.

        Args:
            handler (AssistantHandler): The assistant's handler (its character is `obj`).
            brain (Brain): Its brain.
            now (datetime): The real time.

        Returns:
            Event or None: The notice queued, or None when no scene opens.

        """
        config = brain.config
        if not config.scenes_enabled or self.rng.random() >= config.scene_chance:
            return None
        character = handler.obj
        room = character.location
        if room is None or self.live(room.id, now) is not None:
            return None
        if not (self._free(character.id, config, now) and _idle(brain, now)):
            return None
        others = [obj for obj in room.contents if obj is not character]
        if not any(is_player(obj) for obj in others):
            return None  # no one to hear it: no scene, no call
        partners = [obj for obj in others if self._may_answer(obj, now)]
        if not partners or not self._game_has_room(now):
            return None
        partner = self.rng.choice(partners)
        self.opened += 1
        scene = Scene(
            id=f"scene:{room.id}:{self.opened}",
            room=room.id,
            members=frozenset({character.id, partner.id}),
            max_lines=config.scene_max_lines,
            last_at=now,
        )
        self.rooms[room.id] = scene
        self.started.append(now)
        for member in scene.members:
            self.taken.setdefault(member, deque()).append(now)
        queue = brain.events
        notice = make_event(
            event_id=max(time.time_ns(), queue.next_id()),
            event_type="notice",
            speaker="the game",
            text=SCENE_OPENING.format(partner=partner.key),
            now=now,
            assistant_names=[],
            max_chars=config.max_event_chars,
            location=room.key,
            metadata={SCENE: scene.id},
        )
        queue.push_many([notice], config.max_pending_events)
        handler.log("info", f"opens a scene with {partner.key} (#{partner.id}) in {room.key}")
        return notice

    def _may_answer(self, obj, now: datetime) -> bool:
        """Whether another character here may be the partner: an assistant with scenes on,
        awake, not paused, within its caps and its budget."""
        if getattr(obj, "is_ai_assistant", False) is not True:
            return False
        handler = obj.assistant
        if handler.paused:
            return False
        brain = handler.brain
        config = brain.config
        return config.scenes_enabled and self._free(obj.id, config, now) and _available(brain, now)

    def _free(self, member: int, config, now: datetime) -> bool:
        """Whether an assistant's own caps let it take part in a scene now."""
        times = _last_hour(self.taken.get(member), now)
        if not times:
            return True
        return len(times) < config.scenes_per_hour and now - times[-1] >= timedelta(
            minutes=config.scene_gap_minutes
        )

    def _game_has_room(self, now: datetime) -> bool:
        """Whether the game's cap lets one more scene start this hour (read now)."""
        return len(_last_hour(self.started, now)) < game_settings.scenes_per_hour()

    # ---- under way -----------------------------------------------------------------------------

    def live(self, room: int, now: datetime) -> Scene | None:
        """The scene under way in a room, if any (one idle for `IDLE` is over).

        Args:
            room (int): The room's id.
            now (datetime): The time.

        Returns:
            Scene or None: It.

        """
        scene = self.rooms.get(room)
        if scene is None:
            return None
        if now - scene.last_at >= IDLE:
            self._end(scene, "no line came")
            return None
        return scene

    def is_live(self, scene_id: str, room: int | None, now: datetime) -> bool:
        """Whether a scene is still under way.

        Args:
            scene_id (str): Its id.
            room (int, optional): The room it is in.
            now (datetime): The time.

        Returns:
            bool: True when it is.

        """
        scene = self.live(room, now) if room is not None else None
        return scene is not None and scene.id == scene_id

    def heard(self, hearer, speaker, text: str, now: datetime) -> str | None:
        """Another assistant's speech, heard: the scene's id when it is a line of a scene
        both take part in (the hearer then hears it), else None. Counts the line once,
        whoever hears it; the line that reaches `max_lines`, or one no player hears, ends it.

        Args:
            hearer (Object): The assistant who hears it.
            speaker (Object): The assistant who said it.
            text (str): What was said.
            now (datetime): The time.

        Returns:
            str or None: The scene's id.

        """
        room = hearer.location
        scene = self.live(room.id, now) if room is not None else None
        if scene is None or not {hearer.id, speaker.id} <= scene.members:
            return None
        line = (speaker.id, text)
        if line != scene.last:
            scene.last = line
            scene.last_at = now
            scene.lines += 1
            if scene.lines >= scene.max_lines:
                return self._end(scene, "its lines are said")
            if not any(is_player(obj) for obj in room.contents):
                return self._end(scene, "no player is left to hear it")
        return scene.id

    def _end(self, scene: Scene, why: str) -> None:
        """End a scene now: its room is free (for a scene of its own later)."""
        scene.ended = why
        if self.rooms.get(scene.room) is scene:
            del self.rooms[scene.room]

    def player_spoke(self, room) -> None:
        """A player spoke up in a room: its scene, if any, ends (the player has the floor).

        Args:
            room (Object): The room.

        """
        scene = self.rooms.get(room.id) if room is not None else None
        if scene is not None:
            self._end(scene, "a player spoke")


def is_player(obj) -> bool:
    """Whether a character is a player's: a connected session plays it and it is no assistant.

    Args:
        obj (Object): Something in a room.

    Returns:
        bool: True for a player's character.

    """
    if getattr(obj, "is_ai_assistant", False) is True:
        return False
    sessions = getattr(obj, "sessions", None)
    return bool(sessions is not None and sessions.count())


def _available(brain, now: datetime) -> bool:
    """Whether an assistant may take part in a scene: awake, within its budget, not waiting
    (a scene's line would not end its wait) or backing off after errors."""
    state = brain.state
    if brain.lifecycle.mode != AWAKE or state.get(WAIT_UNTIL) or brain.budget_spent(now):
        return False
    retry_after = from_iso(state.get(RETRY_AFTER))
    return not (retry_after and now < retry_after)


def _idle(brain, now: datetime) -> bool:
    """Whether an assistant may open a scene: available, and no line waits for its answer."""
    if not _available(brain, now):
        return False
    config = brain.config
    return not any(
        triggers_model(event, config.respond_to_ambient, config.respond_to_assistants)
        for event in brain.events.peek()
    )


def _last_hour(times: deque | None, now: datetime) -> deque:
    """The times within the last hour (older ones dropped from the deque)."""
    if times is None:
        return deque()
    while times and now - times[0] >= HOUR:
        times.popleft()
    return times


# one for the server: scenes span assistants, and the game's cap counts them all
SCENES = Scenes()
