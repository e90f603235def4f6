"""A real ``reviewdepth serve`` (uvicorn) on a free 127.0.0.1 port, in a subprocess, for tests and the bench."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """A started server: its base URL, its process and its log file."""

    base: str
    process: subprocess.Popen[bytes]
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def started_server(db_url: str, workdir: Path, *, workers: int = 1, startup_seconds: float = 60.0,
                   access_log: bool = False, env: dict[str, str] | None = None) -> Iterator[Server]:
    """Start the server (``env``: variables besides the environment's), wait until ``/health`` answers, yield it,
    stop it (SIGTERM, then SIGKILL) unless the test ended it."""
    port = free_port()
    env = {**os.environ, "REVIEWDEPTH_DATABASE_URL": db_url, **(env or {})}
    log_path = workdir / f"server-{port}.log"
    log = log_path.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "reviewdepth.cli.app", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--workers", str(workers), "--access-log" if access_log else "--no-access-log"],
        cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_seconds
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"server exited with {process.returncode}: {log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/health", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.1)
        yield Server(base, process, log_path)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


@contextmanager
def running_server(db_url: str, workdir: Path, *, workers: int = 1, startup_seconds: float = 60.0) -> Iterator[str]:
    """Start the server, wait until ``/health`` answers, yield its base URL, stop it (SIGTERM, then SIGKILL)."""
    with started_server(db_url, workdir, workers=workers, startup_seconds=startup_seconds) as server:
        yield server.base
