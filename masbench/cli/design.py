"""``masbench design holistic|meta|export|list|table`` and ``masbench diagnose``.

Mount with :func:`register` (adds the ``design`` group and the ``diagnose`` command). The root
group loads this module only when one of these commands runs, so it imports at its top."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
import yaml
from rich.console import Console
from rich.table import Table

from ..analysis import diagnose as run_diagnose
from ..analysis import illusion_table
from ..design.holistic import HolisticConfig
from ..design.records import export_designs
from ..design.scripted import ScriptedDesignerGateway
from ..design.session import holistic_session
from ..harness import RunOptions, prepare, run_designer_suite
from ..library import Library
from ..llm import TranscriptRecorder
from ..spec.problems import SpecError
from ..store import Store, ensure_views
from .common import ApiBaseOpt, FreeOpt, ModelOpt, model_flags  # one parser of the model flags
from .common import writing

err = Console(stderr=True)


class _Out:
    """stdout console: the terminal's width, or 200 columns when piped (tables stay readable)."""

    def print(self, *a: Any, **kw: Any) -> None:
        Console(width=None if sys.stdout.isatty() else 200).print(*a, **kw)


console = _Out()

design_app = typer.Typer(help="Automatic MAS design: one-shot holistic designer, per-task meta-designer, "
                              "generated designs (stored, exported, listed).", no_args_is_help=True)

StoreOpt = Annotated[Path, typer.Option("--store", help="DuckDB store file.")]
LibOpt = Annotated[Optional[list[Path]], typer.Option("--lib", help="Extra library root(s).")]
ScriptOpt = Annotated[Optional[Path], typer.Option(
    "--script", help="Scripted designer replies (YAML/JSON: role → list of replies; roles holistic, decompose) "
                     "for demos and tests: designer calls are answered from it, agents still use the models.")]


def _scripted(script: Path | None, prep: Any, sink: Any):
    if script is None:
        return None
    data = yaml.safe_load(script.read_text(encoding="utf-8"))
    if not isinstance(data, (dict, list, str)):
        raise typer.BadParameter("--script must hold a mapping of role → replies")
    return ScriptedDesignerGateway(data, models=prep.models, sink=sink,
                                   transcripts=TranscriptRecorder(sink, prep.transcripts))


def _prepare(suite: str, model: list[str] | None, lib: list[Path] | None, limit: int | None = None,
             free: list[str] | None = None, api_base: list[str] | None = None):
    try:
        return prepare(RunOptions(suite=suite, **model_flags(model, free, api_base), lib=lib or [], limit=limit))
    except SpecError as exc:
        for p in exc.problems:
            err.print(str(p), markup=False, highlight=False)
        raise typer.Exit(2)


def _open(store: Path, must_exist: bool = True):
    if must_exist and not store.exists():
        err.print(f"no store at {store}")
        raise typer.Exit(2)
    st = Store(store)
    ensure_views(st)
    return st


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if v != v:  # NaN
            return "–"
        return f"{v:.{digits}f}"
    if isinstance(v, dict):
        return ", ".join(f"{k}: {_fmt(x, 2)}" for k, x in v.items()) or "–"
    return str(v)


