"""``reviewdepth compare``: against ranx 0.3.21's ``compare`` on generated runs (its p-values copied below,
computed by ranx from the same files), the tar suite against ``eval --suite tar``, the formats, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli

QUERIES, DOCS = 12, 40

# ranx 0.3.21 on the files `write_runs` makes (ranx.compare, metrics map, precision@10, r-precision, recall@20;
# stat_test="student", and "fisher" with n_permutations=200000, random_seed 42): (measure, run) -> (mean,
# student p, fisher p)
RANX = {
    ("map", "better"): (0.395543, 0.018920213854667484, 0.01991),
    ("map", "mixed"): (0.503896, 0.0038507340926595443, 0.001045),
    ("P_10", "better"): (0.291667, 0.0020701528805041384, 0.00811),
    ("P_10", "mixed"): (0.358333, 0.0015300566742973253, 0.001895),
    ("Rprec", "better"): (0.302083, 0.05266314470852397, 0.109125),
    ("Rprec", "mixed"): (0.385417, 0.014981017718822655, 0.03074),
    ("recall_20", "better"): (0.604167, 0.005353696086957528, 0.015725),
    ("recall_20", "mixed"): (0.697917, 0.0015300566742973264, 0.001845),
}
MEASURES = ["-m", "map", "-m", "P_10", "-m", "Rprec", "-m", "recall_20"]


def write_runs(folder: Path) -> list[Path]:
    """Arithmetic (no random generator) qrels and three runs, 12 queries × 40 documents, no tied scores."""
    qrels, runs = [], {"base": [], "better": [], "mixed": []}  # type: ignore[var-annotated]
    for q in range(1, QUERIES + 1):
        qid = f"q{q:02d}"
        for d in range(1, DOCS + 1):
            doc = f"d{d:03d}"
            rel = 1 if (q * 7 + d * 13) % 5 == 0 else 0
            qrels.append(f"{qid} 0 {doc} {rel}")
            base = ((q * 31 + d * 17) % 97) / 97.0
            runs["base"].append((qid, doc, base))
            runs["better"].append((qid, doc, base + (0.1 * (q % 4) - 0.05) * rel))
            runs["mixed"].append((qid, doc, ((q * 11 + d * 29) % 89) / 89.0 + (0.5 if q % 3 == 0 else 0.1) * rel))
    (folder / "qrels").write_text("\n".join(qrels) + "\n")
    paths = [folder / "qrels"]
    for name, rows in runs.items():
        lines = []
        for qid in sorted({r[0] for r in rows}):
            ranked = sorted((r for r in rows if r[0] == qid), key=lambda r: (-r[2], r[1]))
            lines += [f"{qid} Q0 {doc} {i} {score:.6f} {name}" for i, (_, doc, score) in enumerate(ranked, 1)]
        (folder / name).write_text("\n".join(lines) + "\n")
        paths.append(folder / name)
    return paths


def run_cli(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def cells(output: str) -> dict[tuple[str, str], dict[str, object]]:
    return {(c["measure"], c["run"]): c for c in json.loads(output)["cells"]}


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    return write_runs(tmp_path)


def test_t_test_and_means_agree_with_ranx(files: list[Path]) -> None:
    code, out, err = run_cli("compare", *files, *MEASURES, "--correction", "none", "--format", "json")
    assert code == 0, err
    got = cells(out)
    for key, (mean, p_student, _) in RANX.items():
        assert got[key]["mean"] == pytest.approx(mean, abs=5e-7)
        assert round(got[key]["p_value"], 4) == round(p_student, 4)  # type: ignore[arg-type]


def test_randomization_agrees_with_ranx_within_monte_carlo_error(files: list[Path]) -> None:
    # 2^12 = 4096 sign vectors <= 10,000: reviewdepth enumerates them (exact); ranx drew 200,000
    code, out, err = run_cli("compare", *files, *MEASURES, "--correction", "none", "--format", "json",
                             "--test", "randomization")
    assert code == 0, err
    got = cells(out)
    for key, (_, _, p_fisher) in RANX.items():
        se = (p_fisher * (1 - p_fisher) / 200_000) ** 0.5
        assert abs(got[key]["p_value"] - p_fisher) < 4 * se + 1e-5  # type: ignore[operator]


def test_holm_marks_and_baseline_in_the_table(files: list[Path]) -> None:
    code, out, err = run_cli("compare", *files, "-m", "map", "-m", "Rprec", "--format", "json")
    assert code == 0, err
    got = cells(out)
    # Holm over the two comparisons of each measure, from ranx's unadjusted p-values
    for measure in ("map", "Rprec"):
        low, high = sorted([RANX[(measure, "better")][1], RANX[(measure, "mixed")][1]])
        expected = {low: min(1, 2 * low), high: max(min(1, 2 * low), high)}
        for run in ("better", "mixed"):
            p_adj = got[(measure, run)]["p_adjusted"]
            assert p_adj == pytest.approx(expected[RANX[(measure, run)][1]], rel=1e-9)
            assert got[(measure, run)]["significant"] == (p_adj < 0.05)  # type: ignore[operator]
    code, out, _ = run_cli("compare", *files, "-m", "map", "-m", "Rprec", "--format", "markdown")
    assert code == 0
    assert "| base (baseline) |" in out and "0.3955\\*" in out and "0.3021 |" in out
    code, out, _ = run_cli("compare", *files, "-m", "map", "--format", "latex")
    assert code == 0 and r"\begin{tabular}{lr}" in out and r"0.5039$^{\dagger}$" in out and "Holm" in out
    code, out, _ = run_cli("compare", *files, "-m", "map", "--format", "csv")
    assert code == 0 and out.splitlines()[0].startswith("measure,run,baseline,n,mean")
    assert len(out.splitlines()) == 1 + 3


def test_tar_suite_over_topics_matches_eval(files: list[Path]) -> None:
    qrels, base, better, _ = files
    code, out, err = run_cli("compare", qrels, base, better, "--suite", "tar", "-m", "ap,wss_95",
                             "--format", "json")
    assert code == 0, err
    got = cells(out)
    per_topic = {}
    for run in (base, better):
        code, text, err = run_cli("eval", "--suite", "tar", "--format", "json", "-q", qrels, run)
        assert code == 0, err
        per_topic[run.name] = json.loads(text)
    for measure in ("ap", "wss_95"):
        a, b = (np.array([float(per_topic[r]["per_query"][q][measure]) for q in sorted(per_topic[r]["per_query"])])
                for r in ("base", "better"))
        assert got[(measure, "better")]["mean"] == pytest.approx(b.mean())
        assert got[(measure, "better")]["p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-9)


@pytest.mark.parametrize(("args", "message"), [
    (["-m", "nosuch"], "unknown measure"),
    (["--suite", "tar", "-m", "nosuch"], "unknown tar measure"),
    (["-m", "gm_map"], "per-query values"),
])
def test_bad_options_are_one_line_and_exit_2(files: list[Path], args: list[str], message: str) -> None:
    code, out, err = run_cli("compare", *files, *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and out == ""


@pytest.mark.parametrize(("args", "message"), [
    (["--test", "sign"], "Invalid value for '--test': 'sign' is not one of 't', 'wilcoxon', 'randomization'."),
    (["--correction", "fdr"], "Invalid value for '--correction': 'fdr' is not one of 'holm', 'bonferroni', 'none'."),
])
def test_a_test_or_correction_not_offered_is_the_usage_error(files: list[Path], args: list[str],
                                                             message: str) -> None:
    code, out, err = run_cli("compare", *files, *args)
    assert code == 2 and message in err and "Usage: reviewdepth compare" in err and out == ""


def test_one_run_and_disjoint_runs_are_refused(files: list[Path], tmp_path: Path) -> None:
    qrels, base = files[0], files[1]
    code, _, err = run_cli("compare", qrels, base)
    assert code == 2 and "at least two runs" in err
    other = tmp_path / "other"
    other.write_text(base.read_text().replace("q01", "q99").replace("q02", "q98"))
    only_two = tmp_path / "only_two"
    only_two.write_text("".join(line + "\n" for line in base.read_text().splitlines()
                                if line.startswith(("q01", "q02"))))
    code, _, err = run_cli("compare", qrels, only_two, other)
    assert code == 2 and "no queries in common" in err, err
    assert len(err.strip().splitlines()) == 1
