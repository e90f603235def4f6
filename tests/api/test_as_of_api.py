"""An ``as_of`` naming a judgment never recorded is a 404 problem on every route that takes one (issue 26 item 3;
a 422 until the OpenAPI document had to say what a valid request is: the id is well formed, the judgment does not
exist), as the CLI's exit code 2: the services refuse it for both doors."""

from __future__ import annotations

from pathlib import Path

from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgment
from tests.api.conftest import Api


def test_as_of_a_judgment_never_recorded_is_a_404(api: Api, tmp_path: Path) -> None:
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 d{i} {i} {7 - i} s\n" for i in range(1, 7)))
    import_run(api.engine, str(run))
    last = record_judgment(api.engine, "T", "d1", "1", reviewer="ann").id
    reader = api.new_key("ann", "read")
    for path in ("/topics/T/report", "/topics/T/plots/gain.svg", "/topics/T/judgments", "/topics/T/conflicts",
                 "/topics/T/queues/s", "/topics/T/queues/s/entries", "/topics/T/monitor", "/topics/T/prisma"):
        response = api.client.get(path, params={"as_of": 99999999}, headers=reader)
        assert response.status_code == 404, (path, response.text)  # a judgment the request names: no such one
        assert response.headers["content-type"].startswith("application/problem+json")
        assert f"no judgment has this id (the last one recorded is {last})" in response.json()["detail"], path
        assert api.client.get(path, params={"as_of": last}, headers=reader).status_code == 200, path
