# Sourced by scripts/setup.sh after the venv exists ($VENV): pip's index, passed on to uv.
# uv reads no pip configuration. A machine that installs only through its own index (a company mirror,
# an offline index) tells pip so, by PIP_INDEX_URL or `index-url` in a pip.conf; uv is then given the
# same index (UV_INDEX_URL), unless UV_INDEX_URL or UV_DEFAULT_INDEX is set already (yours wins).
# The URL is never printed: it may carry a token. pip's extra-index-url, find-links and constraints
# are not passed on (uv's own variables say them: UV_EXTRA_INDEX_URL, UV_FIND_LINKS, UV_CONSTRAINT).
if [ -z "${UV_INDEX_URL:-}${UV_DEFAULT_INDEX:-}" ]; then
  _pip_index=${PIP_INDEX_URL:-}
  if [ -z "$_pip_index" ]; then
    _pip_index=$("$VENV/bin/python" -m pip config get global.index-url 2>/dev/null \
                 || "$VENV/bin/python" -m pip config get install.index-url 2>/dev/null || true)
  fi
  if [ -n "$_pip_index" ]; then
    export UV_INDEX_URL="$_pip_index"
    echo "[setup] uv installs from pip's index-url (PIP_INDEX_URL or pip.conf), as pip does"
  fi
  unset _pip_index
fi
