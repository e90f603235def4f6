"""Property-based runs of the OpenAPI document (schemathesis, bounded), on SQLite and PostgreSQL: every operation
with generated requests, then a stateful run following the document's links (create a topic → store a queue →
record judgments → report, draw a sample → read it). No 5xx, and every response conforms to the schema, status
codes and content types the document declares. The document itself has no dangling reference.

`test_schemathesis_cli_every_check` runs the schemathesis command itself against a real server with an admin and
a read key: every check (``--checks all``: the conformance checks, negative data rejected, positive data
accepted, use after free, resource availability, ignored auth, unsupported methods and their ``Allow``), every
phase (examples, coverage, fuzzing, stateful), and asserts no failure of any check. The default suite runs a few
examples per operation with the admin key; ``pytest -m stress`` runs `STRESS_EXAMPLES` with both keys and prints
the per-check table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import checks
from sqlalchemy import Engine, delete, update

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.store.models import ApiIdempotency, Judgment, Sample, Topic

from .server import started_server

CHECKS = [checks.not_a_server_error, checks.response_schema_conformance, checks.status_code_conformance,
          checks.content_type_conformance]
EXAMPLES_PER_OPERATION = 12
# every operation on a topic is a link target of POST /topics (schemathesis infers them), so each new one thins
# the walks that reach the linked chain asserted below
STATEFUL_SCENARIOS = 40
STATEFUL_STEPS = 8


class Fuzzed:
    """The schema, the admin key's headers, and what was run: calls per operation and statuses seen."""

    def __init__(self, schema: Any, headers: dict[str, str], engine: Engine) -> None:
        self.schema = schema
        self.headers = headers
        self.engine = engine
        self.calls: Counter[str] = Counter()
        self.statuses: Counter[int] = Counter()

    def seen(self, case: Any, response: Any) -> None:
        self.calls[case.operation.label] += 1
        self.statuses[response.status_code] += 1


@pytest.fixture
def fuzzed(engine: Engine, empty_db_url: str) -> Iterator[Fuzzed]:
    create_topic(engine, "t", 50)
    store_ranking(engine, "t", "q", [RankedDocument(f"d{i}", float(-i)) for i in range(30)])
    headers = {"Authorization": f"Bearer {create_key(engine, 'fuzzer', 'admin')[1]}"}
    app = create_app(ApiSettings(database_url=empty_db_url, max_body_bytes=64 * 1024,
                                 max_upload_bytes=256 * 1024))
    with TestClient(app):  # runs the lifespan: the engine is open while schemathesis calls the app
        yield Fuzzed(schemathesis.openapi.from_asgi("/openapi.json", app), headers, engine)


def test_document_has_no_dangling_reference(fuzzed: Fuzzed) -> None:
    document = fuzzed.schema.raw_schema
    refs: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref" and isinstance(value, str):
                    refs.add(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document)
    defined = {f"#/components/schemas/{name}" for name in document["components"]["schemas"]}
    assert refs and refs <= defined, refs - defined
    operations = [op for item in document["paths"].values() for method, op in item.items()
                  if method in ("get", "put", "post", "delete")]
    for operation in operations:
        if "requestBody" in operation:
            assert {"400", "413", "415", "503"} <= set(operation["responses"]), operation["operationId"]


def test_every_operation_answers_generated_requests(fuzzed: Fuzzed) -> None:
    operations = [result.ok() for result in fuzzed.schema.get_all_operations()]
    assert len(operations) >= 17
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck),
                  derandomize=True, database=None)
        def exercise(case: Any) -> None:
            response = case.call(headers=fuzzed.headers)
            fuzzed.seen(case, response)
            case.validate_response(response, checks=CHECKS, headers=fuzzed.headers)

        try:
            exercise()
        except Exception as exc:
            raise AssertionError(f"{operation.label}: {exc}") from exc
    assert set(fuzzed.calls) == {op.label for op in operations}
    assert not [s for s in fuzzed.statuses if s >= 500]
    print(f"\nstateless: {len(fuzzed.calls)} operations, {sum(fuzzed.calls.values())} requests, "
          f"statuses {dict(sorted(fuzzed.statuses.items()))}")


def test_stateful_runs_follow_the_links(fuzzed: Fuzzed) -> None:
    base = fuzzed.schema.as_state_machine()

    class Machine(base):  # type: ignore[misc,valid-type]
        def setup(self) -> None:
            # every scenario starts from the seeded database, so that Hypothesis, which replays the draws of a
            # scenario, sees the same answers (a topic created by an earlier scenario would now be a 409)
            with fuzzed.engine.begin() as conn:
                conn.execute(delete(Topic).where(Topic.name != "t"))
                conn.execute(delete(Judgment))
                conn.execute(delete(Sample))
                conn.execute(delete(ApiIdempotency))
                conn.execute(update(Topic).values(chain_length=0, chain_head=None, chain_broken=None))

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"headers": fuzzed.headers}

        def validate_response(self, response: Any, case: Any, additional_checks: Any = None,
                              **kwargs: Any) -> None:
            fuzzed.seen(case, response)
            case.validate_response(response, checks=CHECKS, headers=fuzzed.headers)

    Machine.run(settings=settings(max_examples=STATEFUL_SCENARIOS, stateful_step_count=STATEFUL_STEPS,
                                  deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                                  database=None, phases=[Phase.generate]))
    # Which linked operations a bounded random walk reaches depends on Hypothesis's draws (a new release of
    # schemathesis or Hypothesis draws differently), so the walk must reach the first link, and the chain to the
    # report is read from the document itself.
    assert "POST /topics" in fuzzed.calls, fuzzed.calls
    assert {"GET /topics/{topic}", "PUT /topics/{topic}/queues/{queue}", "POST /topics/{topic}/judgments",
            "GET /topics/{topic}/report"} & set(fuzzed.calls), fuzzed.calls
    links: dict[tuple[str, str], set[str]] = {}
    for path, item in fuzzed.schema.raw_schema["paths"].items():
        for method, operation in item.items():
            for response in operation.get("responses", {}).values() if isinstance(operation, dict) else ():
                links.setdefault((path, method), set()).update(response.get("links", {}))
    assert {"PutQueue", "PostJudgments", "GetReport"} <= links[("/topics", "post")]
    assert {"PostJudgments", "PostSample", "GetReport"} <= links[("/topics/{topic}/queues/{queue}", "put")]
    assert "GetReport" in links[("/topics/{topic}/judgments", "post")]
    assert not [s for s in fuzzed.statuses if s >= 500]
    print(f"\nstateful: {len(fuzzed.calls)} operations, {sum(fuzzed.calls.values())} requests, "
          f"statuses {dict(sorted(fuzzed.statuses.items()))}")


