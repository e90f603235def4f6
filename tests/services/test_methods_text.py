"""Issue 41, item 2: the methods text is written from the topic's evidence, and every figure it prints is the
value of a field of the JSON documents the other doors print (``report --format json``, ``topic protocol
--format json``, the audit stream's record).

Two topics: SYNERGY's ADHD review (Cohen 2006), ranked by a simulated model (a score that separates the labels,
with noise, seed fixed), the first 300 records screened in rank order by two reviewers, then a random sample of the
unscreened rest large enough to certify 95 % recall (a certified stop); and the e-discovery state of
CD010276 (AMC's ranking; an audit stream decides) with its protocol fields entered."""

from __future__ import annotations

import csv
import gzip
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.report.methods_text import resolve
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample

from ..conftest import shared_data
from .test_one_decision import _audit_certified_state


def synergy_certified_stop(engine: Engine, name: str = "ADHD", screened: int = 300, sample: int = 480) -> None:
    """SYNERGY's ADHD records ranked by a simulated model; two reviewers screen the top ``screened``; a random
    sample of ``sample`` unscreened records is coded by a third."""
    with gzip.open(shared_data("synergy", "Cohen_2006_ADHD_ids.csv.gz"), "rt") as source:
        rows = list(csv.DictReader(source))
    docs = [r["pmid"].rsplit("/", 1)[-1] for r in rows]
    truth = {d: r["label_included"] for d, r in zip(docs, rows, strict=True)}
    rng = np.random.default_rng(41)
    score = np.array([3.0 * (truth[d] == "1") for d in docs]) + rng.normal(size=len(docs))
    order = [docs[i] for i in np.argsort(-score, kind="stable")]
    create_topic(engine, name)
    store_ranking(engine, name, "simulated-model", [RankedDocument(d, float(s)) for d, s in
                                                    zip(order, sorted(score, reverse=True), strict=True)])
    for reviewer in ("ana", "ben"):
        record_judgments(engine, name, [(d, truth[d]) for d in order[:screened]], reviewer=reviewer)
    drawn = draw_sample(engine, name, sample, frame="unreviewed", seed=7)
    record_judgments(engine, name, [(d, truth[d]) for d in drawn.doc_ids], reviewer="cleo", role="sample")


def _numbers(text: str) -> list[str]:
    """The numbers a reader sees (counts with separators, decimals), dates and hashes left out."""
    text = re.sub(r"\d{4}-\d\d-\d\dT[\d:.+]+", "", text)
    text = re.sub(r"import:[0-9a-f]+", "", text)
    return re.findall(r"\d[\d,]*(?:\.\d+)?%?", text)


def _check(invoke: Any, topic: str, style: str) -> tuple[str, dict[str, Any]]:
    text = invoke("methods", topic, "--style", style)
    data = json.loads(invoke("methods", topic, "--style", style, "--format", "json"))
    documents = {"report": json.loads(invoke("report", topic, "--target", "0.95", "--format", "json")),
                 "protocol": json.loads(invoke("topic", "protocol", topic, "--format", "json"))}
    stream = invoke("sample", "stream", "show", topic, "--format", "json", ok=False)
    documents["stream"] = json.loads(stream) if stream else None
    shown: set[str] = set()
    for fact in data["facts"]:
        if fact["formula"] is None:
            try:
                value = resolve(documents, fact["source"])
            except KeyError:  # a protocol field not recorded is absent from its JSON
                value = None
            assert value == fact["value"], fact
            if value is None:
                assert fact["shown"] == "not recorded", fact
        else:  # the one derived count: records with two or more reviewers
            per_record = resolve(documents, fact["source"])
            assert fact["value"] == sum(v for k, v in per_record.items() if int(k) >= 2), fact
        if fact["value"] is not None:
            assert fact["shown"] in text, fact
        shown.add(fact["shown"])
    # every number the reader sees is one of those facts (or part of the words: 'PRISMA 2020 item 8', '1 −')
    words = {"2020", "8", "1", "2", "59"}
    for number in _numbers(text):
        assert number in words or any(number in s for s in shown), (number, text)
    return text, data


def test_methods_for_a_synergy_topic_and_an_ediscovery_topic(engine: Engine, tmp_path: Path) -> None:
    synergy_certified_stop(engine)
    topic = _audit_certified_state(engine, tmp_path)
    url = engine.url.render_as_string(hide_password=False)
    runner = CliRunner()

    def invoke(*args: str, ok: bool = True) -> str:
        done = runner.invoke(create_cli(), [*args, "--db", url])
        if not ok and done.exit_code != 0:
            return ""
        assert done.exit_code == 0, done.output
        return done.stdout

    assert runner.invoke(create_cli(), ["topic", "protocol", topic, "--workflow", "TAR 2.0", "--platform", "P",
                                        "--acceptance", "recall>=0.95@0.95", "--produced", "54", "--db",
                                        url]).exit_code == 0
    text, _ = _check(invoke, "ADHD", "prisma")
    report = json.loads(invoke("report", "ADHD", "--target", "0.95", "--format", "json"))
    status = report["answer"]["topic_status"]
    assert status["status"] == "reached" and status["decided_by"] == "elusion"  # a certified stop
    assert "certified" in text and "Cohen's kappa" in text and "no guarantee" in text
    assert "were not screened because screening stopped (counted as excluded by the automation tool)" in text
    raise_text, _ = _check(invoke, "ADHD", "raise")
    assert all(h in raise_text for h in ("Tool.", "Human oversight.", "Limitations."))
    markdown = invoke("methods", "ADHD", "--style", "raise", "--format", "markdown")
    assert markdown.startswith("## Tool\n\n")

    text, _ = _check(invoke, topic, "protocol")
    assert "workflow TAR 2.0" in text and "model not recorded" in text and "audit stream" in text
    assert "anytime-valid" in text and "supporting, not deciding" in text
    # bad input: one line, exit 2
    bad = runner.invoke(create_cli(), ["methods", "nope", "--db", url])
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1
