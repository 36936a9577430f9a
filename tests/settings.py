"""Test settings: the demo game's, with an in-memory database and no model configured."""

from server.conf.settings import *  # noqa: F401,F403

AI_ASSISTANT_BASE_URL = None
AI_ASSISTANT_API_KEY = None
AI_ASSISTANT_MODEL = "test-model"
AI_ASSISTANT_DEFAULTS = {}

# what Evennia's own test runner sets (pytest does not go through it)
TEST_ENVIRONMENT = True
