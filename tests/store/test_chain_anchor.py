"""Anchoring the judgment log outside the database: ``audit head`` prints a head that ``audit verify --head``
later proves the log still extends; the four ways of rewriting the log with database access that a plain
``audit verify`` cannot see (tail deleted with the head copied back, log re-sealed, topic emptied, downgrade then
upgrade) are caught by the anchor; a broken chain refuses writes until an acknowledgement, which is itself
chained; a rewritten topic head is blamed on the head, not on the next judgment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, delete, select, text, update
from typer.testing import CliRunner

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.audit import verify_chains
from reviewdepth.services.review.judgments import record_judgment
from reviewdepth.store import migrate
from reviewdepth.store.chain import ChainBroken, chain_head_at, genesis, link_hash
from reviewdepth.store.models import ChainAcknowledgement, Judgment, Topic

DOCS = [f"d{i}" for i in range(1, 11)]


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    crash = "" if result.exit_code in (0, 1, 2) and not isinstance(result.exception, Exception) else repr(
        result.exception)
    return result.exit_code, result.stdout, result.stderr + crash


def url_of(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def judged(engine: Engine, labels: list[tuple[str, str]], reviewer: str = "ana") -> None:
    create_topic(engine, "T", 100)
    store_ranking(engine, "T", "q", [RankedDocument(d) for d in DOCS])
    for doc, label in labels:
        record_judgment(engine, "T", doc, label, reviewer=reviewer)


def rows_of(engine: Engine) -> list[tuple[int, int, str]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(  # type: ignore[misc]
            select(Judgment.id, Judgment.seq, Judgment.chain_hash).join(Topic, Topic.id == Judgment.topic_id)
            .where(Topic.name == "T").order_by(Judgment.seq))]


def anchor(engine: Engine, folder: Path) -> Path:
    code, out, err = cli("audit", "head", "T", "--db", url_of(engine))
    assert code == 0, err
    path = folder / "head.txt"
    path.write_text(out)
    return path


def verify_head(engine: Engine, head: str) -> tuple[int, str, str]:
    return cli("audit", "verify", "T", "--head", head, "--db", url_of(engine))


def reseal(engine: Engine) -> None:
    """What someone with write access does to hide an edit: recompute every hash from genesis with the
    documented formula and store the new head."""
    with engine.begin() as conn:
        topic_id = conn.execute(select(Topic.id).where(Topic.name == "T")).scalar_one()
        head = genesis("T")
        rows = conn.execute(select(Judgment).where(Judgment.topic_id == topic_id).order_by(Judgment.seq)).all()
        updates = []
        for seq, j in enumerate(rows, start=1):
            head = link_hash(head, seq, j.doc_id, j.label, j.relevant, j.grade, j.reviewer, j.role, j.source, j.note,
                             j.recorded_at, j.import_id)
            updates.append((j.id, seq, head))
        for jid, seq, digest in updates:
            conn.execute(update(Judgment).where(Judgment.id == jid).values(seq=seq, chain_hash=digest))
        conn.execute(update(Topic).where(Topic.id == topic_id).values(chain_length=len(updates), chain_head=head))


def test_head_is_an_anchor_the_growing_log_extends(engine: Engine, tmp_path: Path) -> None:
    judged(engine, [(d, "1") for d in DOCS[:4]])
    path = anchor(engine, tmp_path)
    line = path.read_text().strip()
    rows = rows_of(engine)
    # the anchor is the last judgment's seq and stored hash, which the documented formula reproduces
    with engine.connect() as conn:
        last = conn.execute(select(Judgment).where(Judgment.id == rows[-1][0])).one()
    previous = rows[-2][2]
    assert f"seq=4 hash={rows[-1][2]}" in line and line.startswith("reviewdepth-chain-head v1 topic=T ")
    assert rows[-1][2] == link_hash(previous, 4, last.doc_id, last.label, last.relevant, last.grade, last.reviewer,
                                    last.role, last.source, last.note, last.recorded_at, last.import_id)
    for doc in DOCS[4:7]:
        record_judgment(engine, "T", doc, "0", reviewer="bo")
    for head in (str(path), rows[-1][2]):
        code, out, err = verify_head(engine, head)
        assert code == 0 and "extends the anchored head" in out, err
    code, out, _ = cli("audit", "head", "T", "--format", "json", "--db", url_of(engine))
    assert json.loads(out)["seq"] == 7 and json.loads(out)["hash"] == rows_of(engine)[-1][2]
    # a head of another topic is refused, not silently compared
    create_topic(engine, "U")
    code, _, err = cli("audit", "verify", "U", "--head", str(path), "--db", url_of(engine))
    assert code == 2 and "topic 'T'" in err


def test_tail_deleted_and_head_copied_back_is_detected(engine: Engine, tmp_path: Path) -> None:
    judged(engine, [(d, "1") for d in DOCS[:6]])
    path = anchor(engine, tmp_path)
    rows = rows_of(engine)
    with engine.begin() as conn:
        conn.execute(delete(Judgment).where(Judgment.id.in_([rows[-1][0], rows[-2][0]])))
        conn.execute(update(Topic).where(Topic.name == "T").values(chain_length=4, chain_head=rows[3][2]))
    assert verify_chains(engine, "T")[0].intact  # consistent: only the anchor can tell
    code, _, err = verify_head(engine, str(path))
    assert code == 1 and "no longer holds judgment seq 6" in err


def test_resealed_log_is_detected(engine: Engine, tmp_path: Path) -> None:
    judged(engine, [(d, "1") for d in DOCS[:6]])
    path = anchor(engine, tmp_path)
    with engine.begin() as conn:
        conn.execute(update(Judgment).where(Judgment.doc_id == "d2").values(label="0", relevant=False, grade=0))
    reseal(engine)
    assert verify_chains(engine, "T")[0].intact
    code, _, err = verify_head(engine, str(path))
    assert code == 1 and "rewritten and re-sealed" in err


def test_emptied_topic_is_detected(engine: Engine, tmp_path: Path) -> None:
    judged(engine, [(d, "1") for d in DOCS[:3]])
    path = anchor(engine, tmp_path)
    with engine.begin() as conn:
        topic_id = conn.execute(select(Topic.id).where(Topic.name == "T")).scalar_one()
        conn.execute(delete(Judgment).where(Judgment.topic_id == topic_id))
        conn.execute(update(Topic).where(Topic.id == topic_id).values(chain_length=0, chain_head=None))
    assert verify_chains(engine, "T")[0].intact
    code, _, err = verify_head(engine, str(path))
    assert code == 1 and "no longer holds judgment seq 3" in err


def test_downgrade_then_upgrade_reseal_is_detected(engine: Engine, tmp_path: Path) -> None:
    judged(engine, [(d, "1") for d in DOCS[:5]])
    path = anchor(engine, tmp_path)
    migrate.downgrade(engine, "0003")  # drops the chain columns…
    with engine.begin() as conn:
        conn.execute(text("UPDATE judgments SET label = '0', relevant = :f, grade = 0 WHERE doc_id = 'd3'"),
                     {"f": False})
    migrate.upgrade(engine)  # …and 0004 links the edited rows afresh
    assert verify_chains(engine, "T")[0].intact
    code, _, err = verify_head(engine, str(path))
    assert code == 1 and "re-sealed" in err


def test_downgrade_then_upgrade_without_edits_still_extends_the_anchor(engine: Engine, tmp_path: Path) -> None:
    judged(engine, [(d, "1") for d in DOCS[:5]])
    path = anchor(engine, tmp_path)
    migrate.downgrade(engine, "0003")
    migrate.upgrade(engine)
    # the judgment log is rebuilt to the same hashes: its part of the anchor still holds
    judgment_part = " ".join(w for w in path.read_text().split() if not w.startswith("evidence_"))
    (tmp_path / "judgments-only.txt").write_text(judgment_part + "\n")
    code, _, err = verify_head(engine, str(tmp_path / "judgments-only.txt"))
    assert code == 0, err
    # the evidence chain was dropped by the downgrade (0019) and chained anew from the live rows: nothing proves
    # that they are the rows the anchored evidence head covered, and the full anchor says so
    code, _, err = verify_head(engine, str(path))
    assert code == 1 and "the evidence chain was rewritten and re-sealed" in err, err


def test_broken_chain_refuses_writes_until_acknowledged(engine: Engine, tmp_path: Path) -> None:
    judged(engine, [(d, "1") for d in DOCS[:5]])
    url = url_of(engine)
    with engine.begin() as conn:  # an edit inside the log: only a full verify finds it
        conn.execute(update(Judgment).where(Judgment.doc_id == "d2").values(label="0", relevant=False, grade=0))
    record_judgment(engine, "T", "d6", "1", reviewer="ana")  # not yet known to be broken
    code, _, err = cli("audit", "verify", "T", "--db", url)
    assert code == 1 and "does not match its chain hash" in err
    before = rows_of(engine)
    with pytest.raises(ChainBroken, match="acknowledge"):
        record_judgment(engine, "T", "d7", "1", reviewer="ana")
    code, _, err = cli("judge", "T", "d7", "1", "--reviewer", "ana", "--db", url)
    assert code == 2 and "broken" in err and "Traceback" not in err
    secret = create_key(engine, "ana", "write")[1]
    with TestClient(create_app(ApiSettings(database_url=url))) as client:
        response = client.post("/topics/T/judgments", json={"judgments": [{"doc_id": "d7", "label": "1"}]},
                               headers={"Authorization": f"Bearer {secret}"})
        assert response.status_code == 409 and "acknowledge" in response.json()["detail"]
    assert rows_of(engine) == before
    code, out, err = cli("audit", "acknowledge", "T", "--reason", "restored d2 from backup: label edited",
                         "--reviewer", "admin", "--db", url)
    assert code == 0 and "acknowledged 1 break" in out, err
    with engine.connect() as conn:
        ack = conn.execute(select(ChainAcknowledgement)).one()
        head = conn.execute(select(Topic.chain_head).where(Topic.name == "T")).scalar_one()
    assert (ack.reviewer, ack.reason, ack.seq, head) == ("admin", "restored d2 from backup: label edited", 6,
                                                         ack.chain_hash)
    record_judgment(engine, "T", "d7", "1", reviewer="ana")
    check = verify_chains(engine, "T")[0]
    assert check.intact and [b.seq for b in check.acknowledged] == [2]
    # the acknowledgement is chained: changing its reason breaks the chain again
    with engine.begin() as conn:
        conn.execute(update(ChainAcknowledgement).values(reason="nothing to see"))
    check = verify_chains(engine, "T")[0]
    assert not check.intact and check.broken is not None and "acknowledgement" in check.broken.reason
    # an acknowledgement accepts the breaks it listed, not a later edit of an earlier row
    with engine.begin() as conn:
        conn.execute(update(ChainAcknowledgement).values(reason="restored d2 from backup: label edited"))
        conn.execute(update(Topic).values(chain_broken=None))
        conn.execute(update(Judgment).where(Judgment.doc_id == "d4").values(note="edited later"))
    check = verify_chains(engine, "T")[0]
    assert check.broken is not None and check.broken.seq == 4


def test_rewritten_head_is_blamed_on_the_head(engine: Engine) -> None:
    judged(engine, [(d, "1") for d in DOCS[:3]])
    before = rows_of(engine)
    with engine.begin() as conn:
        conn.execute(update(Topic).where(Topic.name == "T").values(chain_head="f" * 64))
    with pytest.raises(ChainBroken, match="head was rewritten"):
        record_judgment(engine, "T", "d4", "1", reviewer="ana")  # the next judgment is not linked to a forged head
    assert rows_of(engine) == before
    check = verify_chains(engine, "T")[0]
    assert check.broken is not None and check.broken.judgment_id is None and "head was rewritten" in \
        check.broken.reason


def test_deleted_tail_refuses_the_next_write(engine: Engine) -> None:
    judged(engine, [(d, "1") for d in DOCS[:3]])
    with engine.begin() as conn:
        conn.execute(delete(Judgment).where(Judgment.doc_id == "d3"))
    with pytest.raises(ChainBroken, match="no judgment seq 3"):
        record_judgment(engine, "T", "d4", "1", reviewer="ana")


def test_chain_head_at_a_judgment(engine: Engine) -> None:
    judged(engine, [(d, "1") for d in DOCS[:4]])
    rows = rows_of(engine)
    with engine.connect() as conn:
        topic_id = conn.execute(select(Topic.id).where(Topic.name == "T")).scalar_one()
        first_id = conn.execute(select(Judgment.id).where(Judgment.topic_id == topic_id)).scalars().first()
    assert first_id is not None
    now = chain_head_at(engine, topic_id)
    assert (now["seq"], now["hash"]) == (4, rows[-1][2]) and str(now["recorded_at"]).endswith("+00:00")
    at_second = chain_head_at(engine, topic_id, rows[1][0])
    assert (at_second["seq"], at_second["hash"]) == (2, rows[1][2])
    before_any = chain_head_at(engine, topic_id, first_id - 1)
    assert before_any == {"seq": 0, "hash": genesis("T"), "recorded_at": None}


def test_rows_beyond_the_recorded_length_refuse_the_next_write(engine: Engine) -> None:
    judged(engine, [(d, "1") for d in DOCS[:3]])
    with engine.begin() as conn:  # the topic forgets its last judgment: the next write would reuse seq 3
        conn.execute(update(Topic).where(Topic.name == "T").values(chain_length=2))
    with pytest.raises(ChainBroken, match="beyond"):
        record_judgment(engine, "T", "d4", "1", reviewer="ana")
    assert [seq for _, seq, _ in rows_of(engine)] == [1, 2, 3]
