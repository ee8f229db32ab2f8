"""The DuckDB schema, versioned with forward-only migrations.

Each migration is applied once, in order, inside a transaction, and recorded in
``schema_version``. Never edit a released migration: add a new one.

Why long: the migrations are the schema's history, append-only SQL text; one per file would only
scatter what a reader of one table's columns needs to read in order.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "runs, calls, results, nodes, pool", """
CREATE TABLE runs (
    run_id VARCHAR PRIMARY KEY,
    suite VARCHAR,
    status VARCHAR,              -- running | finished | interrupted | failed
    created_at TIMESTAMP DEFAULT current_timestamp,
    finished_at TIMESTAMP,
    config JSON,                 -- the resolved suite (never secrets)
    models JSON,                 -- alias -> model id
    simulated BOOLEAN,           -- any sim/ model involved: numbers are simulated
    masbench_version VARCHAR,
    host VARCHAR,
    command VARCHAR
);
CREATE TABLE calls (
    call_id VARCHAR,
    run_id VARCHAR,
    purpose VARCHAR,             -- design | pool | search | routing | smoke
    design VARCHAR,
    task_id VARCHAR,
    seed INTEGER,
    node VARCHAR,
    agent VARCHAR,
    model_alias VARCHAR,
    model VARCHAR,
    sample_index INTEGER,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    cached_tokens INTEGER,
    cost_usd DOUBLE,
    latency_s DOUBLE,
    cache_hit BOOLEAN,
    attempts INTEGER,
    error VARCHAR,
    attempt_errors VARCHAR,      -- JSON list: one description per failed attempt
    simulated BOOLEAN,
    finish_reason VARCHAR,
    ts DOUBLE
);
CREATE TABLE results (
    run_id VARCHAR,
    design VARCHAR,
    task_id VARCHAR,
    seed INTEGER,
    source VARCHAR,
    axis VARCHAR,
    axis_value INTEGER,
    answer VARCHAR,
    gold VARCHAR,
    correct BOOLEAN,
    partial DOUBLE,
    prompt_tokens BIGINT,
    completion_tokens BIGINT,
    tokens BIGINT,
    cost_usd DOUBLE,
    calls INTEGER,
    wall_s DOUBLE,
    status VARCHAR,              -- ok | degraded | budget_exhausted | failed
    error VARCHAR,
    detail JSON,
    simulated BOOLEAN,
    ts DOUBLE
);
CREATE TABLE nodes (
    run_id VARCHAR,
    design VARCHAR,
    task_id VARCHAR,
    seed INTEGER,
    node VARCHAR,
    op VARCHAR,
    agent VARCHAR,
    model VARCHAR,
    calls INTEGER,
    tokens BIGINT,
    cost_usd DOUBLE,
    latency_s DOUBLE,
    status VARCHAR,
    error VARCHAR,
    output VARCHAR,
    ts DOUBLE
);
CREATE TABLE pool (
    run_id VARCHAR,
    task_id VARCHAR,
    seed INTEGER,
    sample_index INTEGER,
    answer VARCHAR,
    correct BOOLEAN,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    tokens INTEGER,
    cost_usd DOUBLE,
    error VARCHAR,
    ts DOUBLE
);
"""),
    (2, "run config hash (resume), CoT-SC curve", """
ALTER TABLE runs ADD COLUMN config_hash VARCHAR;
ALTER TABLE results ADD COLUMN design_name VARCHAR;
CREATE TABLE cot_sc_curve (
    run_id VARCHAR,
    axis VARCHAR,                -- 'all' for the whole run, else the task axis (depth, ...) or source
    axis_value INTEGER,          -- NULL for 'all'
    k INTEGER,
    n_tasks INTEGER,             -- (task, seed) cells in the pool
    accuracy DOUBLE,             -- expected maj@k accuracy (ties split uniformly)
    ci_lo DOUBLE,
    ci_hi DOUBLE,
    tokens DOUBLE,               -- mean tokens per task at k samples
    calls DOUBLE,
    cost_usd DOUBLE
);
"""),
    (3, "routing decisions, generated designs", """
