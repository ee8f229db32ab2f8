"""Does Arize Phoenix read masbench's spans? Installs ``arize-phoenix`` into a temporary virtual
environment (uv; from the package index, ~20 s with a warm cache), serves it on free ports of
127.0.0.1, runs a SIMULATED quickstart into it with ``OTEL_RESOURCE_ATTRIBUTES`` naming a project of
its own and message content on, then reads Phoenix's REST API and prints what it made of the spans:
the projects, the span kinds, and the token counts of the LLM spans beside the store's. Run::

    python benchmarks/phoenix_check.py [--phoenix 20.26.1] [--limit 1]

Not part of ``make test``: Phoenix is a large install and takes minutes to start on a loaded
2-core machine. docs/telemetry.md names the version this was last seen to work with.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
UV = ROOT / ".venv" / "bin" / "uv"
PROJECT = "masbench-phoenix-check"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.load(r)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phoenix", default="20.26.1", help="arize-phoenix version to install")
    ap.add_argument("--limit", type=int, default=1, help="tasks per source of the quickstart")
    ap.add_argument("--start-timeout", type=float, default=600, help="seconds to wait for Phoenix to serve")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="phoenix-check-"))
    venv = tmp / "venv"
    subprocess.run([str(UV), "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    subprocess.run([str(UV), "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                    f"arize-phoenix=={args.phoenix}"], check=True)
    port, grpc = free_port(), free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(tmp / "phoenix"), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc)}
    log = (tmp / "phoenix.log").open("w")
    server = subprocess.Popen([str(venv / "bin" / "phoenix"), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + args.start_timeout
        while True:
            try:
                get(f"{base}/v1/projects")
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    sys.exit(f"Phoenix did not start; see {tmp / 'phoenix.log'}")
                time.sleep(2)
        work = tmp / "run"
        work.mkdir()
        run_env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        run_env.update(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"{base}/v1/traces",
                       OTEL_RESOURCE_ATTRIBUTES=f"openinference.project.name={PROJECT}",
                       OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
        done = subprocess.run([sys.executable, "-m", "masbench.cli", "run", "quickstart", "--model", "default=sim/p60",
                               "--limit", str(args.limit), "--store", "runs/q.duckdb"], cwd=work, env=run_env,
                              capture_output=True, text=True, check=True)
        run_id = done.stdout.strip().splitlines()[-1]
        time.sleep(3)  # Phoenix writes what it received in the background
        projects = [p["name"] for p in get(f"{base}/v1/projects")["data"]]
        spans, cursor = [], ""
        while True:  # its REST API pages spans (at most 1000 a page)
            page = get(f"{base}/v1/projects/{PROJECT}/spans?limit=500" + (f"&cursor={cursor}" if cursor else ""))
            spans += page["data"]
            cursor = page.get("next_cursor")
            if not cursor:
                break
        llm = [s for s in spans if s.get("span_kind") == "LLM"]
        a = [s["attributes"] for s in llm]
        con = duckdb.connect(str(work / "runs" / "q.duckdb"), read_only=True)
        calls, prompt, completion = con.execute("SELECT count(*), sum(prompt_tokens), sum(completion_tokens) FROM calls "
                                                "WHERE run_id = ?", [run_id]).fetchall()[0]
        con.close()
        print(f"arize-phoenix {args.phoenix}; run {run_id} (SIMULATED)")
        print(f"projects: {', '.join(projects)}")
        print(f"spans in {PROJECT}: {len(spans)}; kinds: {sorted({s.get('span_kind') for s in spans})}")
        print(f"LLM spans: {len(llm)} (store: {calls} calls)")
        print(f"llm.token_count.prompt / completion: {sum(x.get('llm.token_count.prompt', 0) for x in a)} / "
              f"{sum(x.get('llm.token_count.completion', 0) for x in a)} (store: {prompt} / {completion})")
        print(f"with input messages: {sum('llm.input_messages.0.message.content' in x for x in a)}; "
              f"with invocation parameters: {sum('llm.invocation_parameters' in x for x in a)}")
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
