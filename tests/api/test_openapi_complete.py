"""The OpenAPI document describes every JSON body completely: no 2xx JSON response is, or holds, a bare object;
the generated response models follow their dataclasses; and real bodies (reports with samples, QC, several
reviewers and a completed review; sample plans of each kind; both evaluation suites) are valid against the
document with every object closed to keys it does not declare."""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from reviewdepth.api import ApiSettings, create_app, schemas
from reviewdepth.estimation.relevant import Estimate
from reviewdepth.report.model import EstimateRow, Report
from tests.api.conftest import Api

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return create_app(ApiSettings(database_url="sqlite:///:memory:")).openapi()


def _success_schemas(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            for status, response in operation.get("responses", {}).items():
                for media_type, content in response.get("content", {}).items():
                    if status.startswith("2") and "json" in media_type:
                        yield f"{method.upper()} {path} {status}", content["schema"]


def bare_objects(document: dict[str, Any], schema: object, where: str, seen: set[str] | None = None) -> list[str]:
    """Places under ``schema`` (following ``$ref``) that are an object with neither ``properties`` nor a typed
    ``additionalProperties``."""
    seen = set() if seen is None else seen
    found: list[str] = []
    if isinstance(schema, list):
        for item in schema:
            found += bare_objects(document, item, where, seen)
        return found
    if not isinstance(schema, dict):
        return found
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name not in seen:
            seen.add(name)
            found += bare_objects(document, document["components"]["schemas"][name], name, seen)
        return found
    if schema.get("type") == "object" and "properties" not in schema and not isinstance(
            schema.get("additionalProperties"), dict):
        found.append(where)
    for key, value in schema.items():
        if key == "properties":
            for name, child in value.items():
                found += bare_objects(document, child, f"{where}.{name}", seen)
        elif isinstance(value, (dict, list)):
            found += bare_objects(document, value, where, seen)
    return found


def test_no_success_body_is_a_bare_object(document: dict[str, Any]) -> None:
    bodies = dict(_success_schemas(document))
    assert len(bodies) >= 20
    assert {"GET /topics/{topic}/report 200", "GET /topics/{topic}/samples/plan 200", "POST /evaluate 200"} <= set(
        bodies)
    found = [place for where, schema in bodies.items() for place in bare_objects(document, schema, where)]
    assert found == []


def test_the_walk_finds_a_bare_object() -> None:
    document = {"components": {"schemas": {"Open": {"type": "object", "properties": {
        "inner": {"anyOf": [{"type": "object", "additionalProperties": True}, {"type": "null"}]}}}}}}
    assert bare_objects(document, {"$ref": "#/components/schemas/Open"}, "x") == ["Open.inner"]
    assert bare_objects(document, {"type": "object", "additionalProperties": {"type": "integer"}}, "y") == []


def test_a_generated_model_follows_its_dataclass() -> None:
    @dataclasses.dataclass(frozen=True)
    class WiderEstimate(Estimate):
        design_effect: float | None = None

    fields = schemas.dataclass_model(WiderEstimate, extra={"scope": str}).model_json_schema()["properties"]
    assert set(fields) == {f.name for f in dataclasses.fields(Estimate)} | {"design_effect", "scope"}
    # the report's estimate row writes the estimate's fields in its place (flattened), then its own
    assert set(schemas.section_model(EstimateRow).model_json_schema()["properties"]) == (
        set(fields) - {"design_effect"} | {"upper_one_sided"})

    @dataclasses.dataclass(frozen=True)
    class WiderReport(Report):
        reviewed_by: list[str] = dataclasses.field(default_factory=list)

    wider = schemas.dataclass_model(WiderReport).model_json_schema()
    assert wider["properties"]["reviewed_by"] == {"items": {"type": "string"}, "title": "Reviewed By",
                                                  "type": "array"}
    assert set(wider["properties"]) - {"reviewed_by"} == {f.name for f in dataclasses.fields(Report)}


def _closed(document: dict[str, Any], name: str) -> Any:
    """A validator of component ``name`` in which every object with properties refuses undeclared keys."""
    components = copy.deepcopy(document["components"])

    def close(node: object) -> None:
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(components)
    return jsonschema_rs.Draft202012Validator({"$ref": f"#/components/schemas/{name}", "components": components})


def _judge(api: Api, headers: dict[str, str], topic: str, labels: dict[str, str], role: str = "review") -> None:
    judgments = [{"doc_id": doc, "label": label, "role": role} for doc, label in labels.items()]
    r = api.client.post(f"/topics/{topic}/judgments", json={"judgments": judgments, "allow_unqueued": True},
                        headers=headers)
    assert r.status_code == 201, r.text


def _errors(validator: Any, body: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.instance_path))}: {e.message}" for e in validator.iter_errors(body)]


