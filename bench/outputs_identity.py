"""Capture every user-facing output of reviewdepth on two fixed databases, so that a refactor can be shown to leave
them byte-identical (issue 43, "House III": outputs identical before and after `reviewdepth/services/` is split
into sub-packages and report models are retyped).

    python bench/outputs_identity.py OUTDIR [--jobs N]

Builds, in a temporary directory, (1) the demo database (`reviewdepth demo`: CLEF 2017 CD008803, Waterloo's
ranking, 1,000 reviewed and a rest sample of 400) and (2) a database with one CLEF TAR 2017 topic, CD009185
(1,615 documents, 92 relevant at abstract level), all through the CLI: `import run` of Waterloo's run for that
topic, a topic protocol, an audit stream (every 10, seed 43) started before the review, three rounds of `next`
judged from the abstract qrels with `judge --file` (reviewer ana for ranked documents, aud for audit ones), a
second reviewer on 30 of them (3 disagreements, 1 adjudicated) and a rest sample of 150 (seed 2017) coded by sam.
Then runs every output-producing command of the installed `reviewdepth` on both (report, plan, watch --once,
prisma, validation, methods in every format and style, topics, queue, judgments, next, conflicts, agreement,
audit, sample show/stream, export, plot), the file commands on the CLEF files (eval in every format and suite,
compare, simulate with a small seeded design in every format), and the HTTP API in-process (`create_app`):
its OpenAPI schema as sorted JSON and GET responses on the demo database. Each output is a file in OUTDIR;
OUTDIR/EXIT_CODES has each command's exit status, OUTDIR/MANIFEST the sha256 of every compared file.

Every command runs with a fixed environment: TZ=UTC, LANG=C.UTF-8, one BLAS/OpenMP thread, HOME and
XDG/matplotlib folders inside the temporary directory, NO_COLOR=1, TERM=dumb, COLUMNS=120, LINES=50, and no
REVIEWDEPTH_* variable from the caller. PYTHONHASHSEED is left random on purpose: an output that depends on it is
nondeterministic, and two runs of this script show it.

Normalised (only what legitimately differs between two builds of the same databases; see NORMALISERS):
  * the temporary directory, OUTDIR and the shared data folder, wherever they are printed: <WORK>, <OUT>, <DATA>;
  * wall-clock times: ISO 8601 date-times (with T or a space, with or without seconds, fractions and offsets),
    the same in a PDF's /CreationDate form, and bare dates of today (the day the script runs) -> <TIME>, <DATE>;
  * the judgment and evidence chain hashes: they hash the recorded_at times, so they differ whenever the times
    do. They are replaced only where they are the exact values that `audit head --format json` and `judgments
    --format json` list for these databases (<CHAIN-n>, numbered in order of first appearance per file);
  * API keys (random by design) never reach an output.
Binary outputs (PDF, PNG) are stored as they are, and beside each a text view: for PDF the document with its
streams inflated (stdlib zlib) and normalised as above, plus pypdf's text when pypdf is installed (the test
extra); for PNG its chunk list with the text chunks. In the PDF view, stream lengths and the cross-reference
table's byte offsets are replaced (they measure the compressed bytes; the content is shown inflated). A raw PDF
embeds the times of the judgment log, so raw PDFs are kept under OUTDIR/raw/ with their own raw/MANIFEST, not
compared; raw/TIMINGS has each command's wall and CPU seconds.

Compare two snapshots (e.g. before and after a change, each made with this script):

    diff -r -x raw A B          # every normalised output; or just: diff A/MANIFEST B/MANIFEST

The script is a bench tool, not a test; it takes a few minutes on a loaded two-core machine.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "clef-tar-2017"
QRELS = DATA / "qrels" / "qrel_abs_test.txt.gz"
RUN = DATA / "runs" / "waterloo.A-rank-normal.gz"
SECOND_RUN = DATA / "runs" / "amc.run.gz"

DEMO_TOPIC = "CD008803"
CLEF_TOPIC = "CD009185"
CLEF_QUEUE = "waterloo-A"
ROUNDS = 3  # rounds of `next --count 200`: about 540 ranked and 60 audit documents judged
ROUND_SIZE = 200
REST_SAMPLE = 150


# ---------------------------------------------------------------------------------------------------------------
# Normalisation. Each entry: a name (for the docs above), a compiled pattern, and its replacement.

TIME_PATTERNS: list[tuple[str, re.Pattern[bytes], bytes]] = [
    # 2026-12-05T19:48:59.123456+00:00, 2026-12-05 19:48:59, 2026-12-05T19:48Z, ...
    ("iso-datetime",
     re.compile(rb"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}| ?UTC)?"),
     b"<TIME>"),
    # a PDF's D:20261205194859+00'00' (CreationDate, ModDate)
    ("pdf-date", re.compile(rb"D:\d{14}(?:Z|[+-]\d{2}'?\d{2}'?)?"), b"D:<TIME>"),
]


@dataclass
class Normaliser:
    """What to replace in every text output: literal paths, wall-clock times, today's date, and the known
    chain hashes (module docstring)."""

    paths: list[tuple[bytes, bytes]] = field(default_factory=list)
    chain_hashes: set[bytes] = field(default_factory=set)
    today: list[bytes] = field(default_factory=list)

    def __call__(self, data: bytes) -> bytes:
        for literal, placeholder in self.paths:
            data = data.replace(literal, placeholder)
        for _, pattern, replacement in TIME_PATTERNS:
            data = pattern.sub(replacement, data)
        for day in self.today:
            data = data.replace(day, b"<DATE>")
        if self.chain_hashes:
            numbers: dict[bytes, int] = {}

            def number(match: re.Match[bytes]) -> bytes:
                value = match.group(0)
                if value.lower() not in self.chain_hashes:
                    return value
                return b"<CHAIN-%d>" % numbers.setdefault(value.lower(), len(numbers) + 1)

            data = re.sub(rb"(?<![0-9a-fA-F])[0-9a-fA-F]{64}(?![0-9a-fA-F])", number, data)
        return data


def today_forms(now: datetime) -> list[bytes]:
    """Today's date as the outputs may print it (ISO first is handled by the date-time pattern only when a time
    follows): 2026-12-05, 5 December 2026, December 5, 2026, 05 Dec 2026. Not 20261205: a PMID can read so."""
    forms = [now.strftime("%Y-%m-%d"), f"{now.day} {now:%B %Y}", f"{now:%B} {now.day}, {now.year}",
             now.strftime("%d %b %Y"), f"{now.day} {now:%b %Y}"]
    return [form.encode() for form in forms]


# ---------------------------------------------------------------------------------------------------------------
# Running the CLI.


@dataclass
class Context:
    work: Path
    out: Path
    env: dict[str, str]
    exe: str
    demo_db: str = ""
    clef_db: str = ""
    exit_codes: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, tuple[float, float]] = field(default_factory=dict)  # wall, CPU


def fixed_environment(work: Path) -> dict[str, str]:
    home = work / "home"
    for sub in ("", ".config", ".cache", ".local/share", "mpl"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("REVIEWDEPTH_", "LC_", "PYTHON", "FORCE_COLOR", "CLICOLOR"))}
    env.update({
        "TZ": "UTC", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": str(home), "USER": "bench", "LOGNAME": "bench",
        "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local/share"), "MPLCONFIGDIR": str(home / "mpl"), "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
        "VECLIB_MAXIMUM_THREADS": "1", "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "120", "LINES": "50",
        "PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1",
    })
    return env


def reviewdepth_executable() -> str:
    beside = Path(sys.executable).parent / "reviewdepth"
    if beside.exists():
        return str(beside)
    found = shutil.which("reviewdepth")
    if found is None:
        raise SystemExit("outputs_identity: no `reviewdepth` executable (pip install -e . first)")
    return found


def cli(ctx: Context, args: Sequence[str], *, check: bool = True, stdin: bytes | None = None
        ) -> subprocess.CompletedProcess[bytes]:
    """Run `reviewdepth ARGS` in the fixed environment (the working directory is the temporary one)."""
    done = subprocess.run([ctx.exe, *args], cwd=ctx.work, env=ctx.env, input=stdin, capture_output=True,
                          check=False)
    if check and done.returncode != 0:
        raise SystemExit(f"outputs_identity: `reviewdepth {' '.join(args)}` exited {done.returncode}:\n"
                         f"{done.stderr.decode(errors='replace')}")
    return done


@dataclass(frozen=True)
class Capture:
    """One output: `reviewdepth ARGS` with stdout written to NAME (and stderr, when any, to NAME.stderr).
    ``files``: outputs the command writes itself (-o), as (option value relative to OUTDIR)."""

    name: str
    args: tuple[str, ...]
    files: tuple[str, ...] = ()


def capture(ctx: Context, item: Capture) -> None:
    """Run ITEM with its stdout and stderr going straight to files; keep its exit status, wall and CPU time."""
    target = ctx.out / item.name
    target.parent.mkdir(parents=True, exist_ok=True)
    stderr_path = ctx.out / f"{item.name}.stderr"
    started = time.perf_counter()
    with target.open("wb") as stdout, stderr_path.open("wb") as stderr:
        child = subprocess.Popen([ctx.exe, *item.args], cwd=ctx.work, env=ctx.env, stdin=subprocess.DEVNULL,
                                 stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    ctx.seconds[item.name] = (time.perf_counter() - started, usage.ru_utime + usage.ru_stime)
    ctx.exit_codes[item.name] = child.returncode
    if item.files and target.stat().st_size == 0:
        target.unlink()  # the command wrote its output with -o: only its stderr ("wrote FILE") is kept
    if stderr_path.stat().st_size == 0:
        stderr_path.unlink()


# ---------------------------------------------------------------------------------------------------------------
# Building the two databases.


def topic_lines(path: Path, topic: str) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line for line in f if line.split(maxsplit=1)[:1] == [topic]]


def build_demo(ctx: Context) -> None:
    ctx.demo_db = f"sqlite:///{ctx.work / 'demo.db'}"
    capture(ctx, Capture("demo/demo.table", ("demo", "--db", ctx.demo_db)))
    if ctx.exit_codes["demo/demo.table"] != 0:
        raise SystemExit("outputs_identity: `reviewdepth demo` failed; see " + str(ctx.out / "demo"))


def judge_file(ctx: Context, rows: Iterable[tuple[str, str, str, str]], name: str) -> None:
    """`judge CLEF_TOPIC --file` over (doc, label, reviewer, role) rows."""
    path = ctx.work / name
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["doc", "label", "reviewer", "role"])
        writer.writerows(rows)
    cli(ctx, ["judge", CLEF_TOPIC, "--file", str(path), "--queue", CLEF_QUEUE, "--db", ctx.clef_db])


def build_clef(ctx: Context) -> str:
    """The CLEF database (module docstring); returns the rest sample's id."""
    ctx.clef_db = f"sqlite:///{ctx.work / 'clef.db'}"
    db = ["--db", ctx.clef_db]
    labels = {parts[2]: ("1" if int(parts[3]) > 0 else "0")
              for parts in (line.split() for line in topic_lines(QRELS, CLEF_TOPIC))}
    cli(ctx, ["db", "upgrade", *db])
    cli(ctx, ["import", "run", str(RUN), "--topic", CLEF_TOPIC, "--queue", CLEF_QUEUE, *db])
    cli(ctx, ["topic", "protocol", CLEF_TOPIC, "--workflow", "TAR 2.0", "--platform", "reviewdepth",
              "--model", "Waterloo BMI (CLEF 2017 run A)", "--acceptance", "recall>=0.8@0.95",
              "--reviewer", "ana:reviewer", "--reviewer", "aud:auditor", "--blind", "--by", "lead", *db])
    cli(ctx, ["sample", "stream", "start", CLEF_TOPIC, "--every", "10", "--seed", "43", "--queue", CLEF_QUEUE,
              "--reviewer", "lead", *db])
    reviewed: list[str] = []
    for round_number in range(ROUNDS):
        batch = json.loads(cli(ctx, ["next", CLEF_TOPIC, "--count", str(ROUND_SIZE), "--format", "json", *db]).stdout)
        rows = []
        for document in batch["documents"]:
            doc, role = document["doc_id"], document["role"]
            rows.append((doc, labels.get(doc, "0"), "aud" if role == "audit" else "ana", role))
            if role == "review":
                reviewed.append(doc)
        judge_file(ctx, rows, f"round{round_number}.csv")
    # a second reviewer on 30 reviewed documents, disagreeing on 3 (two relevant, one not), one of them adjudicated
    relevant = [d for d in reviewed if labels.get(d) == "1"]
    irrelevant = [d for d in reviewed if labels.get(d) != "1"]
    disagreed = relevant[:2] + irrelevant[:1]
    agreed = [d for d in reviewed[::7] if d not in disagreed][:27]
    second = [(d, labels[d], "bo", "review") for d in agreed]
    second += [(d, "0" if labels[d] == "1" else "1", "bo", "review") for d in disagreed]
    judge_file(ctx, second, "second.csv")
    judge_file(ctx, [(disagreed[0], labels[disagreed[0]], "lead", "adjudication")], "adjudication.csv")
    sample = json.loads(cli(ctx, ["sample", "draw", CLEF_TOPIC, "--size", str(REST_SAMPLE), "--frame", "unreviewed",
                                  "--seed", "2017", "--queue", CLEF_QUEUE, "--format", "json", *db]).stdout)
    judge_file(ctx, [(d["doc_id"], labels.get(d["doc_id"], "0"), "sam", "sample") for d in sample["documents"]],
               "sample.csv")
    return str(sample["id"])


