"""A small, fast, local OpenAI-compatible HTTP server for tests and benchmarks.

It answers ``POST /v1/chat/completions`` (plain JSON, or server-sent events when
``stream: true``) and ``GET /v1/models`` with a configurable canned reply, reports token
usage in the standard OpenAI shape, and can inject faults (HTTP 429/500/503, a hang, or a
dropped connection) drawn from a seeded random generator, so retry and error paths are
exercised over real HTTP.

Three ways to run it:

* on the current event loop: ``await server.start()`` … ``await server.stop()``
  (or ``async with FakeOpenAIServer(...) as server``);
* in a daemon thread with its own loop: ``base_url = server.start_in_thread()`` …
  ``server.stop()`` (or ``with FakeOpenAIServer(...) as server``);
* as a separate process (benchmarks, so the server does not steal client CPU)::

      python -m masbench.testing.openai_server --port 0 --latency-ms 50 --fail-rate 0

  which prints ``READY http://127.0.0.1:PORT/v1`` on stdout and serves until killed.

Besides the OpenAI routes the server exposes ``GET /stats`` (request counters and the
Authorization headers seen) and ``POST /stats/reset``.
"""

from __future__ import annotations

from .cli import main
from .config import FAIL_KINDS, ServerConfig, ServerStats
from .server import FakeOpenAIServer

__all__ = ["FAIL_KINDS", "FakeOpenAIServer", "ServerConfig", "ServerStats", "main"]

