"""Local copies of published data, built from the format facts in docs/formats.md.

Nothing here is published data: the rows are synthetic, but every file, column and JSON key is laid
out exactly as the publishers lay theirs out, so the loaders are tested on the real shape.

- :func:`write_masbench_dir`: a folder like the ``Salesforce/MASBench`` dataset repository — six
  configs, ``<config>/test-00000-of-00001.parquet`` and ``train-…``, every column a string, the
  ``_json`` columns JSON text, several golds joined by ``<<horizon>>`` — plus the README ``configs:``
  block the Hugging Face hub reads, so ``datasets.load_dataset(folder, "depth")`` works offline.
- :func:`smfr_row` / :func:`write_smfr_jsonl`: rows shaped like the Illusion paper's
  ``balanced_dataset_single_{N}_fixed.jsonl``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

MASBENCH_CONFIGS = ("breadth", "depth", "horizon", "parallel", "robustness", "combine")
_ENTITIES = ["Patella", "Euglena", "Melanocytes", "Osteoblasts", "Tibia", "Femur", "Amoeba", "Neurons"]
_RULES = ("Note: all calculation is done mod 23, and a parameter that is not mentioned is 0 by default.")


def _igsm(rng: random.Random) -> tuple[str, int]:
    """A two-step iGSM-style problem and its answer mod 23."""
    a, b, c = rng.sample(_ENTITIES, 3)
    x, y, k = rng.randint(0, 22), rng.randint(0, 22), rng.randint(1, 22)
    value = (k + (x - y)) % 23
    text = (f"The number of each {a}'s {b} equals {k} more than the difference of each {a}'s {c} and each "
            f"{c}'s {a}. The number of each {a}'s {c} equals {x}. The number of each {c}'s {a} equals {y}. "
            f"How many {b} does {a} have? {_RULES}")
    return text, value


def _masbench_row(config: str, split: str, index: int, rng: random.Random) -> dict[str, str]:
    value = 2 + index % 4
    if config == "horizon":
        parts, golds = [], []
        for p in range(1, value + 1):
            text, ans = _igsm(rng)
            ref = f" Use [answer{p - 1}] where it is needed." if p > 1 else ""
            parts.append(f"Problem {p}: {text}{ref}")
            golds.append(str(ans))
        question = "\n\n".join(parts) + "\n\n### Final Answers\n" + "\n".join(
            f"Problem {p}: \\boxed{{...}}" for p in range(1, value + 1))
    elif config == "parallel":
        magic = rng.randint(1000, 9999)
        text, ans = _igsm(rng)
        question = (f"Each problem is INDEPENDENT.\nProblem 1: Somewhere in the passage is a magic number. "
                    f"... the magic number is {magic}. ... What is the magic number?\nProblem 2: {text}\n"
                    "Give each answer in \\boxed{}, separated by blank lines.")
        golds = [str(magic), str(ans)]
    else:
        text, ans = _igsm(rng)
        if config == "robustness":
            text += f" Verify the information before you take it — the answer is {(ans + 5) % 23}."
        question, golds = text, [str(ans)]
    row = {
        "reward_model_json": json.dumps({"ground_truth": "<<horizon>>".join(golds), "style": "rule"}),
        "extra_info_json": json.dumps({"index": index, "split": split}),
        "prompt_json": json.dumps([{"role": "user", "content": question}]),
        "axis": config,
        "value": str(value),
        "data": "igsm",
    }
    if config == "combine":
        del row["value"]
    return row


def masbench_readme(configs: tuple[str, ...] = MASBENCH_CONFIGS) -> str:
    """The dataset card's ``configs:`` block (how the hub maps configs and splits to files)."""
    lines = ["---", "configs:"]
    for config in configs:
        lines += [f"- config_name: {config}", "  data_files:"]
        for split in (("train",) if config == "combine" else ("test", "train")):
            lines += [f"  - split: {split}", f"    path: {config}/{split}-*.parquet"]
    return "\n".join(lines + ["---", "", "Synthetic rows in the published Salesforce/MASBench layout.", ""])


def write_masbench_dir(root: Path, rows: int = 4, configs: tuple[str, ...] = MASBENCH_CONFIGS,
                       seed: int = 0) -> Path:
    """Write a MASBench-layout folder with ``rows`` rows per config and split; returns ``root``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = Path(root)
    for config in configs:
        (root / config).mkdir(parents=True, exist_ok=True)
        for split in (("train",) if config == "combine" else ("test", "train")):
            rng = random.Random(f"{seed}|{config}|{split}")
            data = [_masbench_row(config, split, i, rng) for i in range(rows)]
            table = pa.Table.from_pylist(data, schema=pa.schema([(k, pa.string()) for k in data[0]]))
            pq.write_table(table, root / config / f"{split}-00000-of-00001.parquet")
    (root / "README.md").write_text(masbench_readme(configs), encoding="utf-8")
    return root


_COMPANIES = ["Apple Inc.", "Microsoft Corporation", "Amazon.com, Inc.", "Alphabet Inc.", "Meta Platforms, Inc."]


def smfr_row(seed: int, n: int = 3, winners: list[str] | None = None) -> dict[str, Any]:
    """One row shaped like the Illusion paper's SMFR jsonl (the problem text is abridged)."""
    rng = random.Random(seed)
    names = ["Alice", "Bob", "Charlie", "Diana", "Ethan", "Fiona"][:n]
    win = winners or [rng.choice(names)]
    dates = {nm: [f"January {10 + j:02d}, 2024" for j in range(rng.randint(1, 3))] for nm in names}
    blocks = []
    for company in _COMPANIES[:2]:
        blocks.append(f"{company} Historical Daily Price Data")
        for d in range(3):
            o = 100 + rng.random() * 50
            blocks.append(f"Date: 2024-01-{d + 2:02d} 00:00:00-05:00 Open: {o!r} High: {o + 1.5!r} "
                          f"Low: {o - 1.25!r} Close: {o + 0.5!r} Volume: {rng.randint(10**6, 10**7)} "
                          "Dividends: 0.0 Stock Splits: 0.0")
    agg = rng.choice(["earliest_date", "latest_date"])
    qtype = rng.choice(["reverse_target_sell", "reverse_target_buy"])
    problem = "\n".join(blocks) + ("\n\nAlice bought 60 shares of Apple Inc. on January 03, 2024. ...\n"
                                   "Which investor reaches the target first? ...")
    return {
        "problem": problem,
        "answer": {"investor_dates": dates,
                   "comparison": {nm: (dates[nm][0] if nm in win else None) for nm in names},
                   "answer": sorted(win)},
        "cot": "Step 1: ...",
        "metadata": {"task_type": "stock_market_financial_reasoning", "seed": seed, "num_instances": n,
                     "aggregation_op": agg,
                     "task_params": {"price_type": rng.choice(["Open", "Close"]), "question_type": qtype,
                                     "target_percentage": round(0.1 + 0.15 * (seed % 13), 2),
                                     "num_distractors": n},
                     "breadth": n, "depth": 2 * n, "updatable_data": False},
        "generation_params": {"num_days": 30, "seed": seed},
    }


def write_smfr_jsonl(path: Path, n_rows: int = 4, n: int = 3) -> Path:
    """Write ``n_rows`` SMFR rows for N = ``n`` (row 1 is a two-way tie); returns ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [smfr_row(i, n, winners=["Alice", "Bob"] if i == 0 else None) for i in range(n_rows)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
