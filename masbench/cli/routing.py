"""``masbench skills learn|show`` and ``masbench route eval|outcomes``."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path
from typing import Annotated, Optional, cast, get_args

import pandas as pd
import typer
from rich.console import Console
from rich.table import Table

from ..library import Library
from ..llm import Gateway
from ..routing.embed import EmbeddingUnavailable, embedder
from ..routing.evaluation import LAMBDAS, evaluate, format_sweep, format_table, plot_pareto
from ..routing.handbook import compile_handbook, load_handbook, save_handbook
from ..routing.learn import learn_handbook, propose_taxonomy, tags_from_taxonomy
from ..routing.matrix import aexplore, load_matrix, matrix_from_designs, matrix_from_store, save_matrix, to_arrays
from ..routing.study import sim_matrix, study_pool, study_tasks
from ..spec.handbook import CostUnit
from ..spec.model import ModelSpec
from ..store import Store, fill_outcomes
from .common import writing
from .tasks import suite_tasks

console = Console()
err = Console(stderr=True)

skills_app = typer.Typer(help="Skill handbooks: learn competence and cost from traces, show them.", no_args_is_help=True)
route_app = typer.Typer(help="Routers: evaluate them on an outcome matrix; fill decision outcomes.",
                        no_args_is_help=True)


def _pool(ids: list[str]):
    known = study_pool()
    out = {}
    for m in ids:
        if "=" in m:
            alias, mid = m.split("=", 1)
        else:
            alias, mid = m, m
        out[alias] = known[mid].model_copy() if mid in known else ModelSpec(id=mid)
    return out


def _tasks(suite: str, limit: int | None, seed: int):
    if suite in ("routing-study", "study"):

        return study_tasks(limit or 200, seed)

    _path, tasks = suite_tasks(suite)
    if limit:
        by_src: dict[str, list] = {}
        for t in tasks:
            by_src.setdefault(t.source, []).append(t)
        tasks = [t for ts in by_src.values() for t in ts[:limit]]
    return tasks


@skills_app.command("learn")
def learn(out: Annotated[Path, typer.Option("--out", help="Handbook file to write (skills/NAME.yaml).")],
          store: Annotated[Optional[Path], typer.Option("--store", help="DuckDB store with single-model runs.")] = None,
          run: Annotated[Optional[list[str]], typer.Option("--run", help="Run id(s) in the store (default: all).")] = None,
          design: Annotated[Optional[str], typer.Option("--design", help="Design whose results are the outcomes (default cot).")] = None,
          candidates: Annotated[Optional[str], typer.Option("--candidates", help="With --store: comma-separated designs of one run; they become the candidates (sub-agents) of the handbook.")] = None,
          matrix: Annotated[Optional[Path], typer.Option("--matrix", help="Outcome matrix file (.parquet/.csv/.jsonl).")] = None,
          explore: Annotated[bool, typer.Option("--explore", help="Run every --pool model on the --suite tasks now.")] = False,
          pool: Annotated[Optional[list[str]], typer.Option("--pool", help="Model id (or ALIAS=ID) to explore; repeat.")] = None,
          suite: Annotated[Optional[str], typer.Option("--suite", help="Suite whose tasks to explore (or 'routing-study').")] = None,
          limit: Annotated[Optional[int], typer.Option("--limit", help="First N tasks per source.")] = None,
          name: Annotated[Optional[str], typer.Option("--name", help="Handbook name (default: the file stem).")] = None,
          description: Annotated[Optional[str], typer.Option("--description", help="What pool and tasks it is for.")] = None,
          update: Annotated[bool, typer.Option("--update", help="Add to the evidence of the existing --out file.")] = False,
          shrinkage: Annotated[float, typer.Option("--shrinkage", help="κ, pseudo-counts toward the parent skill.")] = 4.0,
          credit: Annotated[str, typer.Option("--credit", help="responsibility | demand | whole")] = "responsibility",
          split_threshold: Annotated[float, typer.Option("--split-threshold")] = 0.15,
          cost_unit: Annotated[Optional[str], typer.Option("--cost-unit", help="usd_per_1k_calls | relative | ktokens (default: ktokens with --candidates, else usd_per_1k_calls)")] = None,
          propose_with: Annotated[Optional[str], typer.Option("--propose-with", help="Model that proposes a taxonomy from contrastive pairs.")] = None,
          max_tokens: Annotated[int, typer.Option("--max-tokens", help="Completion cap per exploration call.")] = 512,
          seed: Annotated[int, typer.Option("--seed")] = 0,
          save_matrix_to: Annotated[Optional[Path], typer.Option("--save-matrix", help="Also write the outcome matrix here.")] = None) -> None:
    """Build or update a handbook from a store, a matrix file, or an exploration run."""
    sources = sum([store is not None and not explore, matrix is not None, explore])
    if sources != 1:
        err.print("give exactly one of --store, --matrix, --explore (with --pool and --suite)")
        raise typer.Exit(2)
    prov: dict = {}
    models = None
    if explore:
        if not pool or not suite:
            err.print("--explore needs --pool (repeatable) and --suite")
            raise typer.Exit(2)
        models = _pool(pool)
        tasks = _tasks(suite, limit, seed)
        err.print(f"exploring {len(models)} models × {len(tasks)} tasks …")
        df = asyncio.run(aexplore(models, tasks, max_tokens=max_tokens))
        prov = {"source": "explore", "suite": suite}
    elif matrix is not None:
        df = load_matrix(matrix)
        prov = {"source": "matrix"}
    else:
        assert store is not None  # exactly one source was given
        if candidates:
            df = _design_matrix(store, [c.strip() for c in candidates.split(",") if c.strip()], run)
        else:
            df = _store_matrix(store, run, design, "skills learn")
        prov = {"source": "store", "store": str(store), "runs": sorted(df["run_id"].unique()) if "run_id" in df else []}
    unit = cost_unit or ("ktokens" if candidates else "usd_per_1k_calls")
    if unit not in get_args(CostUnit):
        err.print(f"--cost-unit {unit!r}: use one of {', '.join(get_args(CostUnit))}")
        raise typer.Exit(2)
    simulated = _is_simulated(df)
    prov["simulated"] = simulated
    if save_matrix_to:
        save_matrix(df, save_matrix_to)
    taxonomy = None
    if propose_with:

        A = to_arrays(df)
        gw = Gateway(_pool([propose_with]))
        taxonomy, cost, toks = asyncio.run(propose_taxonomy(gw, list(gw.models)[0], A))
        prov.update({"extra_cost_usd": cost, "taxonomy_source": "metadata+llm" if taxonomy else "metadata"})
        if taxonomy and not any(len(s) for s in A.skills):
            tags = tags_from_taxonomy(taxonomy, A.questions)
            df = df.assign(skills=df["task_id"].map(dict(zip(A.task_ids, tags))))
        err.print(f"LLM proposed {len(taxonomy)} skills (cost ${cost:.4f}, {toks} tokens)")
    base = load_handbook(out) if update and out.exists() else None
    hb = learn_handbook(df, name=name or (base.name if base else out.stem), base=base, models=models,
                        shrinkage=shrinkage, credit_mode=credit, split_threshold=split_threshold,
                        cost_unit=cast(CostUnit, unit), provenance=prov, taxonomy=taxonomy, description=description,
                        target="design" if candidates else "model")

    cmd = "masbench " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    header = (("# SIMULATED: learned from sim/ models (seeded simulator), not real model measurements.\n"
               if simulated else "") + f"# Learned by: {cmd}\n# Inspect: masbench skills show {out}")
    save_handbook(hb, out, header=header)
    p = hb.provenance
    console.print(f"wrote {out}: {len(hb.taxonomy)} skills, {len(hb.profiles)} models, {p.observations} outcomes; "
                  f"learning cost ${p.learning_cost_usd:.4f} ({p.learning_calls} calls, {p.learning_tokens} tokens)"
                  + (" [SIMULATED]" if simulated else ""), markup=False)
    for ev in p.history[-10:]:
        console.print(f"  {ev.action} {ev.skill} → {', '.join(ev.children)} (divergence {ev.divergence:.3f})", markup=False)


@skills_app.command("show")
def show(handbook: Annotated[str, typer.Argument(help="Handbook name or path.")],
         lib: Annotated[Optional[list[Path]], typer.Option("--lib", help="Extra library root(s).")] = None) -> None:
    """Print a handbook: taxonomy, competence posteriors (mean [5%, 95%]), cost per call, provenance."""
    hb = load_handbook(handbook, Library(roots=lib or []))
    ch = compile_handbook(hb)
    p = hb.provenance
    console.print(f"[bold]{hb.name}[/]  {hb.description or ''}" + ("  [red]SIMULATED[/]" if p.simulated else ""))
    console.print(f"cost unit {hb.cost_unit}; shrinkage κ={hb.shrinkage}; split threshold {hb.split_threshold}; "
                  f"source {p.source} ({p.taxonomy_source} taxonomy), {p.tasks} tasks, {p.observations} outcomes, "
                  f"credit {p.credit}; learning cost ${p.learning_cost_usd:.4f} / {p.learning_calls} calls", markup=False)
    t = Table(title="competence: posterior mean, 90% band (mean ± 1.645 sd); mean cost per call (USD)")
    t.add_column("skill")
    for m in ch.models:
        t.add_column(m)
    mean, sd = ch.mean, ch.var ** 0.5
    for i, s in enumerate(ch.skills):
        active = i == 0 or hb.taxonomy[s].active
        label = ("  " * int(ch.depth[i]) + (s if i else "(model-wide)")) + ("" if active else " (merged)")
        t.add_row(label, *[f"{mean[j, i]:.2f} [{max(0, mean[j, i] - 1.645 * sd[j, i]):.2f},"
                           f"{min(1, mean[j, i] + 1.645 * sd[j, i]):.2f}] ${ch.cost[j, i]:.2g}" for j in range(len(ch.models))])
    console.print(t)
    for s, sk in hb.taxonomy.items():
        if sk.indicators:
            inds = ", ".join(i if isinstance(i, str) else f"{i.pattern}×{i.weight:g}" for i in sk.indicators[:8])
            console.print(f"  {s}: {inds}", markup=False, highlight=False)


@route_app.command("eval")
def route_eval(matrix: Annotated[Optional[Path], typer.Option("--matrix", help="Outcome matrix file.")] = None,
               store: Annotated[Optional[Path], typer.Option("--store", help="Store with single-model runs.")] = None,
               run: Annotated[Optional[list[str]], typer.Option("--run", help="Run id(s).")] = None,
               design: Annotated[Optional[str], typer.Option("--design")] = None,
               sim_study: Annotated[bool, typer.Option("--sim-study", help="The simulated pool study (SIMULATED).")] = False,
               n_tasks: Annotated[int, typer.Option("--n-tasks", help="Tasks in the simulated study.")] = 600,
               train: Annotated[float, typer.Option("--train", help="Training share (<1) or count of tasks.")] = 0.1,
               seeds: Annotated[int, typer.Option("--seeds", help="Random train/test splits to average.")] = 3,
               lam: Annotated[float, typer.Option("--lambda", help="Default λ (relative cost) for the table.")] = 0.1,
               lambdas: Annotated[Optional[str], typer.Option("--lambdas", help="Comma-separated λ sweep.")] = None,
               demand: Annotated[str, typer.Option("--demand", help="indicators | tags")] = "indicators",
               k: Annotated[int, typer.Option("--k", help="Clusters for cluster-best.")] = 8,
               embed: Annotated[Optional[str], typer.Option("--embed", help="Also the embedding routers (k-NN, cluster-best, embedding demand) with offline embeddings: gguf (the embedded model, no new dependency) | minilm (optional extra `embed`).")] = None,
               out: Annotated[Optional[Path], typer.Option("--out", help="Folder for pareto.png, metrics.csv, sweep.csv.")] = None) -> None:
    """Compare routers (strongest, cheapest, random, cost-matched random, single-model hull,
    cluster-best, SkillOrchestra as coded, ours, oracle) on an outcome matrix."""
    if sum([matrix is not None, store is not None, sim_study]) != 1:
        err.print("give exactly one of --matrix, --store, --sim-study")
        raise typer.Exit(2)
    if sim_study:

        df = sim_matrix(n_tasks)
    elif matrix is not None:
        df = load_matrix(matrix)
    else:
        assert store is not None  # exactly one source was given
        df = _store_matrix(store, run, design, "route eval")
    simulated = _is_simulated(df)
    lams = tuple(float(x) for x in lambdas.split(",")) if lambdas else LAMBDAS
    emb = None
    if embed:
        try:
            emb = embedder(embed)
        except (EmbeddingUnavailable, ValueError) as exc:
            err.print(f"route eval --embed {embed}: {exc}", markup=False)
            raise typer.Exit(2)
    try:
        res = evaluate(df, n_train=train if train < 1 else int(train), seeds=seeds, lambdas=lams, default_lambda=lam,
                       demand=demand, k_clusters=k, embed=emb)
    except ValueError as exc:
        err.print(f"route eval: {exc}", markup=False)
        raise typer.Exit(2)
    typer.echo(format_table(res, simulated))
    typer.echo("")
    typer.echo(format_sweep(res))
    if out:
        out.mkdir(parents=True, exist_ok=True)
        res.table.to_csv(out / "metrics.csv", index=False)

        pd.concat([g.assign(router=r) for r, g in res.sweeps.items()]).to_csv(out / "sweep.csv", index=False)
        png = plot_pareto(res, out / "pareto.png", simulated=simulated)
        typer.echo(f"wrote {png}, {out / 'metrics.csv'}, {out / 'sweep.csv'}")


@route_app.command("outcomes")
def outcomes(store: Annotated[Path, typer.Option("--store", help="DuckDB store.")],
             run: Annotated[Optional[str], typer.Option("--run", help="Only this run.")] = None) -> None:
    """Fill routing_decisions.outcome from the scored results."""
    with writing(store) as session:  # updates decisions in the store: the one writer
        if run is not None:
            session.attach(run)
        n = fill_outcomes(session.store, run)
    console.print(f"{n} routing decision(s) updated")


def _store_matrix(store: Path, run: list[str] | None, design: str | None, cmd: str) -> pd.DataFrame:
    """The outcome matrix of a store's run(s); a clear error (exit 2) when there is none."""
    try:
        with Store(store) as st:
            return matrix_from_store(st, run, design)
    except ValueError as exc:
        err.print(f"{cmd}: {exc}", markup=False)
        raise typer.Exit(2)


def _design_matrix(store: Path, candidates: list[str], run: list[str] | None) -> pd.DataFrame:
    """The outcome matrix of designs in one run of a store; a clear error (exit 2) when there is none."""
    if run and len(run) > 1:
        err.print("skills learn --candidates: give at most one --run (the designs' results of one run)")
        raise typer.Exit(2)
    try:
        with Store(store) as st:
            return matrix_from_designs(st, candidates, run[0] if run else None)
    except ValueError as exc:
        err.print(f"skills learn: {exc}", markup=False)
        raise typer.Exit(2)


def _is_simulated(df: pd.DataFrame) -> bool:
    return bool(df["simulated"].any()) if "simulated" in df else any(m.startswith("sim/") for m in df["model"])


def register(app: typer.Typer) -> None:
    """Mount ``skills`` and ``route`` on the main CLI."""
    app.add_typer(skills_app, name="skills")
    app.add_typer(route_app, name="route")
