"""Keys (401/403), problem+json errors for every refusal, body limits, and atomic failed uploads."""

from __future__ import annotations

from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.keys import list_keys, revoke_key

from .conftest import Api

PROBLEM = "application/problem+json"


def problem(response: object, status: int, *words: str) -> dict[str, object]:
    from httpx import Response

    assert isinstance(response, Response)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert body["status"] == status and body["title"] and isinstance(body["detail"], str)
    for word in words:
        assert word in body["detail"], body["detail"]
    return body  # type: ignore[no-any-return]


def seeded(api: Api) -> dict[str, str]:
    ana = api.new_key("ana", "write")
    assert api.client.post("/topics", json={"name": "t"}, headers=ana).status_code == 201
    docs = [{"doc_id": f"d{i}"} for i in range(20)]
    assert api.client.put("/topics/t/queues/q", json={"documents": docs}, headers=ana).status_code == 201
    return ana


def test_keys_are_required_and_scoped(api: Api) -> None:
    client = api.client
    assert client.get("/health").status_code == 200 and client.get("/openapi.json").status_code == 200
    r = client.get("/topics")
    assert problem(r, 401, "missing API key") and r.headers["www-authenticate"].startswith("Bearer")
    r = client.get("/topics", headers={"Authorization": "Bearer rd_not-a-key"})
    assert problem(r, 401, "unknown API key") and r.headers["www-authenticate"].startswith("Bearer")
    r = client.get("/topics", headers={"Authorization": "Basic YTpi"})
    assert problem(r, 401) and "www-authenticate" in r.headers

    reader = api.new_key("rita", "read")
    assert client.get("/topics", headers=reader).status_code == 200
    problem(client.post("/topics", json={"name": "x"}, headers=reader), 403, "scope 'read'", "'write'")
    assert client.get("/whoami", headers=reader).json()["reviewer"] == "rita"
    admin = api.new_key("boss", "admin")
    assert client.post("/topics", json={"name": "x"}, headers=admin).status_code == 201

    writer = api.new_key("ana", "write")
    key_id = max(k.id for k in list_keys(api.engine) if k.reviewer == "ana")
    assert client.get("/topics", headers=writer).status_code == 200
    revoke_key(api.engine, key_id)
    r = client.get("/topics", headers=writer)
    assert problem(r, 401, "revoked") and r.headers["www-authenticate"].startswith("Bearer")


def test_reviewer_is_the_keys_reviewer(api: Api) -> None:
    ana = seeded(api)
    r = api.client.post("/topics/t/judgments", json={"judgments": [{"doc_id": "d1", "label": "1"}],
                                                     "reviewer": "mallory"}, headers=ana)
    problem(r, 403, "'ana'", "'mallory'")
    r = api.client.post("/topics/t/judgments", json={"judgments": [{"doc_id": "d1", "label": "1"}],
                                                     "reviewer": "ana"}, headers=ana)
    assert r.status_code == 201 and r.json()["reviewer"] == "ana"
    assert api.client.get("/topics/t/judgments", headers=ana).json()["judgments"][0]["reviewer"] == "ana"


