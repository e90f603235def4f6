"""Every judgment records the queue it was served from; judgments of documents in no queue of the topic are refused
(unless allowed) by ``judge``, ``judge --file`` and ``import csv`` with the database left unchanged; ``import qrels``
is exempt; PRISMA counts judged records outside the queue apart. SQLite and PostgreSQL, services and CLI."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select, text
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.formats.errors import InputError
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.prisma import topic_prisma
from reviewdepth.services.errors import Conflict
from reviewdepth.services.files.imports import import_csv, import_qrels, import_run
from reviewdepth.services.files.judgment_files import record_judgment_file
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.audit import verify_chains
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.judgments import list_judgments, record_judgment, record_judgments
from reviewdepth.store.models import ImportRecord, Judgment


def run_file(tmp_path: Path, name: str, topic: str, docs: list[str]) -> str:
    path = tmp_path / f"{name}.run"
    path.write_text("".join(f"{topic} Q0 {d} {i} {100 - i} {name}\n" for i, d in enumerate(docs, start=1)))
    return str(path)


def queue_ids(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {name: int(i) for i, name in conn.execute(text("SELECT id, name FROM queues"))}


def log_state(engine: Engine) -> tuple[int, int, list[tuple[object, ...]]]:
    with engine.connect() as conn:
        judgments = conn.execute(select(func.count()).select_from(Judgment)).scalar_one()
        imports = conn.execute(select(func.count()).select_from(ImportRecord)).scalar_one()
        heads = [tuple(r) for r in conn.execute(text("SELECT name, chain_length, chain_head FROM topics ORDER BY id"))]
    return judgments, imports, heads


def stored_queue_ids(engine: Engine) -> list[int | None]:
    with engine.connect() as conn:
        return [None if q is None else int(q) for q in
                conn.execute(select(Judgment.queue_id).order_by(Judgment.id)).scalars()]


def test_judgments_record_the_named_or_newest_queue(engine: Engine, tmp_path: Path) -> None:
    import_run(engine, run_file(tmp_path, "first", "T", [f"d{i}" for i in range(1, 6)]))
    record_judgment(engine, "T", "d1", "1", reviewer="ann")
    import_run(engine, run_file(tmp_path, "second", "T", [f"d{i}" for i in range(3, 9)]))
    record_judgment(engine, "T", "d2", "0", reviewer="ann")  # in the first queue only; served from the newest
    record_judgment(engine, "T", "d3", "0", reviewer="ann", queue="first")
    record_judgments(engine, "T", [("d4", "1"), ("d8", "0")], reviewer="bob", queue="second")
    record_batch(engine, "T", [BatchItem("d5", "1"), BatchItem("d6", "0", queue="first")], reviewer="cy",
                 queue="second")
    ids = queue_ids(engine)
    assert stored_queue_ids(engine) == [ids["first"], ids["second"], ids["first"], ids["second"], ids["second"],
                                        ids["second"], ids["first"]]
    listed = list_judgments(engine, "T")
    assert [j.queue for j in listed] == ["first", "second", "first", "second", "second", "second", "first"]
    assert listed[0].as_dict()["queue"] == "first"
    assert verify_chains(engine, "T")[0].intact  # the queue is not part of the chain hash

    before = log_state(engine)
    with pytest.raises(Conflict, match="topic 'T' has no queue 'third' \\(its queues: first, second\\)"):
        record_judgment(engine, "T", "d1", "1", reviewer="ann", queue="third")
    with pytest.raises(Conflict, match=r"judgments\[1\]\.queue: topic 'T' has no queue 'x'"):
        record_batch(engine, "T", [BatchItem("d1", "1"), BatchItem("d2", "1", queue="x")], reviewer="ann")
    assert log_state(engine) == before


def test_documents_in_no_queue_are_refused_unless_allowed(engine: Engine, tmp_path: Path) -> None:
    create_topic(engine, "empty")
    with pytest.raises(Conflict, match="topic 'empty' has no queue; import one first or pass --allow-unqueued"):
        record_judgment(engine, "empty", "a", "1", reviewer="ann")
    with pytest.raises(Conflict, match="topic 'empty' has no queue; import one first or send \"allow_unqueued\""):
        record_batch(engine, "empty", [BatchItem("a", "1")], reviewer="ann")
    record_judgment(engine, "empty", "a", "1", reviewer="ann", allow_unqueued=True)
    assert stored_queue_ids(engine) == [None]

    import_run(engine, run_file(tmp_path, "q", "T", ["d1", "d2", "d3"]))
    before = log_state(engine)
    with pytest.raises(Conflict, match="document 'zz' is in no queue of topic 'T'; pass --allow-unqueued"):
        record_judgment(engine, "T", "zz", "1", reviewer="ann")
    with pytest.raises(Conflict, match=r"judgment 3: document 'x1' is in no queue of topic 'T' \(1 more"):
        record_judgments(engine, "T", [("d1", "1"), ("d2", "0"), ("x1", "1"), ("x2", "0")], reviewer="ann")
    with pytest.raises(Conflict, match=r"judgments\[1\]\.doc_id: document 'x1' is in no queue"):
        record_batch(engine, "T", [BatchItem("d1", "1"), BatchItem("x1", "1")], reviewer="ann")
    assert log_state(engine) == before
    record_batch(engine, "T", [BatchItem("d1", "1"), BatchItem("x1", "1")], reviewer="ann", allow_unqueued=True)
    assert stored_queue_ids(engine)[-2:] == [queue_ids(engine)["q"]] * 2


def test_many_documents_are_checked_in_chunks(engine: Engine, tmp_path: Path) -> None:
    docs = [f"d{i}" for i in range(12_000)]
    create_topic(engine, "T")
    store_ranking(engine, "T", "big", [RankedDocument(d) for d in docs])
    wanted = [*docs[::2], "outside", *docs[1::2][:3000]]
    with pytest.raises(Conflict, match=f"judgment {len(docs[::2]) + 1}: document 'outside'"):
        record_judgments(engine, "T", [(d, "0") for d in wanted], reviewer="ann")
    ids = record_judgments(engine, "T", [(d, "0") for d in wanted if d != "outside"], reviewer="ann")
    assert len(ids) == len(wanted) - 1


def test_import_csv_roles_queue_and_refusals(engine: Engine, tmp_path: Path) -> None:
    import_run(engine, run_file(tmp_path, "q", "T", ["a", "b", "c", "d"]))
    export = tmp_path / "T.csv"
    export.write_text("doc,decision,who,kind\na,1,ann,\nb,0,bob,qc\nc,1,ann,adjudication\n")
    import_csv(engine, str(export), mapping="doc=doc,label=decision,reviewer=who,role=kind", role="sample")
    with engine.connect() as conn:
        rows = [tuple(r) for r in conn.execute(select(Judgment.doc_id, Judgment.role, Judgment.reviewer,
                                                      Judgment.queue_id).order_by(Judgment.id))]
    q = queue_ids(engine)["q"]
    assert rows == [("a", "sample", "ann", q), ("b", "qc", "bob", q), ("c", "adjudication", "ann", q)]

    plain = tmp_path / "plain.csv"
    plain.write_text("record_id,asreview_label\nd,1\n")
    import_csv(engine, str(plain), topic="T", role="qc")
    assert list_judgments(engine, "T")[-1].role == "qc"

    before = log_state(engine)
    bad_role = tmp_path / "badrole.csv"
    bad_role.write_text("doc,label,kind\na,1,review\nb,1,void\n")
    with pytest.raises(InputError, match=r"badrole\.csv:3: field kind: role must be one of review, sample, qc"):
        import_csv(engine, str(bad_role), mapping="doc=doc,label=label,role=kind", topic="T")
    with pytest.raises(InputError, match="--role: field role: must be one of"):
        import_csv(engine, str(plain), topic="T", role="void", again=True)
    unqueued = tmp_path / "unqueued.csv"
    unqueued.write_text("doc,label\na,1\nb,0\nnowhere,1\n")
    with pytest.raises(InputError, match=r"unqueued\.csv:4: field doc: document 'nowhere' is in no queue of topic "
                                         r"'T'; pass --allow-unqueued"):
        import_csv(engine, str(unqueued), mapping="doc=doc,label=label", topic="T")
    with pytest.raises(InputError, match=r"unqueued\.csv: field queue: topic 'T' has no queue 'nope'"):
        import_csv(engine, str(unqueued), mapping="doc=doc,label=label", topic="T", queue_name="nope",
                   allow_unqueued=True)
    assert log_state(engine) == before
    import_csv(engine, str(unqueued), mapping="doc=doc,label=label", topic="T", allow_unqueued=True)
    assert log_state(engine)[0] == before[0] + 3

    # a file with a rank column stores its own queue: its judgments are served from it
    ranked = tmp_path / "ranked.csv"
    ranked.write_text("doc,label,rank\nn2,0,2\nn1,1,1\n")
    import_csv(engine, str(ranked), mapping="doc=doc,label=label,rank=rank", topic="U")
    assert stored_queue_ids(engine)[-2:] == [queue_ids(engine)["ranked"]] * 2

    # qrels are pooled judgments, often of documents in no run: exempt
    qrels = tmp_path / "pool.qrels"
    qrels.write_text("T 0 a 1\nT 0 elsewhere 0\nV 0 x 1\n")
    import_qrels(engine, str(qrels))
    assert [j.doc_id for j in list_judgments(engine, "T")][-2:] == ["a", "elsewhere"]
    assert list_judgments(engine, "V")[0].queue is None


def test_judgment_file(engine: Engine, tmp_path: Path) -> None:
    docs = [f"d{i:03d}" for i in range(1, 401)]
    import_run(engine, run_file(tmp_path, "q", "T", docs))
    store_ranking(engine, "T", "rerank", [RankedDocument(d) for d in reversed(docs)])
    lines = ["doc\tlabel\treviewer\trole\tnote\tqueue"]
    lines += [f"{d}\t{i % 2}\t{'bob' if i % 3 == 0 else ''}\t{'qc' if i % 5 == 0 else ''}\t"
              f"{'n' + d if i % 7 == 0 else ''}\t{'q' if i % 11 == 0 else ''}" for i, d in enumerate(docs)]
    sheet = tmp_path / "sample.tsv"
    sheet.write_text("\n".join(lines) + "\n")
    ids = record_judgment_file(engine, "T", str(sheet), reviewer="ann", role="sample")
    assert len(ids) == 400
    got = list_judgments(engine, "T")
    assert [j.doc_id for j in got] == docs
    assert [j.reviewer for j in got] == ["bob" if i % 3 == 0 else "ann" for i in range(400)]
    assert [j.role for j in got] == ["qc" if i % 5 == 0 else "sample" for i in range(400)]
    assert [j.note for j in got] == ["n" + d if i % 7 == 0 else None for i, d in enumerate(docs)]
    assert [j.queue for j in got] == ["q" if i % 11 == 0 else "rerank" for i in range(400)]
    assert [j.relevant for j in got] == [bool(i % 2) for i in range(400)]

    before = log_state(engine)
    cases = {
        "doc,label\nd001,1\nd002,perhaps\n": r":3: field label: label 'perhaps'",
        "doc,label\nd001,1\nd002,\n": r":3: field label: empty label",
        "doc,label,role\nd001,1,void\n": r":2: field role: must be one of review, sample, qc, adjudication",
        "doc,label\nd001,1\nelsewhere,1\nd003,0\n": r":3: field doc: document 'elsewhere' is in no queue of topic",
        "doc,label,queue\nd001,1,\nd002,1,nope\n": r":3: field queue: topic 'T' has no queue 'nope'",
        "doc,verdict\nd001,1\n": r":1: field verdict: unknown column",
        "doc,reviewer\nd001,ann\n": r":1: field label: no label column",
        "doc,label\n,1\n": r":2: field doc: empty document id",
        "doc,label\nd001,1,extra\n": r":2: expected 2 fields, found 3",
        "doc,label\n": r"no judgments",
    }
    for number, (content, message) in enumerate(cases.items()):
        bad = tmp_path / f"bad{number}.csv"
        bad.write_text(content)
        with pytest.raises(InputError, match=message) as caught:
            record_judgment_file(engine, "T", str(bad), reviewer="ann")
        assert caught.value.path in (str(bad), "--queue")
    assert log_state(engine) == before
    other = tmp_path / "other.csv"
    other.write_text("doc,label\nelsewhere,1\n")
    record_judgment_file(engine, "T", str(other), reviewer="ann", allow_unqueued=True, queue="q")
    assert list_judgments(engine, "T")[-1].queue == "q"


def test_judge_and_import_commands(engine: Engine, tmp_path: Path) -> None:
    db = engine.url.render_as_string(hide_password=False)

    def cli(*args: str) -> tuple[int, str, str]:
        result = CliRunner().invoke(create_cli(), [*args, "--db", db])
        return result.exit_code, result.stdout, result.stderr

    create_topic(engine, "T")
    code, _, err = cli("judge", "T", "d1", "1")
    assert code == 2 and "topic 'T' has no queue; import one first or pass --allow-unqueued" in err
    code, _, _ = cli("import", "run", run_file(tmp_path, "q", "T", [f"d{i}" for i in range(1, 401)]))
    assert code == 0
    code, out, _ = cli("judge", "T", "d1", "1", "--reviewer", "ann", "--queue", "q")
    assert code == 0 and "judgment 1" in out
    code, _, err = cli("judge", "T", "zz", "1", "--reviewer", "ann")
    assert code == 2 and "document 'zz' is in no queue of topic 'T'; pass --allow-unqueued" in err
    assert cli("judge", "T", "zz", "1", "--reviewer", "ann", "--allow-unqueued")[0] == 0
    code, _, err = cli("judge", "T", "d2")
    assert code == 2 and "judge needs TOPIC DOC LABEL, or TOPIC --file FILE" in err

    sheet = tmp_path / "sample.csv"
    sheet.write_text("doc,label,reviewer\n" + "".join(f"d{i},{i % 2},\n" for i in range(2, 402)))
    code, _, err = cli("judge", "T", "--file", str(sheet), "--role", "sample", "--reviewer", "cy")
    assert code == 2 and f"{sheet}:401: field doc: document 'd401' is in no queue of topic 'T'" in err
    sheet.write_text("doc,label,reviewer\n" + "".join(f"d{i},{i % 2},\n" for i in range(1, 401)))
    code, out, _ = cli("judge", "T", "--file", str(sheet), "--role", "sample", "--reviewer", "cy")
    assert code == 0 and "recorded 400 judgments of T (ids 3..402)" in out
    code, _, err = cli("judge", "T", "d1", "1", "--file", str(sheet))
    assert code == 2 and "takes no DOC" in err
    code, out, _ = cli("judgments", "T", "--format", "json")
    log = json.loads(out)
    assert len(log) == 402 and {j["role"] for j in log[2:]} == {"sample"} and log[1]["queue"] == "q"
    code, out, _ = cli("judgments", "T", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert out.splitlines()[0].endswith(",recorded_at,queue,decision,reason,stage") and rows[1]["queue"] == "q"

    export = tmp_path / "exp.csv"
    export.write_text("doc,label,kind\nd1,1,adjudication\nd2,0,\n")
    code, _, err = cli("import", "csv", str(export), "--topic", "T", "--map", "doc=doc,label=label,role=kind",
                       "--role", "qc", "--queue", "q")
    assert code == 0, err
    assert [(j["doc_id"], j["role"], j["queue"]) for j in json.loads(cli("judgments", "T", "--format", "json")[1])
            [-2:]] == [("d1", "adjudication", "q"), ("d2", "qc", "q")]
    unqueued = tmp_path / "u.csv"
    unqueued.write_text("doc,label\nd1,1\nnowhere,0\n")
    code, _, err = cli("import", "csv", str(unqueued), "--topic", "T", "--map", "doc=doc,label=label")
    assert code == 2 and f"{unqueued}:3: field doc: document 'nowhere' is in no queue of topic 'T'" in err
    assert cli("import", "csv", str(unqueued), "--topic", "T", "--map", "doc=doc,label=label",
               "--allow-unqueued")[0] == 0


def test_prisma_counts_judgments_outside_the_queue_apart(engine: Engine, tmp_path: Path) -> None:
    """The 3,875-screened-of-3,874-identified defect in small: a queue of 10, all judged, one more judgment of a
    document in no queue."""
    docs = [f"d{i}" for i in range(10)]
    import_run(engine, run_file(tmp_path, "q", "T", docs))
    record_judgments(engine, "T", [(d, str(int(i < 3))) for i, d in enumerate(docs)], reviewer="ann")
    record_judgment(engine, "T", "extra", "1", reviewer="ann", allow_unqueued=True)
    counts = topic_prisma(engine, "T", policy="latest")
    assert counts.identified == 10 and counts.identified_source == "queue size"
    assert counts.screened == 10 <= counts.identified
    assert (counts.included, counts.excluded_by_reviewers, counts.not_screened_review_stopped) == (3, 7, 0)
    assert (counts.judged_outside_queue, counts.included_outside_queue) == (1, 1)

    # the population stated and a second queue: documents of any queue are screened, the rest counted apart
    with engine.begin() as conn:
        conn.execute(text("UPDATE topics SET population_size = 20 WHERE name = 'T'"))
    store_ranking(engine, "T", "more", [RankedDocument(d) for d in ["m1", "m2", "d0"]])
    record_judgments(engine, "T", [("m1", "1"), ("m2", "0")], reviewer="bob")
    record_judgment(engine, "T", "far", "0", reviewer="bob", allow_unqueued=True)
    record_judgment(engine, "T", "extra", "0", reviewer="cy", allow_unqueued=True)  # latest label of extra: 0
    counts = topic_prisma(engine, "T", queue="q", policy="latest")
    assert counts.identified == 20 and counts.identified_source == "topic population"
    assert (counts.screened, counts.included, counts.excluded_by_reviewers) == (12, 4, 8)
    assert (counts.judged_outside_queue, counts.included_outside_queue) == (2, 0)
    any_relevant = topic_prisma(engine, "T", queue="q", policy="any_relevant")
    assert (any_relevant.judged_outside_queue, any_relevant.included_outside_queue) == (2, 1)
    # as of the first unqueued judgment, only it was outside
    first_outside = list_judgments(engine, "T")[10].id
    earlier = topic_prisma(engine, "T", queue="q", policy="latest", as_of=str(first_outside))
    assert (earlier.screened, earlier.judged_outside_queue) == (10, 1)


def test_a_ranked_csv_never_replaces_a_stored_queue(engine: Engine, tmp_path: Path) -> None:
    from reviewdepth.services.errors import Conflict

    ranked = tmp_path / "r.csv"
    ranked.write_text("doc,label,rank\na,1,1\nb,0,2\n")
    import_csv(engine, str(ranked), mapping="doc=doc,label=label,rank=rank", topic="T")
    before = log_state(engine)
    with pytest.raises(Conflict, match="queue 'r' already exists for topic 'T'; name the file's queue with --queue"):
        import_csv(engine, str(ranked), mapping="doc=doc,label=label,rank=rank", topic="T", again=True)
    assert log_state(engine) == before
    import_csv(engine, str(ranked), mapping="doc=doc,label=label,rank=rank", topic="T", again=True, queue_name="r2")
    assert sorted(queue_ids(engine)) == ["r", "r2"]