CREATE TABLE routing_decisions (
    decision_id VARCHAR,
    run_id VARCHAR,
    design VARCHAR,
    task_id VARCHAR,
    seed INTEGER,
    node VARCHAR,
    agent VARCHAR,
    handbook VARCHAR,
    strategy VARCHAR,            -- greedy | thompson | ucb | floor
    lambda_ DOUBLE,               -- the cost weight λ
    skills JSON,                 -- inferred skill demand {skill: weight}
    candidates JSON,             -- [{model, utility, p_mean, p_lo, cost}]
    chosen VARCHAR,
    outcome BOOLEAN,             -- filled in once the task is scored
    ts DOUBLE
);
CREATE TABLE designs (
    design_id VARCHAR,
    run_id VARCHAR,
    name VARCHAR,
    designer VARCHAR,            -- holistic | meta | manual
    task_id VARCHAR,             -- per-task designs (meta-designer); NULL for suite-level ones
    parent VARCHAR,
    round INTEGER,
    prompt_hash VARCHAR,
    prompt VARCHAR,
    raw_output VARCHAR,          -- what the model wrote (data, never executed)
    spec JSON,                   -- the validated design, if any
    valid BOOLEAN,
    rejection VARCHAR,
    repairs JSON,
    tokens BIGINT,
    calls INTEGER,
    cost_usd DOUBLE,
    ts DOUBLE
);
"""),
    (4, "token classes, raw usage, cost provenance and call status; budget basis; price tables", """
