"""Every bad value through both doors on both databases: the CLI answers one ``reviewdepth: error:`` line and
exit 2 (``file:line: field`` for files), the API a 4xx problem+json naming no exception class; the database is
left exactly as it was. The databases must agree: SQLite would store most of these values, PostgreSQL's driver
refuses them (`reviewdepth.store.validation` refuses them first, on both)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select
from typer.testing import CliRunner

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.samples import draw_sample
from reviewdepth.store.models import Base

INT64_OVER = str(2**63)
INT32_OVER = str(2**31)
# identifiers: (description, value); each is refused as a topic, queue, doc id, label and reviewer
BAD_IDENTIFIERS = [
    ("newline", "a\nb"), ("NUL", "a\x00b"), ("right-to-left override", "a\u202eb"), ("zero-width space", "a\u200bb"),
    ("byte-order mark", "\ufeffa"), ("tab", "a\tb"), ("leading space", " a"), ("empty", ""),
    ("lone surrogate", "a\udcffb"),
]
URL_NAMES = [("slash", "a/b"), ("dot-dot path", "../x"), ("dot dot", "..")]
LENGTHS = {"topic": 200, "queue": 200, "doc_id": 300, "label": 100, "reviewer": 200, "key": 200}
# tells of an unhandled exception: a traceback, a class name, the driver
LEAKS = re.compile(r"Traceback|Error\b|Exception|psycopg|sqlalchemy|sqlite3")
TEMP_PATH = re.compile(r"/tmp/|reviewdepth-upload-|\.run\b")  # the API names an upload ``run``, never its file


def counts(engine: Engine) -> str:
    """A digest of every row of every table (in primary-key order): the database "exactly as it was" is the same
    digest, not only the same row counts."""
    digest = hashlib.sha256()
    with engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            keys = list(table.primary_key.columns) or list(table.columns)
            for row in conn.execute(select(table).order_by(*keys)):
                digest.update(repr(tuple(row)).encode())
            digest.update(b"|")
    return digest.hexdigest()


@pytest.fixture
def seeded(engine: Engine, empty_db_url: str, tmp_path: Path) -> Iterator[tuple[Engine, str, Path, str]]:
    create_topic(engine, "t", 100)
    store_ranking(engine, "t", "q", [RankedDocument(f"d{i}", float(-i)) for i in range(1, 6)])
    draw_sample(engine, "t", 2, seed=1)
    secret = create_key(engine, "ana", "admin")[1]
    yield engine, empty_db_url, tmp_path, secret


def cli_cases(folder: Path) -> list[tuple[str, list[str]]]:
    """(case, arguments without --db)."""
    cases: list[tuple[str, list[str]]] = []

    def put(name: str, data: bytes) -> str:
        path = folder / name
        path.write_bytes(data)
        return str(path)

    counter = iter(range(10_000))
    for what, value in [*BAD_IDENTIFIERS, ("too long", None)]:
        def v(field: str, value: str | None = value) -> str:
            return "x" * (LENGTHS[field] + 1) if value is None else value
        cases += [
            (f"judge topic {what}", ["judge", v("topic"), "d1", "1", "--reviewer", "ana"]),
            (f"judge doc_id {what}", ["judge", "t", v("doc_id"), "1", "--reviewer", "ana"]),
            *([] if not v("reviewer") else [  # an empty --reviewer means the login name
                (f"judge reviewer {what}", ["judge", "t", "d1", "1", "--reviewer", v("reviewer")])]),
            (f"import run --queue {what}", ["import", "run", put(f"r{next(counter)}.run", b"t Q0 d1 1 1.0 tag\n"),
                                             "--queue", v("queue")]),
            (f"import qrels --reviewer {what}", ["import", "qrels", put(f"q{next(counter)}.qrels", b"t 0 d1 1\n"),
                                                 "--reviewer", v("reviewer")]),
        ]
        if value is not None and value.strip() and "\udcff" not in value:
            cases.append((f"judge label {what}", ["judge", "t", "d1", value + "1", "--reviewer", "ana"]))
        if value is not None and not value.isspace() and value and "\udcff" not in value and "\n" not in value \
                and "\t" not in value and not value.startswith(" "):
            raw = value.encode()
            cases += [
                (f"run docno {what}", ["import", "run", put(f"r{next(counter)}.run", b"t Q0 " + raw + b" 1 1.0 x\n")]),
                (f"run qid {what}", ["import", "run", put(f"r{next(counter)}.run", raw + b" Q0 d1 1 1.0 x\n")]),
                (f"qrels docno {what}", ["import", "qrels", put(f"q{next(counter)}.qrels", b"t 0 " + raw + b" 1\n")]),
                (f"csv doc {what}", ["import", "csv", put(f"c{next(counter)}.csv", b"record_id,label\n" + raw
                                                          + b",1\n"), "--topic", "t"]),
                (f"rayyan member {what}", ["import", "rayyan", put(f"r{next(counter)}.csv", b'key,notes\nr1,"RAYYAN-'
                                           b'INCLUSION: {""' + raw + b'""=>""Included""}"\n'), "--topic", "t"]),
                (f"rayyan key {what}", ["import", "rayyan", put(f"r{next(counter)}.csv", b"key,notes\n" + raw
                                                                + b",\n"), "--topic", "t"]),
                (f"records id {what}", ["import", "records", put(f"n{next(counter)}.csv", b"record_id,title\n" + raw
                                                                 + b",A\n"), "--topic", "t", "--queue", "recs"]),
                (f"covidence # {what}", ["import", "covidence", "included=" + put(
                    f"v{next(counter)}.csv", b'"Title","Covidence #"\n"A","' + raw + b'"\n'), "--topic", "t"]),
            ]
    for what, value in URL_NAMES:
        cases += [
            (f"judge topic {what}", ["judge", value, "d1", "1", "--reviewer", "ana"]),
            (f"import run --queue {what}", ["import", "run", put(f"r{next(counter)}.run", b"t Q0 d1 1 1.0 tag\n"),
                                             "--queue", value]),
            (f"qrels qid {what}", ["import", "qrels", put(f"q{next(counter)}.qrels",
                                                          value.encode() + b" 0 d1 1\n")]),
        ]
    cases += [
        ("run docno 301 characters", ["import", "run", put("long.run", b"t Q0 " + b"x" * 301 + b" 1 1.0 x\n")]),
        ("qrels docno 301 characters", ["import", "qrels", put("long.qrels", b"t 0 " + b"x" * 301 + b" 1\n")]),
        ("qrels grade above int32", ["import", "qrels", put("grade.qrels", b"t 0 d1 " + INT32_OVER.encode() + b"\n")]),
        ("qrels docno invalid UTF-8", ["import", "qrels", put("utf8.qrels", b"t 0 d\xff1 1\n")]),
        ("records UTF-16", ["import", "records", put("wide.csv", "title,label\nA,1\n".encode("utf-16")),
                            "--topic", "new"]),
        ("records label ASReview does not read", ["import", "records", put("maybe.csv", b"title,label\nA,maybe\n"),
                                                  "--topic", "new"]),
        ("records --ids column that repeats", ["import", "records", put("rep.csv", b"id,title\n1,A\n1,B\n"),
                                               "--topic", "new", "--ids", "id"]),
        ("ris record without ER", ["import", "ris", put("cut.ris", b"TY  - JOUR\nID  - a\nER  - \n\nTY  - JOUR\n"
                                                        b"ID  - b\n"), "--topic", "new"]),
        ("ris --ids tag repeated", ["import", "ris", put("twice.ris", b"TY  - JOUR\nID  - a\nER  - \n\nTY  - JOUR\n"
                                                         b"ID  - a\nER  - \n"), "--topic", "new", "--ids", "tag"]),
        ("run docno invalid UTF-8", ["import", "run", put("utf8.run", b"t Q0 d\xff1 1 1.0 x\n")]),
        ("run score 1e309", ["import", "run", put("inf.run", b"t Q0 d1 1 1e309 x\n")]),
        ("run score -inf", ["import", "run", put("ninf.run", b"t Q0 d1 1 -inf x\n")]),
        ("judge label above int32", ["judge", "t", "d1", INT32_OVER, "--reviewer", "ana"]),
        ("judge label above int64", ["judge", "t", "d1", INT64_OVER + "0", "--reviewer", "ana"]),
        ("judge note NUL", ["judge", "t", "d1", "1", "--reviewer", "ana", "--note", "a\x00b"]),
        ("judgments --as-of ²", ["judgments", "t", "--as-of", "²"]),
        ("judgments --as-of above int64", ["judgments", "t", "--as-of", INT64_OVER]),
        ("csv label above int32", ["import", "csv", put("grade.csv", b"record_id,label\nd1," + INT32_OVER.encode()
                                                         + b"\n"), "--topic", "t"]),
        ("csv score inf", ["import", "csv", put("score.csv", b"record_id,label,rank,score\nd1,1,1,inf\n"),
                           "--topic", "t", "--map", "doc=record_id,label=label,rank=rank,score=score"]),
    ]
    return cases


def segment(value: str) -> str:
    """A URL path segment (percent-encoded bytes; a lone surrogate stands for an invalid UTF-8 byte)."""
    return quote(value.encode("utf-8", "surrogateescape"), safe="")


def api_cases() -> list[tuple[str, str, str, dict[str, Any]]]:
    """(case, method, path, httpx keyword arguments)."""
    cases: list[tuple[str, str, str, dict[str, Any]]] = []
    for what, value in [*BAD_IDENTIFIERS, ("too long", None)]:
        def v(field: str, value: str | None = value) -> str:
            return "x" * (LENGTHS[field] + 1) if value is None else value
        # in a URL, a lone surrogate stands for the byte 0xFF, which the server decodes as U+FFFD (a valid name),
        # and an empty segment is another endpoint
        if value is None or (value and "\udcff" not in value):
            cases += [
                (f"topic path {what}", "GET", f"/topics/{segment(v('topic'))}", {}),
                (f"queue path {what}", "PUT", f"/topics/t/queues/{segment(v('queue'))}",
                 {"json": {"documents": [{"doc_id": "d1"}]}}),
                (f"reviewer query {what}", "GET", "/topics/t/judgments", {"params": {"reviewer": v("reviewer")}}),
                (f"report queue query {what}", "GET", "/topics/t/report", {"params": {"queue": v("queue")}})]
        cases += [
            (f"topic name {what}", "POST", "/topics", {"json": {"name": v("topic")}}),
            (f"ranking doc_id {what}", "PUT", "/topics/t/queues/new",
             {"json": {"documents": [{"doc_id": v("doc_id")}]}}),
            (f"judgment doc_id {what}", "POST", "/topics/t/judgments",
             {"json": {"judgments": [{"doc_id": v("doc_id"), "label": "1"}]}}),
            (f"judgment label {what}", "POST", "/topics/t/judgments",
             {"json": {"judgments": [{"doc_id": "d1", "label": v("label")}]}}),
            (f"idempotency key {what}", "POST", "/topics/t/judgments",
             {"json": {"judgments": [{"doc_id": "d1", "label": "1"}], "idempotency_key": v("key")}}),
            (f"sample queue {what}", "POST", "/topics/t/samples", {"json": {"size": 1, "queue": v("queue")}}),
            (f"judgment queue {what}", "POST", "/topics/t/judgments",
             {"json": {"judgments": [{"doc_id": "d1", "label": "1", "queue": v("queue")}]}}),
            (f"batch queue {what}", "POST", "/topics/t/judgments",
             {"json": {"judgments": [{"doc_id": "d1", "label": "1"}], "queue": v("queue")}}),
        ]
        if value is not None and value.strip() and not any(c in value for c in " \t\n"):
            cases.append((f"run upload docno {what}", "PUT", "/topics/t/queues/up",
                          {"content": b"t Q0 " + value.encode("utf-8", "surrogateescape") + b" 1 1.0 x\n",
                           "headers": {"Content-Type": "text/plain"}}))
    for what, value in URL_NAMES:
        cases += [(f"topic name {what}", "POST", "/topics", {"json": {"name": value}}),
                  (f"queue path {what}", "PUT", f"/topics/t/queues/{segment(value)}",
                   {"json": {"documents": [{"doc_id": "d1"}]}})]
    over = int(INT64_OVER)
    cases += [
        ("offset above int64", "GET", "/topics", {"params": {"offset": INT64_OVER}}),
        ("entries offset above int64", "GET", "/topics/t/queues/q/entries", {"params": {"offset": INT64_OVER}}),
        ("judgments as_of ²", "GET", "/topics/t/judgments", {"params": {"as_of": "²"}}),
        ("judgments as_of above int64", "GET", "/topics/t/judgments", {"params": {"as_of": INT64_OVER}}),
        ("queue as_of above int64", "GET", "/topics/t/queues/q", {"params": {"as_of": INT64_OVER}}),
        ("report as_of above int64", "GET", "/topics/t/report", {"params": {"as_of": INT64_OVER}}),
        ("conflicts as_of above int64", "GET", "/topics/t/conflicts", {"params": {"as_of": INT64_OVER}}),
        ("sample id above int64", "GET", f"/topics/t/samples/{INT64_OVER}", {}),
        ("population_size true", "POST", "/topics", {"json": {"name": "n1", "population_size": True}}),
        ("population_size above int64", "POST", "/topics", {"json": {"name": "n2", "population_size": over}}),
        ("sample size above int64", "POST", "/topics/t/samples", {"json": {"size": over}}),
        ("sample frame above int64", "POST", "/topics/t/samples", {"json": {"size": 1,
                                                                          "frame": f"below-rank:{'9' * 20}"}}),
        ("label above int32", "POST", "/topics/t/judgments",
         {"json": {"judgments": [{"doc_id": "d1", "label": INT32_OVER}]}}),
        ("label above int64", "POST", "/topics/t/judgments",
         {"json": {"judgments": [{"doc_id": "d1", "label": INT64_OVER + "0"}]}}),
        ("sample void reason NUL", "POST", "/topics/t/samples/1/void", {"json": {"reason": "a\x00b"}}),
        ("sample void reason BEL", "POST", "/topics/t/samples/1/void", {"json": {"reason": "why\x07"}}),
        ("note NUL", "POST", "/topics/t/judgments",
         {"json": {"judgments": [{"doc_id": "d1", "label": "1", "note": "a\x00b"}]}}),
        ("ranking score 1e309", "PUT", "/topics/t/queues/big",
         {"content": b'{"documents": [{"doc_id": "d1", "score": 1e309}]}',
          "headers": {"Content-Type": "application/json"}}),
        ("run upload score 1e309", "PUT", "/topics/t/queues/up", {"content": b"t Q0 d1 1 1e309 x\n",
                                                                  "headers": {"Content-Type": "text/plain"}}),
        ("run upload score -inf", "PUT", "/topics/t/queues/up", {"content": b"t Q0 d1 1 -inf x\n",
                                                                 "headers": {"Content-Type": "text/plain"}}),
        ("run upload docno 301", "PUT", "/topics/t/queues/up", {"content": b"t Q0 " + b"x" * 301 + b" 1 1 x\n",
                                                                "headers": {"Content-Type": "text/plain"}}),
        ("run upload invalid UTF-8", "PUT", "/topics/t/queues/up", {"content": b"t Q0 d\xff1 1 1 x\n",
                                                                    "headers": {"Content-Type": "text/plain"}}),
        ("evaluate max_docs above int64", "POST", "/evaluate",
         {"files": {"qrels": ("q", b"t 0 d1 1\n"), "run": ("r", b"t Q0 d1 1 1 x\n")},
          "data": {"max_docs": INT64_OVER}}),
    ]
    return cases


def cli_outcome(url: str) -> Callable[[list[str]], tuple[int, str]]:
    def run(args: list[str]) -> tuple[int, str]:
        result = CliRunner().invoke(create_cli(), [*args, "--db", url])
        return result.exit_code, result.stderr + (repr(result.exception) if result.exit_code not in (0, 2) else "")
    return run


def test_every_bad_value_is_refused_by_both_doors(seeded: tuple[Engine, str, Path, str]) -> None:
    engine, url, folder, secret = seeded
    before = counts(engine)
    failures: list[str] = []
    run_cli = cli_outcome(url)
    cli = cli_cases(folder)
    for case, args in cli:
        code, err = run_cli(args)
        lines = err.strip().splitlines()
        if code != 2 or len(lines) != 1 or not lines[0].startswith("reviewdepth: error: ") or LEAKS.search(err):
            failures.append(f"CLI {case}: exit {code}: {err.strip()[:300]}")
        if counts(engine) != before:
            failures.append(f"CLI {case}: the database changed")
            before = counts(engine)
    api = api_cases()
    app = create_app(ApiSettings(database_url=url))
    with TestClient(app, raise_server_exceptions=False) as client:
        headers = {"Authorization": f"Bearer {secret}"}
        for case, method, path, kwargs in api:
            kwargs = dict(kwargs)
            kwargs["headers"] = {**headers, **kwargs.get("headers", {})}
            if "json" in kwargs:  # lone surrogates as JSON escapes, as a client would send them
                kwargs["content"] = json.dumps(kwargs.pop("json")).encode()
                kwargs["headers"]["Content-Type"] = "application/json"
            if "params" in kwargs:
                path += "?" + "&".join(f"{k}={segment(v)}" for k, v in kwargs.pop("params").items())
            response = client.request(method, path, **kwargs)
            body = response.text
            if not 400 <= response.status_code < 500 or not response.headers.get("content-type", "").startswith(
                    "application/problem+json") or LEAKS.search(body) or TEMP_PATH.search(body):
                failures.append(f"API {case}: {response.status_code} {body[:300]}")
            if counts(engine) != before:
                failures.append(f"API {case}: the database changed")
                before = counts(engine)
    assert not failures, f"{len(failures)} of {len(cli) + len(api)} cases failed:\n" + "\n".join(failures)
    assert len(cli) >= 80 and len(api) >= 100  # the matrix did run (values x fields)
