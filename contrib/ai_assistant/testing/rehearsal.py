"""
The offline rehearsal model's old address: it lives in `ai_assistant.offline.rehearsal`.

Kept so that scripts written against `ai_assistant.testing.rehearsal` (measurement tools among
them) still run; new code imports from `ai_assistant.offline.rehearsal`.

"""

from ..offline.rehearsal import RehearsalResponder

__all__ = ["RehearsalResponder"]
