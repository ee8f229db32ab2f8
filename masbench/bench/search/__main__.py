"""``python -m masbench.bench.search export DIR [options]``: write a generated level as published data."""

from __future__ import annotations

import argparse
from pathlib import Path

from .export import SHIPPED, export


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and export; prints the files written."""
    ap = argparse.ArgumentParser(prog="python -m masbench.bench.search")
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("export", help="write corpus.jsonl, queries.jsonl and params.json into DIR")
    ex.add_argument("dir", type=Path)
    ex.add_argument("--hops", type=int, nargs="+", default=SHIPPED["values"])
    ex.add_argument("--n", type=int, default=SHIPPED["n"], help="questions per hop count")
    ex.add_argument("--seed", type=int, default=SHIPPED["seed"])
    ex.add_argument("--split", default=SHIPPED["split"])
    ex.add_argument("--corpus-size", type=int, default=SHIPPED["corpus_size"])
    ex.add_argument("--distractors", type=int, default=SHIPPED["distractors"])
    ex.add_argument("--entities", type=int, default=None)
    a = ap.parse_args(argv)
    for p in export(a.dir, values=a.hops, n=a.n, seed=a.seed, split=a.split, corpus_size=a.corpus_size,
                    distractors=a.distractors, entities=a.entities):
        print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
