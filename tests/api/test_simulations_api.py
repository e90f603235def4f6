"""``POST /simulations`` and ``GET /simulations/{id}`` on SQLite and PostgreSQL: 202 with the job and its Location,
the job runs in the background to ``done`` and its result is the report `run_simulation` gives for the same inputs;
bad bodies, unknown or incomplete topics are 4xx problems and leave no job row; a job that raises is ``failed``
with its one-line reason; keys: write to create, read to look."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from sqlalchemy import func, select, update

from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.simulation.simulate import build_plan, run_simulation, store_source
from reviewdepth.services.simulation.simulation_jobs import SimulationRequest, create_job, interrupt_jobs, run_job
from reviewdepth.store.models import SimulationJob

from .conftest import Api
from .test_auth_and_errors import problem

TOPICS = {"A": (300, set(range(0, 60, 3)) | {250}), "B": (200, set(range(0, 200, 9)))}


def make_topics(api: Api, *, incomplete: str | None = None) -> None:
    for name, (size, ranks) in TOPICS.items():
        docs = [f"{name}{i:03d}" for i in range(size)]
        create_topic(api.engine, name)
        store_ranking(api.engine, name, "q", [RankedDocument(d, float(-i)) for i, d in enumerate(docs)])
        judged = docs if name != incomplete else docs[:-3]
        record_batch(api.engine, name, [BatchItem(d, str(int(i in ranks))) for i, d in enumerate(judged)],
                     reviewer="ana", source="test")


def jobs(api: Api) -> int:
    with api.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(SimulationJob)).scalar_one())


def finished(api: Api, location: str, headers: dict[str, str], seconds: float = 60.0) -> dict[str, Any]:
    """The job at ``location`` once it is no longer queued or running (the server's job runner runs it in a thread
    of its own), polled as a client would."""
    deadline = time.monotonic() + seconds
    while True:
        polled = api.client.get(location, headers=headers)
        assert polled.status_code == 200, polled.text
        job: dict[str, Any] = polled.json()
        if job["status"] not in ("queued", "running") or time.monotonic() > deadline:
            return job
        time.sleep(0.02)


BODY: dict[str, Any] = {"topics": ["A", "B"], "design": {"kind": "rest", "sample_size": 20},
                        "rules": ["elusion", "knee"], "target": "0.9", "confidence": 0.9, "looks": 25,
                        "replicates": 3, "seed": 11}


def test_post_runs_in_the_background_and_the_result_is_the_service_report(api: Api) -> None:
    make_topics(api)
    writer = api.writer
    posted = api.client.post("/simulations", json=BODY, headers=writer)
    assert posted.status_code == 202, posted.text
    job = posted.json()
    assert posted.headers["location"] == f"/simulations/{job['id']}"
    assert job["status"] == "queued" and job["result"] is None and job["created_by"] == "ana"
    done = finished(api, posted.headers["location"], writer)
    assert done["status"] == "done", done
    assert done["error"] is None and done["started_at"] and done["finished_at"]
    assert done["progress"]["done"] == done["progress"]["total"] == 2  # two topics, one chunk each

    plan = build_plan(design="rest", sample_size=20, rules=["elusion", "knee"], target="0.9", confidence=0.9,
                      look_every=25, replicates=3, seed=11)
    expected = run_simulation(store_source(api.engine, ["A", "B"]), plan).to_dict()
    assert done["result"] == expected
    assert [r["rule"] for r in done["result"]["rules"]] == ["elusion", "knee"]
    assert done["request"] == {"topics": ["A", "B"], "design": "rest", "sample_size": 20, "every": 0,
                               "rules": ["elusion", "knee"], "target": "0.9", "confidence": 0.9, "looks": 25,
                               "replicates": 3, "seed": 11, "review_cost": 1.0, "sample_cost": 1.0,
                               "produce_cost": 1.0}


def test_safe_is_a_heuristic_rule_of_the_api(api: Api) -> None:
    make_topics(api)
    body = {**BODY, "design": {"kind": "none"}, "rules": ["safe", "consecutive-irrelevant-50"], "looks": 10}
    writer = api.writer
    posted = api.client.post("/simulations", json=body, headers=writer)
    assert posted.status_code == 202, posted.text
    done = finished(api, posted.headers["location"], writer)
    assert done["status"] == "done", done
    plan = build_plan(design="none", rules=["safe", "consecutive-irrelevant-50"], target="0.9", confidence=0.9,
                      look_every=10, replicates=3, seed=11)
    assert done["result"] == run_simulation(store_source(api.engine, ["A", "B"]), plan).to_dict()
    [safe] = [r for r in done["result"]["rules"] if r["rule"] == "safe"]
    assert safe["kind"] == "heuristic" and "SAFE" in safe["description"] and safe["runs"] == 6


BAD: list[tuple[dict[str, Any], int, str]] = [
    ({"design": {"kind": "rest"}}, 422, "sample"),                       # rest needs a sample size
    ({"rules": ["monitor"]}, 422, "monitor"),                            # not a rest-design rule
    ({"rules": ["nope"]}, 422, "rules"),
    ({"rules": ["safe"]}, 422, "safe"),                                  # SAFE is replayed under none only
    ({"target": "1.5"}, 422, "target"),
    ({"confidence": 1}, 422, "confidence"),
    ({"replicates": 0}, 422, "replicates"),
    ({"looks": "every:5"}, 422, "looks"),
    ({"surprise": 1}, 422, "surprise"),
    ({"topics": ["nope"]}, 404, "nope"),
    ({"topics": ["B"]}, 422, "B"),                                       # not fully judged
]


def test_bad_requests_are_problems_and_store_no_job(api: Api) -> None:
    make_topics(api, incomplete="B")
    for change, status, words in BAD:
        answer = api.client.post("/simulations", json={**BODY, "topics": ["A"], **change}, headers=api.writer)
        body = problem(answer, status)
        assert words in json.dumps(body), (change, body)
    assert jobs(api) == 0


def test_keys_unknown_jobs_and_a_failing_job(api: Api) -> None:
    make_topics(api)
    assert api.client.post("/simulations", json=BODY).status_code == 401
    assert api.client.post("/simulations", json=BODY, headers=api.new_key("rita", "read")).status_code == 403
    problem(api.client.get("/simulations/999", headers=api.writer), 404)
    problem(api.client.get("/simulations/0", headers=api.writer), 422)
    assert jobs(api) == 0

    # a job whose topic lost its judgments' completeness before it ran: failed, with the reason on one line
    job = create_job(api.engine, SimulationRequest(topics=("A",), replicates=1, looks=50), reviewer="ana")
    store_ranking(api.engine, "A", "newer", [RankedDocument("A000"), RankedDocument("unjudged")])
    failed = run_job(api.engine, job.id)
    assert failed.status == "failed" and failed.finished_at is not None
    assert failed.error is not None and "'A'" in failed.error and "\n" not in failed.error
    shown = api.client.get(f"/simulations/{job.id}", headers=api.new_key("boss", "admin")).json()
    assert shown["status"] == "failed" and shown["error"] == failed.error and shown["result"] is None
    # a job already taken is left alone
    with api.engine.begin() as conn:
        conn.execute(update(SimulationJob).values(status="cancelled"))
    assert run_job(api.engine, job.id).status == "cancelled"


def test_an_interrupted_job_runs_again_from_the_start(api: Api) -> None:
    make_topics(api)
    key, secret = create_key(api.engine, "ana", "write")
    owner = {"Authorization": f"Bearer {secret}"}
    job = create_job(api.engine, SimulationRequest(topics=("A",), replicates=2, looks=50), reviewer="ana",
                     key_id=key.id)
    assert interrupt_jobs(api.engine, [job.id]) == 1  # as a server stopping with the job queued leaves it
    location = f"/simulations/{job.id}"
    shown = api.client.get(location, headers=owner).json()
    assert shown["status"] == "interrupted" and "interrupted" in shown["error"] and shown["finished_at"]
    assert api.client.post(f"{location}/rerun", headers=api.new_key("rita", "read")).status_code == 403
    again = api.client.post(f"{location}/rerun", headers=owner)
    assert again.status_code == 202, again.text
    assert again.headers["location"] == location
    assert again.json()["status"] == "queued" and again.json()["error"] is None
    assert again.json()["finished_at"] is None
    done = finished(api, location, owner)
    assert done["status"] == "done" and done["error"] is None and done["result"] is not None
    problem(api.client.post(f"{location}/rerun", headers=owner), 409, "done", "only an interrupted job")
    problem(api.client.post("/simulations/999/rerun", headers=owner), 404)
    # a job taken by a runner that is stopping is interrupted, not run
    stopping = threading.Event()
    stopping.set()
    later = create_job(api.engine, SimulationRequest(topics=("A",), replicates=2, looks=50), reviewer="ana")
    assert run_job(api.engine, later.id, stop=stopping).status == "interrupted"


def test_a_job_is_seen_only_by_the_key_that_made_it_and_by_admin_keys(api: Api) -> None:
    make_topics(api)
    owner = api.writer
    posted = api.client.post("/simulations", json={**BODY, "replicates": 1}, headers=owner)
    assert posted.status_code == 202, posted.text
    location = posted.headers["location"]
    job_id = posted.json()["id"]
    assert finished(api, location, owner)["status"] == "done"
    unknown = problem(api.client.get("/simulations/999", headers=owner), 404)
    others = {"the same reviewer's other key": api.new_key("ana", "write"), "a read key": api.new_key("rita", "read"),
              "another writer": api.new_key("bo", "write"), "an adjudicator": api.new_key("judge", "adjudicate")}
    for who, key in others.items():
        hidden = problem(api.client.get(location, headers=key), 404)
        # the answer an id that does not exist gets: ids cannot be probed
        assert hidden["detail"] == str(unknown["detail"]).replace("999", str(job_id)), (who, hidden)
        if key is not others["a read key"]:
            assert api.client.post(f"{location}/rerun", headers=key).status_code == 404, who
    admin = api.new_key("boss", "admin")
    seen = api.client.get(location, headers=admin)
    assert seen.status_code == 200 and seen.json()["created_by"] == "ana"
    problem(api.client.post(f"{location}/rerun", headers=admin), 409, "done")  # admin may act on it: it is done
    assert api.client.get(location, headers=owner).json()["status"] == "done"


def test_the_body_vocabularies_are_the_engines() -> None:
    from typing import get_args

    from reviewdepth.api.routers.simulations import DesignKind, RuleName
    from reviewdepth.estimation.replay import DESIGNS, RULES

    assert get_args(DesignKind) == DESIGNS and get_args(RuleName) == tuple(RULES)
