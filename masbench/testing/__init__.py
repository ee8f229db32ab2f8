"""Test and benchmark helpers: a local OpenAI-compatible server with fault injection."""

from __future__ import annotations

from .openai_server import FAIL_KINDS, FakeOpenAIServer, ServerConfig, ServerStats

__all__ = ["FAIL_KINDS", "FakeOpenAIServer", "ServerConfig", "ServerStats"]
