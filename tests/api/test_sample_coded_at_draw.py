"""A draw says how many of its documents were already coded (issue 39): `sample draw --frame ranks:1-1000` drew 52
of 60 already-coded documents without a word. The CLI prints "N of the M drawn documents are already coded: ..."
and the API's answer carries ``coded_at_draw`` and its note; how the frame is drawn is unchanged."""

from __future__ import annotations

import numpy as np
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from tests.api.conftest import Api

CODED = {f"d{i}" for i in range(0, 40, 2)}  # every other document of the first 40 is coded


def _topic(api: Api) -> dict[str, str]:
    ana = api.writer
    assert api.client.post("/topics", json={"name": "t"}, headers=ana).status_code == 201
    ranking = {"documents": [{"doc_id": f"d{i}", "score": 100.0 - i} for i in range(60)]}
    assert api.client.put("/topics/t/queues/q", json=ranking, headers=ana).status_code == 201
    judgments = [{"doc_id": d, "label": "1" if int(d[1:]) % 4 == 0 else "0"} for d in sorted(CODED)]
    assert api.client.post("/topics/t/judgments", json={"judgments": judgments}, headers=ana).status_code == 201
    return ana


def test_the_draw_counts_its_coded_documents(api: Api) -> None:
    ana = _topic(api)
    drawn = api.client.post("/topics/t/samples", json={"size": 25, "frame": "ranks:1-50", "seed": 11}, headers=ana)
    assert drawn.status_code == 201, drawn.text
    body = drawn.json()
    docs = [d["doc_id"] for d in body["documents"]]
    coded = sum(d in CODED for d in docs)  # the oracle: the drawn ids against the judged ones
    assert 0 < coded < 25 and body["coded_at_draw"] == coded
    assert body["coded_at_draw_note"].startswith(f"{coded} of the 25 drawn documents are already coded: ")
    assert "--frame unreviewed" in body["coded_at_draw_note"]
    # the frame is drawn as before: numpy's default_rng(seed) choice over ranks 1..50
    ranks = np.arange(1, 51)[np.random.default_rng(11).choice(50, size=25, replace=False)]
    assert [d["rank"] for d in body["documents"]] == ranks.tolist()
    # a stored sample read back later carries no draw-time count
    shown = api.client.get(f"/topics/t/samples/{body['id']}", headers=ana).json()
    assert shown["coded_at_draw"] is None and shown["coded_at_draw_note"] is None


def test_a_qc_sample_has_no_count_and_an_unreviewed_one_says_none(api: Api) -> None:
    ana = _topic(api)
    qc = api.client.post("/topics/t/samples", json={"size": 5, "frame": "judged", "seed": 1}, headers=ana).json()
    assert qc["coded_at_draw"] is None  # drawn from coded documents by definition
    rest = api.client.post("/topics/t/samples", json={"size": 5, "frame": "below-rank:40", "seed": 1},
                           headers=ana).json()
    assert rest["coded_at_draw"] == 0 and rest["coded_at_draw_note"] == "none of the 5 drawn documents is coded yet"


def test_the_cli_prints_the_count(api: Api) -> None:
    _topic(api)
    db = api.engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(create_cli(), ["sample", "draw", "t", "--size", "40", "--frame", "ranks:1-40",
                                               "--seed", "5", "--db", db])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("sample ") and "40 of 40 documents" in lines[0]
    # the whole frame drawn: exactly the 20 coded documents are among them
    assert lines[1].startswith("20 of the 40 drawn documents are already coded: their labels count as they stand")
