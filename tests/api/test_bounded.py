"""Issue 26: a request's time and memory bounded by its input. Heavy work runs off the event loop, so ``/health``
answers while it runs; the dashboard renders once for concurrent requests, reuses per-topic monitors while a
topic's change marker is unchanged, and shows a page of topics at a time."""

from __future__ import annotations

import html
import inspect
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from reviewdepth.api import recording
from reviewdepth.api.routers import queues
from reviewdepth.report.monitor_render import render_dashboard
from reviewdepth.services.answers import monitor

from .conftest import Api
from .test_auth_and_errors import problem
from .test_monitor_api import DOCS, judge, parsed, topics

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
    # a large body is validated into columns (recording._columns_body), in a worker thread
    monkeypatch.setattr(recording, "_columns_body", blocking(entered, release, recording._columns_body))
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


def until(condition: Callable[[], bool]) -> bool:
    """Wait (at most WAIT seconds) until ``condition()``; its last value."""
    deadline = time.monotonic() + WAIT
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def test_concurrent_dashboard_requests_share_one_render(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    topics(api)
    entered, release = threading.Event(), threading.Event()
    calls: list[int] = []
    real = monitor.build_dashboard

    def build(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        entered.set()
        release.wait(WAIT)
        return real(*args, **kwargs)

    monkeypatch.setattr(monitor, "build_dashboard", build)
    reader = api.new_key("rita", "read")
    pages: list[str] = []
    requests = [threading.Thread(target=lambda: pages.append(api.client.get("/", headers=reader).text))
                for _ in range(3)]
    requests[0].start()
    assert entered.wait(WAIT)
    for thread in requests[1:]:
        thread.start()
    flight = getattr(api.client.app.state, "dashboards", None)  # type: ignore[attr-defined]
    until(lambda: len(calls) > 1 or (flight is not None and flight.shared == 2))
    release.set()
    for thread in requests:
        thread.join(WAIT)
    assert len(calls) == 1 and len(pages) == 3 and len(set(pages)) == 1 and "can we stop now?" in pages[0]


def test_reports_are_built_off_the_event_loop_one_at_a_time(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26: a report holds no event loop (/health answers meanwhile), identical requests share one
    computation, and a different report waits for the one running (one report's memory at a time)."""
    from reviewdepth.services.answers import report as report_service
    topics(api)
    entered, release = threading.Event(), threading.Event()
    calls: list[tuple[str, ...]] = []
    real = report_service.build_report

    def build(engine: Any, topic: str, options: Any) -> Any:
        calls.append(tuple(str(target) for target in options.targets))  # each `Target` as written
        entered.set()
        release.wait(WAIT)
        return real(engine, topic, options)

    monkeypatch.setattr(report_service, "build_report", build)
    reader = api.new_key("rita", "read")
    bodies: list[tuple[str, int, str]] = []

    def get(query: str) -> None:
        answer = api.client.get(f"/topics/T/report?{query}", headers=reader)
        bodies.append((query, answer.status_code, answer.text))

    requests = [threading.Thread(target=get, args=(q,)) for q in ("target=0.9", "target=0.9", "target=0.8")]
    requests[0].start()
    assert entered.wait(WAIT)
    assert api.client.get("/health").status_code == 200  # the loop is free while the report is computed
    for thread in requests[1:]:
        thread.start()
    flight = api.client.app.state.renders  # type: ignore[attr-defined]
    until(lambda: flight.shared == 1)
    assert calls == [("0.9",)]  # the other target waits for the running report
    release.set()
    for thread in requests:
        thread.join(WAIT)
    assert sorted(calls) == [("0.8",), ("0.9",)] and all(code == 200 for _, code, _ in bodies)
    same = [text for query, _, text in bodies if query == "target=0.9"]
    assert len(same) == 2 and same[0] == same[1]


def test_validation_documents_are_built_off_the_event_loop(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """The validation document, like the report, is built in a thread through the renders' single flight: /health
    answers while it is computed."""
    from reviewdepth.services.answers import validation as validation_service
    topics(api)
    entered, release = threading.Event(), threading.Event()
    monkeypatch.setattr(validation_service, "build_validation",
                        blocking(entered, release, validation_service.build_validation))
    reader = api.new_key("rita", "read")
    codes: list[int] = []

    def get() -> None:
        codes.append(api.client.get("/topics/T/validation?format=json&target=0.9", headers=reader).status_code)

    assert health_during(api, get, entered, release)
    assert codes == [200]


def test_dashboard_reuses_a_topics_monitor_until_the_topic_changes(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    topics(api)
    built: list[str] = []
    real = monitor.build_monitor

    def counted(engine: Any, topic: str, **kwargs: Any) -> Any:
        built.append(topic)
        return real(engine, topic, **kwargs)

    monkeypatch.setattr(monitor, "build_monitor", counted)
    reader = api.new_key("rita", "read")
    first = api.client.get("/?target=0.6", headers=reader)
    assert first.status_code == 200 and sorted(built) == ["T", "U"]
    again = api.client.get("/?target=0.6", headers=reader)
    assert again.text == first.text and sorted(built) == ["T", "U"]  # nothing changed: nothing rebuilt
    judge(api, "U", DOCS[5:8])
    after = api.client.get("/?target=0.6", headers=reader)
    assert sorted(built) == ["T", "U", "U"] and "reviewed 8 of 40" in after.text
    monkeypatch.setattr(monitor, "build_monitor", real)
    fresh = render_dashboard(monitor.build_dashboard(api.engine, target="0.6"))
    assert after.text == fresh


def test_the_dashboard_shows_a_page_of_topics(api: Api) -> None:
    for name in ("a", "b", "c"):
        api.client.post("/topics", json={"name": name}, headers=api.writer)
    reader = api.new_key("rita", "read")
    first = api.client.get("/?limit=2", headers=reader)
    assert [r["cells"][0] for r in parsed(first.text).rows] == ["a", "b"]  # type: ignore[index]
    assert "topics 1–2 of 3" in first.text and 'rel="prev"' not in first.text
    following = re.findall(r'href="(/\?[^"]*)" rel="next"', first.text)
    assert following == ["/?target=0.95&amp;confidence=0.95&amp;page=2&amp;limit=2"]
    second = api.client.get(html.unescape(following[0]), headers=reader)
    assert [r["cells"][0] for r in parsed(second.text).rows] == ["c"]  # type: ignore[index]
    assert "topics 3–3 of 3" in second.text and 'rel="next"' not in second.text and 'rel="prev"' in second.text
    assert len(parsed(api.client.get("/", headers=reader).text).rows) == 3  # default: 50 a page
    for query in ("limit=0", "limit=201", "page=0"):
        problem(api.client.get(f"/?{query}", headers=reader), 422)


def test_a_json_ranking_is_parsed_off_the_event_loop(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    entered, release = threading.Event(), threading.Event()
    monkeypatch.setattr(queues, "ranking_documents", blocking(entered, release, queues.ranking_documents))
    writer = api.writer
    api.client.post("/topics", json={"name": "T"}, headers=writer)
    results: list[int] = []

    def put() -> None:
        body = {"documents": [{"doc_id": f"d{i}"} for i in range(100)]}
        results.append(api.client.put("/topics/T/queues/q", json=body, headers=writer).status_code)

    assert health_during(api, put, entered, release)
    assert results == [201]
    bad = api.client.put("/topics/T/queues/r", json={"documents": [{"doc": "x"}]}, headers=writer)
    assert bad.status_code == 422 and "body.documents[0]" in bad.text


def test_an_import_is_read_and_stored_off_the_event_loop(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """The import routes read the body on the loop (a chunk at a time) and run the importer in a worker thread."""
    from reviewdepth.services.files import imports
    entered, release = threading.Event(), threading.Event()
    monkeypatch.setattr(imports, "import_csv", blocking(entered, release, imports.import_csv))
    results: list[int] = []

    def post() -> None:
        results.append(api.client.post("/topics/T/imports/csv", content=b"doc,label\nd1,1\n",
                                       params={"allow_unqueued": "true"},
                                       headers={**api.writer, "Content-Type": "text/csv"}).status_code)

    assert health_during(api, post, entered, release)
    assert results == [201]


def test_a_burst_of_topic_listings_shares_one_computation_off_the_event_loop(
        api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """``GET /topics`` and ``GET /topics/{t}`` read each topic's newest queue (20 listings at once of a
    2,000,000-entry topic cost +1.4 GB when each read it): identical requests share one computation, in a worker
    thread, while ``/health`` answers."""
    from reviewdepth.services.admin import topics
    api.client.post("/topics", json={"name": "T"}, headers=api.writer)
    reader = api.new_key("ben", "read")
    for path, name in (("/topics", "list_topics"), ("/topics/T", "get_topic")):
        entered, release = threading.Event(), threading.Event()
        calls: list[int] = []
        real = getattr(topics, name)

        def counted(*args: Any, real: Callable[..., Any] = real, calls: list[int] = calls, **kwargs: Any) -> Any:
            calls.append(1)
            return real(*args, **kwargs)
        monkeypatch.setattr(topics, name, blocking(entered, release, counted))
        results: list[int] = []

        renders = api.client.app.state.renders  # type: ignore[attr-defined]
        shared_before = renders.shared
        threads = [threading.Thread(target=lambda path=path, results=results: results.append(
            api.client.get(path, headers=reader).status_code)) for _ in range(5)]
        for t in threads:
            t.start()
        try:
            assert entered.wait(WAIT), "the listing never reached its work"
            deadline = time.monotonic() + WAIT
            while renders.shared - shared_before < 4 and time.monotonic() < deadline:
                time.sleep(0.01)  # the four others join the running computation
            assert renders.shared - shared_before == 4, path
            assert api.client.get("/health").status_code == 200 and not release.is_set()  # the loop is free
        finally:
            release.set()
            for t in threads:
                t.join(WAIT)
        assert results == [200] * 5 and len(calls) == 1, (path, results, calls)


def test_only_audited_routes_run_on_the_event_loop(api: Api) -> None:
    """A plain ``def`` route runs in the threadpool; an ``async def`` one on the event loop, where blocking work
    stalls every request. The coroutine routes are these, each handing its heavy work to a thread itself (a
    new one must do the same, with a test above, before joining the list)."""
    from fastapi.routing import APIRoute

    coroutines = {route.path + " " + ",".join(sorted(route.methods)) for route in api.client.app.routes  # type: ignore[attr-defined]
                  if isinstance(route, APIRoute) and inspect.iscoroutinefunction(route.endpoint)}
    assert coroutines == {"/topics/{topic}/judgments POST", "/topics/{topic}/queues/{queue} PUT", "/ GET",
                          "/health GET", "/topics/{topic}/report GET", "/topics/{topic}/plots/{kind}.{fmt} GET",
                          "/topics/{topic}/validation GET", "/topics/{topic}/monitor GET",
                          "/topics/{topic}/plan GET", "/topics GET", "/topics/{topic} GET"} | {
        f"/topics/{{topic}}/imports/{name} POST" for name in ("asreview", "ris", "rayyan", "csv", "xlsx", "records")}



@pytest.mark.parametrize(("path", "module", "name"), [
    ("/topics/T/monitor?target=0.9", "reviewdepth.services.answers.monitor", "build_monitor"),
    ("/topics/T/plan?target=0.9", "reviewdepth.services.answers.stop_plan", "topic_stop_plan"),
])
def test_monitors_and_plans_run_one_at_a_time_and_share_identical_requests(
        api: Api, monkeypatch: pytest.MonkeyPatch, path: str, module: str, name: str) -> None:
    """Issue 40: a monitor (a 2 M-entry queue cost +953 MB a request) and a stop plan's replays go through the
    reports' single flight: /health answers meanwhile, identical requests share one computation and a report
    asked meanwhile waits for it (one heavy computation's memory at a time)."""
    import importlib

    from reviewdepth.services.answers import report as report_service
    topics(api)
    target_module = importlib.import_module(module)
    entered, release = threading.Event(), threading.Event()
    calls: list[str] = []
    real = getattr(target_module, name)

    def computed(*args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        entered.set()
        release.wait(WAIT)
        return real(*args, **kwargs)

    monkeypatch.setattr(target_module, name, computed)
    real_report = report_service.build_report
    monkeypatch.setattr(report_service, "build_report",
                        lambda *args, **kwargs: (calls.append("report"), real_report(*args, **kwargs))[1])
    reader = api.new_key("rita", "read")
    codes: list[int] = []
    bodies: list[str] = []

    def get(url: str) -> None:
        answer = api.client.get(url, headers=reader)
        codes.append(answer.status_code)
        bodies.append(answer.text)

    requests = [threading.Thread(target=get, args=(u,)) for u in (path, path, "/topics/T/report?target=0.9")]
    requests[0].start()
    assert entered.wait(WAIT)
    assert api.client.get("/health").status_code == 200
    for thread in requests[1:]:
        thread.start()
    flight = api.client.app.state.renders  # type: ignore[attr-defined]
    until(lambda: flight.shared == 1)
    assert calls == [name]  # the identical request shares it; the report waits for it
    release.set()
    for thread in requests:
        thread.join(WAIT)
    assert codes == [200, 200, 200] and calls == [name, "report"]


def test_heavy_reads_beyond_the_bound_answer_503_with_retry_after(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 40: distinct heavy reads beyond the single flight's bound answer 503 with Retry-After at once, while
    an identical request still shares the running one (a burst waited minutes and timed out silently)."""
    from reviewdepth.services.answers import report as report_service
    topics(api)
    entered, release = threading.Event(), threading.Event()
    monkeypatch.setattr(report_service, "build_report", blocking(entered, release, report_service.build_report))
    flight = api.client.app.state.renders  # type: ignore[attr-defined]
    monkeypatch.setattr(flight, "limit", 1)
    reader = api.new_key("rita", "read")
    codes: list[int] = []

    def get(query: str) -> None:
        codes.append(api.client.get(f"/topics/T/report?{query}", headers=reader).status_code)

    first = threading.Thread(target=get, args=("target=0.9",))
    first.start()
    assert entered.wait(WAIT)
    other = api.client.get("/topics/T/monitor?target=0.8", headers=reader)
    assert other.status_code == 503 and other.headers["Retry-After"] == "10"
    assert "heavy reads" in other.json()["detail"]
    same = threading.Thread(target=get, args=("target=0.9",))
    same.start()
    until(lambda: flight.shared == 1)
    release.set()
    for thread in (first, same):
        thread.join(WAIT)
    assert codes == [200, 200] and flight.refused == 1
