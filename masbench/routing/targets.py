"""Route targets: what a handbook's candidates are, by kind (``ModelProfile.target``).

A kind says where its candidates are chosen and what must hold before a router may return one:

* ``model`` — a model alias, chosen **per call** for an agent whose ``model`` is ``{route: …}``;
  a profile's ``model:`` block is registered with the gateway so a suite need not list it.
* ``design`` — a design run as a sub-agent (its own agents, models, prompts, tools and python
  steps), chosen **per task** by a ``kind: route`` node; it must exist in the library.

The router and its hook read the kind from :data:`ROUTE_TARGETS` and never switch on its name; a
new kind (say, a remote agent) is one class here or in user code plus ``ROUTE_TARGETS.add``.
"""

from __future__ import annotations

from typing import Any, Literal

from ..registry import Registry, RegistryError
from ..spec.handbook import HandbookSpec, ModelProfile

Via = Literal["call", "node"]
"""Where candidates are chosen: per model ``call`` of a routed agent, or per task by a route ``node``."""


class RouteTarget:
    """One kind of candidate. Subclass it and override what differs."""

    via: Via = "call"
    """Where a candidate of this kind can be chosen."""
    what: str = "candidate"
    """What a candidate is, for messages."""

    def prepare(self, name: str, profile: ModelProfile, library: Any = None, gateway: Any = None) -> None:
        """Make ``name`` usable before the first choice (register it, check it exists); raise
        ``ValueError`` with the fix if it cannot be."""


class ModelTarget(RouteTarget):
    """A model alias: registered with the gateway from the profile's ``model:`` block if unknown."""

    via: Via = "call"
    what = "model"

    def prepare(self, name: str, profile: ModelProfile, library: Any = None, gateway: Any = None) -> None:
        if gateway is None or not hasattr(gateway, "models"):
            return
        if name not in gateway.models and profile.model is not None:
            gateway.add_model(name, profile.model)


class DesignTarget(RouteTarget):
    """A design, run as a sub-agent by a route node: it must be in the library."""

    via: Via = "node"
    what = "sub-agent design"

    def prepare(self, name: str, profile: ModelProfile, library: Any = None, gateway: Any = None) -> None:
        if library is not None and hasattr(library, "has") and not library.has("design", name):
            raise ValueError(f"route candidate {name!r} is a design, but the library has no design {name!r}")


ROUTE_TARGETS: Registry[RouteTarget] = Registry("route target", {"model": ModelTarget(), "design": DesignTarget()})
"""Route-target kind → :class:`RouteTarget` (``ModelProfile.target`` names one)."""


def target_of(hb: HandbookSpec, name: str) -> RouteTarget:
    """The kind of candidate ``name`` of ``hb``; a clear error for an unregistered kind."""
    kind = hb.profiles[name].target
    try:
        return ROUTE_TARGETS[kind]
    except RegistryError:
        raise ValueError(f"handbook {hb.name!r}: profile {name!r} has target {kind!r}, which is not a registered "
                         f"route target (known: {', '.join(sorted(ROUTE_TARGETS.names()))})") from None


def prepare_candidates(hb: HandbookSpec, names: list[str], via: Via, *, library: Any = None,
                       gateway: Any = None) -> None:
    """Check that every candidate can be chosen ``via`` (a routed agent's call, or a route node) and
    prepare it; a ``ValueError`` says which candidate does not fit and why."""
    for n in names:
        t = target_of(hb, n)
        if t.via != via:
            where = "a `kind: route` node" if t.via == "node" else "an agent's `model: {route: …}`"
            raise ValueError(f"handbook {hb.name!r}: candidate {n!r} is a {t.what} (target {hb.profiles[n].target!r}); "
                             f"it can only be chosen by {where}")
        t.prepare(n, hb.profiles[n], library, gateway)


__all__ = ["DesignTarget", "ModelTarget", "ROUTE_TARGETS", "RouteTarget", "Via", "prepare_candidates", "target_of"]