def write_topic_files(ctx: Context) -> tuple[Path, Path]:
    """The CLEF topic's qrels and run as plain files (lines copied from the shared data unchanged)."""
    qrels = ctx.work / f"{CLEF_TOPIC}.qrels"
    run = ctx.work / f"{CLEF_TOPIC}.run"
    qrels.write_text("".join(topic_lines(QRELS, CLEF_TOPIC)), encoding="utf-8")
    run.write_text("".join(topic_lines(RUN, CLEF_TOPIC)), encoding="utf-8")
    return qrels, run


# ---------------------------------------------------------------------------------------------------------------
# What to capture.


def topic_captures(prefix: str, topic: str, db: str, *, sample_id: str | None, stream: bool) -> list[Capture]:
    on = ("--db", db)
    c: list[Capture] = []

    def add(name: str, *args: str, files: tuple[str, ...] = ()) -> None:
        c.append(Capture(f"{prefix}/{name}", tuple(args) + on, files))

    for fmt in ("table", "json", "csv", "html"):
        add(f"report.{fmt}", "report", topic, "--format", fmt)
    add("report-plan.json", "report", topic, "--plan", "--format", "json")
    add("report-options.table", "report", topic, "--target", "0.9", "--confidence", "0.9",
        "--interval", "clopper-pearson", "--target-rule", "tar_eval")
    for fmt in ("table", "json", "html"):
        add(f"plan.{fmt}", "plan", topic, "--format", fmt)
    add("plan-cost.json", "plan", topic, "--cost", "review=1,sample=3,produce=0.2", "--format", "json")
    add("plan-missed.table", "plan", topic, "--missed-at-most", "3")
    for fmt in ("table", "json"):
        add(f"watch-once.{fmt}", "watch", topic, "--once", "--format", fmt)
    for fmt in ("table", "json", "csv", "svg", "html"):
        add(f"prisma.{fmt}", "prisma", topic, "--format", fmt)
    add("prisma.png", "prisma", topic, "--format", "png", "-o", f"{prefix}/prisma.png", files=(f"{prefix}/prisma.png",))
    for fmt in ("html", "json"):
        add(f"validation.{fmt}", "validation", topic, "--format", fmt)
    add("validation.pdf.stdout", "validation", topic, "--format", "pdf", "-o", f"raw/{prefix}/validation.pdf",
        files=(f"raw/{prefix}/validation.pdf",))
    for style in ("prisma", "raise", "protocol"):
        for fmt in ("text", "markdown", "json"):
            add(f"methods-{style}.{fmt}", "methods", topic, "--style", style, "--format", fmt)
    for fmt in ("table", "json", "csv"):
        add(f"topics.{fmt}", "topics", "--format", fmt)
    add("queue-list.txt", "queue", "list", topic)
    add("queue-show.txt", "queue", "show", topic)
    add("judgments.csv", "judgments", topic, "--format", "csv")
    for fmt in ("table", "json"):
        add(f"conflicts.{fmt}", "conflicts", topic, "--format", fmt)
        add(f"agreement.{fmt}", "agreement", topic, "--format", fmt)
    add("audit-head.json", "audit", "head", topic, "--format", "json")
    add("audit-verify.table", "audit", "verify", topic)
    if sample_id is not None:
        for fmt in ("table", "json"):
            add(f"sample-show.{fmt}", "sample", "show", topic, sample_id, "--format", fmt)
    if stream:
        for fmt in ("table", "json"):
            add(f"sample-stream.{fmt}", "sample", "stream", "show", topic, "--format", fmt)
    add("sample-plan.txt", "sample", "plan", topic)
    add("export-labels.csv", "export", "labels", topic)
    add("export-queue.trec", "export", "queue", topic)
    add("topic-protocol.json", "topic", "protocol", topic, "--format", "json")
    for kind in ("gain", "pr"):
        add(f"plot-{kind}.svg.stdout", "plot", topic, "--kind", kind, "-o", f"{prefix}/plot-{kind}.svg",
            files=(f"{prefix}/plot-{kind}.svg",))
    return c