@design_app.command("holistic")
def holistic(suite: Annotated[str, typer.Option("--suite", help="Suite whose task family to design for.")],
             n: Annotated[int, typer.Option("--n", min=1, help="Candidate designs (one model call each).")] = 3,
             model: ModelOpt = None, free: FreeOpt = None, api_base: ApiBaseOpt = None,
             designer_model: Annotated[str, typer.Option("--designer-model", help="Model alias the designer uses.")] = "default",
             max_tokens: Annotated[int, typer.Option("--max-tokens", min=16, help="Designer reply cap.")] = 700,
             examples: Annotated[int, typer.Option("--examples", min=1, help="Example questions shown.")] = 2,
             store: Annotated[Optional[Path], typer.Option("--store", help="Store (default: the suite's).")] = None,
             export: Annotated[Optional[Path], typer.Option("--export", help="Write valid designs here as YAML "
                                                            "(e.g. orchestrators/generated).")] = None,
             suite_out: Annotated[Optional[Path], typer.Option("--suite-out", help="Write the suite plus the generated "
                                                               "designs here (e.g. tasks/illusion-auto.yaml).")] = None,
             lib: LibOpt = None, script: ScriptOpt = None) -> None:
    """Write N whole designs for a suite's tasks with one model call each; store, check, export."""
    prep = _prepare(suite, model, lib, free=free, api_base=api_base)
    cfg = HolisticConfig(n=n, model=designer_model, max_tokens=max_tokens, examples=examples)
    with writing(store or prep.store_path, "masbench design holistic") as session:  # the one writer
        gw = _scripted(script, prep, session.writer.put)
        res = asyncio.run(holistic_session(prep, session, cfg, export=export, suite_out=suite_out, gateway=gw))
    t = Table(title=f"holistic designer: {len(res.records)} candidate(s), run {res.run_id}")
    for c in ("#", "name", "valid", "rejection / repairs", "tokens"):
        t.add_column(c)
    for i, r in enumerate(res.records, 1):
        why = r.rejection or ("; ".join(r.repairs) if r.repairs else "")
        t.add_row(str(i), r.name or "–", "yes" if r.valid else "NO", why[:160], str(r.tokens))
    console.print(t)
    sim = " (SIMULATED)" if prep.simulated else ""
    console.print(f"valid designs: {sum(r.valid for r in res.records)}/{len(res.records)} "
                  f"({100 * res.valid_rate:.0f}%); search cost {res.tokens} tokens, ${res.cost_usd:.4f}, "
                  f"{res.calls} calls{sim}")
    for p in res.exported:
        console.print(f"exported {p}")
    if res.suite_out:
        console.print(f"suite with the generated designs: {res.suite_out}  →  masbench run {res.suite_out}")


@design_app.command("meta")
def meta(suite: Annotated[str, typer.Option("--suite", help="Suite whose tasks to run the meta-designer on.")],
         run: Annotated[Optional[str], typer.Option("--run", help="Add the results to this existing run (compared "
                                                    "against its CoT-SC curve); default: a new run.")] = None,
         limit: Annotated[Optional[int], typer.Option("--limit", min=1, help="First N tasks of each source.")] = None,
         model: ModelOpt = None, free: FreeOpt = None, api_base: ApiBaseOpt = None,
         max_rounds: Annotated[int, typer.Option("--max-rounds", min=0)] = 3,
         max_subtasks: Annotated[int, typer.Option("--max-subtasks", min=1)] = 4,
         budget_tokens: Annotated[Optional[int], typer.Option("--budget-tokens", min=1, help="Per-task cap "
                                                              "(also capped by the suite's budget).")] = None,
         label: Annotated[str, typer.Option("--label", help="Design label in the results.")] = "meta-designer",
         concurrency: Annotated[int, typer.Option("--concurrency", min=1)] = 4,
         store: Annotated[Optional[Path], typer.Option("--store", help="Store (default: the suite's).")] = None,
         lib: LibOpt = None, script: ScriptOpt = None) -> None:
    """Run the MAS-Zero-style meta-designer on every task of a suite (results, calls, designs → store)."""
    prep = _prepare(suite, model, lib, limit, free, api_base)
    params: dict[str, Any] = {"max_rounds": max_rounds, "max_subtasks": max_subtasks}
    if budget_tokens:
        params["budget_tokens"] = budget_tokens
    path = store or prep.store_path
    if run is not None and not path.exists():
        err.print(f"no store at {path}")
        raise typer.Exit(2)
    try:
        with writing(path, "masbench design meta") as session:  # the one writer
            gw = _scripted(script, prep, session.writer.put)
            out = asyncio.run(run_designer_suite(prep, session, "meta-designer", params, run_id=run, label=label,
                                                 concurrency=concurrency, gateway=gw))
    except ValueError as exc:
        err.print(str(exc))
        raise typer.Exit(2)
    sim = " (SIMULATED)" if prep.simulated else ""
    console.print(f"meta-designer on {out['tasks']} task(s) in run {out['run_id']}: accuracy "
                  f"{_fmt(out['accuracy'])}, {_fmt(out['tokens_per_task'], 0)} tokens/task, "
                  f"{_fmt(out['calls_per_task'], 1)} calls/task; valid per-round designs "
                  f"{out['valid_designs']}/{out['designs']}{sim}")
    typer.echo(out["run_id"])


