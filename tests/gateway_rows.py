"""The ``calls`` rows a gateway writes for a list of calls, without what differs between two runs
of the same calls (ids, clocks): what the SDK paths' tests compare with litellm's own path."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from masbench.llm import Gateway
from masbench.llm.health import BreakerConfig
from masbench.spec import ModelSpec
from masbench.store import Store, StoreWriter

VOLATILE = ("call_id", "ts", "t_start", "latency_s")
"""The columns of a ``calls`` row that differ between two runs of the same call."""
TAGS = {"design": "d", "task_id": "t", "seed": 0, "node": "n", "agent": "a"}


def rows(store: Store, order: list[str]) -> list[dict[str, Any]]:
    """The store's ``calls`` rows in ``order`` (call ids), without :data:`VOLATILE`; NULL as None."""
    df = store.df("SELECT * FROM calls")
    by_id = {r["call_id"]: {str(k): None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
             for r in df.to_dict("records")}  # pandas reads NULL floats as NaN (never equal to itself)
    return [{k: v for k, v in by_id[cid].items() if k not in VOLATILE} for cid in order]


async def calls_rows(tmp_path: Path, model: ModelSpec, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``calls`` rows of ``calls`` (each: messages, params, max_tokens) through one gateway on
    ``model`` (fast retries), in a new store under ``tmp_path``."""
    store = Store(tmp_path / f"s{len(list(tmp_path.iterdir()))}.duckdb")
    writer = StoreWriter(store)
    gw = Gateway({"m": model}, retry_base_s=0.01, retry_max_s=0.02, breaker=BreakerConfig(cooldown_s=0.05),
                 sink=lambda r: writer.put(dataclasses.replace(r, run_id="x")))
    order = []
    for c in calls:
        res = await gw.complete("m", c.get("messages", [{"role": "user", "content": "q"}]), params=c.get("params"),
                                max_tokens=c.get("max_tokens", 16), tags=TAGS)
        order.append(res.call_id)
    await gw.aclose()
    writer.flush()
    out = rows(store, order)
    store.close()
    return out
