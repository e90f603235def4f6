"""``POST /simulations`` takes per-role costs as ``reviewdepth simulate --cost`` does (issue 29): a ``cost`` object
or the CLI's string; the job's report is `run_simulation`'s for the same costs; a bad cost is a 422 problem naming
``cost`` and stores no job."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reviewdepth.api.schemas import StopPlanOut
from reviewdepth.services.simulation.simulate import build_plan, run_simulation, store_source

from .conftest import Api
from .test_auth_and_errors import problem
from .test_simulations_api import finished, jobs, make_topics

BODY: dict[str, Any] = {"topics": ["A"], "design": {"kind": "audit", "every": 10}, "rules": ["monitor"],
                        "target": "0.9", "looks": 25, "replicates": 2, "seed": 4}


def test_a_cost_object_or_string_reaches_the_report(api: Api) -> None:
    make_topics(api)
    plan = build_plan(design="audit", every=10, rules=["monitor"], target="0.9", look_every=25, replicates=2,
                      seed=4, review_cost=1, sample_cost=3, produce_cost=0.5)
    expected = run_simulation(store_source(api.engine, ["A"]), plan).to_dict()
    assert expected["settings"]["sample_cost"] == 3 and expected["settings"]["produce_cost"] == 0.5
    writer = api.writer  # one key: a job is seen by the key that posted it
    for cost in ({"sample": 3, "produce": 0.5}, "review=1,sample=3,produce=0.5"):
        posted = api.client.post("/simulations", json={**BODY, "cost": cost}, headers=writer)
        assert posted.status_code == 202, posted.text
        request = posted.json()["request"]
        assert (request["review_cost"], request["sample_cost"], request["produce_cost"]) == (1, 3, 0.5)
        done = finished(api, posted.headers["location"], writer)
        assert done["status"] == "done", done
        assert done["result"] == expected, cost
    # no cost: unit costs, as the CLI's default
    posted = api.client.post("/simulations", json=BODY, headers=writer)
    assert posted.status_code == 202 and posted.json()["request"]["sample_cost"] == 1


def test_a_bad_cost_is_a_problem_naming_cost(api: Api) -> None:
    make_topics(api)
    for cost in ({"review": 0}, {"sample": -1}, {"produce": -0.5}, {"senior": 2}, {"review": "x"},
                 "review=0", "sample=x", "senior=2", "produce=-1", 3):
        answer = api.client.post("/simulations", json={**BODY, "cost": cost}, headers=api.writer)
        body = problem(answer, 422)
        assert "cost" in body["detail"], (cost, body)
        assert len(json.dumps(body)) < 4000
    assert jobs(api) == 0


def _ranked_topic(api: Api, size: int = 1500, judged: int = 150) -> dict[str, str]:
    """``size`` ranked documents, the first ``judged`` reviewed, relevant every fourth of the first 90."""
    key = api.writer
    assert api.client.post("/topics", json={"name": "t", "population_size": size}, headers=key).status_code == 201
    ranking = {"documents": [{"doc_id": f"d{i}", "score": float(size - i)} for i in range(size)]}
    assert api.client.put("/topics/t/queues/q", json=ranking, headers=key).status_code == 201
    judgments = [{"doc_id": f"d{i}", "label": "1" if i % 4 == 0 and i < 90 else "0"} for i in range(judged)]
    assert api.client.post("/topics/t/judgments", json={"judgments": judgments}, headers=key).status_code == 201
    return key


def test_the_plan_route_offers_the_production_path_with_a_produce_cost(api: Api) -> None:
    key = _ranked_topic(api)

    def plan(**costs: float) -> dict[str, Any]:
        answer = api.client.get("/topics/t/plan", params={"sample_cost": 3, **costs}, headers=key)
        assert answer.status_code == 200, answer.text
        data: dict[str, Any] = answer.json()
        return data

    unit, cheap, dear = plan(), plan(produce_cost=0.2), plan(produce_cost=5)
    assert (cheap["review_cost"], cheap["sample_cost"], cheap["produce_cost"]) == (1, 3, 0.2)
    assert unit["produce_cost"] is None and "produce_cutoff" not in {p["kind"] for p in unit["paths"]}
    assert cheap["recommended"] == "produce_cutoff" and dear["recommended"] != "produce_cutoff"
    path = next(p for p in cheap["paths"] if p["kind"] == "produce_cutoff")
    judged = path["produced_sample"] + path["sample_size"]
    success = path["review_more"] + 3 * judged + 0.2 * path["produced_unreviewed"]
    failure = path["review_more"] + 3 * judged + (cheap["unreviewed"] - path["review_more"] - judged)
    assert path["expected_cost"] == pytest.approx(path["chance"] * success + (1 - path["chance"]) * failure)
    assert "produce_cutoff" in cheap["path_sentences"]
    assert f"--produce-to {path['produce_to']}" in cheap["path_sentences"]["produce_cutoff"]
    assert [p for p in cheap["paths"] if p["kind"] != "produce_cutoff"] == unit["paths"]
    problem(api.client.get("/topics/t/plan", params={"produce_cost": -1}, headers=key), 422, "produce_cost")
    # the body is the documented one, with and without the production path
    for body in (unit, cheap):
        StopPlanOut.model_validate(body, strict=False)
        assert set(body) == set(StopPlanOut.model_fields)
