"""The batch loop of ``run --until-decided`` (masbench.harness.until_decided) with recording
stand-ins for the run's engine, curve and looks (no simulated run: milliseconds; the whole loop on
simulated runs is tests/harness/test_until_decided.py). A scripted sequence of looks decides one
design at the second look and the other at the third; the expected batches, cells and lines are
written out by hand below."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import pytest

from masbench.harness import until_decided as ud
from masbench.harness.sequential_look import Looked
from masbench.store import Store


@dataclass(frozen=True)
class FakeCell:
    task: str
    design: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.task, self.design)


@dataclass
class Plan:
    n_batches: int

    def batch_tasks(self, j: int) -> list[str]:
        return [f"b{j}t0", f"b{j}t1"]


@dataclass
class World:
    """The store as the stand-ins see it: looks written, designs frozen at each look, cells done."""

    freeze_at: dict[int, list[str]]  # look number (1-based) -> designs decided at it
    looks: int = 0
    frozen: list[str] = field(default_factory=list)
    done: set = field(default_factory=set)
    executed: list[list[FakeCell]] = field(default_factory=list)
    curves: int = 0
    look_calls: list[tuple[int, list[str]]] = field(default_factory=list)
    store: Any = None


def _prep(designs: list[tuple[str, str]], n_batches: int) -> Any:
    """A Prepared stand-in: designs as (label, design name); cells = tasks x designs asked."""
    def cells(tasks: list[str], labels: set[str]) -> list[FakeCell]:
        return [FakeCell(t, d) for t in tasks for d, _ in designs if d in labels]

    suite = SimpleNamespace(cot_sc=SimpleNamespace(k_max=3), stats="spec", budget=SimpleNamespace(basis="tokens"))
    return SimpleNamespace(sequence=Plan(n_batches), designs=[SimpleNamespace(label=lab, name=n) for lab, n in designs],
                           suite=suite, tasks=["all"], cells=cells)


def _wire(monkeypatch: pytest.MonkeyPatch, w: World) -> None:
    def ours(store: Any, run: str) -> None:  # every stand-in is asked about this run of this store
        assert store is w.store and run == "run", (store, run)

    def looked(store, run):
        ours(store, run)
        return Looked(looks=w.looks, frozen=cast(Any, dict.fromkeys(w.frozen)))

    def done_cells(store, run, k_max):
        ours(store, run)
        return set(w.done) if k_max == 3 else None

    monkeypatch.setattr(ud, "looked", looked)
    monkeypatch.setattr(ud, "done_cells", done_cells)
    monkeypatch.setattr(ud, "groups_of_tasks", lambda tasks: tasks)

    def curve(store, run, cot_sc, groups, basis):
        ours(store, run)
        assert (cot_sc.k_max, groups, basis) == (3, ["all"], "tokens")
        w.curves += 1

    def look(store, run, plan, family, k_max, spec, state):
        ours(store, run)
        assert (k_max, spec) == (3, "spec") and state.looks == w.looks
        assert isinstance(plan, Plan) and family == ["deb", "ref"]
        w.look_calls.append((state.looks, sorted(state.frozen)))
        w.looks += 1
        w.frozen += w.freeze_at.get(w.looks, [])
        return [SimpleNamespace(design=d, decided=d in w.frozen) for d in family]

    monkeypatch.setattr(ud, "compute_curve", curve)
    monkeypatch.setattr(ud, "take_look", look)
    def line(j, plan, results):
        assert isinstance(plan, Plan)
        return f"look {j}: " + ",".join(r.design for r in results if r.decided)

    monkeypatch.setattr(ud, "look_line", line)


DESIGNS = [("cot", "cot"), ("sc", "cot-sc"), ("deb", "debate"), ("ref", "self-refine")]


def _run(monkeypatch: pytest.MonkeyPatch, w: World, n_batches: int, lines: list[str] | None = None) -> int:
    _wire(monkeypatch, w)
    prep = _prep(DESIGNS, n_batches)

    async def execute(cells: list[Any]) -> None:
        w.executed.append(cells)
        w.done |= {c.key for c in cells}

    w.store = Store(":memory:")
    return asyncio.run(ud.run_until_decided(prep, w.store, "run", execute,
                                            lines.append if lines is not None else None))


def test_a_fixed_n_run_is_refused() -> None:
    prep = _prep(DESIGNS, 1)
    prep.sequence = None
    with pytest.raises(AssertionError, match="^not a sequential run$"):
        asyncio.run(ud.run_until_decided(prep, Store(":memory:"), "run", _never))


async def _never(cells: list[Any]) -> None:
    raise AssertionError("no cell is run")


def test_the_family_is_the_non_baselines_in_order() -> None:
    assert ud.family_of(_prep(DESIGNS, 1)) == ["deb", "ref"]
    # a batch: its two tasks for the undecided designs and both baselines; nothing once all are decided
    prep = _prep(DESIGNS, 4)
    assert ud.batch_cells(prep, 2, ["ref"]) == [FakeCell(t, d) for t in ("b2t0", "b2t1") for d in ("cot", "sc", "ref")]
    assert ud.batch_cells(prep, 0, []) == []


def test_decided_designs_get_no_more_tasks_and_the_loop_ends_when_all_are(monkeypatch: pytest.MonkeyPatch) -> None:
    w = World(freeze_at={2: ["deb"], 3: ["ref"]})
    lines: list[str] = []
    made = _run(monkeypatch, w, n_batches=5, lines=lines)
    # look 1 (batch 0): both undecided; look 2 (batch 1): deb decided; look 3 (batch 2): ref too -> stop (3 < 5)
    assert made == 3 and w.looks == 3 and w.curves == 3
    assert [sorted({c.design for c in b}) for b in w.executed] == [["cot", "deb", "ref", "sc"]] * 2 + \
        [["cot", "ref", "sc"]]
    assert [sorted({c.task for c in b}) for b in w.executed] == [["b0t0", "b0t1"], ["b1t0", "b1t1"], ["b2t0", "b2t1"]]
    assert w.look_calls == [(0, []), (1, []), (2, ["deb"])]
    assert lines == ["look 1: ", "look 2: deb", "look 3: deb,ref"]


def test_the_task_cap_ends_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    w = World(freeze_at={})
    assert _run(monkeypatch, w, n_batches=2) == 2 and w.looks == 2 and len(w.executed) == 2


def test_a_resumed_loop_starts_after_the_stored_looks_and_skips_done_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    # the store holds 1 look with deb decided, and half of batch 1 done (its first task for every design)
    w = World(freeze_at={3: ["ref"]}, looks=1, frozen=["deb"],
              done={(f"b1t0", d) for d in ("cot", "sc", "deb", "ref")})
    made = _run(monkeypatch, w, n_batches=4)
    # batch 1: only b1t1, for cot, sc, ref (deb decided); batch 2: both tasks; ref decided at look 3 -> stop
    assert made == 2
    assert [[(c.task, c.design) for c in b] for b in w.executed] == [
        [("b1t1", "cot"), ("b1t1", "sc"), ("b1t1", "ref")],
        [(t, d) for t in ("b2t0", "b2t1") for d in ("cot", "sc", "ref")]]
    # a run whose every design is already decided makes no look at all
    w2 = World(freeze_at={}, looks=2, frozen=["deb", "ref"])
    assert _run(monkeypatch, w2, n_batches=4) == 0 and w2.executed == []


def _look(st: Store, run: str, design: str, calls: int) -> None:
    row = dict(run_id=run, look=1, design=design, unit="calls", n_tasks=20, n_cells=20, calls=calls, tokens=0,
               cost_usd=0.0, budget_spent=0.0, k_match=1.5, position="within", mean_diff=0.1, cs_lo=-0.2, cs_hi=0.4,
               p_anytime=0.5, family_size=2, p_holm=1.0, level_holm=0.025, decided=False, verdict="inconclusive",
               reason="undecided", max_tasks=100, batch=20, method="m", alpha=0.05, ts=0.0)
    st.con.execute(f"INSERT INTO sequential_looks ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                   list(row.values()))


def test_decisions_and_the_saving_read_their_views_for_this_run_only(tmp_path) -> None:
    st = Store(tmp_path / "s.duckdb")
    try:
        assert ud.decisions(st, "none") == [] and ud.run_saving(st, "none") is None
        # run r: designs z and a at look 1; run q: design b. Decisions of r only, by design; r's saving row
        for run, design, calls in (("r", "z", 60), ("r", "a", 40), ("q", "b", 20)):
            _look(st, run, design, calls)
            st.con.execute("INSERT INTO results (run_id, design, task_id, seed, calls) VALUES (?, ?, 't0', 0, 2)",
                           [run, design])
        got = ud.decisions(st, "r")
        assert [(g["run_id"], g["design"], g["calls"]) for g in got] == [("r", "a", 40), ("r", "z", 60)]
        saving = ud.run_saving(st, "r")
        # r made 2 calls in each of its two cells: 4 (q's cell is not r's)
        assert saving is not None and (saving["run_id"], saving["max_tasks"], saving["calls"]) == ("r", 100, 4)
        got = ud.rows_of(st, "SELECT 2 AS b, ? AS a UNION ALL SELECT 1, 'y' ORDER BY b", ["x"])
        assert got == [{"b": 1, "a": "y"}, {"b": 2, "a": "x"}]
    finally:
        st.close()