def test_not_found_and_validation_errors(api: Api) -> None:
    client, ana = api.client, seeded(api)
    problem(client.get("/topics/nope", headers=ana), 404, "unknown topic 'nope'")
    problem(client.get("/topics/t/queues/nope", headers=ana), 404, "no queue 'nope'")
    problem(client.get("/topics/t/queues/nope/entries", headers=ana), 404, "'nope'")
    problem(client.get("/topics/nope/report", headers=ana), 404, "unknown topic")
    problem(client.get("/topics/t/samples/99", headers=ana), 404, "no sample 99")
    problem(client.post("/topics/nope/judgments", json={"judgments": [{"doc_id": "a", "label": "1"}]},
                        headers=ana), 404, "unknown topic")
    problem(client.get("/no/such/path", headers=ana), 404)
    problem(client.post("/topics", json={"name": "t"}, headers=ana), 409, "already exists")

    body = problem(client.post("/topics/t/judgments", json={"judgments": [
        {"doc_id": "d1", "label": "1"}, {"doc_id": "d2", "label": "perhaps"}]}, headers=ana), 422,
        "judgments[1].label", "perhaps")
    assert body["status"] == 422
    problem(client.post("/topics/t/judgments", json={"judgments": [{"doc_id": "d1", "label": "1", "role": "boss"}]},
                        headers=ana), 422, "judgments[0].role")
    body = problem(client.post("/topics/t/judgments", json={"judgments": [{"doc_id": "d1"}]}, headers=ana), 422,
                   "body.judgments[0].label")
    assert body["errors"][0]["field"] == "body.judgments[0].label"  # type: ignore[index]
    problem(client.post("/topics/t/judgments", content=b"{not json", headers={**ana, "Content-Type":
                                                                                 "application/json"}), 422)
    assert client.get("/topics/t/judgments", headers=ana).json()["judgments"] == []  # nothing recorded

    for target in ("0", "1.5", "-0.2", "abc"):
        problem(client.get("/topics/t/report", params={"target": target}, headers=ana), 422, "target")
    assert client.get("/topics/t/report", params={"target": "1"}, headers=ana).status_code == 200
    problem(client.get("/topics/t/report", params={"interval": "magic"}, headers=ana), 422, "interval")
    problem(client.get("/topics/t/report", params={"confidence": "x"}, headers=ana), 422, "confidence")
    problem(client.post("/topics/t/samples", json={"size": 50, "frame": "all"}, headers=ana), 409, "frame of 20")
    problem(client.post("/topics/t/samples", json={"size": 5, "frame": "sideways"}, headers=ana), 422, "frame")
    problem(client.get("/topics/t/queues/q/entries", params={"limit": 0}, headers=ana), 422, "limit")
    # an offset near the top of int64: offset + limit no longer reaches the database (it overflowed: a 500)
    far = client.get("/topics/t/queues/q/entries", params={"offset": 2**63 - 10, "limit": 1000}, headers=ana)
    assert far.status_code == 200 and far.json()["entries"] == [], far.text
    problem(client.get("/topics/t/queues/q/entries", params={"offset": 2**63}, headers=ana), 422, "offset")


def test_rankings_refused_whole(api: Api) -> None:
    client, ana = api.client, seeded(api)
    dup = [{"doc_id": "a"}, {"doc_id": "b"}, {"doc_id": "a"}]
    problem(client.put("/topics/t/queues/dup", json={"documents": dup}, headers=ana), 422,
            "documents[2].doc_id", "duplicate")
    problem(client.put("/topics/t/queues/q", json={"documents": [{"doc_id": "x"}]}, headers=ana), 409,
            "already has a queue 'q'")
    problem(client.put("/topics/nope/queues/q", json={"documents": [{"doc_id": "x"}]}, headers=ana), 404)
    run = b"t Q0 a 1 3.0 r\nt Q0 b 2 2.0 r\nt Q0 a 3 1.0 r\n"
    body = problem(client.put("/topics/t/queues/run1", content=run, headers={**ana, "Content-Type": "text/plain"}),
                   422, ":3", "duplicate docno 'a'")
    assert body["line"] == 3 and body["field"] == "docno"
    bad = b"t Q0 a 1 3.0 r\nt Q0 b 2 high r\n"
    body = problem(client.put("/topics/t/queues/run2", content=bad, headers={**ana, "Content-Type": "text/plain"}),
                   422, "score")
    assert body["line"] == 2
    other = b"t Q0 a 1 3.0 r\nu Q0 b 2 2.0 r\n"
    body = problem(client.put("/topics/t/queues/run3", content=other, headers={**ana, "Content-Type": "text/plain"}),
                   422, "'u'")
    assert body["line"] == 2 and body["field"] == "qid"
    problem(client.put("/topics/t/queues/x", content=b"a,b", headers={**ana, "Content-Type": "text/csv"}), 415)
    # none of the refused uploads left a queue, a topic or an import behind
    assert client.get("/topics/t", headers=ana).json()["queues"] == ["q"]
    assert [t["name"] for t in client.get("/topics", headers=ana).json()["topics"]] == ["t"]
    good = b"t Q0 a 1 3.0 r\nt Q0 b 2 2.0 r\n"
    r = client.put("/topics/t/queues/run1", content=good, headers={**ana, "Content-Type": "text/plain"})
    assert r.status_code == 201 and r.json()["size"] == 2


