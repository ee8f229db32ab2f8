"""``masbench judge check``: how far a judge's verdicts can be believed, measured where a rule knows.

The suite runs as usual (designs, pool, cached calls) on the tasks that have a rule-checkable gold,
each reply scored by the judge with the rule's verdict kept beside it (:func:`~.prepare.judge_setup`,
its own run under suite ``<name>.judge-check``). The ``judge_agreement`` view turns those rows into
agreement, false pass and false fail rates with Wilson intervals and the judge's self-consistency
over its k samples; :func:`record_check` stores that row, with the check's judge cost, in
``judge_checks``, where ``masbench compare`` finds it for the verdicts that rest on the judge.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from ..store import RunSession, Store
from .prepare import JUDGE_CHECK_SUFFIX, RunOptions
from .suite_run import RunSummary, run_suite

CHECK_COLUMNS = ("run_id", "suite", "judge", "judge_model", "scale", "k", "n_checked", "n_tasks", "agreement",
                 "agreement_lo", "agreement_hi", "n_rule_fail", "false_pass", "false_pass_lo", "false_pass_hi",
                 "n_rule_pass", "false_fail", "false_fail_lo", "false_fail_hi", "self_consistency", "unanimous",
                 "unparsed", "judge_calls", "judge_tokens", "judge_usd", "simulated", "ts")
"""The columns of ``judge_checks``, in order."""


@dataclass
class JudgeCheck:
    """A finished judge check: the run it made and its ``judge_checks`` row (None: nothing checked)."""

    summary: RunSummary
    row: dict[str, Any] | None


def record_check(store: Store, run_id: str, scale: str) -> dict[str, Any] | None:
    """Store the run's ``judge_agreement`` row (the first judge of the run) in ``judge_checks``,
    replacing an earlier row of the same run; the row, or None when no reply was checked."""
    rows = store.df("""
        SELECT a.*, r.suite, u.judge_calls, u.judge_tokens, u.judge_usd
        FROM judge_agreement a JOIN runs r USING (run_id)
        LEFT JOIN (SELECT run_id, sum(judge_calls) AS judge_calls, sum(judge_tokens) AS judge_tokens,
                          sum(judge_usd) AS judge_usd FROM judge_usage GROUP BY run_id) u USING (run_id)
        WHERE a.run_id = ? ORDER BY a.n_checked DESC LIMIT 1""", [run_id]).to_dict("records")
    if not rows:
        return None
    row = {c: rows[0].get(c) for c in CHECK_COLUMNS}
    row["suite"] = str(row["suite"]).removesuffix(JUDGE_CHECK_SUFFIX)
    row.update(scale=scale, ts=time.time())
    row = {k: (None if v != v else v) if isinstance(v, float) else v for k, v in row.items()}  # NaN -> NULL
    with store.transaction() as con:
        con.execute("DELETE FROM judge_checks WHERE run_id = ?", [run_id])
        con.execute(f"INSERT INTO judge_checks ({', '.join(CHECK_COLUMNS)}) VALUES "
                    f"({', '.join('?' for _ in CHECK_COLUMNS)})", [row[c] for c in CHECK_COLUMNS])
    return row


async def judge_check(opts: RunOptions, display: Any = None) -> JudgeCheck:
    """Run the suite's checkable tasks with the judge (one local process) and record the check."""
    opts = replace(opts, judge_check=True, engine="local", workers=1)
    summary = await run_suite(opts, display)
    with RunSession(summary.store) as session:
        session.attach(summary.run_id)
        cfg = session.store.sql("SELECT json_extract_string(config, '$.judge.scale') FROM runs WHERE run_id = ?",
                                [summary.run_id])
        row = record_check(session.store, summary.run_id, (cfg[0][0] if cfg and cfg[0][0] else "pass-fail"))
    return JudgeCheck(summary, row)


__all__ = ["CHECK_COLUMNS", "JudgeCheck", "judge_check", "record_check"]