def serving_captures(prefix: str, topic: str, db: str) -> list[Capture]:
    """`next` records what it serves (an audit stream's position): run after every other command, one at a time."""
    return [Capture(f"{prefix}/next.json", ("next", topic, "--count", "5", "--format", "json", "--db", db)),
            Capture(f"{prefix}/next.table", ("next", topic, "--count", "5", "--db", db))]


def file_captures(qrels: Path, run: Path) -> list[Capture]:
    q, r, r2 = str(qrels), str(run), str(SECOND_RUN)
    c = [Capture("files/eval.trec", ("eval", q, r)),
         Capture("files/eval-all-q.trec", ("eval", "-m", "all", "-q", q, r)),
         Capture("files/eval-trec10.trec", ("eval", "--trec-eval-version", "10", "-m", "official", q, r))]
    for fmt in ("json", "table", "csv", "html"):
        c.append(Capture(f"files/eval.{fmt}", ("eval", "--format", fmt, q, r)))
    for compat in ("none", "clef2017", "asreview"):
        c.append(Capture(f"files/eval-tar-{compat}.tar", ("eval", "--suite", "tar", "--compat", compat, q, r)))
    # a 2017 run read as a 2018/2019 one: refused (exit 2) with one line naming the field
    c.append(Capture("files/eval-tar-clef2019-refused.tar", ("eval", "--suite", "tar", "--compat", "clef2019", q, r)))
    c.append(Capture("files/eval-tar.json", ("eval", "--suite", "tar", "--format", "json", q, r)))
    # the whole CLEF 2017 run on all 30 topics, as the official script reads it
    c.append(Capture("files/eval-tar-all-topics.tar",
                     ("eval", "--suite", "tar", "--compat", "clef2017", str(QRELS), str(RUN))))
    for fmt in ("table", "json", "csv", "latex", "markdown"):
        c.append(Capture(f"files/compare.{fmt}", ("compare", "--format", fmt, str(QRELS), str(RUN), r2)))
    c.append(Capture("files/compare-tar.table", ("compare", "--suite", "tar", str(QRELS), str(RUN), r2)))
    design = ("simulate", "--qrels", q, "--run", r, "--design", "rest", "--sample-size", "100", "--looks", "every:200",
              "--replicates", "3", "--seed", "7")
    for fmt in ("table", "json", "csv", "html"):
        c.append(Capture(f"files/simulate-rest.{fmt}", (*design, "--format", fmt)))
    audit = ("simulate", "--qrels", q, "--run", r, "--design", "audit", "--every", "10", "--looks", "every:200",
             "--replicates", "3", "--seed", "7")
    c.append(Capture("files/simulate-audit.json", (*audit, "--format", "json")))
    return c


