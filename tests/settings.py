"""Test settings: the demo game's, with an in-memory database and no model configured."""

from server.conf.settings import *  # noqa: F401,F403

# Evennia's SQLite, even where AI_ASSISTANT_DEMO_DATABASE_URL points the demo game elsewhere
from evennia.settings_default import DATABASES  # noqa: E402,F811

AI_ASSISTANT_BASE_URL = None
AI_ASSISTANT_API_KEY = None
AI_ASSISTANT_MODEL = "test-model"
AI_ASSISTANT_DEFAULTS = {}

# what Evennia's own test runner sets (pytest does not go through it)
TEST_ENVIRONMENT = True
# every Evennia test case creates two accounts with passwords: the default hasher's hundreds of
# thousands of rounds cost about half a second per test, and these passwords protect nothing
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
