"""``POST /simulations`` takes per-role costs as ``reviewdepth simulate --cost`` does (issue 29): a ``cost`` object
or the CLI's string; the job's report is `run_simulation`'s for the same costs; a bad cost is a 422 problem naming
``cost`` and stores no job."""

from __future__ import annotations

import json
from typing import Any

from reviewdepth.services.simulate import build_plan, run_simulation, store_source

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


def test_the_plan_route_takes_the_produce_cost(api: Api) -> None:
    from .test_validation_route import _topic

    key = _topic(api)
    answer = api.client.get("/topics/t/plan", params={"sample_cost": 3, "produce_cost": 0.25}, headers=key)
    assert answer.status_code == 200, answer.text
    plan = answer.json()
    assert (plan["review_cost"], plan["sample_cost"], plan["produce_cost"]) == (1, 3, 0.25)
    unit = api.client.get("/topics/t/plan", params={"sample_cost": 3}, headers=key).json()
    assert {**plan, "produce_cost": 1.0} == unit
    problem(api.client.get("/topics/t/plan", params={"produce_cost": -1}, headers=key), 422, "produce_cost")
