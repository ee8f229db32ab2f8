"""Models from the command line, as complete as in a suite's YAML.

- ``--model ALIAS=NAME``: NAME is a model YAML — a name looked up as ``models/NAME.yaml`` in the
  library (``--lib`` roots, ``$MASBENCH_PATH``, the working directory, then the bundled
  ``models/``), or a path ending ``.yaml``/``.yml`` — which replaces the alias's model whole; any
  other NAME is a litellm id, which replaces the alias's id (its settings kept, its prices dropped).
- ``--free ALIAS``: the alias's model is free (``price: 0``): a local server, a self-hosted model.
- ``--api-base ALIAS=URL``: the alias's model is served at URL (an OpenAI-compatible server).

:func:`resolve_overrides` folds the three into one override per alias (an id, or a whole
:class:`~masbench.spec.ModelSpec`), which is what a run hashes, records and hands its workers.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..library import Library
from ..llm import ModelOverride, models_from
from ..spec import ModelSpec
from ..spec.problems import SpecError, flag_problem


def _named(alias: str, name: str, library: Library) -> str | ModelSpec:
    """A model YAML's spec when ``name`` names one (by path or by name), else ``name`` (a litellm id)."""
    if name.endswith((".yaml", ".yml")):
        if not Path(name).is_file():
            raise SpecError([flag_problem(f"--model {alias}={name}", "no such model YAML file")])
        return library.load_path(name, "model").typed(ModelSpec)
    if library.has("model", name):
        return library.typed("model", name, ModelSpec)
    return name


def resolve_overrides(declared: dict[str, str | ModelSpec], given: Mapping[str, ModelOverride],
                      free: list[str], api_base: Mapping[str, str], library: Library) -> dict[str, ModelOverride]:
    """One override per alias from ``--model`` (``given``), ``--free`` and ``--api-base``, over the
    suite's ``declared`` models. An alias that ``--free``/``--api-base`` name but neither the suite
    nor ``--model`` defines is a :class:`SpecError` naming the flag."""
    out: dict[str, ModelOverride] = {a: _named(a, g, library) if isinstance(g, str) else g for a, g in given.items()}
    for alias in dict.fromkeys([*free, *api_base]):
        current = models_from(declared, {alias: out[alias]} if alias in out else {})
        if alias not in current:
            flag = f"--free {alias}" if alias in free else f"--api-base {alias}={api_base[alias]}"
            raise SpecError([flag_problem(flag, f"no model alias {alias!r} (the suite's: {', '.join(declared)}); "
                                                f"give it with --model {alias}=NAME")])
        update: dict[str, object] = {}
        if alias in free:
            update["price"] = 0
        if alias in api_base:
            update["api_base"] = api_base[alias]
        out[alias] = current[alias].model_copy(update=update)
    return out


def flag_texts(given: Mapping[str, ModelOverride]) -> dict[str, str]:
    """``alias → "--model ALIAS=NAME"`` for the aliases ``--model`` named as text: what a problem
    with such a model names instead of a line of the suite."""
    return {a: f"--model {a}={g}" for a, g in given.items() if isinstance(g, str)}


__all__ = ["flag_texts", "resolve_overrides"]
