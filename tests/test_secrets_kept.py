"""
Secrets stay secret everywhere: credentials in an endpoint's address are sent as basic
authentication (or refused with a clear error when an API key would take the same header),
never shown by `@assistant/status`; a wake reason that quotes a whisper stays out of the server
log (`docs/security.md`, "Secrets").

"""

import asyncio
import base64

import pytest
from evennia.utils.test_resources import EvenniaCommandTest

from ai_assistant import handler as handler_module
from ai_assistant.llm.chat import NOT_CONFIGURED, ChatRequest, EndpointSettings, LLMError
from ai_assistant.llm.client import OpenAIChatClient, close_async_clients
from ai_assistant.testing.server import text_reply
from ai_assistant.text import redact

from .helpers import AssistantTestCase


def _with_credentials(url: str, userinfo: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{userinfo}@{rest}"


def test_credentials_in_the_address_are_sent_as_basic_auth(scripted_server):
    scripted_server.responder.add(text_reply("hello"))
    url = _with_credentials(scripted_server.base_url, "bob:p%40ss")
    client = OpenAIChatClient(EndpointSettings(url, None, max_retries=0))
    reply = client.complete(ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}]))
    assert reply.content == "hello"
    (authorization,) = scripted_server.authorizations
    assert authorization == "Basic " + base64.b64encode(b"bob:p@ss").decode()


def test_credentials_in_the_address_work_on_the_live_servers_coroutine_client(scripted_server):
    # the live server's calls go through the SDK's aiohttp transport, which refuses an address
    # with credentials when an Authorization header is set too: every call failed
    scripted_server.responder.add(text_reply("hello"))
    url = _with_credentials(scripted_server.base_url, "bob:hunter2")
    client = OpenAIChatClient(EndpointSettings(url, None, max_retries=0))
    request = ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}])

    async def call():
        try:
            return await client.acomplete(request)
        finally:
            await close_async_clients()

    reply = asyncio.run(call())
    assert reply.content == "hello"
    assert scripted_server.authorizations == ["Basic " + base64.b64encode(b"bob:hunter2").decode()]


def test_credentials_in_the_address_and_an_api_key_are_refused_clearly():
    url = "https://bob:hunter2@proxy.example/v1"
    with pytest.raises(LLMError) as refused:
        OpenAIChatClient(EndpointSettings(url, "sk-real-key-123456"))
    assert refused.value.kind == NOT_CONFIGURED
    assert "username and password" in str(refused.value) and "hunter2" not in str(refused.value)


def test_an_address_with_credentials_is_redacted_wherever_it_is_written():
    text = "calling https://bob:hunter2@proxy.example/v1 failed; retry http://tok@h/v1"
    cleaned = redact(text)
    assert "hunter2" not in cleaned and "tok@" not in cleaned
    assert "https://[redacted]@proxy.example/v1" in cleaned


def commands():
    from ai_assistant import commands

    return commands


class TestSecretsOnScreensAndLogs(AssistantTestCase, EvenniaCommandTest):
    def setUp(self):
        super().setUp()
        self.char1.permissions.add("Builder")

    def cmd(self, args, msg=None, **kwargs):
        return self.call(commands().CmdAssistant(), args, msg, caller=self.char1, **kwargs)

    def test_status_never_shows_a_password_typed_into_a_setting(self):
        self.cmd("/set Aria/model=https://bob:hunter2@proxy.example/v1")
        assert self.script.db.config_overrides["model"].endswith("proxy.example/v1")
        text = self.cmd("/status Aria")
        assert "overrides" in text and "proxy.example" in text
        assert "hunter2" not in text

    def test_a_wake_reason_quoting_a_whisper_stays_out_of_the_server_log(self):
        logged = []
        for name in ("log_info", "log_warn", "log_err"):
            self.patch_logger(name, logged)
        self.handler.sleep(hours=2)
        brain = self.handler.brain
        brain.lifecycle.wake_up(self.clock.now(), "Bob whispered the vault code is 4417")
        assert not brain.asleep
        assert any("awake" in line for line in logged)
        assert not any("4417" in line or "vault" in line for line in logged)

    def patch_logger(self, name, logged):
        original = getattr(handler_module.logger, name)
        setattr(handler_module.logger, name, lambda text, *args, **kw: logged.append(str(text)))
        self.addCleanup(setattr, handler_module.logger, name, original)