-- calls.prompt_tokens / completion_tokens keep their meaning (every input / every output token);
-- the classes split them: prompt_tokens = prompt_fresh_tokens + cached_tokens + cache_write_tokens,
-- completion_tokens = completion_visible_tokens + reasoning_tokens (masbench/llm/usage.py).
ALTER TABLE calls ADD COLUMN prompt_fresh_tokens INTEGER;
ALTER TABLE calls ADD COLUMN cache_write_tokens INTEGER;
ALTER TABLE calls ADD COLUMN completion_visible_tokens INTEGER;
ALTER TABLE calls ADD COLUMN reasoning_tokens INTEGER;
ALTER TABLE calls ADD COLUMN usage_status VARCHAR;    -- reported | estimated | missing (counts NULL)
ALTER TABLE calls ADD COLUMN usage_raw JSON;          -- the usage object as received
ALTER TABLE calls ADD COLUMN cost_source VARCHAR;     -- yaml | litellm-map | provider-reported | zero-declared | unpriced
ALTER TABLE calls ADD COLUMN status VARCHAR;          -- ok | error | usage_missing | truncated | empty
ALTER TABLE results ADD COLUMN budget_basis VARCHAR;  -- tokens | completion | usd (the suite's budget basis)
ALTER TABLE results ADD COLUMN budget_spent DOUBLE;   -- this result's spend on that basis
ALTER TABLE pool ADD COLUMN budget_spent DOUBLE;
ALTER TABLE cot_sc_curve ADD COLUMN budget_basis VARCHAR;
ALTER TABLE cot_sc_curve ADD COLUMN budget_spent DOUBLE;  -- mean spend per task at k samples, on the basis
CREATE TABLE price_table (   -- counterfactual prices, filled by `masbench reprice` or by hand
    price_table VARCHAR,     -- a name, e.g. 'gpt-4o-mini'
    model VARCHAR,           -- a calls.model id, or '*' for every model without its own row
    input_usd_per_mtok DOUBLE,
    cached_input_usd_per_mtok DOUBLE,   -- NULL: the input price
    cache_write_usd_per_mtok DOUBLE,    -- NULL: the input price
    output_usd_per_mtok DOUBLE,
    reasoning_usd_per_mtok DOUBLE       -- NULL: the output price
);
"""),
    (5, "per-cell CoT-SC curve, paired tests", """
CREATE TABLE cot_sc_task_curve (
    run_id VARCHAR,
    task_id VARCHAR,
    seed INTEGER,
    k INTEGER,
    accuracy DOUBLE,             -- exact maj@k of this cell's pool (expectation over all k-subsets)
    tokens DOUBLE,               -- k * mean tokens of the cell's samples
    cost_usd DOUBLE              -- k * mean USD of the cell's samples
);
CREATE TABLE paired_tests (
    run_id VARCHAR,
    axis VARCHAR,
    axis_value INTEGER,
    design VARCHAR,
    against VARCHAR,             -- 'curve' | 'cot' | another design's label
    unit VARCHAR,                -- cost matching unit: tokens | calls | usd ('-' when no matching)
    position VARCHAR,            -- against the curve: within | below | beyond
    k_match DOUBLE,              -- the curve's k at the design's cost (fractional)
    n_tasks INTEGER,
    n_cells INTEGER,
    mean_diff DOUBLE,            -- mean over tasks of (design - reference), seeds averaged per task
    sd_task DOUBLE,              -- SD of the per-task differences
    ci_lo DOUBLE,                -- 95% paired bootstrap CI (tasks resampled, seeds kept together)
    ci_hi DOUBLE,
    p_value DOUBLE,
    method VARCHAR,              -- paired bootstrap | exact McNemar
    n_discordant_plus INTEGER,   -- McNemar b: design right, reference wrong
    n_discordant_minus INTEGER,  -- McNemar c: design wrong, reference right
    family_size INTEGER,         -- Holm family: comparisons of the same kind in the group
    p_holm DOUBLE,
    level_holm DOUBLE,           -- the Holm step's alpha for this comparison
    ci_lo_holm DOUBLE,           -- bootstrap CI at 1 - level_holm
    ci_hi_holm DOUBLE,
    n_needed BIGINT,             -- tasks that detect the observed difference at the planned power
    verdict VARCHAR,             -- against the curve, non-baselines: worth it | not worth it | ...
    reason VARCHAR,
    is_verdict BOOLEAN,          -- this row's unit is the suite's matching unit (stats.match): the verdict
    bootstrap INTEGER,
    alpha DOUBLE,
    power DOUBLE
);
"""),
    (6, "run failure reason and cell count; calls of superseded (rerun) cells", """
ALTER TABLE runs ADD COLUMN reason VARCHAR;       -- why a run failed (e.g. a misconfigured model)
ALTER TABLE runs ADD COLUMN total_cells INTEGER;  -- cells of the run (live progress: done of total)
-- Calls of failed cells that a resume reran: spent, not counted. Same columns as calls (a
-- migration adding a column to calls adds it here too) plus when the cell was superseded.
CREATE TABLE calls_superseded AS SELECT *, CAST(NULL AS DOUBLE) AS superseded_at FROM calls WHERE false;
"""),
    (7, "transcripts: texts once per distinct text, call messages; call and node times", """
-- Every distinct text once (content-addressed): the k samples of one prompt, and the thousand calls
-- sharing a system prompt, keep one copy. Inserted once (store/schema.py CONTENT_TABLES);
-- a text no call_messages row references is removed when resume or supersede deletes rows.
CREATE TABLE texts (
    text_hash VARCHAR PRIMARY KEY,  -- 32 hex chars: blake2b-128 of the UTF-8 text (masbench/store/texts.py)
    text VARCHAR,
    chars INTEGER
);
-- One row per message of a call: the request's messages in order (direction 'input', position
-- 0..n-1) and the reply (direction 'output', position 0). Per-cell rows, keyed like calls.
CREATE TABLE call_messages (
    run_id VARCHAR,
    call_id VARCHAR,             -- calls.call_id
    purpose VARCHAR,             -- the call's purpose, design, task and seed (its cell), as in calls
    design VARCHAR,
    task_id VARCHAR,
    seed INTEGER,
    direction VARCHAR,           -- input | output
    position INTEGER,            -- order within the direction
    role VARCHAR,                -- system | user | assistant | tool
    text_hash VARCHAR,           -- texts.text_hash of the content (JSON text when it is not a string)
    content_type VARCHAR,        -- text | json
    extra JSON                   -- the message's other fields (name, tool_calls, tool_call_id); never keys or headers
);
CREATE TABLE call_messages_superseded AS SELECT *, CAST(NULL AS DOUBLE) AS superseded_at FROM call_messages WHERE false;
ALTER TABLE calls ADD COLUMN t_start DOUBLE;           -- epoch seconds the call began (ts: when it was recorded)
ALTER TABLE calls ADD COLUMN request JSON;             -- allow-listed request parameters (temperature, max_tokens, ...)
ALTER TABLE calls_superseded ADD COLUMN t_start DOUBLE;
ALTER TABLE calls_superseded ADD COLUMN request JSON;
ALTER TABLE nodes ADD COLUMN t_start DOUBLE;           -- epoch seconds: the node's timeline
ALTER TABLE nodes ADD COLUMN t_end DOUBLE;
ALTER TABLE runs ADD COLUMN transcripts VARCHAR;       -- full | errors | none: what the run kept
"""),
    (8, "tool calls: one row per tool call an agent made (arguments, result, latency, bytes)", """
