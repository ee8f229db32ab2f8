"""Test and benchmark helpers: a local OpenAI-compatible server with fault injection.

Names are imported lazily so that ``python -m masbench.testing.openai_server`` runs the
module cleanly (no "found in sys.modules" warning from runpy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["FAIL_KINDS", "FakeOpenAIServer", "ServerConfig", "ServerStats"]

if TYPE_CHECKING:  # pragma: no cover
    from masbench.testing.openai_server import FAIL_KINDS, FakeOpenAIServer, ServerConfig, ServerStats


def __getattr__(name: str) -> Any:
    if name in __all__:
        from masbench.testing import openai_server

        return getattr(openai_server, name)
    raise AttributeError(f"module 'masbench.testing' has no attribute {name!r}")
