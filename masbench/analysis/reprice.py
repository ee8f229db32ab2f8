"""Counterfactual pricing: what a finished run would have cost under another price table.

A price table is rows of the store's ``price_table`` (one per model id, or ``'*'`` for every model);
the ``call_reprice`` / ``run_reprice`` / ``design_reprice`` views (``masbench/store/cost_views.py``)
do the arithmetic per token class. This module only fills tables:

- :func:`map_table`: a public price table from litellm's bundled map (e.g. ``gpt-4o-mini``), applied
  to every model of the run (``'*'``): "what would these tokens cost on model X's prices";
- :func:`own_table`: the run's own prices (its models' YAML or map prices, as the run resolved
  them) — re-pricing under it reproduces the recorded cost (a check, and the test of the view).
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from ..llm import models_from
from ..llm.pricing import Prices, from_litellm_map, require_prices
from ..spec.model import ModelSpec
from ..store import Store


class RepriceError(ValueError):
    """A price table that cannot be built (an id not in litellm's map, an unknown run)."""


def _rows(name: str, model: str, p: Prices) -> dict[str, Any]:
    return {"price_table": name, "model": model, **p.per_mtok()}


def map_table(model_id: str) -> list[dict[str, Any]]:
    """A ``'*'`` price table named ``model_id`` from litellm's bundled map."""
    p = from_litellm_map(model_id)
    if p is None:
        raise RepriceError(f"no price for {model_id!r} in litellm's bundled map (try an id like gpt-4o-mini)")
    return [_rows(model_id, "*", p)]


def own_table(store: Store, run_id: str, name: str = "own") -> list[dict[str, Any]]:
    """The run's own per-model prices, resolved from its recorded suite config as the run did."""
    row = store.sql("SELECT config FROM runs WHERE run_id = ?", [run_id])
    if not row:
        raise RepriceError(f"no run {run_id!r} in {store.path}")
    cfg = json.loads(row[0][0]) if isinstance(row[0][0], str) else (row[0][0] or {})
    declared = {a: m if isinstance(m, str) else ModelSpec.model_validate(m) for a, m in (cfg.get("models") or {}).items()}
    models = models_from(declared, cfg.get("_overrides") or {})
    prices = require_prices(models, f"run {run_id}")
    return [_rows(name, models[a].id, p) for a, p in prices.items()]


def put_table(store: Store, rows: list[dict[str, Any]]) -> None:
    """Replace the named price tables with ``rows`` (one transaction)."""
    names = sorted({r["price_table"] for r in rows})
    df = pd.DataFrame(rows)  # noqa: F841 - referenced by name in SQL
    with store.lock:
        store.con.execute("BEGIN TRANSACTION")
        try:
            for n in names:
                store.con.execute("DELETE FROM price_table WHERE price_table = ?", [n])
            store.con.execute("INSERT INTO price_table BY NAME SELECT * FROM df")
            store.con.execute("COMMIT")
        except Exception:
            store.con.execute("ROLLBACK")
            raise


def reprice(store: Store, run_id: str, tables: list[str] | None = None) -> pd.DataFrame:
    """``run_reprice`` rows of one run (only ``tables`` if given), cheapest first."""
    q = "SELECT * FROM run_reprice WHERE run_id = ?"
    params: list[Any] = [run_id]
    if tables:
        q += f" AND price_table IN ({', '.join('?' for _ in tables)})"
        params += list(tables)
    return store.df(q + " ORDER BY repriced_usd NULLS LAST, price_table", params)


__all__ = ["RepriceError", "map_table", "own_table", "put_table", "reprice"]
