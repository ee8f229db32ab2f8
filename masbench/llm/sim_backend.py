"""The ``sim`` provider: the seeded simulator (``sim/<profile>``), free by declaration, its replies
labelled simulated, and its prompt count exact (its own formula)."""

from __future__ import annotations

from typing import Any, ClassVar

from ..spec.model import ModelSpec
from .backends import FREE, Attempt, ModelBackend, Reply
from .prices import Prices
from .sim import Simulator, profile_for
from .sim import prompt_tokens as sim_prompt_tokens


class SimBackend(ModelBackend):
    """The seeded simulator (``sim/<profile>``); its replies are flagged simulated."""

    simulated: ClassVar[bool] = True

    def __init__(self) -> None:
        self._sim = Simulator()

    async def __call__(self, a: Attempt) -> Reply:
        r = await self._sim.complete(a.spec.id, profile_for(a.spec.id, a.spec.sim), a.messages, a.req.get("max_tokens"),
                                     a.sample_index, a.attempt, a.metadata.get("sim"), native=bool(a.req.get("tools")))
        return Reply(r.text, r.prompt_tokens, r.completion_tokens, 0, r.finish_reason, True, tool_calls=r.tool_calls)

    def prepare(self, spec: ModelSpec) -> None:
        profile_for(spec.id, spec.sim)  # fail fast on an unknown profile

    @classmethod
    def default_prices(cls, spec: ModelSpec) -> Prices | None:
        return FREE

    def supports_tools(self, spec: ModelSpec) -> bool:
        """No by default: a ``tool_mode: auto`` agent on ``sim/…`` speaks the text protocol
        (``function_calling: true`` on the model, or ``tool_mode: native``, gives native
        ``tool_calls``: the simulator answers them whenever the request carries ``tools``)."""
        return False

    def prompt_token_bound(self, spec: ModelSpec, messages: list[dict[str, Any]]) -> int:
        return sim_prompt_tokens(messages)


__all__ = ["SimBackend"]
