"""BM25 retrieval on the search benchmark: recall of the gold documents, index build time, query latency.

For every hop of every question, the hop's ideal query (the subject's name and the relation's
words, ``meta["hops"][i]["query"]``) and the subject's name alone are searched with the ``search``
tool's BM25 (``bm25s``); recall@k is the share of hops whose gold document is in the top k, per
hop count (2..6) and per distractor level (confusable twins per entity). Then, at corpus sizes
500 / 2,000 / 10,000, the time to build the index (once per corpus) and the median / p95 latency
of one query (tokenize + score + snippets), over every hop query of the level.

    .venv/bin/python benchmarks/search_recall.py [--corpus-size 2000] [--n 40]

The machine is shared (2 cores): timings are noisy.
"""

from __future__ import annotations

import os
import argparse
import statistics
import time

from masbench.bench.search import corpus_for, search_tasks
from masbench.tools.corpus import build_index, search

KS = (1, 5, 10)


def ranks(tasks, index, name_only: bool = False) -> dict[int, list[int]]:
    """Hop count → the gold document's rank (1-based; 0: not in the top 10) for each hop's query."""
    out: dict[int, list[int]] = {}
    for t in tasks:
        for h in t.meta["hops"]:
            _, ids = search(index, h["subject"] if name_only else h["query"], max(KS))
            out.setdefault(t.axis_value, []).append(ids.index(h["doc"]) + 1 if h["doc"] in ids else 0)
    return out


def recall_row(label: str, rs: list[int]) -> str:
    cells = [f"{sum(1 for r in rs if 0 < r <= k) / len(rs):6.1%}" for k in KS]
    return f"  {label:<22} {len(rs):>5}  " + "  ".join(cells)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus-size", type=int, default=2000)
    ap.add_argument("--n", type=int, default=40, help="questions per hop count")
    a = ap.parse_args()
    print(f"BM25 recall of the gold document per hop query (corpus {a.corpus_size} docs, n = {a.n} per hop count)")
    print(f"  {'':<22} {'hops':>5}  " + "  ".join(f"{'R@' + str(k):>6}" for k in KS))
    for d in (0, 1, 3):
        tasks = search_tasks([2, 3, 4, 5, 6], a.n, 0, "test", corpus_size=a.corpus_size, distractors=d)
        index = build_index(corpus_for(tasks[0].meta["corpus"]))
        for name_only in (False, True):
            by_hops = ranks(tasks, index, name_only)
            kind = "name only" if name_only else "ideal"
            print(f" distractors={d}, {kind} query:")
            for h, rs in sorted(by_hops.items()):
                print(recall_row(f"{h}-hop questions", rs))
            print(recall_row("all", [r for rs in by_hops.values() for r in rs]))
    load = os.getloadavg()[0]
    print(f"\nIndex build and query latency (distractors=1; {os.cpu_count()} cores, 1-min load average {load:.2f} at start)")
    for size in (500, 2000, 10000):
        tasks = search_tasks([2, 3, 4, 5, 6], 20, 0, "test", corpus_size=size)
        corpus = corpus_for(tasks[0].meta["corpus"])
        t0 = time.perf_counter()
        index = build_index(corpus)
        build_s = time.perf_counter() - t0
        queries = [h["query"] for t in tasks for h in t.meta["hops"]]
        lat = []
        for q in queries:
            t0 = time.perf_counter()
            search(index, q, 5)
            lat.append(time.perf_counter() - t0)
        lat.sort()
        chars = sum(len(d.text) for d in corpus.docs)
        print(f"  {size:>6} docs ({chars / 1e6:.2f} M chars): index {build_s * 1000:7.1f} ms; "
              f"query median {statistics.median(lat) * 1000:.2f} ms, p95 {lat[int(0.95 * len(lat))] * 1000:.2f} ms "
              f"({len(queries)} queries, k = 5)")


if __name__ == "__main__":
    main()
