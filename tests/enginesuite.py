"""Shared by the engine tests (local, processes, ray): a rate-limited suite, the windows its calls
fell in (read from the store's call timestamps), and the rows that must not depend on the engine."""

from __future__ import annotations

import bisect
from pathlib import Path

import duckdb

LIMITED = """name: {name}
models:
  default: {model}
tasks:
  - {{generator: masbench.depth, values: [1, 2], n: {n}, seed: 5}}
designs: [cot]
seeds: [0]
cot_sc: {{k_max: 1, bootstrap: 50}}
concurrency: 64
cache: false
store: {store}
"""

WINDOW_S = 0.6
"""The tests' time and count scale: ``rate_window_s: 0.6`` runs a minute's windows 100× faster, and
the limits' counts are a tenth of the issue's (rpm 6000 over 0.6 s = at most 60 requests in any
0.6-s window and 10 in any 0.1-s one: rpm 600's 600 per minute and 100 per 10 s, scaled). The
windows bind at the same 100 requests a second, over as many windows, with a tenth of the calls.
The limiter's arithmetic has no scale of its own (a call's ``t_start`` is its admission time on
the limiter's clock), so the checks hold or fail alike at any scale."""


def limited_suite(tmp_path: Path, name: str, model_yaml: str, n: int) -> Path:
    """A suite of ``2 n`` tasks, one cot call and one pool sample each, on ``model_yaml``."""
    d = tmp_path / "tasks"
    d.mkdir(exist_ok=True)
    p = d / f"{name}.yaml"
    p.write_text(LIMITED.format(name=name, model=model_yaml, n=n, store=tmp_path / "runs" / f"{name}.duckdb"))
    return p


def most_in_window(points: list[tuple[float, float]], span: float) -> float:
    """The largest sum of amounts whose times fall in one half-open window [t, t + span) — brute
    force over windows starting at each point (where a maximal window can always start)."""
    pts = sorted(points)
    ts = [t for t, _ in pts]
    best = 0.0
    for j, t in enumerate(ts):
        k = bisect.bisect_left(ts, t + span)
        best = max(best, sum(a for _, a in pts[j:k]))
    return best


def call_points(store: Path, run_id: str) -> list[tuple[float, int, int]]:
    """(t_start, 1, prompt + completion tokens) of every call of the run."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute("SELECT t_start, 1, prompt_tokens + completion_tokens FROM calls WHERE run_id = ?",
                           [run_id]).fetchall()
    finally:
        con.close()


ENGINE_FREE = {
    "results": "SELECT design, task_id, seed, answer, gold, correct, partial, prompt_tokens, completion_tokens, "
               "tokens, cost_usd, calls, status FROM results WHERE run_id = ? ORDER BY ALL",
    "pool": "SELECT task_id, seed, sample_index, answer, correct, prompt_tokens, completion_tokens, tokens "
            "FROM pool WHERE run_id = ? ORDER BY ALL",
    "curve": "SELECT axis, axis_value, k, n_tasks, accuracy, ci_lo, ci_hi, tokens, calls, cost_usd "
             "FROM cot_sc_curve WHERE run_id = ? ORDER BY ALL",
    "paired": "SELECT axis, axis_value, design, against, unit, position, k_match, n_tasks, n_cells, mean_diff, "
              "ci_lo, ci_hi, p_value, p_holm, verdict FROM paired_tests WHERE run_id = ? ORDER BY ALL",
    "calls": "SELECT count(*), count(DISTINCT call_id), sum(prompt_tokens), sum(completion_tokens) FROM calls "
             "WHERE run_id = ?",
}
"""What a run must hold whatever engine ran it (timings and ids aside)."""


RETRY_AFTER_S = 2.0
"""What the 429 server of the pause tests sends as ``Retry-After`` (seconds)."""
PAUSE_SLACK_S = 1.0
"""Requests a worker's limiter let out before the 429 reached the run's limiter may still arrive
this long after the 429 was answered (one round trip through the shared limiter). 0.4 s was too
little on a loaded machine: a fresh-clone CI run (xdist workers and the type checker on 2 cores)
saw one such request arrive 0.52 s after the 429. Without the pause the 2 workers send ~250
requests a second (8 in flight at 30 ms), so the check still fails at once if any worker keeps
sending through the second half of the Retry-After window."""


async def run_past_a_429(tmp_path: Path, http_server, **opts) -> None:
    """A run on 2 workers (``opts``: the engine) against a server whose first 3 requests are
    answered 429 with ``Retry-After`` (a provider's quota hit), checked by :func:`assert_429_paused_everyone`.
    The model sets ``max_in_flight``: the run's shared limiter is on. Needs ``MASBENCH_TEST_KEY``."""
    from masbench.harness import RunOptions, run_suite

    srv = http_server(latency_ms=30, prompt_tokens=20, completion_tokens=5, reply="Answer: 3", fail_first=3,
                      fail_kinds=("429",), retry_after=f"{RETRY_AFTER_S:g}")
    model = (f"{{id: openai/fake-model, api_base: '{srv.base_url}', api_key_env: MASBENCH_TEST_KEY, price: 0, "
             f"concurrency: 8, max_in_flight: 8}}")
    s = await run_suite(RunOptions(suite=str(limited_suite(tmp_path, "r429", model, n=20)), workers=2, **opts))
    assert s.status == "finished" and s.failed == 0
    assert_429_paused_everyone(srv, s.store, s.run_id, n_429=3, calls=80)


def assert_429_paused_everyone(srv, store: Path, run_id: str, n_429: int, calls: int) -> None:
    """After every 429 the server answered (at ``f``, server-side), no request of any worker
    arrived in ``[f + PAUSE_SLACK_S, f + RETRY_AFTER_S)``, requests did arrive after the pause, and
    every call of the run is in the store with its attempts: the 429s as its failed attempts."""
    st = srv.stats
    assert len(st.fault_times) == st.by_status.get(429) == n_429
    arrivals = st.request_times
    for f in st.fault_times:
        early = [round(t - f, 3) for t in arrivals if f + PAUSE_SLACK_S <= t < f + RETRY_AFTER_S]
        assert not early, f"requests {early} s after a 429 with Retry-After {RETRY_AFTER_S:g}"
    assert any(t >= max(st.fault_times) + RETRY_AFTER_S for t in arrivals)
    con = duckdb.connect(str(store), read_only=True)
    try:
        n, attempts, errors = con.execute(
            "SELECT count(*), sum(attempts), count(*) FILTER (WHERE attempt_errors LIKE '%429%') FROM calls "
            "WHERE run_id = ? AND error IS NULL", [run_id]).fetchall()[0]
    finally:
        con.close()
    assert n == calls == st.by_status.get(200)  # every call recorded, each answered once
    assert attempts == calls + n_429 == st.requests  # the 429'd attempts are in their calls' attempts
    assert 1 <= errors <= n_429


def engine_free_rows(store: Path, run_id: str) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return {k: con.execute(q, [run_id]).fetchall() for k, q in ENGINE_FREE.items()}
    finally:
        con.close()
