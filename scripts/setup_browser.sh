#!/usr/bin/env bash
# The browser the viewer's test drives: Debian's chromium (Playwright for Python, from the `test`
# extra, launches it with executable_path; it never downloads a browser of its own). Idempotent:
# nothing to do once /usr/bin/chromium exists. Installs with apt-get as root (CI runs as root), or
# through passwordless sudo; otherwise it says what to run and fails.
set -euo pipefail
CHROMIUM=${MASBENCH_CHROMIUM:-/usr/bin/chromium}
if [ -x "$CHROMIUM" ]; then
  exit 0
fi
pkgs="chromium fonts-dejavu-core"
if [ "$(id -u)" = 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
else
  echo "[setup] the viewer's browser test needs Debian's chromium: run 'sudo apt-get install -y $pkgs'" >&2
  echo "        (or set MASBENCH_CHROMIUM to a Chromium binary)" >&2
  exit 1
fi
echo "[setup] installing $pkgs with apt-get (the viewer's browser test)"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq $pkgs >/dev/null
"$CHROMIUM" --version
