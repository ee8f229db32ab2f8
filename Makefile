# The two commands of the README. Both set everything up first (idempotent).
.PHONY: setup demo test bench clean

setup:
	@bash scripts/setup.sh

# The main job: the quickstart suite on the embedded local model -> DuckDB store + report with plots.
demo: setup
	.venv/bin/masbench run quickstart
	.venv/bin/masbench report --store runs/quickstart.duckdb --out reports/quickstart

test: setup
	.venv/bin/lint-imports --no-cache
	.venv/bin/python -m pytest -q -p no:cacheprovider

bench: setup
	for f in benchmarks/*.py; do .venv/bin/python $$f || exit 1; done

clean:
	rm -rf runs reports .pytest_cache
