"""
The assistant's tools. `default_registry()` returns the registry the shell uses; later phases
(sleep, context) add their tools to `default_tools()`.

"""

from .base import EXTRACTION, SLEEP_TURN, TURN, Tool, ToolContext, ToolRegistry, ToolResult
from .gossip import TellTool
from .groups import ShareWithGroupTool
from .memory import MEMORY_TOOLS
from .plans import PLAN_TOOLS
from .recall import RecallTool
from .sleep import SLEEP_TOOLS
from .world import WORLD_TOOLS


def default_tools() -> list[Tool]:
    """Make one of each of the assistant's tools.

    Returns:
        list[Tool]: The world, memory, recall, gossip (`tell`, offered when gossip is on),
            group (`share_with_group`, offered when group sharing is on), plan (`agree_to_meet`,
            offered when planning is on) and sleep tools (`go_to_sleep` awake; `wake_up` and
            `stay_asleep` in the sleep turn).

    """
    return [
        *WORLD_TOOLS,
        *MEMORY_TOOLS,
        RecallTool(),
        TellTool(),
        ShareWithGroupTool(),
        *PLAN_TOOLS,
        *SLEEP_TOOLS,
    ]


def default_registry() -> ToolRegistry:
    """Make the tool registry the shell uses.

    Returns:
        ToolRegistry: A registry of `default_tools()`.

    """
    return ToolRegistry(default_tools())


__all__ = [
    "EXTRACTION",
    "SLEEP_TURN",
    "TURN",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "default_registry",
    "default_tools",
]
