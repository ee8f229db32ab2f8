"""Prices per token class, and where each price came from.

Resolution, per model: an explicit ``price: 0`` in its YAML (``zero-declared``); else any
``*_usd_per_mtok`` field in its YAML (``yaml``; a class left unset falls back inside the YAML: cached
read and cache write to the input price, reasoning to the output price); else litellm's bundled price
map (``litellm-map``: ``input_cost_per_token``, ``cache_read_input_token_cost``,
``cache_creation_input_token_cost``, ``output_cost_per_token``, ``output_cost_per_reasoning_token``,
with the same fallbacks) — which is the ``litellm`` backend's default; a provider backend says
its own default (:meth:`~masbench.llm.backends.ModelBackend.default_prices`): the simulator and the
embedded model are free by declaration (``zero-declared``), and a registered backend that gives
none requires the model's YAML to price it. A model with none of these is ``unpriced``:
:func:`require_prices` stops a run on it before any call, and a call made anyway (an ad-hoc
gateway) is recorded with cost provenance ``unpriced`` — never a silent $0. A provider that reports its own cost per call wins for that call
(``provider-reported``, see the gateway).

Every model a litellm backend serves is registered with litellm (even at price 0): an unmapped
model makes litellm raise and swallow a cost error on every call (~0.5 ms each, measured).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from ..spec.model import ModelSpec
from ..spec.problems import Problem, SpecError, flag_problem, problem_at
from ..spec.yamlpos import Located
from .backends import FREE, backend_class
from .prices import SOURCES, Prices

log = logging.getLogger("masbench.llm")
_warned: set[str] = set()
_registered: set[str] = set()


def _provider(model_id: str) -> str:
    head = model_id.split("/", 1)[0] if "/" in model_id else "openai"
    return head


def _opt(v: float | None) -> float | None:
    return None if v is None else float(v)


_BUNDLED: dict[str, dict] | None = None


def _bundled() -> dict[str, dict]:
    """litellm's price map as bundled, copied before we register any model into it (so a model we
    registered at $0 or at one suite's YAML prices is never read back as a map price)."""
    global _BUNDLED
    if _BUNDLED is None:
        from ._litellm import litellm  # deferred: heavy import, only for real providers

        _BUNDLED = {k: dict(v) for k, v in litellm.model_cost.items() if isinstance(v, dict)}
    return _BUNDLED


def from_litellm_map(model_id: str) -> Prices | None:
    """A model's prices from litellm's bundled map (the id, then the id without its provider)."""
    bundled = _bundled()
    for key in (model_id, model_id.split("/", 1)[-1]):
        info = bundled.get(key)
        if info and ("input_cost_per_token" in info or "output_cost_per_token" in info):
            return Prices(float(info.get("input_cost_per_token") or 0.0), float(info.get("output_cost_per_token") or 0.0),
                          _opt(info.get("cache_read_input_token_cost")), _opt(info.get("cache_creation_input_token_cost")),
                          _opt(info.get("output_cost_per_reasoning_token")), "litellm-map")
    return None


def _from_yaml(spec: ModelSpec) -> Prices | None:
    if spec.price == 0:
        return Prices(0.0, 0.0, 0.0, 0.0, 0.0, "zero-declared")
    fields = (spec.input_usd_per_mtok, spec.output_usd_per_mtok, spec.cached_input_usd_per_mtok,
              spec.cache_write_usd_per_mtok, spec.reasoning_usd_per_mtok)
    if all(f is None for f in fields):
        return None
    per = [None if f is None else f / 1e6 for f in fields]
    return Prices(per[0] or 0.0, per[1] or 0.0, per[2], per[3], per[4], "yaml")


def resolve_prices(spec: ModelSpec) -> Prices:
    """Prices for one model: its YAML's, else its provider backend's default (litellm's map, or
    free by declaration), else ``unpriced``; the backend is told the prices we will charge."""
    backend = backend_class(spec)
    p = _from_yaml(spec) or backend.default_prices(spec)
    if p is None:
        if spec.id not in _warned:
            _warned.add(spec.id)
            log.warning("no price known for %s: its calls are recorded as cost source 'unpriced' (set "
                        "input_usd_per_mtok/output_usd_per_mtok, or price: 0, in the model's YAML)", spec.id)
        p = Prices(0.0, 0.0, None, None, None, "unpriced")
    backend.register_prices(spec, p)
    return p


def register_with_litellm(spec: ModelSpec, p: Prices) -> None:
    """Register a model with litellm at the price we charge (once per id; even at price 0: an
    unmapped model makes litellm raise and swallow a cost error on every call)."""
    if spec.id in _registered:
        return
    from ._litellm import litellm  # deferred: heavy import (~2 s), only for real providers

    _bundled()  # snapshot the map before changing it

    entry = {"input_cost_per_token": p.input, "output_cost_per_token": p.output,
             "litellm_provider": _provider(spec.id), "mode": "chat"}
    try:
        litellm.register_model({spec.id: entry, spec.id.split("/", 1)[-1]: entry})
    except Exception as exc:  # registration is an optimisation; never fatal
        log.debug("litellm.register_model(%s) failed: %s", spec.id, exc)
    _registered.add(spec.id)


def require_prices(models: dict[str, ModelSpec], where: str | Located = "suite",
                   flags: Mapping[str, str] | None = None) -> dict[str, Prices]:
    """Every model's prices, or a :class:`SpecError` naming each unpriced model (alias and id) at
    its line of the suite file (``where``: the located suite, or a label) — called by the run path
    before any call is made (override with ``price: 0``). A model is priced by its YAML or by its
    provider backend's :meth:`~masbench.llm.backends.ModelBackend.default_prices`. ``flags``: the
    aliases a command-line flag named, with the flag as given — their problem names the flag and
    the flags that price a model, not a line of the suite."""
    out: dict[str, Prices] = {}
    problems = []

    def problem(path: tuple[str, ...], msg: str) -> None:
        problems.append(problem_at(where, ("models", *path), msg) if isinstance(where, Located)
                        else Problem(where, 1, 1, ".".join(("models", *path)), msg))

    for alias, spec in models.items():
        try:
            p = _from_yaml(spec) or backend_class(spec).default_prices(spec)
        except ValueError as exc:  # a client that does not apply to the model (see backends.provider_of)
            problem((alias, "client"), str(exc))
            continue
        if p is None:
            head = f"no price known for model {alias!r} ({spec.id})"
            if flags and alias in flags:
                problems.append(flag_problem(flags[alias], f"{head}: if it is a free local server add --free {alias} "
                                             f"(and --api-base {alias}=URL for its address); else name a model YAML "
                                             f"that prices it: --model {alias}=NAME (models/NAME.yaml) or "
                                             f"--model {alias}=PATH.yaml"))
                continue
            problem((alias,), f"{head}: set input_usd_per_mtok and output_usd_per_mtok in its YAML, or price: 0 if it "
                    f"is free (on the command line: --free {alias})")
            continue
        out[alias] = p
    if problems:
        raise SpecError(problems)
    return out


__all__ = ["FREE", "Prices", "SOURCES", "from_litellm_map", "register_with_litellm", "require_prices", "resolve_prices"]