CLI_CONFIG = Path(__file__).with_name("schemathesis.toml")  # why three operations may answer 422 to valid data
QUICK_EXAMPLES = 4
STRESS_EXAMPLES = 30
SEED = 1


def run_schemathesis(base: str, key: str, examples: int, workdir: Path) -> tuple[int, str, Path]:
    """``schemathesis run`` (every check and phase) against ``base`` with ``key``: its exit status, output and
    NDJSON event report."""
    report = workdir / f"schemathesis-{key[:8]}.ndjson"
    command = [sys.executable, "-c", "from schemathesis.cli import schemathesis; schemathesis()",
               "--config-file", str(CLI_CONFIG), "run", f"{base}/openapi.json",
               "-H", f"Authorization: Bearer {key}", "--checks", "all", "--max-examples", str(examples),
               "--seed", str(SEED), "--workers", "1", "--generation-database", "none", "--no-color",
               "--report", "ndjson", "--report-ndjson-path", str(report)]
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "NO_COLOR": "1"})
    return done.returncode, done.stdout + done.stderr, report


def check_table(report: Path) -> tuple[set[str], int, dict[str, tuple[int, int]], Counter[str]]:
    """From a run's NDJSON events: the operations tested, the test cases, per check (cases it ran on, failures)
    and the scenarios per phase."""
    operations: set[str] = set()
    cases: set[str] = set()
    per_check: dict[str, list[int]] = {}
    phases: Counter[str] = Counter()
    for line in report.read_text().splitlines():
        event = json.loads(line)
        finished = event.get("ScenarioFinished")
        if finished is None:
            continue
        phases[finished["phase"]] += 1
        recorder = finished["recorder"]
        if finished["phase"] != "stateful":  # a stateful scenario's recorder is the whole walk
            operations.add(recorder["label"])
        for case_id, results in (recorder.get("checks") or {}).items():
            cases.add(case_id)
            for result in results:
                counts = per_check.setdefault(result["name"], [0, 0])
                if result["status"] in ("success", "failure"):
                    counts[0] += 1
                    counts[1] += result["status"] == "failure"
    return operations, len(cases), {name: (ran, failed) for name, (ran, failed) in per_check.items()}, phases


def seeded_server_keys(engine: Engine) -> dict[str, str]:
    """A topic with a queue to find (and its stateful links to follow), and an admin and a read key."""
    create_topic(engine, "t", 50)
    store_ranking(engine, "t", "q", [RankedDocument(f"d{i}", float(-i)) for i in range(30)])
    return {scope: create_key(engine, f"fuzzer-{scope}", scope)[1] for scope in ("admin", "read")}


def exercise_cli(engine: Engine, empty_db_url: str, tmp_path: Path, examples: int, scopes: tuple[str, ...]) -> None:
    keys = seeded_server_keys(engine)
    backend = engine.dialect.name
    with started_server(empty_db_url, tmp_path) as server:
        for scope in scopes:
            key = keys[scope]
            status, output, report = run_schemathesis(server.base, key, examples, tmp_path)
            operations, cases, per_check, phases = check_table(report)
            print(f"\nschemathesis {schemathesis.__version__}, {backend}, {scope} key, --max-examples {examples}: "
                  f"{len(operations)} operations, {cases} cases, phases {dict(phases)}")
            for name, (ran, failed) in sorted(per_check.items()):
                print(f"  {name:30} {ran:6} cases {failed:3} failures")
            assert status == 0, output[-6000:]
            assert not {name for name, (_, failed) in per_check.items() if failed}, output[-6000:]
            assert {"examples", "coverage", "fuzzing", "stateful"} <= set(phases), phases
            assert len(operations) >= 29, operations
            assert {"not_a_server_error", "positive_data_acceptance", "negative_data_rejection",
                    "use_after_free", "ensure_resource_availability", "ignored_auth",
                    "unsupported_method"} <= set(per_check), per_check


def test_schemathesis_cli_every_check(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    exercise_cli(engine, empty_db_url, tmp_path, QUICK_EXAMPLES, ("admin",))


@pytest.mark.stress
def test_schemathesis_cli_every_check_at_length(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    exercise_cli(engine, empty_db_url, tmp_path, STRESS_EXAMPLES, ("admin", "read"))