def test_real_bodies_match_the_document(api: Api, document: dict[str, Any]) -> None:
    client, ana, bob = api.client, api.writer, api.new_key("bob", "write")
    admin = api.new_key("root", "admin")
    report, plan = _closed(document, "Report"), _closed(document, "SamplePlanOut")
    reports: list[dict[str, Any]] = []
    plans: list[dict[str, Any]] = []

    def read(topic: str) -> None:
        r = client.get(f"/topics/{topic}/report", headers=ana)
        assert r.status_code == 200, r.text
        reports.append(r.json())
        for frame in ("unreviewed", "all"):
            r = client.get(f"/topics/{topic}/samples/plan", params={"frame": frame}, headers=ana)
            assert r.status_code == 200, r.text
            plans.append(r.json())

    assert client.post("/topics", json={"name": "t", "population_size": 300}, headers=ana).status_code == 201
    ranking = {"documents": [{"doc_id": f"d{i}", "score": 100.0 - i} for i in range(120)]}
    assert client.put("/topics/t/queues/q", json=ranking, headers=ana).status_code == 201
    read("t")  # nothing judged
    _judge(api, ana, "t", {f"d{i}": "1" if i % 3 == 0 else "0" for i in range(40)})
    read("t")  # a reviewed prefix, no sample
    drawn = client.post("/topics/t/samples", json={"size": 25, "frame": "unreviewed", "seed": 7}, headers=ana)
    assert drawn.status_code == 201, drawn.text
    _judge(api, ana, "t", {d["doc_id"]: "1" if d["rank"] % 17 == 0 else "0" for d in drawn.json()["documents"]})
    _judge(api, bob, "t", {f"d{i}": "0" if i % 6 == 0 else "1" for i in range(0, 20, 2)})  # conflicts
    qc = client.post("/topics/t/samples", json={"size": 10, "frame": "judged", "seed": 3}, headers=ana)
    assert qc.status_code == 201, qc.text
    _judge(api, bob, "t", {d["doc_id"]: "1" for d in qc.json()["documents"]}, role="qc")
    client.post("/topics/t/samples", json={"size": 5, "frame": "all", "seed": 1}, headers=ana)  # left incomplete
    voided = client.post("/topics/t/samples", json={"size": 3, "frame": "unreviewed", "seed": 2}, headers=ana)
    assert client.post(f"/topics/t/samples/{voided.json()['id']}/void", json={"reason": "mistake"},
                       headers=admin).status_code == 200
    read("t")
    assert client.post("/topics", json={"name": "done", "population_size": 6}, headers=ana).status_code == 201
    small = {"documents": [{"doc_id": f"s{i}"} for i in range(6)]}
    assert client.put("/topics/done/queues/q", json=small, headers=ana).status_code == 201
    _judge(api, ana, "done", {f"s{i}": "1" if i < 2 else "0" for i in range(6)})
    read("done")  # a completed review; nothing left to plan

    quality = reports[2]["review_quality"]
    assert quality["agreement"] is not None and quality["qc_samples"] and any(
        "note" in row for row in quality["policy_sensitivity"])
    assert reports[2]["answer"].get("plan") and reports[-1]["completed_review"]
    assert {p["frame"] for p in plans} == {"unreviewed", "all"} and "feasible" in plans[-2]
    assert any("reason" in p and "elusion_rate" not in p for p in plans)  # nothing left to plan
    for body in reports:
        assert _errors(report, body) == []
    for body in plans:
        assert _errors(plan, body) == []
    # the validator does refuse a body that strays from the document
    strayed = json.loads(json.dumps(reports[2]))
    strayed["summary"]["surprise"] = 1
    strayed["estimates"][0]["point"] = "many"
    assert len(_errors(report, strayed)) == 2


def test_evaluation_bodies_match_the_document(api: Api, document: dict[str, Any]) -> None:
    validator = _closed(document, "EvaluationOut")
    reader = api.new_key("rita", "read")
    cases = [(DATA / "trec_eval" / "qrels.test", DATA / "trec_eval" / "results.test", {"per_query": "true"}),
             (DATA / "trec_eval" / "qrels.test", DATA / "trec_eval" / "results.test", {}),
             (DATA / "seed" / "seed.qrels", DATA / "seed" / "seed.runB", {"suite": "tar", "per_query": "true"})]
    for qrels, run, form in cases:
        files = {"qrels": (qrels.name, qrels.read_bytes()), "run": (run.name, run.read_bytes())}
        r = api.client.post("/evaluate", files=files, data=form, headers=reader)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["all"] and (body["per_query"] or not form)
        assert _errors(validator, body) == []
    assert _errors(validator, {"per_query": {}, "all": {"map": [1]}}) != []


