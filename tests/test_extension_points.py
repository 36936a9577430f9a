"""
What games are told to do works: a handler subclass returned from the mixin's `assistant`
property, overriding the documented extension points (`make_registry`, `make_world`,
`system_prompt_template`), drives a real turn through the real `openai` SDK.

"""

from evennia.utils import create
from evennia.utils.utils import lazy_property

from ai_assistant.characters import AssistantCharacter
from ai_assistant.handler import AssistantHandler
from ai_assistant.testing.server import tool_call, tool_reply
from ai_assistant.tools import default_tools
from ai_assistant.tools.base import Tool, ToolArgs, ToolRegistry, ToolResult
from ai_assistant.shell.world import CharacterWorld

from .helpers import AssistantTestCase


class RingBellTool(Tool):
    """A game's own tool: ring the shop's bell."""

    name = "ring_bell"
    description = "Ring the shop's bell."
    Args = ToolArgs

    def run(self, ctx, args):
        ctx.world.rings += 1
        return ToolResult(ok=True, content="Ding.")


class ShopWorld(CharacterWorld):
    """A game's own world: the character's hooks, plus a bell."""

    rings = 0


class ShopkeeperHandler(AssistantHandler):
    def make_registry(self) -> ToolRegistry:
        return ToolRegistry([*default_tools(), RingBellTool()])

    def make_world(self):
        return ShopWorld(self.obj)

    def system_prompt_template(self) -> str:
        return "You are {name}, who keeps the shop. {persona} Act only through your tools."


class Shopkeeper(AssistantCharacter):
    @lazy_property
    def assistant(self) -> ShopkeeperHandler:
        return ShopkeeperHandler(self)


class TestAGamesOwnHandler(AssistantTestCase):
    def test_the_overridden_parts_are_the_ones_used(self):
        keeper = create.create_object(
            f"{__name__}.Shopkeeper", key="Mabel", location=self.room1, home=self.room1
        )
        handler = keeper.assistant
        assert isinstance(handler, ShopkeeperHandler)
        handler.clock = self.clock
        handler.runner = self.handler.runner
        handler.script.db.config_overrides = dict(self.overrides)
        self.responder.add(
            tool_reply(tool_call("ring_bell", {}), tool_call("say", {"text": "Welcome!"})),
            tool_reply(tool_call("noop", {})),
        )
        self.char1.execute_cmd("say Mabel, hello!")
        self.clock.advance(5)
        handler.script.at_assistant_tick()
        sent = self.responder.requests[0]
        assert sent["messages"][0]["content"].startswith("You are Mabel, who keeps the shop.")
        assert "ring_bell" in [tool["function"]["name"] for tool in sent["tools"]]
        assert handler.brain.world.rings == 1
        assert any('Mabel says, "Welcome!"' in text for text in self.received(self.char1))
        results = [
            m["content"] for m in self.responder.requests[1]["messages"] if m["role"] == "tool"
        ]
        assert results[0] == "Ding."
