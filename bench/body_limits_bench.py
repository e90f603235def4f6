"""Memory of a running ``reviewdepth serve`` under hostile bodies (issue 13): status code and peak server RSS.

    python bench/body_limits_bench.py [--db URL] [--text-mb 300] [--bomb-mib 512]

Starts a server (one worker, fresh SQLite file unless ``--db``) on a free port, then sends, one after the other:

1. a ``text/plain`` POST of ``--text-mb`` MB to ``/topics`` with no key, declared with ``Content-Length``;
2. the same body sent chunked (no ``Content-Length``: the server cannot refuse it from the header);
3. ``POST /evaluate`` with two gzip files (qrels and run) of ``--bomb-mib`` MiB of zeros each, with a read key;
4. a gzip queue upload (``PUT /topics/t/queues/q``, ``text/plain``) of the same bomb, with a write key.

For each it prints the status code, the server's resident set before the request and its peak during the
request (``VmHWM`` after resetting it through ``/proc/PID/clear_refs``, Linux), and the difference; the goal is
< 150 MB above idle. The client streams its bodies (it never holds them whole) and the bombs are built once in
memory (~0.5 MB each).
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path

import httpx

from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for

MB = 1_000_000
MIB = 1 << 20


def gzip_of_zeros(size: int) -> bytes:
    """A gzip member of ``size`` zero bytes, compressed in a stream (never ``size`` bytes in memory)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(MIB)
    parts = []
    for _ in range(size // MIB):
        parts.append(deflate.compress(block))
    parts.append(deflate.compress(bytes(size % MIB)))
    parts.append(deflate.flush())
    return b"".join(parts)


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} for process {pid}")


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # resets VmHWM to the current RSS (Linux >= 4.0)


def send(port: int, method: str, path: str, headers: dict[str, str], body: Iterator[bytes] | bytes,
         length: int | None) -> int:
    """Send a request whose body is streamed from ``body``; the status code, even when the server answers
    before the body is complete and closes the connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    connection.putrequest(method, path, skip_accept_encoding=True)
    for name, value in headers.items():
        connection.putheader(name, value)
    if length is not None:
        connection.putheader("Content-Length", str(length))
    else:
        connection.putheader("Transfer-Encoding", "chunked")
    connection.endheaders()
    try:
        for piece in ([body] if isinstance(body, bytes) else body):
            if length is None:
                connection.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            else:
                connection.send(piece)
        if length is None:
            connection.send(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server refused the request and closed the connection: read its answer
    try:
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def text_body(total: int, chunk: int = MIB) -> Iterator[bytes]:
    block = b"x" * chunk
    sent = 0
    while sent < total:
        piece = block[:min(chunk, total - sent)]
        sent += len(piece)
        yield piece


def multipart(files: dict[str, bytes]) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = []
    for name, data in files.items():
        parts.append(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{name}.gz\"\r\n"
                     f"Content-Type: application/gzip\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--text-mb", type=int, default=300)
    parser.add_argument("--bomb-mib", type=int, default=512)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reviewdepth-limits-") as name:
        folder = Path(name)
        db = args.db or f"sqlite:///{folder / 'limits.db'}"
        engine = create_engine_for(db)
        migrate.upgrade(engine)
        writer = create_key(engine, f"writer-{uuid.uuid4().hex[:6]}", "write")[1]
        create_topic(engine, "t")
        engine.dispose()
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        log = (folder / "server.log").open("wb")
        server = subprocess.Popen([sys.executable, "-m", "reviewdepth.cli.app", "serve", "--port", str(port),
                                   "--no-access-log"], cwd=folder, stdout=log, stderr=subprocess.STDOUT,
                                  env={**os.environ, "REVIEWDEPTH_DATABASE_URL": db})
        try:
            for _ in range(600):
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            bomb = gzip_of_zeros(args.bomb_mib * MIB)
            print(f"gzip bomb: {len(bomb):,} bytes holding {args.bomb_mib} MiB of zeros; server pid {server.pid}, "
                  f"idle RSS {rss_kb(server.pid) / 1024:.0f} MB")
            auth = {"Authorization": f"Bearer {writer}"}
            evaluate_body, evaluate_type = multipart({"qrels": bomb, "run": bomb})
            cases: list[tuple[str, str, str, dict[str, str], Iterator[bytes] | bytes, int | None]] = [
                (f"{args.text_mb} MB text/plain POST /topics, no key, Content-Length", "POST", "/topics",
                 {"Content-Type": "text/plain"}, text_body(args.text_mb * MB), args.text_mb * MB),
                (f"{args.text_mb} MB text/plain POST /topics, no key, chunked", "POST", "/topics",
                 {"Content-Type": "text/plain"}, text_body(args.text_mb * MB), None),
                (f"POST /evaluate, two {len(bomb) // 1000} KB gzip bombs ({args.bomb_mib} MiB each)", "POST",
                 "/evaluate", {**auth, "Content-Type": evaluate_type}, evaluate_body, len(evaluate_body)),
                (f"PUT queue, one {len(bomb) // 1000} KB gzip bomb ({args.bomb_mib} MiB)", "PUT",
                 "/topics/t/queues/q", {**auth, "Content-Type": "text/plain"}, bomb, len(bomb)),
            ]
            for label, method, path, headers, body, length in cases:
                before = rss_kb(server.pid)
                reset_peak(server.pid)
                started = time.perf_counter()
                status = send(port, method, path, headers, body, length)
                elapsed = time.perf_counter() - started
                peak = rss_kb(server.pid, "VmHWM")
                alive = server.poll() is None
                print(f"{label}: {status} in {elapsed:.2f} s; server RSS {before / 1024:.0f} MB before, peak "
                      f"{peak / 1024:.0f} MB (+{(peak - before) / 1024:.0f} MB){'' if alive else '; SERVER DIED'}")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
