"""The live viewer: a Starlette app serving :mod:`.pages` over a store file, read-only, GET only.

Every request opens the store read-only, renders its page and closes it again, so a run writing
the same file keeps writing (its writer holds the file only while it flushes; either side waits for
the other up to ``lock_timeout_s``, see :class:`masbench.store.Store`). Responses carry a
Content-Security-Policy without scripts. :func:`serve` binds a loopback address only.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

import duckdb
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..store import Store
from .links import LiveLinks, Page, Runs, parse
from .pages import render, render_error
from .trace import NotFound

HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
                                      "form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
           "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}
"""Sent with every page: no script may run, whatever a page holds."""

READ_METHODS = ("GET", "HEAD")


class GetOnly:
    """ASGI middleware: any method but GET and HEAD is refused with 405, on every path."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in READ_METHODS:
            resp = PlainTextResponse("masbench view is read-only: only GET is allowed\n", status_code=405,
                                     headers={"Allow": ", ".join(READ_METHODS)})
            await resp(scope, receive, send)
            return
        await self.app(scope, receive, send)


def page_html(store_path: Path, page: Page, links: LiveLinks, lock_timeout_s: float) -> tuple[int, str]:
    """(status, HTML) of one page, the store opened read-only for this request only."""
    try:
        with Store(store_path, read_only=True, lock_timeout_s=lock_timeout_s) as st:
            return 200, render(st, page, links, live=True)
    except NotFound as exc:
        return 404, render_error(str(exc), links)
    except duckdb.IOException as exc:  # a writer held the file longer than we waited
        return 503, render_error(f"the store is busy ({exc}); reload in a moment", links, 503)


def create_app(store_path: str | Path, lock_timeout_s: float = 10.0) -> ASGIApp:
    """The viewer's ASGI app over ``store_path`` (which must exist)."""
    path = Path(store_path)
    if not path.exists():
        raise FileNotFoundError(f"no store at {path}")
    links = LiveLinks()

    async def endpoint(request: Request) -> Response:
        kind = request.path_params.get("kind", Runs.KIND)
        try:
            page = parse(kind, request.query_params)
        except ValueError as exc:
            return HTMLResponse(render_error(f"bad page address: {exc}", links), 404, headers=HEADERS)
        status, body = await run_in_threadpool(page_html, path, page, links, lock_timeout_s)
        return HTMLResponse(body, status, headers=HEADERS)

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    routes = [Route("/", endpoint, methods=["GET"]), Route("/favicon.ico", favicon, methods=["GET"]),
              Route("/{kind}", endpoint, methods=["GET"])]
    return GetOnly(Starlette(routes=routes))


def check_host(host: str) -> str:
    """``host`` if it is a loopback address (127.0.0.0/8, ::1, localhost); ``ValueError`` otherwise:
    the viewer shows model text and costs and is never served to the network."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise ValueError(f"masbench view binds a loopback address only (127.0.0.1, ::1), not {host!r}")


def serve(store_path: str | Path, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve the viewer until interrupted (uvicorn, one process)."""
    import uvicorn

    uvicorn.run(create_app(store_path), host=check_host(host), port=port, log_level="warning")


__all__ = ["GetOnly", "HEADERS", "check_host", "create_app", "page_html", "serve"]