# ---------------------------------------------------------------------------------------------------------------
# The HTTP API, in a child process with the same fixed environment: `python outputs_identity.py --api DB OUTDIR`.

API_GETS = [
    ("topics.json", "/topics"),
    ("monitor.json", "/topics/{t}/monitor"),
    ("report.json", "/topics/{t}/report?format=json"),
    ("report.html", "/topics/{t}/report?format=html"),
    ("report.csv", "/topics/{t}/report?format=csv"),
    ("prisma.json", "/topics/{t}/prisma"),
    ("prisma.svg", "/topics/{t}/prisma?format=svg"),
    ("validation.json", "/topics/{t}/validation?format=json"),
    ("validation.html", "/topics/{t}/validation?format=html"),
    ("plot-gain.svg", "/topics/{t}/plots/gain.svg"),
    ("methods.json", "/topics/{t}/methods?format=json"),
    ("plan.json", "/topics/{t}/plan"),
    ("queues.json", "/topics/{t}/queues"),
    ("health.json", "/health"),
]


def api_dump(db: str, topic: str, out: Path, key: str) -> None:
    """The OpenAPI schema (sorted JSON) and API_GETS on ``db`` through FastAPI's TestClient."""
    from fastapi.testclient import TestClient

    from reviewdepth.api import create_app
    from reviewdepth.settings import Settings

    out.mkdir(parents=True, exist_ok=True)
    app = create_app(Settings(database_url=db))
    (out / "openapi.json").write_text(json.dumps(app.openapi(), sort_keys=True, indent=1, ensure_ascii=False) + "\n",
                                      encoding="utf-8")
    status = []
    with TestClient(app) as client:
        for name, path in API_GETS:
            response = client.get(path.format(t=topic), headers={"Authorization": f"Bearer {key}"})
            (out / name).write_bytes(response.content)  # the bytes as sent
            status.append(f"{name}\t{response.status_code}\t{response.headers.get('content-type', '')}\n")
    (out / "STATUS").write_text("".join(status), encoding="utf-8")


