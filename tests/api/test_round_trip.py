"""A full review round trip over HTTP (topic, ranking, judgments, sample, report) on SQLite and PostgreSQL; the
report is byte for byte what `reviewdepth report --format json` prints for the same database."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.demo import QRELS_FILE, RUN_FILE, demo_file, demo_labels

from .conftest import Api

TOPIC = "CD008803"


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


def test_review_round_trip_report_equals_the_cli(api: Api, tmp_path: Path) -> None:
    client, ana = api.client, api.new_key("ana", "write")
    labels = demo_labels()
    assert QRELS_FILE  # the demo's qrels hold the true labels the reviewers give
    r = client.post("/topics", json={"name": TOPIC, "population_size": len(labels)}, headers=ana)
    assert r.status_code == 201, r.text
    assert r.json()["name"] == TOPIC and r.json()["population_size"] == 5220 and r.headers["location"]

    run_text = gzip.decompress(Path(demo_file(RUN_FILE)).read_bytes())
    r = client.put(f"/topics/{TOPIC}/queues/waterloo", content=run_text, headers={**ana, "Content-Type": "text/plain"})
    assert r.status_code == 201, r.text
    assert r.json()["size"] == 5220 and r.json()["judged"] == 0 and r.json()["queue"] == "waterloo"
    ranking = [line.split()[2] for line in run_text.decode().splitlines() if line.strip()]

    # the top 1,000 reviewed in rank order, in batches of 250 with idempotency keys
    top = ranking[:1000]
    for start in range(0, 1000, 250):
        batch = [{"doc_id": d, "label": labels[d]} for d in top[start:start + 250]]
        r = client.post(f"/topics/{TOPIC}/judgments", json={"judgments": batch, "idempotency_key": f"top-{start}"},
                        headers=ana)
        assert r.status_code == 201 and r.json()["recorded"] == 250 and r.json()["reviewer"] == "ana"

    page = client.get(f"/topics/{TOPIC}/queues/waterloo/entries", params={"offset": 998, "limit": 4}, headers=ana)
    assert page.status_code == 200
    entries = page.json()["entries"]
    assert [e["rank"] for e in entries] == [999, 1000, 1001, 1002]
    assert [e["judged"] for e in entries] == [True, True, False, False] and entries[2]["label"] is None
    assert entries[0]["doc_id"] == ranking[998] and page.json()["total"] == 5220

    r = client.post(f"/topics/{TOPIC}/samples", json={"size": 400, "frame": "unreviewed", "seed": 2017}, headers=ana)
    assert r.status_code == 201, r.text
    sample = r.json()
    assert sample["status"] == "incomplete" and len(sample["missing"]) == 400
    assert all(d["rank"] > 1000 for d in sample["documents"])
    drawn = [d["doc_id"] for d in sample["documents"]]

    bob = api.new_key("bob", "write")
    first = [{"doc_id": d, "label": labels[d], "role": "sample"} for d in drawn[:399]]
    assert client.post(f"/topics/{TOPIC}/judgments", json={"judgments": first}, headers=bob).status_code == 201
    status = client.get(f"/topics/{TOPIC}/samples/{sample['id']}", headers=ana).json()
    assert status["status"] == "incomplete" and status["missing"] == drawn[399:] and status["judged"] == 399
    last = [{"doc_id": drawn[399], "label": labels[drawn[399]], "role": "sample", "note": "last one"}]
    assert client.post(f"/topics/{TOPIC}/judgments", json={"judgments": last}, headers=bob).status_code == 201
    assert client.get(f"/topics/{TOPIC}/samples/{sample['id']}", headers=ana).json()["status"] == "complete"

    log = client.get(f"/topics/{TOPIC}/judgments", params={"reviewer": "bob", "limit": 5, "offset": 398},
                     headers=ana).json()["judgments"]
    assert [j["doc_id"] for j in log] == drawn[398:] and log[-1]["note"] == "last one"
    assert {j["role"] for j in log} == {"sample"} and {j["source"] for j in log} == {"api"}

    # the report: same bytes as the CLI's JSON for the same database, default and explicit options
    for params, args in (({}, []),
                         ({"target": ["0.95", "0.99"], "confidence": "0.9", "interval": "clopper-pearson"},
                          ["--target", "0.95", "--target", "0.99", "--confidence", "0.9",
                           "--interval", "clopper-pearson"]),
                         ({"as_of": "700"}, ["--as-of", "700"])):
        r = client.get(f"/topics/{TOPIC}/report", params=params, headers=ana)
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        code, out, err = cli("report", TOPIC, "--db", api.url, "--format", "json", *args)
        assert code == 0, err
        assert r.content == out.encode("utf-8")
    report = client.get(f"/topics/{TOPIC}/report", headers=ana).json()
    assert report["summary"]["reviewed"] == 1000 and report["depth_basis"] == "elusion"

    html = client.get(f"/topics/{TOPIC}/report", headers={**ana, "Accept": "text/html"})
    out_file = tmp_path / "r.html"
    assert cli("report", TOPIC, "--db", api.url, "--format", "html", "-o", str(out_file))[0] == 0
    assert html.headers["content-type"].startswith("text/html") and html.content == out_file.read_bytes()

    svg = client.get(f"/topics/{TOPIC}/plots/gain.svg", headers=ana)
    cli_svg = tmp_path / "gain.svg"
    assert cli("plot", TOPIC, "--kind", "gain", "-o", str(cli_svg), "--db", api.url)[0] == 0
    assert svg.headers["content-type"] == "image/svg+xml" and svg.content == cli_svg.read_bytes()
    pr = client.get(f"/topics/{TOPIC}/plots/pr.svg", headers=ana)
    assert pr.status_code == 200 and pr.text.startswith("<svg")
    png = client.get(f"/topics/{TOPIC}/plots/pr.png", headers=ana)
    assert png.status_code == 200 and png.content[:8] == b"\x89PNG\r\n\x1a\n"

    topic = client.get(f"/topics/{TOPIC}", headers=ana).json()
    assert topic["queues"] == ["waterloo"] and topic["judgments"] == 1400
    assert [t["name"] for t in client.get("/topics", headers=ana).json()["topics"]] == [TOPIC]
    summary = client.get(f"/topics/{TOPIC}/queues/waterloo", headers=ana).json()
    code, out, _ = cli("queue", "show", TOPIC, "--db", api.url, "--format", "json")
    import json

    assert summary["judged"] == 1400 and summary["size"] == 5220
    assert summary["relevant_found"] == json.loads(out)["relevant_found"]


def test_json_ranking_and_idempotency(api: Api) -> None:
    client, ana = api.client, api.new_key("ana", "write")
    assert client.post("/topics", json={"name": "t1"}, headers=ana).status_code == 201
    docs = [{"doc_id": f"d{i}", "score": 10.0 - i} for i in range(10)]
    r = client.put("/topics/t1/queues/q", json={"documents": docs}, headers=ana)
    assert r.status_code == 201 and r.json()["size"] == 10 and r.json()["ordering"] == "given"
    entries = client.get("/topics/t1/queues/q/entries", headers=ana).json()["entries"]
    assert [e["doc_id"] for e in entries] == [f"d{i}" for i in range(10)] and entries[3]["score"] == 7.0

    body = {"judgments": [{"doc_id": "d0", "label": "relevant"}, {"doc_id": "d1", "label": "0"}],
            "idempotency_key": "batch-1"}
    first = client.post("/topics/t1/judgments", json=body, headers=ana)
    again = client.post("/topics/t1/judgments", json=body, headers=ana)
    assert first.status_code == 201 and again.status_code == 201
    assert again.content == first.content and again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert len(client.get("/topics/t1/judgments", headers=ana).json()["judgments"]) == 2
    changed = {**body, "judgments": [{"doc_id": "d0", "label": "0"}]}
    r = client.post("/topics/t1/judgments", json=changed, headers=ana)
    assert r.status_code == 409 and "different request" in r.json()["detail"]
    # keys are per reviewer: another reviewer's same key is a new request
    bob = api.new_key("bob", "write")
    r = client.post("/topics/t1/judgments", json=body, headers=bob)
    assert r.status_code == 201 and r.json()["ids"] != first.json()["ids"]
    log = client.get("/topics/t1/judgments", headers=ana).json()["judgments"]
    assert [(j["reviewer"], j["doc_id"]) for j in log] == [("ana", "d0"), ("ana", "d1"), ("bob", "d0"), ("bob", "d1")]
    assert client.get("/topics/t1/judgments", params={"as_of": str(log[1]["id"])}, headers=ana).json()[
        "judgments"] == log[:2]
    summary = client.get("/topics/t1/queues/q", headers=ana).json()
    assert summary["judged"] == 2 and summary["relevant_found"] == 1


def test_conflicts_over_http_equal_the_cli(api: Api, tmp_path: Path) -> None:
    client, ana, bob, judge = (api.client, api.new_key("ana", "write"), api.new_key("bob", "write"),
                               api.new_key("judge", "adjudicate"))
    assert client.post("/topics", json={"name": "dual"}, headers=ana).status_code == 201
    for key, labels in ((ana, ["1", "0", "1"]), (bob, ["1", "1", "0"])):
        r = client.post("/topics/dual/judgments", headers=key, json={
            "judgments": [{"doc_id": f"d{i}", "label": lab} for i, lab in enumerate(labels)], "allow_unqueued": True})
        assert r.status_code == 201, r.text
    r = client.post("/topics/dual/judgments", headers=judge,
                    json={"judgments": [{"doc_id": "d1", "label": "0", "role": "adjudication"}],
                          "allow_unqueued": True})
    assert r.status_code == 201
    body = client.get("/topics/dual/conflicts", headers=ana).json()
    assert [(c["doc_id"], c["status"]) for c in body["conflicts"]] == [("d1", "resolved"), ("d2", "open")]
    assert [v["reviewer"] for v in body["conflicts"][0]["votes"]] == ["ana", "bob"]
    assert body["conflicts"][0]["adjudication"]["reviewer"] == "judge"
    opened = client.get("/topics/dual/conflicts", params={"status": "open"}, headers=ana).json()
    assert [c["doc_id"] for c in opened["conflicts"]] == ["d2"]
    code, out, _ = cli("conflicts", "dual", "--format", "json", "--db", api.url)
    assert code == 0 and json.loads(out) == body["conflicts"]
    assert client.get("/topics/dual/conflicts", params={"status": "maybe"}, headers=ana).status_code == 422
    assert client.get("/topics/nope/conflicts", headers=ana).status_code == 404
    assert client.get("/topics/dual/conflicts").status_code == 401
