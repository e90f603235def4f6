"""Issue 26: a request's time and memory bounded by its input. Heavy work runs off the event loop, so ``/health``
answers while it runs; the dashboard renders once for concurrent requests, reuses per-topic monitors while a
topic's change marker is unchanged, and shows a page of topics at a time."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from reviewdepth.api import recording
from reviewdepth.services import monitor

from .conftest import Api

WAIT = 20.0  # seconds a liveness check waits before declaring the loop stalled (never reached when it passes)


def health_during(api: Api, slow: Callable[[], Any], entered: threading.Event, release: threading.Event) -> bool:
    """Run ``slow`` (a request whose work blocks until ``release``) in a thread, wait until its work has
    started, then ask ``/health``: True when it answered before ``release`` was set (the loop was free)."""
    answered: list[bool] = []
    worker = threading.Thread(target=slow)
    worker.start()
    try:
        assert entered.wait(WAIT), "the slow request never reached its work"

        def probe() -> None:
            response = api.client.get("/health")
            answered.append(response.status_code == 200 and not release.is_set())

        prober = threading.Thread(target=probe)
        prober.start()
        prober.join(WAIT)
    finally:
        release.set()
        worker.join(WAIT)
    prober.join(WAIT)
    return answered == [True]


def blocking(entered: threading.Event, release: threading.Event, real: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        release.wait(WAIT)
        return real(*args, **kwargs)

    return call


def test_a_large_judgment_batch_is_parsed_off_the_event_loop(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    entered, release = threading.Event(), threading.Event()
    real = recording.judgment_batch_validator()

    class Blocking:
        validate_json = staticmethod(blocking(entered, release, real.validate_json))

    monkeypatch.setattr(recording, "judgment_batch_validator", Blocking)
    writer = api.writer
    body = {"judgments": [{"doc_id": f"d{i}", "label": "1"} for i in range(4_000)], "allow_unqueued": True}
    assert len(httpx.Request("POST", "/", json=body).content) > 64 * 1024  # past the inline parse (recording.py)
    results: list[int] = []
    api.client.post("/topics", json={"name": "T"}, headers=writer)

    def post() -> None:
        results.append(api.client.post("/topics/T/judgments", json=body, headers=writer).status_code)

    assert health_during(api, post, entered, release)
    assert results == [201]


def test_the_dashboard_is_built_off_the_event_loop(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    entered, release = threading.Event(), threading.Event()
    monkeypatch.setattr(monitor, "build_dashboard", blocking(entered, release, monitor.build_dashboard))
    reader = api.new_key("rita", "read")
    results: list[int] = []
    assert health_during(api, lambda: results.append(api.client.get("/", headers=reader).status_code),
                         entered, release)
    assert results == [200]
