"""A plain HTTP server on loopback, run by a test in a thread: it serves files from memory and records
every request (method, path, headers, body), so a test can serve a Helm repository to source-controller
and receive notification-controller's posts, and read back exactly what arrived.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Request:
    """One request as it arrived: its headers by lower-case name, and its body's raw bytes (what an HMAC
    signs)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Loopback:
    """What the server serves (``files``: path to bytes, changeable while it runs) and what it received."""

    url: str = ""
    files: dict[str, bytes] = field(default_factory=dict)
    received: list[Request] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def requests(self, method: str, path: str) -> list[Request]:
        with self._lock:
            return [r for r in self.received if r.method == method and r.path == path]

    def _record(self, request: Request) -> None:
        with self._lock:
            self.received.append(request)


def _handler(state: Loopback) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, body: bytes | None) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            payload = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            state._record(Request(self.command, self.path, headers, payload))
            if body is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:
            self._answer(state.files.get(self.path.split("?")[0]))

        def do_HEAD(self) -> None:
            self._answer(state.files.get(self.path.split("?")[0]))

        def do_POST(self) -> None:
            self._answer(b"")  # a sink: every post is taken

        def log_message(self, format: str, *args: object) -> None:
            pass  # the record is the log

    return Handler


@contextmanager
def loopback() -> Iterator[Loopback]:
    """A :class:`Loopback` serving on a free port of 127.0.0.1 inside the block, stopped after it."""
    state = Loopback()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="loopback-http", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
