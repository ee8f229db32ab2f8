"""SQL views over a model judge's work (listed in :data:`masbench.store.views.VIEWS`).

- ``judge_usage``: per run and design, the judge scorer's calls (``calls.purpose = 'scoring'``):
  calls, tokens, USD recorded and USD spent (cache hits cost nothing), cache hits. These calls are
  in no design's ``results`` row, ``pool`` row or curve: this view is where they are reported.
- ``judge_agreement``: per run and judge (agent, model), over the judged design cells whose task
  also has a rule-checkable gold (``results.rule_correct``): agreement with the rule, false pass
  (judge passes | rule fails) and false fail (judge fails | rule passes) rates with Wilson 95%
  intervals, and self-consistency over the k samples (P(two samples of a reply agree), averaged
  over replies; NULL with k = 1), the share of unanimous replies, and the share of samples whose
  verdict could not be read (``unparsed``: a judge that cannot follow the rubric's format).
"""

from __future__ import annotations

_Z = 1.959963984540054


def wilson(x: str, n: str) -> tuple[str, str]:
    """SQL for the Wilson 95% interval (lo, hi) of ``x`` successes in ``n`` (NULL when n = 0)."""
    p = f"(({x}) / nullif(CAST({n} AS DOUBLE), 0))"
    z2 = _Z * _Z
    centre = f"({p} + {z2} / (2 * ({n})))"
    half = f"({_Z} * sqrt({p} * (1 - {p}) / ({n}) + {z2} / (4 * ({n}) * ({n}))))"
    den = f"(1 + {z2} / ({n}))"
    return (f"greatest(0.0, ({centre} - {half}) / {den})", f"least(1.0, ({centre} + {half}) / {den})")


JUDGE_USAGE = """
SELECT run_id, design, count(*) AS judge_calls,
       CAST(coalesce(sum(prompt_tokens + completion_tokens), 0) AS BIGINT) AS judge_tokens,
       coalesce(sum(cost_usd), 0) AS judge_usd,
       coalesce(sum(CASE WHEN cache_hit THEN 0 ELSE cost_usd END), 0) AS judge_spent_usd,
       count(*) FILTER (WHERE cache_hit) AS cache_hits,
       count(*) FILTER (WHERE error IS NOT NULL) AS errors,
       count(DISTINCT (task_id, seed)) AS cells, string_agg(DISTINCT agent, ',') AS judges,
       bool_or(simulated) AS simulated
FROM calls WHERE purpose = 'scoring' GROUP BY run_id, design
"""

_AGREE = wilson("agree", "n_checked")
_FP = wilson("false_passes", "n_rule_fail")
_FF = wilson("false_fails", "n_rule_pass")

JUDGE_AGREEMENT = f"""
WITH cells AS (
    SELECT run_id, judge, judge_model, task_id, correct, rule_correct, judge_samples AS k, judge_passes AS p,
           simulated, CAST(json_extract(detail, '$.judge.samples') AS DOUBLE[]) AS samples
    FROM results WHERE judge IS NOT NULL AND rule_correct IS NOT NULL AND status <> 'failed'
), agg AS (
    SELECT run_id, judge, judge_model, count(*) AS n_checked, count(DISTINCT task_id) AS n_tasks,
           count(*) FILTER (WHERE correct = rule_correct) AS agree,
           count(*) FILTER (WHERE NOT rule_correct) AS n_rule_fail,
           count(*) FILTER (WHERE NOT rule_correct AND correct) AS false_passes,
           count(*) FILTER (WHERE rule_correct) AS n_rule_pass,
           count(*) FILTER (WHERE rule_correct AND NOT correct) AS false_fails,
           max(k) AS k,
           avg(CASE WHEN k > 1 THEN (p * (p - 1) + (k - p) * (k - p - 1)) / CAST(k * (k - 1) AS DOUBLE) END)
               AS self_consistency,
           avg(CASE WHEN k >= 1 THEN CAST(p = 0 OR p = k AS DOUBLE) END) AS unanimous,
           sum(len(list_filter(samples, lambda x: x IS NULL))) / nullif(sum(len(samples)), 0) AS unparsed,
           bool_or(simulated) AS simulated
    FROM cells GROUP BY run_id, judge, judge_model
)
SELECT run_id, judge, judge_model, k, n_checked, n_tasks,
       agree / nullif(CAST(n_checked AS DOUBLE), 0) AS agreement, {_AGREE[0]} AS agreement_lo,
       {_AGREE[1]} AS agreement_hi,
       n_rule_fail, false_passes / nullif(CAST(n_rule_fail AS DOUBLE), 0) AS false_pass,
       {_FP[0]} AS false_pass_lo, {_FP[1]} AS false_pass_hi,
       n_rule_pass, false_fails / nullif(CAST(n_rule_pass AS DOUBLE), 0) AS false_fail,
       {_FF[0]} AS false_fail_lo, {_FF[1]} AS false_fail_hi,
       self_consistency, unanimous, unparsed, simulated
FROM agg
"""

__all__ = ["JUDGE_AGREEMENT", "JUDGE_USAGE", "wilson"]
