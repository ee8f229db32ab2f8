"""The Illusion paper's table for a run: baselines, expert MAS and automatic MAS, each with
accuracy, cost per task (search excluded and amortized), cost multiple over CoT-SC@5 and the
iso-cost gap to the CoT-SC curve; then the CoT-SC curve's own points. Read from SQL views."""

from __future__ import annotations

import pandas as pd

from ..design.runnable import is_designer
from ..design.topology import collapse
from ..library import Library
from ..store import Store, ensure_views, latest_run
from .lookup import design_spec, entry_params, suite_config


def illusion_table(store: Store, run_id: str | None = None, library: Library | None = None) -> pd.DataFrame:
    """The Illusion paper's layout: baselines, expert MAS and automatic MAS, each with accuracy,
    cost per task (search excluded and amortized), cost multiple over CoT-SC@5 and the iso-cost gap
    to the CoT-SC curve; then the CoT-SC curve's own points."""
    library = library or Library()
    run_id = run_id or latest_run(store)
    if run_id is None:  # an empty store: an empty table
        return pd.DataFrame([])
    ensure_views(store)
    suite, _ = suite_config(store, run_id)
    df = store.df("SELECT * FROM design_cost_search WHERE run_id = ? AND axis = 'all' ORDER BY design", [run_id])
    rows = []
    order = {"baseline": 0, "expert": 1, "automatic": 2}
    for _, r in df.iterrows():
        name, params = entry_params(suite, r["design"])
        spec = None if is_designer(name) else design_spec(store, library, name)
        group = "automatic" if is_designer(name) or (spec is not None and spec.kind == "generated") else (
            spec.kind if spec is not None else "expert")
        col = collapse(spec, library, params or None) if spec is not None else None
        rows.append({"group": group, "design": r["design"], "n": int(r["n"]), "accuracy": r["accuracy"],
                     "tokens_excl": r["tokens_search_excluded"], "tokens_amort": r["tokens_search_amortized"],
                     "usd_excl": r["usd_search_excluded"], "usd_amort": r["usd_search_amortized"],
                     "x_sc5_tokens": r["x_sc5_tokens"], "iso_gap_tokens": r["iso_gap_tokens"],
                     "collapse": col})
    curve = store.df("SELECT k, accuracy, tokens, cost_usd, n_tasks FROM cot_sc_curve WHERE run_id = ? AND axis = 'all' "
                     "ORDER BY k", [run_id])
    for _, c in curve.iterrows():
        if int(c["k"]) in (1, 3, 5) or int(c["k"]) == int(curve["k"].max()):
            rows.append({"group": "cot-sc curve", "design": f"CoT-SC@{int(c['k'])}", "n": int(c["n_tasks"]),
                         "accuracy": c["accuracy"], "tokens_excl": c["tokens"], "tokens_amort": c["tokens"],
                         "usd_excl": c["cost_usd"], "usd_amort": c["cost_usd"], "x_sc5_tokens": None,
                         "iso_gap_tokens": 0.0, "collapse": None})
    out = pd.DataFrame(rows)
    if len(out):
        out["_g"] = out["group"].map(lambda g: order.get(str(g), 3))
        out = out.sort_values(["_g", "design"], kind="stable").drop(columns="_g").reset_index(drop=True)
    return out


__all__ = ["illusion_table"]