def test_body_limits(api: Api) -> None:
    client, ana = api.client, seeded(api)
    big = {"judgments": [{"doc_id": f"d{i % 20}", "label": "1", "note": "x" * 100} for i in range(3000)]}
    problem(client.post("/topics/t/judgments", json=big, headers=ana), 413, "limit")

    def chunks() -> object:
        for _ in range(40):
            yield b'{"judgments": [' + b" " * 10_000

    r = client.post("/topics/t/judgments", content=chunks(), headers={**ana, "Content-Type": "application/json"})
    problem(r, 413, "limit")
    run = b"".join(b"t Q0 doc%07d %d 1.0 r\n" % (i, i + 1) for i in range(120_000))  # > 2 MiB upload limit
    problem(client.put("/topics/t/queues/big", content=run, headers={**ana, "Content-Type": "text/plain"}), 413)
    assert client.get("/topics/t/judgments", headers=ana).json()["judgments"] == []
    assert client.get("/topics/t", headers=ana).json()["queues"] == ["q"]


def test_evaluate_matches_the_cli(api: Api, trec_data: object) -> None:
    from pathlib import Path

    assert isinstance(trec_data, Path)
    client, reader = api.client, api.new_key("rita", "read")
    qrels, run = trec_data / "qrels.test", trec_data / "results.test"
    files = {"qrels": ("qrels.test", qrels.read_bytes()), "run": ("results.test", run.read_bytes())}
    judged = ({"measure": ["ndcg", "utility.1,-1,0,1"], "judged_only": "true", "num_docs": "1000"},
              ["-m", "ndcg", "-m", "utility.1,-1,0,1", "-J", "-N", "1000"])
    for form, args in (({}, []), ({"measure": ["map", "P.5,10"], "per_query": "true"}, ["-m", "map", "-m", "P.5,10",
                                                                                      "-q"]), judged):
        r = client.post("/evaluate", files=files, data=form, headers=reader)
        assert r.status_code == 200, r.text
        result = CliRunner().invoke(create_cli(), ["eval", str(qrels), str(run), "--format", "json", *args])
        assert result.exit_code == 0 and r.content == result.stdout.encode()
    unjudged_kept = client.post("/evaluate", files=files, data={**judged[0], "judged_only": "false"}, headers=reader)
    assert unjudged_kept.status_code == 200 and unjudged_kept.content != r.content  # -J reached the evaluation
    problem(client.post("/evaluate", files=files, data={"measure": "nonsense_measure"}, headers=reader), 422,
            "nonsense")
    broken = {"qrels": ("q.txt", b"301 0 DOC1 1\n301 0 DOC2 x\n"), "run": files["run"]}
    body = problem(client.post("/evaluate", files=broken, headers=reader), 422, "q.txt:2")
    assert body["file"] == "q.txt" and body["line"] == 2
    problem(client.post("/evaluate", files={"qrels": files["qrels"]}, headers=reader), 422, "run")
    problem(client.post("/evaluate", files=files), 401)
    # a NaN measure (-J leaves query 1 with no document) is a 200 with null, never a bare NaN or a 500
    nan = client.post("/evaluate", files={"qrels": ("q", b"1 0 d1 1\n2 0 d3 1\n"),
                                          "run": ("r", b"1 Q0 x1 1 2.0 r\n2 Q0 d3 1 1.0 r\n")},
                      data={"measure": "iprec_at_recall.0", "judged_only": "true", "per_query": "true"},
                      headers=reader)
    assert nan.status_code == 200, nan.text
    assert nan.json()["per_query"]["1"]["iprec_at_recall_0.00"] is None


def test_keys_cli(api: Api) -> None:
    runner = CliRunner()
    result = runner.invoke(create_cli(), ["keys", "create", "--reviewer", "carl", "--scope", "read", "--db", api.url])
    assert result.exit_code == 0
    secret = result.stdout.strip()
    assert secret.startswith("rd_") and "shown only now" in result.stderr
    headers = {"Authorization": f"Bearer {secret}"}
    assert api.client.get("/whoami", headers=headers).json()["scope"] == "read"
    listing = runner.invoke(create_cli(), ["keys", "list", "--db", api.url])
    assert "carl" in listing.stdout and secret not in listing.stdout and secret[:10] in listing.stdout
    key_id = listing.stdout.strip().splitlines()[-1].split("\t")[0]
    assert runner.invoke(create_cli(), ["keys", "revoke", key_id, "--db", api.url]).exit_code == 0
    assert api.client.get("/whoami", headers=headers).status_code == 401
    bad = runner.invoke(create_cli(), ["keys", "revoke", "9999", "--db", api.url])
    assert bad.exit_code == 2 and "no API key" in bad.stderr
    bad = runner.invoke(create_cli(), ["keys", "create", "--reviewer", "x", "--scope", "root", "--db", api.url])
    assert bad.exit_code != 0