def run_api(ctx: Context) -> None:
    key = cli(ctx, ["keys", "create", "--reviewer", "bench", "--scope", "read", "--db", ctx.demo_db]).stdout
    secret = key.decode().strip().splitlines()[-1].split()[-1]
    started, cpu = time.perf_counter(), os.times()
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--api", ctx.demo_db, DEMO_TOPIC,
                           str(ctx.out / "api")], cwd=ctx.work, env={**ctx.env, "OUTPUTS_IDENTITY_KEY": secret},
                          capture_output=True, check=False)
    after = os.times()
    ctx.seconds["api"] = (time.perf_counter() - started,
                          after.children_user + after.children_system - cpu.children_user - cpu.children_system)
    ctx.exit_codes["api"] = done.returncode
    if done.stderr:
        (ctx.out / "api" / "dump.stderr").write_bytes(done.stderr.replace(secret.encode(), b"<KEY>"))


# ---------------------------------------------------------------------------------------------------------------
# Binary outputs: a text view beside each.


def pdf_view(data: bytes) -> bytes:
    """The PDF with every Flate stream inflated in place (the rest as it is): a byte-comparable text form."""
    parts: list[bytes] = []
    position = 0
    for match in re.finditer(rb"(?<!end)stream\r?\n", data):  # not "endstream": it would pair streams wrongly
        start = match.end()
        if start < position:
            continue
        end = data.find(b"endstream", start)
        if end < 0:
            break
        header = data[max(0, match.start() - 300):match.start()]
        body = data[start:end].rstrip(b"\r\n")
        parts.append(data[position:start])
        if b"/FlateDecode" in header.rsplit(b"obj", 1)[-1]:
            try:
                body = b"<inflated>\n" + zlib.decompress(body) + b"\n</inflated>"
            except zlib.error:
                body = b"<not inflated: %d bytes, sha256 %s>" % (len(body), hashlib.sha256(body).hexdigest().encode())
        elif not body.isascii():
            body = b"<binary: %d bytes, sha256 %s>" % (len(body), hashlib.sha256(body).hexdigest().encode())
        parts.append(body + b"\n")
        position = end
    parts.append(data[position:])
    view = b"".join(parts)
    # stream lengths and the cross-reference table are byte counts of the compressed file: the content they
    # measure is shown inflated above, so they carry nothing more and differ whenever a time in a stream does
    view = re.sub(rb"/Length \d+", b"/Length <n>", view)
    return re.sub(rb"\nxref\n.*?startxref\s+\d+", b"\nxref <byte offsets>\nstartxref <n>", view, flags=re.S)


