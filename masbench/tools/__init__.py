"""Tools for agents (see :mod:`.base`): an allow-listed registry (:data:`TOOLS`), pydantic-checked
arguments, one :func:`dispatch` that never executes model text as code, and :func:`tool` to
register a python function. Built-ins: ``calculator`` (:mod:`.calculator`), ``search`` and
``read_document`` over a task's local corpus (:mod:`.corpus`)."""

from .base import (DEFAULT_MAX_RESULT_CHARS, STATUSES, TOOLS, Tool, ToolCall, ToolContext, ToolOutput, ToolResult,
                   dispatch, resolve, tool)

__all__ = ["DEFAULT_MAX_RESULT_CHARS", "STATUSES", "TOOLS", "Tool", "ToolCall", "ToolContext", "ToolOutput",
           "ToolResult", "dispatch", "resolve", "tool"]
