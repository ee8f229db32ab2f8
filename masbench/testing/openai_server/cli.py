"""``python -m masbench.testing.openai_server``: serve until SIGTERM/SIGINT, printing
``READY <base_url>`` once listening."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from dataclasses import fields

from .config import FAIL_KINDS, ServerConfig
from .server import FakeOpenAIServer


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m masbench.testing.openai_server",
        description="Local OpenAI-compatible server for tests and benchmarks. "
        "Prints 'READY <base_url>' on stdout once listening.",
    )
    defaults = ServerConfig()
    p.add_argument("--host", default=defaults.host)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--latency-ms", type=float, default=defaults.latency_ms)
    p.add_argument("--fail-rate", type=float, default=defaults.fail_rate)
    p.add_argument("--fail-kinds", default=",".join(defaults.fail_kinds), help=f"comma list of {','.join(FAIL_KINDS)}")
    p.add_argument("--timeout-sleep-s", type=float, default=defaults.timeout_sleep_s)
    p.add_argument("--seed", type=int, default=defaults.seed)
    p.add_argument("--prompt-tokens", type=int, default=None)
    p.add_argument("--completion-tokens", type=int, default=None)
    p.add_argument("--cached-tokens", type=int, default=0)
    p.add_argument("--reply", default=defaults.reply)
    p.add_argument("--model", default=None)
    return p.parse_args(argv)


def config_from_args(ns: argparse.Namespace) -> ServerConfig:
    """Build a :class:`ServerConfig` from parsed CLI arguments."""
    names = {f.name for f in fields(ServerConfig)}
    return ServerConfig(**{k: v for k, v in vars(ns).items() if k in names})


async def _serve(config: ServerConfig) -> None:
    server = FakeOpenAIServer(config)
    base_url = await server.start()
    sys.stdout.write(f"READY {base_url}\n")
    sys.stdout.flush()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - non-Unix
            pass
    try:
        await stop.wait()
    finally:
        await server._astop()


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: serve until SIGTERM/SIGINT."""
    config = config_from_args(_parse_args(argv))
    try:
        asyncio.run(_serve(config))
    except KeyboardInterrupt:  # pragma: no cover
        pass
    return 0


