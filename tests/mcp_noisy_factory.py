"""A tool module that prints when it is imported, as user modules do (`hoprag mcp --tool
mcp_noisy_factory:actor_tool` must keep it off the protocol stream; issue #28, 9)."""

from __future__ import annotations

from mcp_factory import actor_tool

print("mcp_noisy_factory imported")

__all__ = ["actor_tool"]
