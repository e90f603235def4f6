"""Clients that do not send cannot hold a connection: uvicorn (0.55) bounds only the idle time between two requests
of a keep-alive connection (5 s); a connection that sends nothing, headers a byte at a time, or part of a body and
then nothing was kept for as long as the client liked (a few hundred such connections exhaust the server's file
descriptors and, for bodies, hold request tasks). Two bounds, both settings of `reviewdepth.api.settings.ApiSettings`:

* headers: `HeaderTimeoutProtocol` (the HTTP protocol `reviewdepth serve` gives uvicorn) allows
  ``REVIEWDEPTH_HEADER_TIMEOUT_SECONDS`` (10) from a new connection, or from the first byte of the next request on
  a kept-alive one, to the end of the request's headers, however steadily they trickle in;
* bodies: `reviewdepth.api.gate.RequestGate` allows ``REVIEWDEPTH_BODY_TIMEOUT_SECONDS`` (15) of silence between
  two parts of a body the endpoint is waiting for (a slow upload that keeps sending is never cut off).

Past either bound the answer is 408 with ``Connection: close``.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # checked against one of the two; at run time the one uvicorn would pick ("auto")
    from uvicorn.protocols.http.h11_impl import H11Protocol as AutoHTTPProtocol
else:
    from uvicorn.protocols.http.auto import AutoHTTPProtocol


def headers_timeout_response(seconds: float) -> bytes:
    """The raw 408 a connection gets when its request's headers did not arrive in time (a problem body, closing:
    as `reviewdepth.api.problems.BodyTooSlow` for a body)."""
    body = json.dumps({"type": "about:blank", "title": "Request Timeout", "status": 408,
                       "detail": f"the request's headers did not arrive within {seconds:g} s "
                                 "(REVIEWDEPTH_HEADER_TIMEOUT_SECONDS)"}).encode()
    return (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/problem+json\r\n"
            b"x-content-type-options: nosniff\r\nconnection: close\r\ncontent-length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)


class HeaderTimeoutProtocol(AutoHTTPProtocol):
    """uvicorn's HTTP protocol, with a deadline for each request's headers (module docstring). Built by uvicorn
    from ``functools.partial(HeaderTimeoutProtocol, header_timeout_seconds=…)``, which the worker processes of
    ``--workers N`` receive pickled."""

    def __init__(self, *args: Any, header_timeout_seconds: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout_seconds = header_timeout_seconds
        self._header_deadline: asyncio.TimerHandle | None = None

    def _waiting_for_headers(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _start_header_deadline(self) -> None:
        if self._header_deadline is None:
            self._header_deadline = self.loop.call_later(self.header_timeout_seconds, self._headers_too_slow)

    def _end_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if not self.transport.is_closing():
            self.transport.write(headers_timeout_response(self.header_timeout_seconds))
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_header_deadline()

    def data_received(self, data: bytes) -> None:
        if self._waiting_for_headers():  # the first bytes of a request (idle between requests: keep-alive's)
            self._start_header_deadline()
        super().data_received(data)
        if not self._waiting_for_headers():  # its headers are complete: the request is the endpoint's now
            self._end_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._end_header_deadline()
        super().connection_lost(exc)
