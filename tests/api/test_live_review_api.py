"""Issue 11's three scenarios end to end through the HTTP API (SQLite and PostgreSQL): a stale sample rolled forward,
a tiny late sample that must not displace a large one (then voided by an admin key), and no sample ("unknown")."""

from __future__ import annotations

from typing import Any

import numpy as np

from .conftest import Api

SIZE = 1200


def setup_topic(api: Api) -> tuple[dict[str, str], dict[str, int]]:
    ana = api.new_key("ana", "write")
    rng = np.random.default_rng(33)
    prob = 0.4 * np.exp(-np.arange(SIZE) / 200) + 0.005
    truth = {f"d{i}": int(rng.random() < prob[i]) for i in range(SIZE)}
    assert api.client.post("/topics", json={"name": "T"}, headers=ana).status_code == 201
    run = "".join(f"T Q0 d{i} {i + 1} {SIZE - i} sys\n" for i in range(SIZE))
    r = api.client.put("/topics/T/queues/main", content=run.encode(), headers={**ana, "Content-Type": "text/plain"})
    assert r.status_code == 201, r.text
    return ana, truth


def post(api: Api, key: dict[str, str], truth: dict[str, int], docs: list[str], role: str = "review") -> None:
    for start in range(0, len(docs), 500):
        batch = [{"doc_id": d, "label": str(truth[d]), "role": role} for d in docs[start:start + 500]]
        r = api.client.post("/topics/T/judgments", json={"judgments": batch}, headers=key)
        assert r.status_code == 201, r.text


def draw(api: Api, key: dict[str, str], size: int, seed: int) -> dict[str, Any]:
    r = api.client.post("/topics/T/samples", json={"size": size, "frame": "unreviewed", "seed": seed}, headers=key)
    assert r.status_code == 201, r.text
    sample: dict[str, Any] = r.json()
    return sample


def report(api: Api, key: dict[str, str]) -> dict[str, Any]:
    r = api.client.get("/topics/T/report", headers=key)
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    judged = data["summary"]["relevant_judged_in_topic"]
    for est in data["estimates"]:
        assert est["lower"] is None or est["lower"] >= judged
    for fig in data["recall"]:
        assert all(fig[k] is None or 0 <= fig[k] <= 1 for k in ("point", "lower", "upper", "lower_one_sided"))
    return data


def test_stale_sample_over_http(api: Api) -> None:
    ana, truth = setup_topic(api)
    post(api, ana, truth, [f"d{i}" for i in range(250)])
    sample = draw(api, ana, 300, 4)
    post(api, ana, truth, [d["doc_id"] for d in sample["documents"]], role="sample")
    post(api, ana, truth, [f"d{i}" for i in range(250, 900)])
    data = report(api, ana)
    elusion = next(e for e in data["estimates"] if e["method"] == "elusion")
    assert elusion["details"]["unreviewed"] == SIZE - 900
    assert elusion["details"]["sample_size"] == sum(1 for d in sample["documents"] if d["rank"] > 900)


def test_tiny_late_sample_over_http_and_void_needs_admin(api: Api) -> None:
    ana, truth = setup_topic(api)
    post(api, ana, truth, [f"d{i}" for i in range(150)])
    big = draw(api, ana, 400, 5)
    post(api, ana, truth, [d["doc_id"] for d in big["documents"]], role="sample")
    post(api, ana, truth, [f"d{i}" for i in range(150, 400)])
    tiny = draw(api, ana, 3, 6)
    post(api, ana, truth, [d["doc_id"] for d in tiny["documents"]], role="sample")
    data = report(api, ana)
    assert next(e for e in data["estimates"] if e["method"] == "elusion")["details"]["sample_id"] == big["id"]
    assert next(r for r in data["depth"] if r["target"] == 0.95)["status"] != "reached"
    path = f"/topics/T/samples/{tiny['id']}/void"
    assert api.client.post(path, json={"reason": "mistake"}, headers=ana).status_code == 403
    admin = api.new_key("boss", "admin")
    assert api.client.post(path, json={"reason": "mistake"}, headers=admin).status_code == 200
    assert next(s for s in report(api, ana)["samples"] if s["id"] == tiny["id"])["voided"] is True


def test_no_sample_over_http(api: Api) -> None:
    ana, truth = setup_topic(api)
    post(api, ana, truth, [f"d{i}" for i in range(300)])
    data = report(api, ana)
    assert {r["status"] for r in data["depth"]} == {"unknown"}
    assert data["answer"]["status"] == "unknown" and "sample plan" in data["answer"]["next_step"]
    plan = api.client.get("/topics/T/samples/plan", params={"target": "0.9"}, headers=ana)
    assert plan.status_code == 200, plan.text
    assert plan.json()["frame"] == "unreviewed" and plan.json()["target"] == 0.9
    bad = api.client.get("/topics/T/samples/plan", params={"target": "1"}, headers=ana)
    assert bad.status_code == 422 and "target" in bad.text  # the pattern of a certifiable target, in (0, 1)