def pdf_text(path: Path) -> bytes | None:
    try:
        from pypdf import PdfReader
    except ImportError:
        return None
    reader = PdfReader(str(path))
    pages = [page.extract_text() or "" for page in reader.pages]
    return "".join(f"--- page {n} ---\n{text}\n" for n, text in enumerate(pages, 1)).encode("utf-8")


def png_view(data: bytes) -> bytes:
    """A PNG's chunks: type and length, text chunks in full, the pixel data's sha256."""
    lines = [b"PNG signature ok" if data[:8] == b"\x89PNG\r\n\x1a\n" else b"not a PNG"]
    position, pixels = 8, hashlib.sha256()
    while position + 8 <= len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind = data[position + 4:position + 8]
        body = data[position + 8:position + 8 + length]
        if kind == b"IDAT":
            pixels.update(body)
        elif kind in (b"tEXt", b"iTXt", b"zTXt"):
            lines.append(kind + b" " + body.replace(b"\x00", b" | "))
        else:
            lines.append(kind + b" %d bytes" % length)
        position += 12 + length
    lines.append(b"IDAT sha256 " + pixels.hexdigest().encode())
    return b"\n".join(lines) + b"\n"


# ---------------------------------------------------------------------------------------------------------------
# Normalising, the manifest, and two runs' comparison.


