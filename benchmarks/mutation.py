"""Mutation testing of the modules whose bugs would silently change a reported number.

For each module, a scratch copy of the checkout is made, mutmut (https://mutmut.readthedocs.io)
mutates only that module and runs only the test files that cover it (one mutant at a time: the
machine is shared), and the kill rate and every surviving mutant are printed. Mutants listed in
``EQUIVALENT`` (matched by function and changed line, with the reason they cannot change
behaviour) are shown separately and left out of the adjusted rate; everything else that survives
is a gap in the tests.

Slow (minutes per module). Run::

    python benchmarks/mutation.py                       # every module below
    python benchmarks/mutation.py --module masbench/budget.py --timeout 900
    python benchmarks/mutation.py --list

Needs ``pip install mutmut`` (the ``mutation`` extra).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARIES = ["agents", "baselines", "orchestrators", "skills", "tasks", "notebooks"]

# module -> the test files that cover it (only these run against its mutants)
MODULES: dict[str, list[str]] = {
    "masbench/budget.py": ["tests/test_budget.py", "tests/test_runtime_budget.py"],
    "masbench/llm/metered.py": ["tests/test_metered.py"],
    "masbench/text.py": ["tests/test_text.py", "tests/test_bench_answers.py"],
    "masbench/bench/scorers.py": ["tests/test_scorers.py", "tests/test_replies.py", "tests/test_bench_answers.py",
                             "tests/test_bench_scorers_published.py", "tests/test_bench_protocol.py"],
    "masbench/bench/scoring/mathequal.py": ["tests/test_scorers.py", "tests/test_replies.py", "tests/test_bench_answers.py",
                                       "tests/test_bench_scorers_published.py", "tests/test_bench_protocol.py"],
    "masbench/bench/scoring/replies.py": ["tests/test_scorers.py", "tests/test_replies.py", "tests/test_bench_answers.py",
                                     "tests/test_bench_scorers_published.py", "tests/test_bench_protocol.py"],
    "masbench/bench/scoring/benchmarks.py": ["tests/test_scorers.py", "tests/test_replies.py", "tests/test_bench_answers.py",
                                        "tests/test_bench_scorers_published.py", "tests/test_bench_protocol.py"],
    # not tests/test_gateway_http.py: its retry test runs ~2 min (real timeouts) and every gateway test
    # resolves prices, so each pricing mutant would cost minutes; its price tests have direct
    # counterparts in tests/test_pricing.py
    "masbench/llm/pricing.py": ["tests/test_pricing.py", "tests/test_usage.py", "tests/test_metered.py",
                                "tests/test_costs_wire.py"],
    "masbench/llm/usage.py": ["tests/test_usage.py", "tests/test_costs_wire.py"],
    "masbench/harness/stats/majk.py": ["tests/test_stats_majk.py"],
    "masbench/harness/stats/paired.py": ["tests/test_stats_paired.py"],
    "masbench/harness/curve.py": ["tests/test_curve.py", "tests/test_stats_harness.py", "tests/test_bench_protocol.py"],
    "masbench/harness/resume.py": ["tests/test_resume.py"],
}

# tests left out of a module's runs, with why
DESELECT: dict[str, list[str]] = {
    # runs benchmarks/verdict_calibration.py in a subprocess: mutmut's trampolines do not reach a child
    # process, and in mutmut's copy it fails before any mutant (stats collection)
    "masbench/harness/curve.py": ["tests/test_stats_harness.py::test_calibration_script_runs_end_to_end"],
}


@dataclass(frozen=True)
class Equivalent:
    """A mutant that cannot change behaviour: matched by function name and the changed line."""

    module: str
    function: str
    before: str
    after: str
    why: str


# Each entry was read and argued, not assumed; see the reason. `before`/`after` are the changed
# line with surrounding whitespace stripped ("" matches any line).
EQUIVALENT: list[Equivalent] = [
    Equivalent("masbench/text.py", '_fraction', 'w, core = core.split(" ", 1)',
               'w, core = core.split(None, 1)',
               "whitespace was collapsed to single spaces and stripped just above, so split(None, 1) == split(' ', 1)"),
    Equivalent("masbench/text.py", '_fraction', 'num, den = (int(x) for x in core.replace(" ", "").split("/"))',
               'num, den = (int(x) for x in core.replace("XX XX", "").split("/"))',
               "int() accepts surrounding whitespace, and after collapsing, spaces can only sit around the '/'"),
    Equivalent("masbench/text.py", 'parse_number', 'negative = (m.group("sign") in ("-", "−")) != (m.group("sign2") in ("-", "−"))',
               'negative = (m.group("sign") in ("-", "XX−XX")) != (m.group("sign2") in ("-", "−"))',
               "dead branch: _clean() has already replaced every '−' by '-' before the match"),
    Equivalent("masbench/text.py", 'parse_number', 'negative = (m.group("sign") in ("-", "−")) != (m.group("sign2") in ("-", "−"))',
               'negative = (m.group("sign") in ("-", "−")) != (m.group("sign2") in ("-", "XX−XX"))',
               "dead branch: _clean() has already replaced every '−' by '-' before the match"),
    Equivalent("masbench/text.py", 'canonical_number', 'den, twos, fives = x.denominator, 0, 0',
               'den, twos, fives = x.denominator, 1, 0',
               "only adds decimal places; the extra trailing zeros are stripped by rstrip('0')"),
    Equivalent("masbench/text.py", 'canonical_number', 'den, twos, fives = x.denominator, 0, 0',
               'den, twos, fives = x.denominator, 0, 1',
               "only adds decimal places; the extra trailing zeros are stripped by rstrip('0')"),
    Equivalent("masbench/text.py", 'canonical_number', 'den, twos = den // 2, twos + 1',
               'den, twos = den // 2, twos + 2',
               "only adds decimal places; the extra trailing zeros are stripped by rstrip('0')"),
    Equivalent("masbench/text.py", 'canonical_number', 'den, fives = den // 5, fives + 1',
               'den, fives = den // 5, fives + 2',
               "only adds decimal places; the extra trailing zeros are stripped by rstrip('0')"),
    Equivalent("masbench/text.py", 'canonical_number', 'text = f"{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")',
               'text = f"{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(None)',
               "dead: with places = max(twos, fives) the last digit is never 0, so no '.' is ever left at the end"),
    Equivalent("masbench/text.py", 'canonical_number', 'text = f"{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")',
               'text = f"{digits[:-places]}.{digits[-places:]}".rstrip("0").lstrip(".")',
               "dead: digits are right-justified to places + 1, so the text never starts with '.'"),
    Equivalent("masbench/text.py", 'canonical_number', 'text = f"{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")',
               'text = f"{digits[:-places]}.{digits[-places:]}".rstrip(None).rstrip(".")',
               'dead: with places = max(twos, fives) the last digit is never 0 (and digits hold no whitespace)'),
    Equivalent("masbench/text.py", 'canonical_number', 'text = f"{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")',
               'text = f"{digits[:-places]}.{digits[-places:]}".rstrip("XX0XX").rstrip(".")',
               'dead: with places = max(twos, fives) the last digit is never 0'),
    Equivalent("masbench/text.py", 'canonical_number', 'text = f"{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")',
               'text = f"{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip("XX.XX")',
               "dead: with places = max(twos, fives) the last digit is never 0, so no '.' is ever left at the end"),
    Equivalent("masbench/text.py", 'canonical_number', 'return ("-" if x < 0 else "") + text',
               'return ("-" if x <= 0 else "") + text',
               'x == 0 has denominator 1 and returned earlier'),
    Equivalent("masbench/text.py", '_name_like', 'return not re.search(r"\\d", part) and 0 < len(part.split()) <= 4',
               'return not re.search(r"\\d", part) and 0 <= len(part.split()) <= 4',
               'split_list() drops empty parts, so a part always has >= 1 word'),
    Equivalent("masbench/text.py", '_answer_lines', 'line_no = text.count("\\n", 0, m.start())',
               'line_no = text.count("\\n", None, m.start())',
               'str.count(sub, None, end) is str.count(sub, 0, end)'),
    Equivalent("masbench/text.py", '_take', 'if len(last) >= n:',
               'if len(last) > n:',
               'when the last span holds exactly n items the loop below takes the same n items from it'),
    Equivalent("masbench/text.py", '_take', 'if len(items) >= n:',
               'if len(items) > n:',
               'collecting more items than n changes nothing: items[-n:] keeps the same last n'),
    Equivalent("masbench/text.py", 'extract_raw', 'if method == "json" and "{" not in text:',
               'if method == "XXjsonXX" and "{" not in text:',
               "a shortcut only: text without '{' holds no JSON object, and _from_json ignores non-objects"),
    Equivalent("masbench/text.py", 'extract_raw', 'if method == "json" and "{" not in text:',
               'if method == "JSON" and "{" not in text:',
               "a shortcut only: text without '{' holds no JSON object, and _from_json ignores non-objects"),
    Equivalent('masbench/bench/scorers.py', 'score',
               'extracted = [] if isinstance(prediction, str) else [str(p) for p in prediction]',
               'extracted = [] if (isinstance(prediction, str)) and False else [str(p) for p in prediction]',
               'when the prediction is a string it is also the reply (text), and reply scorers read the reply, never `extracted`'),
    Equivalent('masbench/bench/scoring/mathequal.py', 'math_equal',
               'if not p or not g:',
               'if not p and not g:',
               'an empty side cannot pass the next steps: it fails the string checks and parses to nothing, so the parse guard returns False'),
    Equivalent('masbench/bench/scoring/mathequal.py', 'math_equal',
               'if not gp or not pp:',
               'if not gp and not pp:',
               'verify() with one side unparsed (an empty list) is False, as the guard returns'),
    Equivalent('masbench/bench/scoring/replies.py', 'answer_region',
               'found = _ANSWER_TAG.findall(reply or "")',
               'found = _ANSWER_TAG.findall(reply or "XXXX")',
               'the placeholder holds no <answer> tag, and the fallback returns the original reply'),
    Equivalent('masbench/bench/scoring/replies.py', 'final_span',
               'found = extract_raw(region, n=1, how="auto")',
               'found = extract_raw(region, how="auto")',
               "n=1 is extract_raw's default"),
    Equivalent('masbench/bench/scoring/replies.py', 'final_span',
               'found = extract_raw(region, n=1, how="auto")',
               'found = extract_raw(region, n=1, )',
               "how='auto' is extract_raw's default"),
    Equivalent('masbench/bench/scoring/replies.py', 'gsm8k_span',
               'm = re.findall(r"####\\s*(-?[\\d.,]+)", reply or "")',
               'm = re.findall(r"####\\s*(-?[\\d.,]+)", reply or "XXXX")',
               "the placeholder holds no '####', so the final-span fallback (on the original reply) runs as before"),
    Equivalent('masbench/bench/scoring/replies.py', 'letter_of',
               'text = reply or ""',
               'text = reply or "XXXX"',
               "'XXXX' names no option letter among A-D (the default letters)"),
    Equivalent('masbench/bench/scoring/replies.py', 'raw_vote_key',
               'spans = boxes[-n:] if n > 1 and len(boxes) >= n else extract_raw(text, n=n, how="auto")',
               'spans = boxes[-n:] if n > 1 and len(boxes) >= n else extract_raw(text, n=n, )',
               "how='auto' is extract_raw's default"),
    Equivalent('masbench/harness/curve.py', 'cell_curve',
               'if len(vals) < k_max:',
               'if len(vals) <= k_max:',
               'at len(vals) == k_max the padding is empty (np.full(0, ...))'),
    Equivalent('masbench/harness/curve.py', 'cell_curve',
               'vals = np.concatenate([vals, np.full(k_max - len(vals), vals[-1])])',
               'vals = np.concatenate([vals, np.full(k_max + len(vals), vals[-1])])',
               'a longer padding is cut by vals[:k_max] below'),
    Equivalent('masbench/harness/curve.py', 'build_curve',
               'n, k_max = per_cell.shape if per_cell.size else (0, 0)',
               'n, k_max = per_cell.shape if per_cell.size else (0, 1)',
               'n == 0 returns [] on the next line, whatever k_max'),
    Equivalent('masbench/harness/curve.py', 'build_curve',
               'if bootstrap > 0 and n > 1:',
               'if bootstrap > 0 and n >= 1:',
               'with one cell every resample is that cell, so the percentile band is its value: lo = hi = acc, as without a bootstrap'),
    Equivalent('masbench/harness/curve.py', 'build_curve',
               'idx = rng.integers(0, n, size=(bootstrap, n))',
               'idx = rng.integers(n, size=(bootstrap, n))',
               'Generator.integers(n) is integers(0, n): the same draws'),
    Equivalent('masbench/harness/curve.py', 'compute_curve',
               'for (task_id, seed), g in df.groupby(["task_id", "seed"], sort=True) if len(df) else []:',
               'for (task_id, seed), g in df.groupby(["task_id", "seed"], sort=True) if (len(df)) or True else []:',
               'grouping an empty frame yields no groups, like the []'),
    Equivalent('masbench/harness/curve.py', 'compute_curve',
               'for (task_id, seed), g in df.groupby(["task_id", "seed"], sort=True) if len(df) else []:',
               'for (task_id, seed), g in df.groupby(["task_id", "seed"], sort=None) if len(df) else []:',
               'the pool is read ORDER BY task_id, seed, sample_index, so grouping in order of first appearance (sort=False; pandas reads None as False) gives the sorted order'),
    Equivalent('masbench/harness/curve.py', 'compute_curve',
               'for (task_id, seed), g in df.groupby(["task_id", "seed"], sort=True) if len(df) else []:',
               'for (task_id, seed), g in df.groupby(["task_id", "seed"], ) if len(df) else []:',
               "sort=True is groupby's default"),
    Equivalent('masbench/harness/curve.py', 'compute_curve',
               'for (task_id, seed), g in df.groupby(["task_id", "seed"], sort=True) if len(df) else []:',
               'for (task_id, seed), g in df.groupby(["task_id", "seed"], sort=False) if len(df) else []:',
               'the pool is read ORDER BY task_id, seed, sample_index, so grouping in order of first appearance (sort=False; pandas reads None as False) gives the sorted order'),
    Equivalent('masbench/harness/curve.py', 'compute_curve',
               '',
               'v = cell_curve(answers, list(g["correct"].astype(None)), k_max, tie, seed=int(seed), task_id=str(task_id))',
               'astype(None) is astype(float64): 1.0 / 0.0, which exact_majk reads as true / false like True / False'),
    Equivalent('masbench/harness/curve.py', 'compute_curve',
               '',
               'tok.append(float(g["tokens"].astype(None).mean()))',
               'astype(None) is astype(float64), as astype(float)'),
    Equivalent('masbench/harness/curve.py', 'compute_curve',
               '',
               'usd.append(float(g["cost_usd"].astype(None).mean()))',
               'astype(None) is astype(float64), as astype(float)'),
    Equivalent('masbench/harness/curve.py', 'add_budget_spent',
               'per_task = pool.groupby(["task_id", "seed"], sort=True)["budget_spent"].mean()',
               'per_task = pool.groupby(["task_id", "seed"], sort=None)["budget_spent"].mean()',
               'the pool is read ORDER BY task_id, seed, sample_index, so grouping in order of first appearance (sort=False; pandas reads None as False) gives the sorted order (the caller passes that frame)'),
    Equivalent('masbench/harness/curve.py', 'add_budget_spent',
               'per_task = pool.groupby(["task_id", "seed"], sort=True)["budget_spent"].mean()',
               'per_task = pool.groupby(["task_id", "seed"], )["budget_spent"].mean()',
               "sort=True is groupby's default"),
    Equivalent('masbench/harness/curve.py', 'add_budget_spent',
               'per_task = pool.groupby(["task_id", "seed"], sort=True)["budget_spent"].mean()',
               'per_task = pool.groupby(["task_id", "seed"], sort=False)["budget_spent"].mean()',
               'the pool is read ORDER BY task_id, seed, sample_index, so grouping in order of first appearance (sort=False; pandas reads None as False) gives the sorted order (the caller passes that frame)'),
    Equivalent('masbench/harness/stats/paired.py', '_studentized',
               'return self.tstats is not None and self.se > 0 and math.isfinite(self.se)',
               'return self.tstats is not None and self.se >= 0 and math.isfinite(self.se)',
               'paired_bootstrap sets tstats only when se > 0, so a Boot with tstats never has se == 0'),
    Equivalent('masbench/harness/stats/paired.py', 'paired_bootstrap',
               'd = np.asarray(diffs, dtype=float)',
               'd = np.asarray(diffs, dtype=None)',
               'every later use (mean, std, concatenation with the float pseudo-tasks, division) promotes integer or bool input to float'),
    Equivalent('masbench/harness/stats/paired.py', 'paired_bootstrap',
               'd = np.asarray(diffs, dtype=float)',
               'd = np.asarray(diffs, )',
               'every later use (mean, std, concatenation with the float pseudo-tasks, division) promotes integer or bool input to float'),
    Equivalent('masbench/harness/stats/paired.py', 'paired_bootstrap',
               'idx = rng.integers(0, m, size=(bootstrap, m))',
               'idx = rng.integers(m, size=(bootstrap, m))',
               'Generator.integers(m) is integers(0, m): the same draws'),
    Equivalent('masbench/harness/stats/paired.py', 'paired_bootstrap',
               'tstats = np.where(se_star > _SE_EPS, (means - center) / se_star, (means - center) / se)',
               'tstats = np.where(se_star >= _SE_EPS, (means - center) / se_star, (means - center) / se)',
               'se* is a standard deviation of values in [-1, 1] over sqrt(m): exactly 1e-9 never occurs (it is 0, float noise ~1e-17, or far above)'),
    Equivalent('masbench/harness/stats/paired.py', 'mcnemar_exact',
               'if m == 0:',
               'if m == 1:',
               'the formula gives 1.0 at m = 0 (C(0,0)/1, doubled, capped) and at m = 1 (2 x 1/2): the shortcut changes nothing'),
    Equivalent('masbench/harness/stats/paired.py', 'holm',
               'adj, levels = [1.0] * m, [alpha] * m',
               'adj, levels = [2.0] * m, [alpha] * m',
               'every entry of adj is assigned in the loop below (order is a permutation of range(m))'),
    Equivalent('masbench/harness/stats/majk.py', '_mul',
               'return np.convolve(a, b)[: n + 1]',
               'return np.convolve(a, b)[: n + 2]',
               "the cut never truncates: the product's degree is at most the other answers' total count, n - n_g < n + 1, so a cut one longer keeps the same coefficients"),
    Equivalent('masbench/harness/stats/majk.py', '_capped',
               'f = np.zeros(v + 1)',
               'f = np.zeros(v + 2)',
               'an extra zero coefficient of x^(v+1): the same polynomial'),
    Equivalent('masbench/harness/stats/majk.py', '_capped',
               'f[: min(v, nj + 1)] = row[: min(v, nj + 1)]',
               'f[: min(v, nj + 2)] = row[: min(v, nj + 1)]',
               'every caller passes nj >= v (answers with fewer samples fold into (1+x)), so both mins are v'),
    Equivalent('masbench/harness/stats/majk.py', '_capped',
               'f[: min(v, nj + 1)] = row[: min(v, nj + 1)]',
               'f[: min(v, nj + 1)] = row[: min(v, nj + 2)]',
               'every caller passes nj >= v (answers with fewer samples fold into (1+x)), so both mins are v'),
    Equivalent('masbench/harness/stats/majk.py', '_first',
               'for v in range(1, after_g + 2):',
               'for v in range(1, after_g + 3):',
               'the extra v = after_g + 2 has C(after_g, v - 1) = 0 ways: it adds zeros'),
    Equivalent('masbench/harness/stats/majk.py', '_first',
               'total[v: v + len(ways)] += ways[: n + 1 - v]',
               'total[v: v + len(ways)] += ways[: n + 1 + v]',
               "ways has at most n - n_g + 1 <= n + 1 - v coefficients (its degree is the other answers' total count, v <= n_g): the cut never bites, a longer one changes nothing"),
    Equivalent('masbench/harness/stats/majk.py', '_first',
               'total[v: v + len(ways)] += ways[: n + 1 - v]',
               'total[v: v + len(ways)] += ways[: n + 2 - v]',
               "ways has at most n - n_g + 1 <= n + 1 - v coefficients (its degree is the other answers' total count, v <= n_g): the cut never bites, a longer one changes nothing"),
    Equivalent('masbench/harness/stats/majk.py', 'exact_majk',
               '',
               'arr = np.array([ids.setdefault(a, len(ids)) if a not in (None, "") else -1 for a in answers], dtype=None)',
               "numpy's default integer for Python ints is int64 here (and any integer dtype holds ids < n)"),
    Equivalent('masbench/harness/stats/majk.py', 'exact_majk',
               '',
               'arr = np.array([ids.setdefault(a, len(ids)) if a not in (None, "") else -1 for a in answers], )',
               "numpy's default integer for Python ints is int64 here (and any integer dtype holds ids < n)"),
    Equivalent('masbench/harness/stats/majk.py', 'exact_majk',
               '',
               'arr = np.array([ids.setdefault(a, len(ids)) if a not in (None, "") else -2 for a in answers], dtype=np.int64)',
               'no answer is only ever tested as < 0 / >= 0'),
    Equivalent('masbench/harness/stats/majk.py', 'exact_majk',
               'counts = np.bincount(arr[arr >= 0], minlength=len(ids))',
               'counts = np.bincount(arr[arr >= 0], )',
               'every id in ids occurs in arr, so bincount already has len(ids) entries'),
    Equivalent('masbench/harness/stats/majk.py', 'exact_majk',
               '',
               'if j != g and priority(seed, task_id, names[j]) >= pg))',
               'distinct answers have distinct priorities (a 64-bit sha256 prefix of distinct strings; equal only on a collision, p ~ 2^-64 per pair), so > / >= and <= / < split the answers alike'),
    Equivalent('masbench/harness/stats/majk.py', 'exact_majk',
               '',
               'if j != g and priority(seed, task_id, names[j]) < pg))',
               'distinct answers have distinct priorities (a 64-bit sha256 prefix of distinct strings; equal only on a collision, p ~ 2^-64 per pair), so > / >= and <= / < split the answers alike'),
    Equivalent('masbench/harness/stats/majk.py', 'exact_majk',
               'return np.clip(out, 0.0, 1.0)',
               'return np.clip(out, None, 1.0)',
               'out is a sum of products of non-negative counts and Gauss-Legendre weights (positive), never below 0'),
    Equivalent('masbench/llm/usage.py', 'family_of', 'name = (rest or model_id).lower()',
               'name = (rest and model_id).lower()',
               "name is read only for bedrock/vertex_ai heads (so rest is set): model_id is head/rest, and no such "
               "head holds 'claude', so 'claude' in model_id iff 'claude' in rest"),
    Equivalent('masbench/llm/usage.py', 'normalize', 'inclusive = False', 'inclusive = None',
               "None is falsy: every use of `inclusive` is a truth test"),
    Equivalent('masbench/llm/usage.py', 'normalize', 'if family == "deepseek" or "prompt_cache_hit_tokens" in raw:',
               'if family != "deepseek" or "prompt_cache_hit_tokens" in raw:',
               "the family test is redundant: without the hit field the branch keeps `cached` (_int(None) or cached)"),
    Equivalent('masbench/llm/usage.py', 'normalize', 'if family == "deepseek" or "prompt_cache_hit_tokens" in raw:',
               'if family == "XXdeepseekXX" or "prompt_cache_hit_tokens" in raw:',
               "the family test is redundant: without the hit field the branch keeps `cached` (_int(None) or cached)"),
    Equivalent('masbench/llm/usage.py', 'normalize', 'if family == "deepseek" or "prompt_cache_hit_tokens" in raw:',
               'if family == "DEEPSEEK" or "prompt_cache_hit_tokens" in raw:',
               "the family test is redundant: without the hit field the branch keeps `cached` (_int(None) or cached)"),
    Equivalent('masbench/llm/pricing.py', '_provider',
               'head = model_id.split("/", 1)[0] if "/" in model_id else "openai"',
               'head = model_id.split("/", )[0] if "/" in model_id else "openai"',
               "the first segment of a split is the same whatever the maxsplit"),
    Equivalent('masbench/llm/pricing.py', '_provider',
               'head = model_id.split("/", 1)[0] if "/" in model_id else "openai"',
               'head = model_id.split("/", 2)[0] if "/" in model_id else "openai"',
               "the first segment of a split is the same whatever the maxsplit"),
    Equivalent('masbench/llm/pricing.py', '_from_yaml',
               'return Prices(per[0] or 0.0, per[1] or 0.0, per[2], per[3], per[4], "yaml")',
               'return Prices(per[0] or 0.0, per[1] or 0.0, per[2], per[3], per[4], )',
               '"yaml" is the default of Prices.source'),
    Equivalent('masbench/bench/scoring/benchmarks.py', '_score',
               'ok = bool(gold) and all(positions) and len(positions) == len(gold) if correct is None else correct',
               'ok = bool(gold) and all(positions) and len(positions) == len(gold) if (correct is None) or True else correct',
               'the one caller passing `correct` (the boxed-count rule) also passes all-False positions, so the computed verdict is the same False'),
]


@dataclass
class Outcome:
    module: str
    counts: dict[str, int] = field(default_factory=dict)
    survivors: list[tuple[str, str]] = field(default_factory=list)  # (name, diff)
    equivalent: list[tuple[str, str, str]] = field(default_factory=list)  # (name, diff, why)
    seconds: float = 0.0
    error: str | None = None

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def caught(self) -> int:
        return self.counts.get("killed", 0) + self.counts.get("timeout", 0)

    def rate(self, adjusted: bool = False) -> float:
        n = self.total - (len(self.equivalent) if adjusted else 0)
        return self.caught / n if n else float("nan")


def _source_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    return [f for f in out if (ROOT / f).is_file()]


def _scratch_copy(dest: Path) -> None:
    for f in _source_files():
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, dest / f)


def _toml_list(xs: list[str]) -> str:
    return "[" + ", ".join(f'"{x}"' for x in xs) + "]"


def _configure(dest: Path, module: str, tests: list[str]) -> None:
    deselect = [a for t in DESELECT.get(module, []) for a in ("--deselect", t)]
    cfg = (f"\n[tool.mutmut]\nsource_paths = [\"masbench\"]\nonly_mutate = {_toml_list([module])}\n"
           f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
           f"pytest_add_cli_args = {_toml_list(['-p', 'no:cacheprovider', '-q', '-x'] + deselect)}\n"
           f"also_copy = {_toml_list(LIBRARIES)}\n")
    with open(dest / "pyproject.toml", "a") as fh:
        fh.write(cfg)


def _mutmut(dest: Path, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("mutmut")
    return subprocess.run([str(exe), *args], cwd=dest, capture_output=True, text=True, timeout=timeout, check=False)


_RESULT = re.compile(r"^\s*(\S+): (.+)$")


def _changed_lines(diff: str) -> tuple[str, str]:
    minus = [x[1:].strip() for x in diff.splitlines() if x.startswith("-") and not x.startswith("---")]
    plus = [x[1:].strip() for x in diff.splitlines() if x.startswith("+") and not x.startswith("+++")]
    return " / ".join(minus), " / ".join(plus)


def _function(name: str) -> str:
    # masbench.budget.xǁBudgetMeterǁreserve__mutmut_3 -> reserve ; masbench.text.x_extract__mutmut_2 -> extract
    tail = name.rsplit(".", 1)[-1].split("__mutmut_")[0]
    return tail.split("ǁ")[-1] if "ǁ" in tail else tail.removeprefix("x_")


# modules whose string literals are SQL: a mutant that only changes the case of a query is equivalent
SQL_MODULES = {"masbench/harness/resume.py", "masbench/harness/curve.py"}  # curve: also table names given to StoreWriter
_SQL_CASE = Equivalent("", "", "", "", "only the case of SQL text changed: DuckDB keywords and unquoted identifiers "
                                       "are case-insensitive (no quoted identifier or string literal is touched)")


def _equivalent(module: str, name: str, diff: str) -> Equivalent | None:
    before, after = _changed_lines(diff)
    if module in SQL_MODULES and before != after and before.lower() == after.lower() and "'" not in before:
        return _SQL_CASE
    for e in EQUIVALENT:
        if e.module == module and e.function == _function(name) and (not e.before or e.before == before) \
                and (not e.after or e.after == after):
            return e
    return None


def run_module(module: str, tests: list[str], timeout: float, keep: bool = False) -> Outcome:
    out = Outcome(module)
    missing = [t for t in tests if not (ROOT / t).exists()]
    if missing:
        out.error = f"missing test files {missing}"
        return out
    t0 = time.perf_counter()
    dest = Path(tempfile.mkdtemp(prefix="masbench-mutation-"))
    try:
        _scratch_copy(dest)
        _configure(dest, module, tests)
        try:
            run = _mutmut(dest, "run", "--max-children", "1", timeout=timeout)
        except subprocess.TimeoutExpired:
            out.error = f"timed out after {timeout:.0f}s (results so far are counted)"
            run = None
        if run is not None and run.returncode != 0:
            tail = [x for x in (run.stdout + run.stderr).splitlines() if x.startswith(("FAILED", "ERROR", "E "))]
            out.error = " | ".join((run.stdout + run.stderr).strip().splitlines()[-1:] + tail[:6])
        res = _mutmut(dest, "results", "--all", "true", timeout=300)
        for line in res.stdout.splitlines():
            m = _RESULT.match(line)
            if not m:
                continue
            name, status = m[1], m[2].strip()
            out.counts[status] = out.counts.get(status, 0) + 1
            if status in ("killed", "timeout"):
                continue
            if status == "not checked":  # the run never reached it (see the note): no diff to show
                out.survivors.append((f"{name} [{status}]", ""))
                continue
            diff = _mutmut(dest, "show", name, timeout=120).stdout.strip()
            eq = _equivalent(module, name, diff)
            if eq is not None and status == "survived":
                out.equivalent.append((name, diff, eq.why))
            else:
                out.survivors.append((f"{name} [{status}]", diff))
    finally:
        out.seconds = time.perf_counter() - t0
        if keep:
            print(f"  (scratch copy kept at {dest})")
        else:
            shutil.rmtree(dest, ignore_errors=True)
    return out


def _diff_body(diff: str) -> str:
    keep = [x for x in diff.splitlines() if (x.startswith(("-", "+")) and not x.startswith(("---", "+++")))]
    return "\n".join("        " + x for x in keep) or "        (no diff shown)"


def report(o: Outcome) -> None:
    counts = ", ".join(f"{k} {v}" for k, v in sorted(o.counts.items()))
    print(f"\n== {o.module}: {o.caught}/{o.total} mutants killed = {o.rate():.1%} "
          f"(excluding {len(o.equivalent)} equivalent: {o.rate(True):.1%}) in {o.seconds:.0f}s  [{counts}]")
    if o.error:
        print(f"   note: {o.error}")
    unchecked = [n for n, d in o.survivors if n.endswith("[not checked]")]
    if unchecked:
        print(f"   {len(unchecked)} mutants not checked (the unmutated tests did not pass in the scratch copy?)")
    for name, diff in o.survivors:
        if not name.endswith("[not checked]"):
            print(f"   SURVIVED {name}\n{_diff_body(diff)}")
    for name, diff, why in o.equivalent:
        print(f"   equivalent {name}: {why}\n{_diff_body(diff)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", action="append", help="only this module (repeatable); default: all")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per module (default 1800)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copies (to inspect mutants)")
    ap.add_argument("--list", action="store_true", help="list the modules and their test files")
    args = ap.parse_args()
    if shutil.which("mutmut", path=str(Path(sys.executable).parent)) is None:
        print("mutmut is not installed next to this Python: pip install mutmut", file=sys.stderr)
        return 2
    mods = args.module or list(MODULES)
    unknown = [m for m in mods if m not in MODULES]
    if unknown:
        print(f"unknown module(s) {unknown}; known: {', '.join(MODULES)}", file=sys.stderr)
        return 2
    if args.list:
        for m in mods:
            print(f"{m}: {' '.join(MODULES[m])}")
        return 0
    print("mutation testing with mutmut, one mutant at a time (timings: 2 cores, shared, noisy)")
    results = []
    for m in mods:
        o = run_module(m, MODULES[m], args.timeout, args.keep)
        report(o)
        results.append(o)
    print("\nsummary (kill rate = killed or timed out / all mutants; adjusted leaves out listed equivalents)")
    for o in results:
        print(f"  {o.module:<40} {o.caught:>4}/{o.total:<4} {o.rate():>7.1%}  adjusted {o.rate(True):>7.1%}"
              f"  survivors {len(o.survivors)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
