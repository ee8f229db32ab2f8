"""Fixtures shared by the model-layer tests."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def litellm_spy(monkeypatch):
    """The models sent through ``litellm.acompletion`` (a path that must bypass litellm adds none)."""
    from masbench.llm._litellm import litellm

    seen: list[str] = []
    real = litellm.acompletion

    async def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("model", ""))
        return await real(*args, **kwargs)

    monkeypatch.setattr(litellm, "acompletion", spy)
    return seen
