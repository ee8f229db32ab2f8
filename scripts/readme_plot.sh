#!/usr/bin/env bash
# Regenerate the README's plot (docs/img/quickstart.png) from the demo's store: the quickstart's
# cost-accuracy plot (designs, CoT-SC curve, Pareto frontier). Run `make demo` first.
set -euo pipefail
cd "$(dirname "$0")/.."
STORE=${STORE:-runs/quickstart.duckdb}
[ -f "$STORE" ] || { echo "no $STORE: run 'make demo' first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${MASBENCH:-.venv/bin/masbench}" report --store "$STORE" --out "$tmp" > /dev/null
mkdir -p docs/img
cp "$tmp/cost_accuracy.png" docs/img/quickstart.png
echo "wrote docs/img/quickstart.png"
