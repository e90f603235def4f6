"""A client that does not send cannot hold a connection of a real server (``reviewdepth serve``) for long (issue 26):
its headers must arrive within ``REVIEWDEPTH_HEADER_TIMEOUT_SECONDS`` of the first byte (or of the connection,
when nothing comes), and a body may not pause longer than ``REVIEWDEPTH_BODY_TIMEOUT_SECONDS`` between two bytes;
past either the server answers 408 and closes the connection. Clients that send at a normal pace, and keep-alive
connections between requests, are not affected. Held connections were kept for as long as the client liked."""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from reviewdepth.api.settings import ApiSettings
from reviewdepth.services.admin.keys import create_key

from .server import Server, started_server

TIMEOUT = 1.0  # both timeouts, in the server under test
ENOUGH = 4.0  # a closed connection is seen well within this


@pytest.fixture
def server(engine: Engine, empty_db_url: str, tmp_path: Path) -> Iterator[Server]:
    env = {"REVIEWDEPTH_HEADER_TIMEOUT_SECONDS": str(TIMEOUT), "REVIEWDEPTH_BODY_TIMEOUT_SECONDS": str(TIMEOUT)}
    with started_server(empty_db_url, tmp_path, env=env) as running:
        yield running


def connect(server: Server) -> socket.socket:
    host, port = server.base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=ENOUGH * 3)
    return sock


def read_until_closed(sock: socket.socket, seconds: float) -> tuple[bytes, float]:
    """What the server sent until it closed the connection, and how long that took (inf: still open)."""
    started = time.monotonic()
    sock.settimeout(seconds)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except TimeoutError:
        return received, float("inf")
    except ConnectionResetError:
        pass
    return received, time.monotonic() - started


def response_head(sock: socket.socket) -> bytes:
    """The status line and headers of the next response on ``sock``, its body read past."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.lower().split(b"\r\n")
    length = int(next(line.split(b":")[1] for line in lines if line.startswith(b"content-length")))
    while len(body) < length:
        body += sock.recv(65536)
    return head


def timed_out(received: bytes, what: str) -> None:
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), received
    assert b"connection: close" in head.lower(), received
    assert what in json.loads(body)["detail"], body


@pytest.mark.sqlite_only
def test_a_connection_that_sends_nothing_is_closed(server: Server) -> None:
    with connect(server) as sock:
        received, took = read_until_closed(sock, ENOUGH * 2)
    assert took < ENOUGH, (took, received)
    timed_out(received, "headers")


@pytest.mark.sqlite_only
def test_headers_sent_a_byte_at_a_time_are_cut_off(server: Server) -> None:
    with connect(server) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        while time.monotonic() - started < ENOUGH * 2:  # a byte every 0.2 s: never idle, never done
            readable, _, _ = select.select([sock], [], [], 0.2)
            if readable:
                break
            sock.sendall(b"X")
        took = time.monotonic() - started
        received, _ = read_until_closed(sock, ENOUGH)
    assert took < ENOUGH, (took, received)
    timed_out(received, "headers")


@pytest.mark.sqlite_only
def test_a_body_that_stops_is_408_and_closed(engine: Engine, server: Server) -> None:
    secret = create_key(engine, "ana", "write")[1]
    body = b'{"name": "slow-topic"}'
    with connect(server) as sock:
        sock.sendall(b"POST /topics HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Authorization: Bearer " + secret.encode() + b"\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body[:5])
        received, took = read_until_closed(sock, ENOUGH * 2)
    assert took < ENOUGH, (took, received)
    timed_out(received, "body")


@pytest.mark.sqlite_only
def test_clients_at_a_normal_pace_are_served(engine: Engine, server: Server) -> None:
    secret = create_key(engine, "ana", "write")[1]
    body = b'{"name": "paced"}'
    with connect(server) as sock:
        for _ in range(2):  # the same connection, idle between the requests for less than the keep-alive
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            assert response_head(sock).startswith(b"HTTP/1.1 200")
            time.sleep(TIMEOUT * 0.6)
        request = (b"POST /topics HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer "
                   + secret.encode() + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")
        for start in range(0, len(request), 20):  # headers in pieces, each pause shorter than the timeout
            sock.sendall(request[start:start + 20])
            time.sleep(TIMEOUT * 0.1)
        for byte in range(len(body)):  # the body a byte at a time, each pause shorter than the timeout
            sock.sendall(body[byte:byte + 1])
            time.sleep(TIMEOUT * 0.05)
        assert response_head(sock).startswith(b"HTTP/1.1 201")


def test_the_defaults() -> None:
    settings = ApiSettings(database_url="sqlite://")
    assert (settings.header_timeout_seconds, settings.body_timeout_seconds) == (10.0, 15.0)
