"""
Shared fixtures, and the two tiers of tests.

- The pure core's tests (plain functions over `core_fakes`) run without a database: they take
  milliseconds each, and a file of them runs in about a second.
- The shell's tests (a Django test class, such as `helpers.AssistantTestCase`, or a test marked
  `django_db`) get the test database pytest-django creates, with Evennia's API initialised once
  inside it (about six seconds, once per run).

"""

import pytest
from django.test import SimpleTestCase

from ai_assistant.testing.scripted import ScriptedModel
from ai_assistant.testing.server import LocalModelServer, ScriptedResponder


@pytest.fixture(scope="session")
def evennia_api(django_db_setup, django_db_blocker):
    """Evennia's API, initialised once in the test database (the shell's tests only)."""
    with django_db_blocker.unblock():
        import evennia

        evennia._init()


def _in_the_shell(node) -> bool:
    """Whether a test needs Evennia: it is a Django test case, or asks for the database."""
    cls = getattr(node, "cls", None)
    if cls is not None and issubclass(cls, SimpleTestCase):
        return True
    return node.get_closest_marker("django_db") is not None


@pytest.fixture(scope="session", autouse=True)
def evennia_for_the_shell(request):
    """Evennia's API when the run holds a shell test; a run of the pure core's alone goes
    without. Set up at the start of the session, outside every test's transaction (Evennia's
    start-up sets SQLite pragmas, which a transaction refuses)."""
    if any(_in_the_shell(item) for item in request.session.items):
        request.getfixturevalue("evennia_api")


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
