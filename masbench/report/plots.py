"""The report's figures, drawn on matplotlib's Agg canvas (``Figure`` objects, never pyplot: no
display, no global backend switch, safe inside notebooks and threads)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .data import RunInfo
from .tables import is_true, records, significance

BASELINE_STYLE = {"cot": ("s", "#444444"), "cot-sc": ("D", "#1f4e9c")}
CURVE_COLOR = "#1f77b4"
FRONTIER_COLOR = "#d4a017"
WIN_COLOR = "#2ca02c"
LOSS_COLOR = "#d62728"


def _title(info: RunInfo, what: str) -> str:
    head = f"{what} — {info.suite} ({info.run_id})"
    return head + (f"\n{info.label}" if info.label else "")


def _save(fig: Figure, out: Path, stem: str, svg: bool = True) -> list[Path]:
    FigureCanvasAgg(fig)
    paths = [out / f"{stem}.png"]
    fig.savefig(paths[0], dpi=130, bbox_inches="tight")
    if svg:
        paths.append(out / f"{stem}.svg")
        fig.savefig(paths[1], bbox_inches="tight")
    return paths


def _finite(v) -> bool:
    try:
        return v is not None and v is not pd.NA and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def design_colors(comp: pd.DataFrame) -> dict[str, str]:
    """One colour per design, the same in every figure: baselines fixed, others from the cycle."""
    palette = iter([f"C{i}" for i in range(1, 10)] * 10)
    out = {}
    for d, name in zip(comp.get("design", []), comp.get("design_name", [])):
        out[d] = BASELINE_STYLE.get(str(name), (None, None))[1] or next(palette)
    return out


def _k_labels(k_max: int) -> set[int]:
    """Which k to label on the curve: all up to 8, else 1, 2, 4, 8, ... and k_max."""
    if k_max <= 8:
        return set(range(1, k_max + 1))
    return {k for k in range(1, k_max + 1) if k & (k - 1) == 0} | {k_max}


def _placeholder(out: Path, stem: str, info: RunInfo, what: str, message: str) -> list[Path]:
    fig = Figure(figsize=(7, 3))
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=11, wrap=True)
    ax.set_title(_title(info, what), fontsize=10)
    return _save(fig, out, stem)


def cost_accuracy(comp: pd.DataFrame, curve: pd.DataFrame, frontier: pd.DataFrame, info: RunInfo,
                  out: Path, links: dict[str, str] | None = None, stem: str = "cost_accuracy",
                  what: str = "Cost vs accuracy") -> tuple[list[Path], list[str]]:
    """Scatter of every design (log tokens, accuracy ± Wilson CI), the CoT-SC curve with its band
    and k labels, the Pareto frontier as a step line, for one task group (or all tasks pooled).
    ``links``: design label → href; each design's point and label link there in the SVG (its
    traces). ``stem``: the files' name; ``what``: the title's first words. Returns (files, notes)."""
    notes: list[str] = []
    if comp.empty:
        return _placeholder(out, stem, info, what, "no design results in this run"), \
            ["no design results in this run"]
    positive = [float(t) for t in list(comp["tokens"]) + list(curve.get("tokens", [])) if _finite(t) and float(t) > 0]
    floor = min(positive) / 2 if positive else 1.0
    xs = []
    for d, t in zip(comp["design"], comp["tokens"]):
        if _finite(t) and float(t) > 0:
            xs.append(float(t))
        else:
            xs.append(floor)
            notes.append(f"{d}: {0 if not _finite(t) else t:g} tokens per task — drawn at {floor:g} on the log axis")
    comp = comp.assign(_x=xs, _clipped=[x == floor and not (_finite(t) and float(t) > 0)
                                        for x, t in zip(xs, comp["tokens"])])

    fig = Figure(figsize=(9, 6))
    ax = fig.add_subplot()
    if not curve.empty:
        cx, cy = curve["tokens"].to_numpy(float), 100 * curve["accuracy"].to_numpy(float)
        ok = cx > 0
        ax.fill_between(cx[ok], 100 * curve["ci_lo"].to_numpy(float)[ok], 100 * curve["ci_hi"].to_numpy(float)[ok],
                        color=CURVE_COLOR, alpha=0.15, lw=0, label="CoT-SC 95% CI (bootstrap)")
        ax.plot(cx[ok], cy[ok], "-o", color=CURVE_COLOR, ms=3.5, lw=1.6, label=f"CoT-SC curve (maj@k, k=1..{int(curve['k'].max())})")
        show = _k_labels(int(curve["k"].max()))
        for k, x, y in zip(curve["k"], cx, cy):
            if x > 0 and int(k) in show:
                ax.annotate(f"k={int(k)}", (x, y), xytext=(0, -11), textcoords="offset points", fontsize=7,
                            ha="center", color=CURVE_COLOR)
        if not ok.all():
            notes.append("CoT-SC curve points with 0 tokens are not drawn on the log axis")
    else:
        notes.append("no CoT-SC curve in this run (cot_sc disabled or the pool is empty)")

    # Pareto frontier: designs flagged pareto by the view + curve points nobody dominates
    par = comp[comp["pareto"].map(is_true)] if "pareto" in comp else comp.iloc[0:0]
    fx = list(par["_x"]) + [float(t) for t in frontier.get("tokens", []) if _finite(t) and float(t) > 0]
    fy = list(100 * par["accuracy"]) + [100 * float(a) for a, t in zip(frontier.get("accuracy", []),
                                                                        frontier.get("tokens", []))
                                        if _finite(t) and float(t) > 0]
    if fx:
        order = np.argsort(fx, kind="stable")
        fxs, fys = np.asarray(fx)[order], np.asarray(fy)[order]
        ax.step(fxs, fys, where="post", color=FRONTIER_COLOR, lw=2.2, alpha=0.85, ls="--", zorder=1,
                label="Pareto frontier (tokens, accuracy)")

    colors = design_colors(comp)
    marked: set[int] = set()
    x_hi = max(list(comp["_x"]) + [float(t) for t in curve.get("tokens", []) if _finite(t)])
    for r in records(comp):
        marker = BASELINE_STYLE.get(str(r.get("design_name")), ("o", None))[0]
        color = colors[r["design"]]
        y = 100 * float(r["accuracy"])
        yerr = [[max(0.0, y - 100 * float(r["ci_lo"]))], [max(0.0, 100 * float(r["ci_hi"]) - y)]] \
            if _finite(r.get("ci_lo")) else None
        is_par = is_true(r.get("pareto"))
        bar = ax.errorbar([r["_x"]], [y], yerr=yerr, fmt=marker, color=color, ms=8 if is_par else 6.5, capsize=3,
                          mec="black" if is_par else color, mew=1.6 if is_par else 1, zorder=3)
        href = (links or {}).get(str(r["design"]))
        sig = significance(r)
        if sig:  # the verdict's paired test is significant: a win (▲ green) or a loss (▼ red) vs the curve
            ax.scatter([r["_x"]], [y + (6 if sig > 0 else -6)], marker="^" if sig > 0 else "v", s=70,
                       color=WIN_COLOR if sig > 0 else LOSS_COLOR, edgecolors="black", linewidths=0.6, zorder=5)
            marked.add(sig)
        label = str(r["design"]) + (" (0 tokens, clipped)" if r["_clipped"] else "") + ("  ★" if is_par else "")
        right = r["_x"] >= x_hi * 0.75 and r["_x"] > min(comp["_x"])  # near the right edge: label to the left
        text = ax.annotate(label, (r["_x"], y), xytext=(-7 if right else 7, 5), textcoords="offset points",
                           fontsize=8.5, color=color, ha="right" if right else "left",
                           fontweight="bold" if not r.get("baseline") else "normal", zorder=4,
                           bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.75))
        if href:  # the SVG wraps the point and its label in a link to the design's traces
            bar.lines[0].set_url(href)
            text.set_url(href)

    for sig in sorted(marked, reverse=True):  # legend entries only for marks that appear
        ax.scatter([], [], marker="^" if sig > 0 else "v", s=70, color=WIN_COLOR if sig > 0 else LOSS_COLOR,
                   edgecolors="black", linewidths=0.6,
                   label=("significantly better" if sig > 0 else "significantly worse")
                   + " than CoT-SC at its cost (paired, Holm)")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("mean tokens per task (log scale)")
    ax.set_ylabel("accuracy (%)  ± Wilson 95% CI")
    ax.set_ylim(-3, 108)
    ax.margins(x=0.06)
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.11), ncol=3, fontsize=8, frameon=False)  # below: never covers a point
    ax.set_title(_title(info, what), fontsize=10)
    if notes:
        fig.text(0.01, -0.02, "notes: " + "; ".join(notes), fontsize=7, ha="left", va="top", wrap=True)
    return _save(fig, out, stem), notes


def accuracy_by_axis(comp_groups: pd.DataFrame, curve_axis: pd.DataFrame, info: RunInfo, out: Path,
                     colors: dict[str, str] | None = None) -> tuple[list[Path], list[str]]:
    """One panel per task axis (or source, for tasks without an axis): accuracy per design at
    each axis value, plus the CoT (curve k=1) and CoT-SC@k_max accuracies for reference. Every
    task group is drawn: a group without an axis value (bare arithmetic, a plain dataset) is one
    point in its own panel."""
    g = comp_groups[comp_groups["axis"] != "all"] if len(comp_groups) else comp_groups
    if g.empty:
        msg = "no task group in this run"
        return _placeholder(out, "accuracy_by_axis", info, "Accuracy by task group", msg), [msg]
    axes_names = sorted(g["axis"].unique())
    n = len(axes_names)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(5.2 * cols, 4.0 * rows + 0.6))
    designs = list(dict.fromkeys(g.sort_values(["baseline", "tokens"], ascending=[False, True])["design"]))
    colors = {**design_colors(g.drop_duplicates("design")), **(colors or {})}
    for i, axis in enumerate(axes_names):
        ax = fig.add_subplot(rows, cols, i + 1)
        ax.set_gid(f"panel|{axis}")
        sub = g[g["axis"] == axis]
        numeric = bool(sub["axis_value"].notna().any())
        values = sorted(int(v) for v in sub["axis_value"].dropna().unique()) if numeric else [0]
        span = (max(values) - min(values)) or 1
        step = 0.012 * span if len(values) > 1 else 0.06  # designs side by side around each value
        for j, d in enumerate(designs):
            s = sub[sub["design"] == d].sort_values("axis_value")
            if s.empty:
                continue
            x = s["axis_value"].fillna(0).to_numpy(float) + (j - (len(designs) - 1) / 2) * step
            y = 100 * s["accuracy"].to_numpy(float)
            err = [np.clip(y - 100 * s["ci_lo"].to_numpy(float), 0, None), np.clip(100 * s["ci_hi"].to_numpy(float) - y, 0, None)]
            bar = ax.errorbar(x, y, yerr=err, fmt="-o", ms=4, lw=1.3, capsize=2, color=colors[d], label=d, alpha=0.9)
            bar.lines[0].set_gid(f"accuracy|{axis}|{d}")  # the SVG names what it draws (the browser test reads it)
        c = curve_axis[curve_axis["axis"] == axis].sort_values("axis_value") if len(curve_axis) else curve_axis
        if len(c):  # a marker at every value, so a group of one value shows its references too
            k_max = int(c["k_max"].max())
            cx = c["axis_value"].fillna(0).to_numpy(float)
            ax.plot(cx, 100 * c["kmax_accuracy"], "k--", marker="_", ms=26, mew=1.8, lw=1.6,
                    label=f"CoT-SC@{k_max} (curve)", gid=f"reference|{axis}|CoT-SC@{k_max}")
            ax.plot(cx, 100 * c["cot_accuracy"], ":", color="#777777", marker="_", ms=26, mew=1.8, lw=1.6,
                    label="CoT (curve k=1)", gid=f"reference|{axis}|CoT")
        ax.set_xticks(values)
        if numeric:
            ax.set_xlabel(f"{axis} (axis value)")
            ax.set_title(axis, fontsize=10)
        else:
            ax.set_xticklabels([axis])
            ax.set_xlabel("task group (no axis value)")
            ax.set_title(f"{axis} (no axis value)", fontsize=10)
        if len(values) == 1:
            ax.set_xlim(values[0] - 0.5, values[0] + 0.5)
        ax.set_ylabel("accuracy (%)")
        ax.set_ylim(-3, 103)
        ax.grid(True, alpha=0.25)
    handles, labels = fig.axes[0].get_legend_handles_labels()  # the legend shows the first panel's entries
    fig.suptitle(_title(info, "Accuracy by task group"), fontsize=10)
    fig.tight_layout(rect=(0, 0.1 if rows == 1 else 0.06, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=8, frameon=False)
    notes = [] if len(curve_axis) else ["no per-group CoT-SC curve: reference lines omitted"]
    return _save(fig, out, "accuracy_by_axis"), notes
