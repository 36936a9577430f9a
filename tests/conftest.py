"""
Shared fixtures. pytest-django creates the test database; Evennia's API is initialised once
inside it, after which Evennia's own test classes (`EvenniaTest`, ...) work.

"""

import pytest

from ai_assistant.testing.scripted import ScriptedModel
from ai_assistant.testing.server import LocalModelServer, ScriptedResponder


@pytest.fixture(scope="session", autouse=True)
def evennia_api(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        import evennia

        evennia._init()


@pytest.fixture(autouse=True)
def scripted_models_used_as_scripted():
    """Every in-process scripted model of a test was used exactly as scripted."""
    ScriptedModel.instances = []
    yield
    ScriptedModel.verify_all()


@pytest.fixture
def scripted_server():
    """A scripted OpenAI-compatible server on 127.0.0.1; `.responder` holds the script, and it
    must be used exactly as scripted."""
    with LocalModelServer(ScriptedResponder()) as server:
        yield server
        server.responder.verify()
