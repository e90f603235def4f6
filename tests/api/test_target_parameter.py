"""The API's ``target``: a decimal read into a `Target` before the route runs; a value outside its range, not a
decimal (the CLI's 19/20 is not one) or recall 1 where a sample must certify it is a 422 problem body naming the
parameter; the text as given reaches the answer; the database is unchanged."""

from __future__ import annotations

import pytest

from .conftest import Api


def setup(api: Api) -> dict[str, str]:
    ana = api.new_key("ana", "write")
    assert api.client.post("/topics", json={"name": "T"}, headers=ana).status_code == 201
    run = "".join(f"T Q0 d{i} {i + 1} {40 - i} sys\n" for i in range(40))
    assert api.client.put("/topics/T/queues/main", content=run.encode(),
                          headers={**ana, "Content-Type": "text/plain"}).status_code == 201
    return ana


@pytest.mark.parametrize("path, value", [
    ("/topics/T/monitor", "1.5"), ("/topics/T/monitor", "19/20"), ("/topics/T/monitor", "0"),
    ("/topics/T/report", "x"), ("/topics", "2"), ("/topics/T/plan", "1"), ("/topics/T/samples/plan", "1.0"),
    ("/topics/T/validation", "1"), ("/topics/T/methods", "0.9.5"),
])
def test_a_bad_target_is_a_422_problem_naming_it(api: Api, path: str, value: str) -> None:
    ana = setup(api)
    answer = api.client.get(path, params={"target": value}, headers=ana)
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert "target" in answer.text and "Traceback" not in answer.text


def test_a_target_reaches_the_report_as_given(api: Api) -> None:
    ana = setup(api)
    answer = api.client.get("/topics/T/report", params={"target": [".90", "1"]}, headers=ana)
    assert answer.status_code == 200, answer.text
    assert answer.json()["settings"]["targets"] == [".90", "1"]
    assert api.client.get("/topics/T/monitor", params={"target": "1"}, headers=ana).status_code == 200
    body = api.client.post("/simulations", json={"target": "1"}, headers=ana)
    assert body.status_code == 422 and "target" in body.text, body.text
