"""OpenTelemetry export of a run's work as GenAI spans (docs/telemetry.md): an optional extra
(``pip install 'masbench-eval[otel]'``), off unless the standard ``OTEL_EXPORTER_OTLP_*`` variables are
set (or :func:`configure` / ``masbench run --otel``), and costing one global check per span site
while off — this facade imports no OpenTelemetry.

The span tree of a run::

    run {suite}                                  masbench.run_id, masbench.suite
      cell {design}                              masbench.design, .task_id, .seed
        invoke_workflow {design}                 gen_ai.workflow.name
          invoke_agent {agent}                   gen_ai.agent.name, masbench.node
            chat {model}                         gen_ai.usage.*, gen_ai.request.*, masbench.cost_usd
            execute_tool {tool}                  gen_ai.tool.name, gen_ai.tool.call.id, masbench.tool.*
          majority {node}                        (a node without an agent: "{op} {node}")
            invoke_workflow {sub-design}          (a sub-design nests under its node)

Sites: :func:`run`, :func:`cell`, :func:`workflow`, :func:`node` are context
managers (``with telemetry.node(...) as span: ...; span.node_result(val, st)``); :func:`chat` is
one call after a model call returns, :func:`execute_tool` one call after a tool call returns.
Lifecycle: :func:`decide` (a run calls it first, so a missing extra is reported before anything
runs), :func:`aflush` at a run's end, :func:`carrier` /
:func:`joined` to parent a worker process's spans under the run.
"""

from __future__ import annotations

from .spans import (OFF, CallLike, DesignLike, Handle, Site, StatsLike, UsageLike, ValueLike, cell, chat,
                    execute_tool, node, run, within, workflow)
from .state import (CAPTURE_VAR, ENDPOINT_VARS, INSTALL, TelemetryUnavailable, aflush, capture_from_env, carrier,
                    configure, current, decide, disable, enabled, env_reason, flush, joined, reset, shutdown)

__all__ = [
    "CAPTURE_VAR", "CallLike", "DesignLike", "ENDPOINT_VARS", "Handle", "INSTALL", "OFF", "Site", "StatsLike",
    "TelemetryUnavailable", "UsageLike", "ValueLike", "aflush", "capture_from_env", "carrier", "cell", "chat",
    "configure", "current", "decide", "disable", "enabled", "env_reason", "execute_tool", "flush", "joined", "node",
    "reset", "run", "shutdown", "within", "workflow",
]
