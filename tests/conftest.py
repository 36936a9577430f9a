"""
Shared fixtures. pytest-django creates the test database; Evennia's API is initialised once
inside it, after which Evennia's own test classes (`EvenniaTest`, ...) work.

"""

import pytest

from ai_assistant.testing.server import LocalModelServer, ScriptedResponder


@pytest.fixture(scope="session", autouse=True)
def evennia_api(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        import evennia

        evennia._init()


@pytest.fixture
def scripted_server():
    """A scripted OpenAI-compatible server on 127.0.0.1; `.responder` holds the script."""
    with LocalModelServer(ScriptedResponder()) as server:
        yield server