-- One row per tool call of a tool-using node (a `react` node's steps): which model call asked for
-- it, the tool, its arguments as the model sent them (validated, or the raw text when they failed
-- their schema), what came back (the text the model was shown: texts.text_hash) and how long it
-- took. Per-cell rows, keyed like calls (purpose, design, task, seed).
CREATE TABLE tool_calls (
    run_id VARCHAR,
    call_id VARCHAR,             -- calls.call_id of the model call whose reply asked for this tool call (NULL: none)
    tool_call_id VARCHAR,        -- the provider's id of the tool call, or ours (text protocol)
    purpose VARCHAR,
    design VARCHAR,
    task_id VARCHAR,
    seed INTEGER,
    node VARCHAR,                -- the node (scope-prefixed, as in nodes.node)
    step INTEGER,                -- the ReAct step (0-based) that made it
    position INTEGER,            -- order among the tool calls of one step (parallel calls)
    tool VARCHAR,                -- the tool's registered name (as the model wrote it when unknown)
    arguments JSON,              -- the arguments (JSON object), or a JSON string of the raw text when unparseable
    status VARCHAR,              -- ok | invalid_args | unknown_tool | not_allowed | error | refused
    error VARCHAR,               -- why it failed (NULL when ok)
    latency_s DOUBLE,            -- wall time of the tool itself
    bytes_out INTEGER,           -- UTF-8 bytes of the tool's full result, before the size cap
    truncated BOOLEAN,           -- the result was cut to the tool's cap
    text_hash VARCHAR,           -- texts.text_hash of the observation the model was shown (NULL: none)
    result_ids JSON,             -- ids the result names (documents a search returned or a read opened), for retrieval metrics
    t_start DOUBLE,              -- epoch seconds the tool call began
    ts DOUBLE                    -- epoch seconds it was recorded
);
CREATE TABLE tool_calls_superseded AS SELECT *, CAST(NULL AS DOUBLE) AS superseded_at FROM tool_calls WHERE false;
-- the task's gold evidence (TaskInstance.meta["evidence"]: ids of the documents that hold the facts
-- its answer needs), so retrieval recall is a view over tool_calls.result_ids
ALTER TABLE results ADD COLUMN evidence JSON;
"""),
    (9, "verdicts: needs-n ranges and Holm family scope; sequential looks of --until-decided runs", """