def chain_hashes(ctx: Context) -> set[bytes]:
    """Every judgment hash and chain head of both databases' topics (they hash the recorded_at times)."""
    found: set[bytes] = set()
    for db, topic in ((ctx.demo_db, DEMO_TOPIC), (ctx.clef_db, CLEF_TOPIC)):
        head = json.loads(cli(ctx, ["audit", "head", topic, "--format", "json", "--db", db]).stdout)
        rows = json.loads(cli(ctx, ["judgments", topic, "--format", "json", "--db", db]).stdout)
        for value in walk_strings([head, rows]):
            if re.fullmatch(r"[0-9a-f]{64}", value):
                found.add(value.encode())
        verify = json.loads(cli(ctx, ["audit", "verify", topic, "--format", "json", "--db", db], check=False).stdout
                            or "null")
        for key, value in walk_items(verify):
            if isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value) and "head" in key:
                found.add(value.encode())
    return found


def walk_strings(value: object) -> Iterable[str]:
    for _, item in walk_items(value):
        if isinstance(item, str):
            yield item


def walk_items(value: object, key: str = "") -> Iterable[tuple[str, object]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from walk_items(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from walk_items(v, key)
    else:
        yield key, value


def normalise_tree(out: Path, normalise: Callable[[bytes], bytes]) -> None:
    for path in sorted(out.rglob("*")):
        if not path.is_file() or path.parts[len(out.parts)] == "raw":
            continue
        data = path.read_bytes()
        if path.suffix == ".png":
            path.with_name(path.name + ".view").write_bytes(png_view(data))
            continue
        path.write_bytes(normalise(data))
    for pdf in sorted((out / "raw").rglob("*.pdf")):
        relative = pdf.relative_to(out / "raw")
        view = out / relative.parent / (relative.name + ".view")
        view.parent.mkdir(parents=True, exist_ok=True)
        view.write_bytes(normalise(pdf_view(pdf.read_bytes())))
        text = pdf_text(pdf)
        if text is not None:
            (out / relative.parent / (relative.name + ".txt")).write_bytes(normalise(text))


def write_manifest(folder: Path, skip: str | None = None) -> list[str]:
    """FOLDER/MANIFEST: ``sha256  path`` per file (sha256sum's format: `sha256sum -c MANIFEST` checks it)."""
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in ("MANIFEST", "TIMINGS")):
        relative = path.relative_to(folder).as_posix()
        if skip is not None and relative.split("/", 1)[0] == skip:
            continue
        lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {relative}\n")
    (folder / "MANIFEST").write_text("".join(lines), encoding="utf-8")
    return lines


# ---------------------------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path, nargs="?")
    parser.add_argument("--jobs", type=int, default=2, help="commands run at once after the build (default 2)")
    parser.add_argument("--api", nargs=3, metavar=("DB", "TOPIC", "OUT"), help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.api:
        db, topic, out = options.api
        api_dump(db, topic, Path(out), os.environ["OUTPUTS_IDENTITY_KEY"])
        return 0
    if options.outdir is None:
        parser.error("OUTDIR is required")
    if not QRELS.exists():
        raise SystemExit(f"outputs_identity: shared data not found at {DATA}")
    out: Path = options.outdir.resolve()
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"outputs_identity: {out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="outputs-identity-") as tmp:
        work = Path(tmp)
        ctx = Context(work=work, out=out, env=fixed_environment(work), exe=reviewdepth_executable())
        build_demo(ctx)
        clef_sample = build_clef(ctx)
        qrels, run = write_topic_files(ctx)
        built = time.perf_counter()
        print(f"built both databases in {built - started:.1f} s", file=sys.stderr)

        captures = topic_captures("demo", DEMO_TOPIC, ctx.demo_db, sample_id="1", stream=False)
        captures += topic_captures("clef", CLEF_TOPIC, ctx.clef_db, sample_id=clef_sample, stream=True)
        captures += file_captures(qrels, run)
        for item in captures:
            for relative in item.files:
                (out / relative).parent.mkdir(parents=True, exist_ok=True)
        # -o paths are relative to OUTDIR: run those commands with absolute paths instead
        captures = [Capture(c.name, tuple(str(out / a) if a in c.files else a for a in c.args), c.files)
                    for c in captures]
        with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
            list(pool.map(lambda item: capture(ctx, item), captures))
        serving = serving_captures("demo", DEMO_TOPIC, ctx.demo_db) + serving_captures("clef", CLEF_TOPIC, ctx.clef_db)
        for item in serving:
            capture(ctx, item)
        captures += serving
        run_api(ctx)
        captured = time.perf_counter()
        print(f"captured {len(captures) + 1} commands in {captured - built:.1f} s", file=sys.stderr)

        now = datetime.now(UTC)
        data_real = str(DATA.parent.resolve())
        normaliser = Normaliser(
            paths=[(str(out).encode(), b"<OUT>"), (str(work).encode(), b"<WORK>"),
                   (data_real.encode(), b"<DATA>"), (str(DATA.parent).encode(), b"<DATA>")],
            chain_hashes=chain_hashes(ctx), today=today_forms(now))
        (out / "EXIT_CODES").write_text("".join(f"{name}\t{code}\n" for name, code in sorted(ctx.exit_codes.items())),
                                        encoding="utf-8")
        normalise_tree(out, normaliser)
    lines = write_manifest(out, skip="raw")
    raw = write_manifest(out / "raw")
    total = time.perf_counter() - started
    cpu = sum(seconds for _, seconds in ctx.seconds.values())
    children = os.times()
    all_cpu = children.children_user + children.children_system
    (out / "raw" / "TIMINGS").write_text("".join(
        f"{wall:8.2f} {cpu_seconds:8.2f}  {name}\n" for name, (wall, cpu_seconds) in sorted(
            ctx.seconds.items(), key=lambda kv: -kv[1][1])), encoding="utf-8")
    slowest = sorted(ctx.seconds.items(), key=lambda kv: -kv[1][1])[:5]
    print(f"{len(lines)} files in {out}/MANIFEST, {len(raw)} in raw/MANIFEST (not compared); total {total:.1f} s "
          f"wall, {all_cpu:.1f} s CPU in child processes ({cpu:.1f} s in the captured commands); most CPU: "
          + ", ".join(f"{name} {seconds:.1f} s" for name, (_, seconds) in slowest), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
