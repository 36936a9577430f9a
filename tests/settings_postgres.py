"""Test settings on PostgreSQL: `tests.settings` with a real server that the run starts.

The server is a throwaway cluster on 127.0.0.1 (`tests/postgres_server.py`), started when these
settings are loaded and stopped when the test process exits. `make test` runs the storage,
lifecycle and command tests with them, when PostgreSQL's server programs are installed.

"""

from tests.postgres_server import shared_server
from tests.settings import *  # noqa: F401,F403

DATABASES = {"default": shared_server().django_database("evennia")}