-- "needs n" as a range (n_needed .. n_needed_hi; n_needed_hi NULL with n_needed set: "n >= n_needed")
-- and what a row's Holm family spans: 'group' (the designs of one group) or 'axis' (every design
-- at every value of one axis: a per-axis table corrected across the values it shows)
ALTER TABLE paired_tests ADD COLUMN n_needed_hi BIGINT;
ALTER TABLE paired_tests ADD COLUMN family VARCHAR;
-- One row per design and look of a sequential run (`masbench run --until-decided`): what the
-- anytime-valid test said after that look's batch of tasks. A design's first row with `decided`
-- is where it stopped receiving tasks; later looks repeat that row's numbers (frozen).
CREATE TABLE sequential_looks (
    run_id VARCHAR,
    look INTEGER,                -- 1, 2, ...: the look after the look-th batch
    design VARCHAR,              -- the design's label (non-baselines only)
    unit VARCHAR,                -- the cost unit it is matched on (stats.match)
    n_tasks INTEGER,             -- tasks of this design in the sequence so far
    n_cells INTEGER,
    calls BIGINT,                -- the design's counted model calls so far
    tokens BIGINT,               -- ... counted tokens (prompt + completion)
    cost_usd DOUBLE,
    budget_spent DOUBLE,         -- ... on the suite's budget basis
    k_match DOUBLE,              -- the curve's k this look's new tasks were matched at (from earlier looks' cost)
    position VARCHAR,            -- within | below | beyond
    mean_diff DOUBLE,            -- mean of the sequence of per-task differences
    cs_lo DOUBLE,                -- the confidence sequence at level 1 - level_holm, running intersection
    cs_hi DOUBLE,
    p_anytime DOUBLE,            -- anytime-valid p-value of "no difference" (1 / running max of the e-process)
    family_size INTEGER,
    p_holm DOUBLE,               -- Holm over the family's anytime-valid p-values at this look
    level_holm DOUBLE,
    decided BOOLEAN,             -- decided at or before this look (stops receiving tasks)
    verdict VARCHAR,             -- the same words as the fixed-n verdicts
    reason VARCHAR,
    max_tasks INTEGER,           -- the run's task cap (--max-tasks)
    batch INTEGER,               -- tasks per batch (--batch)
    method VARCHAR,              -- e.g. 'betting CS (hedged, PrPl)'
    alpha DOUBLE,
    ts DOUBLE
);
"""),
    (10, "judged results: the judge behind a verdict, its samples, the rule's verdict; judge checks", """
-- A cell scored by a model judge (the `judge` scorer): which judge (agent, model), how many of its
-- k samples passed, the aggregate, and the rule-checked verdict where the task also has a gold.
-- NULL judge: a rule scorer set `correct`. Judge calls are `calls` rows with purpose 'scoring'.
ALTER TABLE results ADD COLUMN judge VARCHAR;          -- the judge agent's name
ALTER TABLE results ADD COLUMN judge_model VARCHAR;    -- the model it ran on (model id)
ALTER TABLE results ADD COLUMN judge_samples INTEGER;  -- k: judge samples of this reply
ALTER TABLE results ADD COLUMN judge_passes INTEGER;   -- samples that passed
ALTER TABLE results ADD COLUMN judge_value DOUBLE;     -- the aggregate: share passing (majority) or mean score
ALTER TABLE results ADD COLUMN rule_correct BOOLEAN;   -- the rule's verdict on a checkable gold (NULL: none)
ALTER TABLE pool ADD COLUMN judge VARCHAR;
ALTER TABLE pool ADD COLUMN judge_model VARCHAR;
ALTER TABLE pool ADD COLUMN judge_samples INTEGER;
ALTER TABLE pool ADD COLUMN judge_passes INTEGER;
ALTER TABLE pool ADD COLUMN judge_value DOUBLE;
ALTER TABLE pool ADD COLUMN rule_correct BOOLEAN;
-- One row per `masbench judge check`: a judge measured against rule-checkable golds.
CREATE TABLE judge_checks (
    run_id VARCHAR,              -- the check's run (its judged results)
    suite VARCHAR,               -- the suite checked on
    judge VARCHAR,               -- the judge agent
    judge_model VARCHAR,         -- its model id
    scale VARCHAR,               -- pass-fail | graded | pairwise
    k INTEGER,                   -- judge samples per reply
    n_checked INTEGER,           -- replies with both verdicts
    n_tasks INTEGER,             -- distinct tasks among them
    agreement DOUBLE,            -- share where the judge's verdict equals the rule's
    agreement_lo DOUBLE,         -- Wilson 95% interval
    agreement_hi DOUBLE,
    n_rule_fail INTEGER,         -- replies the rule fails (the false-pass denominator)
    false_pass DOUBLE,           -- judge passes | rule fails
    false_pass_lo DOUBLE,
    false_pass_hi DOUBLE,
    n_rule_pass INTEGER,         -- replies the rule passes
    false_fail DOUBLE,           -- judge fails | rule passes
    false_fail_lo DOUBLE,
    false_fail_hi DOUBLE,
    self_consistency DOUBLE,     -- P(two of a reply's k samples agree), mean over replies (NULL: k = 1)
    unanimous DOUBLE,            -- share of replies whose k samples all agree
    unparsed DOUBLE,             -- share of judge samples whose verdict could not be read
    judge_calls BIGINT,          -- the check's scoring calls, tokens and USD
    judge_tokens BIGINT,
    judge_usd DOUBLE,
    simulated BOOLEAN,
    ts DOUBLE
);
"""),
    (11, "texts without a primary key: its index had to fit in DuckDB's memory", """
-- The texts' primary key was an in-memory index of every hash: past ~1.4M texts (a 10M-call run) a
-- driver at its 128 MB limit could not merge a part. Each text is still stored once: the writer
-- and the merge insert only the hashes the table does not hold (CONTENT_TABLES, new_content_sql).
CREATE TABLE texts_once AS SELECT DISTINCT ON (text_hash) * FROM texts;
DROP TABLE texts;
ALTER TABLE texts_once RENAME TO texts;
"""),
]
"""(version, summary, SQL). Later issues append migrations; views live in ``views.py``."""

TABLES = ("runs", "calls", "calls_superseded", "results", "nodes", "pool", "cot_sc_curve", "routing_decisions",
          "designs", "price_table", "cot_sc_task_curve", "paired_tests", "texts", "call_messages",
          "call_messages_superseded", "tool_calls", "tool_calls_superseded", "sequential_looks", "judge_checks")

CONTENT_TABLES: dict[str, tuple[str, ...]] = {"texts": ("call_messages", "call_messages_superseded", "tool_calls",
                                                       "tool_calls_superseded")}
"""Content-addressed tables (one row per content hash, ``text_hash``) → the tables whose
``text_hash`` references them. The writer and :func:`~.merge.merge_into` insert their rows with
:func:`new_content_sql` (a text already stored is not stored twice); resume and supersede remove
the rows nothing references any more (:func:`~.cells.drop_orphans`)."""


def new_content_sql(table: str, source: str) -> str:
    """``INSERT`` of the rows of ``source`` (a relation with ``table``'s columns) whose hash
    ``table`` does not hold yet, each hash once. No index: ``table``'s hashes are scanned and
    semi-joined to ``source``'s (the hash table is built on the smaller ``source``), so DuckDB's
    memory does not grow with the texts stored (a primary key's index had to fit in memory)."""
    return (f"INSERT INTO {table} BY NAME SELECT n.* FROM (SELECT DISTINCT ON (text_hash) * FROM {source}) n "
            f"WHERE n.text_hash NOT IN (SELECT t.text_hash FROM {table} t SEMI JOIN {source} USING (text_hash))")