@design_app.command("export")
def export(out: Annotated[Path, typer.Option("--out", help="Folder, e.g. orchestrators/generated/.")],
           store: StoreOpt = Path("runs/masbench.duckdb"),
           run: Annotated[Optional[str], typer.Option("--run", help="Only designs of this search run.")] = None,
           designer: Annotated[Optional[str], typer.Option("--designer", help="holistic | meta")] = None,
           per_task: Annotated[bool, typer.Option("--per-task", help="Also per-task (meta-designer) designs.")] = False) -> None:
    """Write every valid generated design in the store as YAML that `masbench validate` accepts."""
    st = _open(store)
    try:
        paths = export_designs(st, out, run_id=run, designer=designer, suite_level_only=not per_task)
    finally:
        st.close()
    for p in paths:
        console.print(f"wrote {p}")
    if not paths:
        err.print("no valid generated designs to export")


@design_app.command("list")
def list_(store: StoreOpt = Path("runs/masbench.duckdb"),
          run: Annotated[Optional[str], typer.Option("--run", help="Only this run.")] = None,
          designer: Annotated[Optional[str], typer.Option("--designer", help="holistic | meta")] = None,
          limit: Annotated[int, typer.Option("--limit", min=1)] = 50) -> None:
    """List generated designs (valid or rejected, with the reason) and the rejection rate."""
    st = _open(store)
    try:
        q = ("SELECT name, designer, run_id, task_id, round, valid, rejection, repairs, tokens, cost_usd FROM designs "
             "WHERE (? IS NULL OR run_id = ?) AND (? IS NULL OR designer = ?) ORDER BY ts DESC LIMIT ?")
        rows = st.sql(q, [run, run, designer, designer, limit])
        val = st.df("SELECT * FROM design_validity WHERE (? IS NULL OR run_id = ?)", [run, run])
    finally:
        st.close()
    t = Table(title="generated designs")
    for c in ("name", "designer", "task", "round", "valid", "rejection / repairs", "tokens"):
        t.add_column(c)
    for name, dsg, _run, task, rnd, valid, rej, rep, tok, _usd in rows:
        reps = json.loads(rep) if rep else []
        t.add_row(name or "–", dsg, task or "–", str(rnd), "yes" if valid else "NO",
                  (rej or "; ".join(reps))[:140], str(tok))
    console.print(t)
    for _, r in val.iterrows():
        console.print(f"{r['run_id']} {r['designer']}: {int(r['valid'])}/{int(r['candidates'])} valid, rejection rate "
                      f"{100 * r['rejection_rate']:.0f}%, {int(r['repaired'])} repaired, search {int(r['tokens'])} tokens")


@design_app.command("table")
def table(store: StoreOpt = Path("runs/masbench.duckdb"),
          run: Annotated[Optional[str], typer.Option("--run", help="Run id (default: the latest).")] = None,
          csv: Annotated[Optional[Path], typer.Option("--csv", help="Also write the table as CSV.")] = None,
          lib: LibOpt = None) -> None:
    """The Illusion paper's table: baselines, expert MAS, automatic MAS and the CoT-SC curve."""
    st = _open(store)
    try:
        df = illusion_table(st, run, Library(roots=lib or []))
    finally:
        st.close()
    if csv:
        df.to_csv(csv, index=False)
    t = Table(title="automatic vs expert MAS vs CoT-SC (search cost excluded | amortized)")
    for c in ("group", "design", "n", "accuracy", "tokens/task", "tokens/task +search", "USD/task",
              "USD/task +search", "× CoT-SC@5 tokens", "iso-cost gap", "collapses to"):
        t.add_column(c)
    for _, r in df.iterrows():
        gap = r["iso_gap_tokens"]
        t.add_row(r["group"], r["design"], str(r["n"]), _pct(r["accuracy"]), _fmt(r["tokens_excl"], 0),
                  _fmt(r["tokens_amort"], 0), _fmt(r["usd_excl"], 5), _fmt(r["usd_amort"], 5),
                  _fmt(r["x_sc5_tokens"], 2), "–" if gap is None or gap != gap else f"{100 * gap:+.1f} pp",
                  r["collapse"] if isinstance(r["collapse"], str) else "")
    console.print(t)


