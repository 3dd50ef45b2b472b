"""A `SearchTool` as a LangChain `StructuredTool` (`tool.as_langchain()`; needs
`hoprag[langchain]`, i.e. langchain-core).

The tool's `args_schema` is the LangChain tool's, and so is its `tool_call_schema`, what
`bind_tools` shows a chat model: the descriptions, enums, examples and the closed parameter set
(`additionalProperties: false`) of `tool.openai_schema()` (LangChain's own tool-call schema is
rebuilt from the fields alone, without the examples). Both `func` (sync) and `coroutine`
(async) run the search; the output is the answer's `text`: the numbered results (a plain
string input is the schema's first parameter, the topic for a tool that has one), or the
follow-up question when an entity is ambiguous or unknown. An agent never sees a traceback for
its own mistakes: arguments the schema refuses come back as the message of
`hoprag.tools.schema.arguments_error` (LangChain's `handle_validation_error`), and an
`InvalidInputError` or a store failure during the run as a `ToolException` message
(`handle_tool_error`), each saying what to change."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from hoprag.errors import HopragError, InvalidInputError
from hoprag.tools.schema import arguments_error

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool
    from langchain_core.tools.base import ArgsSchema
    from pydantic import ValidationError

    from hoprag.tools.tool import SearchTool

__all__ = ["langchain_tool"]

INSTALL_HINT = "install hoprag's langchain extra (from a clone: pip install '.[langchain]')"


def _tool_message(exc: HopragError) -> str:
    if isinstance(exc, InvalidInputError):
        return f"Invalid arguments: {exc}"
    return f"The search failed: {exc}"


@functools.cache
def _tool_class() -> type[StructuredTool]:
    """A `StructuredTool` whose tool-call schema is its `args_schema` as declared (a search
    tool has no injected arguments to hide from the model); made on first use, as
    langchain-core is optional."""
    from langchain_core.tools import StructuredTool

    class SearchStructuredTool(StructuredTool):
        """A hoprag `SearchTool` as LangChain's `StructuredTool`."""

        @property
        def tool_call_schema(self) -> ArgsSchema:
            """The schema a chat model is shown: `args_schema` itself."""
            schema = self.args_schema
            return schema if schema is not None else super().tool_call_schema

    return SearchStructuredTool


def langchain_tool(tool: SearchTool) -> StructuredTool:
    """`tool` as a LangChain `StructuredTool` (see the module docstring); an ImportError
    saying how to install langchain-core when it is missing."""
    try:
        from langchain_core.tools import ToolException
    except ImportError as exc:
        raise ImportError(
            f"SearchTool.as_langchain needs langchain-core, which is not installed: {INSTALL_HINT}"
        ) from exc

    # A plain string input (`invoke("western")`, which agents send) is LangChain's value of the
    # schema's first parameter (it validates it so) and reaches the function positionally.
    first = next(iter(tool.args_schema.model_fields))

    def func(*text: str, **arguments: Any) -> str:
        try:
            return tool.run(**dict(zip([first], text, strict=False)), **arguments).text
        except HopragError as exc:
            raise ToolException(_tool_message(exc)) from exc

    async def coroutine(*text: str, **arguments: Any) -> str:
        try:
            return (await tool.arun(**dict(zip([first], text, strict=False)), **arguments)).text
        except HopragError as exc:
            raise ToolException(_tool_message(exc)) from exc

    def on_validation_error(exc: ValidationError) -> str:
        return f"Invalid arguments: {arguments_error(exc, tool.parameters)}"

    def on_tool_error(exc: ToolException) -> str:
        return str(exc)

    return _tool_class().from_function(
        func=func,
        coroutine=coroutine,
        name=tool.name,
        description=tool.description,
        args_schema=tool.args_schema,
        handle_tool_error=on_tool_error,
        handle_validation_error=on_validation_error,
    )
