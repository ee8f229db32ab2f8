"""A suite-level search session, written to the store: the one-shot designer writes ``n``
candidates for a suite's task family; every call is a ``calls`` row (``purpose: search``), every
candidate a ``designs`` row; valid ones can be exported and (``suite_out``) listed in a derived
suite. (A per-task designer over a suite's tasks is run by the harness:
:func:`masbench.harness.run_designer_suite`.) Its lifecycle is a :class:`~masbench.store.RunSession`:
the search run is marked finished, interrupted or failed (with the reason) however it ends."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..llm import Gateway, TranscriptRecorder
from ..store import RunSession, Store, ensure_views, new_run_id
from .holistic import HolisticConfig, HolisticDesigner
from .records import DesignRecord, export_designs


@dataclass
class SessionResult:
    run_id: str
    records: list[DesignRecord]
    exported: list[Path] = field(default_factory=list)
    suite_out: Path | None = None
    tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0

    @property
    def valid_rate(self) -> float:
        return sum(r.valid for r in self.records) / len(self.records) if self.records else 0.0


def _examples(tasks: list[Any], k: int) -> list[str]:
    """Up to k example questions, one per task source first (never their answers)."""
    out, seen = [], set()
    for t in tasks:
        if t.source not in seen:
            seen.add(t.source)
            out.append(t.question)
    for t in tasks:
        if len(out) >= k:
            break
        if t.question not in out:
            out.append(t.question)
    return out[:k]


async def holistic_session(prep: Any, store: Store | RunSession | str | Path, config: HolisticConfig, *,
                           export: Path | None = None, suite_out: Path | None = None, seed: int = 0,
                           gateway: Any = None) -> SessionResult:
    """Run the holistic designer once for a prepared suite (see :func:`masbench.harness.prepare`).
    ``store``: an open session (its writer gets the rows), or a store (file or open) to open one on."""
    if isinstance(store, RunSession):
        return await _holistic(prep, store, config, export, suite_out, seed, gateway)
    with RunSession(store, what="masbench design holistic") as session:
        return await _holistic(prep, session, config, export, suite_out, seed, gateway)


async def _holistic(prep: Any, session: RunSession, config: HolisticConfig, export: Path | None,
                    suite_out: Path | None, seed: int, gateway: Any) -> SessionResult:
    store = session.store
    ensure_views(store)
    run_id = session.start(new_run_id(f"{prep.suite.name}-holistic"), f"{prep.suite.name}:design-search",
                           {"designer": "holistic", "suite": prep.suite.name, "n": config.n, "model": config.model},
                           {a: m.id for a, m in prep.models.items()}, prep.simulated,
                           command="masbench design holistic", transcripts=prep.transcripts)
    writer = session.writer
    gw = gateway or Gateway(prep.models, sink=writer.put, transcripts=TranscriptRecorder(writer.put, prep.transcripts))
    d = HolisticDesigner(gw, prep.library, config, tags={"run_id": run_id}, design_sink=writer.put)
    recs = await d.generate(_examples(prep.tasks, config.examples), description=prep.suite.description, seed=seed)
    writer.flush()
    res = SessionResult(run_id, recs, tokens=d.ledger.tokens, cost_usd=d.ledger.usd, calls=d.ledger.calls)
    if export is not None:
        res.exported = export_designs(store, export, run_id=run_id)
    if suite_out is not None:
        names = []
        for r in recs:
            if r.valid and r.name not in names:
                names.append(r.name)
        res.suite_out = derive_suite(prep.suite_path, suite_out, names)
    return res


def derive_suite(suite_path: Path, out: Path, add: list[str], name_suffix: str = "-auto") -> Path:
    """A copy of a suite file with generated designs appended to ``designs`` (same store, tasks,
    models, budget — so search sessions and runs share a store and the cost views join)."""
    data = yaml.safe_load(Path(suite_path).read_text(encoding="utf-8"))
    data["name"] = str(data.get("name", "suite")) + name_suffix
    designs = list(data.get("designs") or [])
    have = {d if isinstance(d, str) else d.get("design") for d in designs}
    designs += [n for n in add if n not in have]
    data["designs"] = designs
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    head = (f"# Derived from {Path(suite_path).name} by `masbench design holistic --suite-out`: the same suite plus\n"
            "# the generated designs (exported to orchestrators/generated/). Run it with `masbench run`.\n")
    out.write_text(head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
    return out


__all__ = ["SessionResult", "derive_suite", "holistic_session"]