def _pct(v: Any) -> str:
    return "–" if v is None or v != v else f"{100 * float(v):.1f}%"


def diagnose(store: StoreOpt = Path("runs/masbench.duckdb"),
             run: Annotated[Optional[str], typer.Option("--run", help="Run id (default: the latest).")] = None,
             design: Annotated[Optional[list[str]], typer.Option("--design", help="Only these designs (labels).")] = None,
             ablate: Annotated[int, typer.Option("--ablate", min=0, help="Per-node ablation on N tasks (reruns).")] = 0,
             as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
             lib: LibOpt = None) -> None:
    """Architecture diagnostics of a run: nodes, depth, calls/task, unanimity at once, verifier
    choices, collapse to CoT-SC / a single call, and (--ablate N) per-node ablation."""

    st = _open(store)
    try:
        rows = run_diagnose(st, run, design, Library(roots=lib or []), ablate)
    except ValueError as exc:
        err.print(str(exc))
        raise typer.Exit(2)
    finally:
        st.close()
    if as_json:
        typer.echo(json.dumps(rows, indent=2, default=str))
        return
    sim = " — SIMULATED (sim/ models)" if any(r.get("simulated") for r in rows) else ""
    t = Table(title=f"diagnostics of run {rows[0]['run_id'] if rows else run}{sim}")
    for c in ("design", "n", "accuracy", "calls/task", "nodes", "depth", "seq. depth", "unanimous at once",
              "approved wrong", "verifier picks", "collapses to"):
        t.add_column(c)
    for r in rows:
        u = r["unanimity"]
        v = r["verifier"]
        ap = r.get("approvals") or {}
        t.add_row(r["design"], str(r["n"]), _pct(r["accuracy"]), _fmt(r["calls_per_task"], 1),
                  _fmt(r.get("nodes"), 1), _fmt(r.get("depth"), 1), _fmt(r.get("sequential_depth"), 1),
                  "–" if u.get("share") is None else f"{100 * u['share']:.0f}% of {u['tasks']}",
                  "–" if not ap.get("approved") else f"{100 * ap['share_wrong']:.0f}% of {ap['approved']}",
                  ", ".join(f"{k}: {c}" for k, c in v["histogram"].items()) or "–",
                  _fmt(r.get("collapse")) if r.get("collapse") else "")
    console.print(t)
    for r in rows:
        if r.get("ablation"):
            a = Table(title=f"ablation of {r['design']} (drop one node, rerun on {r['ablation'][0]['n']} tasks)")
            for c in ("node", "op", "accuracy", "Δ accuracy", "tokens/task", "Δ tokens", "note"):
                a.add_column(c)
            for x in r["ablation"]:
                a.add_row(x["node"], x["op"], _pct(x["accuracy"]),
                          "–" if x["delta_accuracy"] is None else f"{100 * x['delta_accuracy']:+.1f} pp",
                          _fmt(x["tokens"], 0), "–" if x["delta_tokens"] is None else f"{x['delta_tokens']:+.0f}",
                          x["reason"] or "")
            console.print(a)
        elif r.get("ablation_error"):
            err.print(f"{r['design']}: no ablation ({r['ablation_error']})")


def register(app: typer.Typer) -> None:
    """Mount ``masbench design ...`` and ``masbench diagnose`` on ``app``."""
    app.add_typer(design_app, name="design")
    app.command("diagnose")(diagnose)


__all__ = ["design_app", "diagnose", "register"]