def test_a_report_with_a_portfolio_calibration_matches_the_document(api: Api, document: dict[str, Any]) -> None:
    """The heuristic stopping rows carry a ``calibration`` once the team's portfolio is calibrated."""
    from reviewdepth.services.admin.topics import create_topic
    from reviewdepth.services.files.rankings import RankedDocument, store_ranking
    from reviewdepth.services.review.batches import BatchItem, record_batch
    from reviewdepth.services.simulation.portfolio import add_topics, calibrate

    # fully judged past reviews: a sharp knee, and relevant documents spread evenly
    shapes = {"B": (300, set(range(0, 30, 2))), "C": (240, set(range(0, 240, 12)))}
    for name, (size, ranks) in shapes.items():
        docs = [f"{name}-{i:04d}" for i in range(size)]
        create_topic(api.engine, name)
        store_ranking(api.engine, name, "q", [RankedDocument(d, float(-i)) for i, d in enumerate(docs)])
        record_batch(api.engine, name, [BatchItem(d, str(int(i in ranks))) for i, d in enumerate(docs)],
                     reviewer="ana", source="test")
    add_topics(api.engine, list(shapes), reviewer="ana")
    calibrate(api.engine, replicates=1, look_every=25)
    create_topic(api.engine, "open")
    store_ranking(api.engine, "open", "q", [RankedDocument(f"o{i}", float(-i)) for i in range(200)])
    record_batch(api.engine, "open", [BatchItem(f"o{i}", str(int(i % 5 == 0))) for i in range(80)],
                 reviewer="ana", source="test")
    r = api.client.get("/topics/open/report", headers=api.writer)
    assert r.status_code == 200, r.text
    body = r.json()
    assert [row["rule"] for row in body["stopping"] if "calibration" in row]
    assert _errors(_closed(document, "Report"), body) == []


def test_import_and_compare_bodies_match_the_document(api: Api, document: dict[str, Any]) -> None:
    """The imports' counts (each format's summary) and the comparison, against their closed schemas."""
    ana, screening = api.writer, DATA / "screening"
    cases = [("asreview", "AsreviewImportOut", (DATA / "asreview" / "small.asreview").read_bytes(), {}),
             ("rayyan", "RayyanImportOut", (screening / "rayyan_articles.csv").read_bytes(), {}),
             ("csv", "ImportOut", b"doc,label,asreview_ranking\nd1,1,1\nd2,,2\n", {}),
             ("xlsx", "JudgmentFileImportOut", (screening / "judgments.xlsx").read_bytes(), {"allow_unqueued": "true"})]
    if importlib.util.find_spec("rispy") is not None:
        cases.append(("ris", "RisImportOut", (screening / "labelled.ris").read_bytes(), {}))
    assert api.client.post("/topics", json={"name": "X"}, headers=ana).status_code == 201
    for name, schema, body, query in cases:
        topic = "X" if name == "xlsx" else name
        r = api.client.post(f"/topics/{topic}/imports/{name}", content=body, params=query,
                            headers={**ana, "Content-Type": "application/octet-stream"})
        assert r.status_code == 201, r.text
        assert _errors(_closed(document, schema), r.json()) == [], name
    folder = screening / "covidence"
    files = {"included": ("i.csv", (folder / "review_4242_included_csv_20260101120001.csv").read_bytes())}
    r = api.client.post("/topics/C/imports/covidence", files=files, headers=ana)
    assert r.status_code == 201, r.text
    assert _errors(_closed(document, "CovidenceImportOut"), r.json()) == []
    runs = [("qrels", ("q", (DATA / "seed" / "seed.qrels").read_bytes()))] + [
        ("run", (name, (DATA / "seed" / name).read_bytes())) for name in ("seed.runA", "seed.runB")]
    for form in ({}, {"suite": "tar", "test": "randomization", "permutations": "100"}):
        r = api.client.post("/compare", files=runs, data=form, headers=ana)
        assert r.status_code == 200, r.text
        assert _errors(_closed(document, "ComparisonOut"), r.json()) == []


def test_the_document_states_what_the_validators_enforce(tmp_path: Path) -> None:
    """Issue 40: /compare takes 2 to 50 runs, a void's reason may not be blank, a Covidence import takes at least
    one list's file: the OpenAPI document says so (a client generated from it, or a schema-driven test, learns
    the rules instead of meeting 422s it could not foresee)."""
    import re

    from reviewdepth.api import ApiSettings, create_app

    document = create_app(ApiSettings(database_url=f"sqlite:///{tmp_path / 'x.sqlite3'}")).openapi()
    schemas = document["components"]["schemas"]

    def form(path: str) -> dict[str, Any]:
        content = document["paths"][path]["post"]["requestBody"]["content"]
        schema = next(iter(content.values()))["schema"]
        found: dict[str, Any] = schemas[schema["$ref"].rsplit("/", 1)[-1]] if "$ref" in schema else schema
        return found

    run = form("/compare")["properties"]["run"]
    assert (run["minItems"], run["maxItems"]) == (2, 50)
    assert {tuple(choice["required"]) for choice in form("/topics/{topic}/imports/covidence")["anyOf"]} == {
        ("screen",), ("irrelevant",), ("fulltext",), ("excluded",), ("included",)}
    for path in ("/topics/{topic}/samples/{sample_id}/void", "/topics/{topic}/samples/stream/void"):
        pattern = form(path)["properties"]["reason"]["pattern"]
        assert re.match(pattern, "drawn from the wrong queue") and not re.match(pattern, " \t ")
