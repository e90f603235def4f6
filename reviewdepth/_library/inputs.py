"""Qrels and runs as the library takes them — a path, nested dicts, a pandas or polars DataFrame, or records.

Two forms, both read by the evaluation use case's own code: `qrels_columns` and `run_columns` give the columns
the file readers make of a file (`QrelsColumns`, `Run`: query ids and docnos as the same UTF-8 byte strings,
relevance as integers, scores as the doubles a file's text reads as), which `rd.evaluate` joins and measures as
``reviewdepth eval`` does; `qrels_input` and `run_input` write the data as TREC text (`EvalInput`) for the use
cases that read files only (``compare``, the tar suite, the HTTP API's uploads). Either way an id holding white
space, or a value that is no number, is refused naming the row and field."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reviewdepth.services.evaluation.evaluate import EvalInput

# column (or record field) names, first match wins; ir_measures' and ranx's spellings are among them
QUERY_COLUMNS = ("query_id", "qid", "query", "topic_id", "topic", "q_id")
DOC_COLUMNS = ("doc_id", "docno", "docid", "doc", "document_id", "pmid")
RELEVANCE_COLUMNS = ("relevance", "rel", "label", "judgment", "judgement", "grade")
SCORE_COLUMNS = ("score", "sim", "similarity")
TAG_COLUMNS = ("run_id", "runid", "tag", "system")
# the white space that separates the fields of a TREC line: an id holding one would not read back as one field
_SPACE = re.compile(r"[ \t\n\r\x0b\x0c]")

QrelsLike = Any  # str | os.PathLike | Mapping | DataFrame | Iterable of records (see `qrels_input`)
RunLike = Any


class InputShapeError(ValueError):
    """Qrels or a run in a shape the library cannot read, or with a bad value; the message names the row and field
    as the file readers do."""


def _is_frame(value: object) -> bool:
    return hasattr(value, "columns") and hasattr(value, "shape") and not isinstance(value, Mapping)


def _column(frame: Any, names: Sequence[str], what: str, role: str) -> list[Any] | None:
    columns = [str(c) for c in frame.columns]
    lowered = {c.lower(): c for c in columns}
    for name in names:
        if name in lowered:
            return list(frame[lowered[name]].to_list())
    return None


def _frame_columns(frame: Any, what: str, value_names: Sequence[str], value_role: str
                   ) -> tuple[list[Any], list[Any], list[Any]]:
    qids = _column(frame, QUERY_COLUMNS, what, "query")
    docs = _column(frame, DOC_COLUMNS, what, "document")
    values = _column(frame, value_names, what, value_role)
    missing = [(role, names) for role, names, col in (("query", QUERY_COLUMNS, qids), ("document", DOC_COLUMNS, docs),
                                                     (value_role, value_names, values)) if col is None]
    if missing:
        role, names = missing[0]
        raise InputShapeError(f"{what}: no {role} column; name one of {', '.join(names)} "
                              f"(columns: {', '.join(str(c) for c in frame.columns)})")
    assert qids is not None and docs is not None and values is not None
    return qids, docs, values


def _record_field(record: Any, names: Sequence[str], position: int) -> Any:
    for name in names:
        if hasattr(record, name):
            return getattr(record, name)
    if isinstance(record, Mapping):
        for name in names:
            if name in record:
                return record[name]
        raise KeyError(names[0])
    return record[position]


def _records(records: Iterable[Any], what: str, value_names: Sequence[str]
             ) -> tuple[list[Any], list[Any], list[Any]]:
    qids: list[Any] = []
    docs: list[Any] = []
    values: list[Any] = []
    for row, record in enumerate(records, start=1):
        try:
            qids.append(_record_field(record, QUERY_COLUMNS, 0))
            docs.append(_record_field(record, DOC_COLUMNS, 1))
            values.append(_record_field(record, value_names, 2))
        except (KeyError, IndexError, TypeError):
            raise InputShapeError(f"{what}: record {row}: expected (query_id, doc_id, {value_names[0]}) or fields "
                                  f"of those names, not {record!r}") from None
    return qids, docs, values


def _identifier(value: Any, what: str, row: int, field: str) -> str:
    text = value if isinstance(value, str) else str(value)
    if not text or _SPACE.search(text):
        raise InputShapeError(f"{what}: row {row}: field {field}: {text!r} is empty or holds white space")
    return text


def _relevance(value: Any, what: str, row: int) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    try:
        number = float(value)
        if math.isfinite(number) and number == int(number):
            return str(int(number))
    except (TypeError, ValueError):
        pass
    raise InputShapeError(f"{what}: row {row}: field relevance: {value!r} is not a whole number")


def _score(value: Any, what: str, row: int) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if math.isnan(number) or isinstance(value, bool):
        raise InputShapeError(f"{what}: row {row}: field score: {value!r} is not a number")
    return repr(number)  # the shortest text that reads back as the same double


def _name(value: Any, default: str) -> str:
    return os.fspath(value) if isinstance(value, (str, os.PathLike)) else default


def _ids(values: list[Any], what: str, field: str) -> list[str]:
    """The values as text, checked at once (the per-row check runs only to name the first bad row)."""
    texts = values if set(map(type, values)) <= {str} else [v if isinstance(v, str) else str(v) for v in values]
    joined = "".join(texts)
    if _SPACE.search(joined) or "" in texts:
        for row, text in enumerate(texts, start=1):
            _identifier(text, what, row, field)
    return texts


def _numbers(values: list[Any], what: str, convert: Any) -> list[str]:
    """The values as text through numpy when they are plain numbers of one kind (a DataFrame column), else row by
    row (``convert`` names a bad one)."""
    import numpy as np

    try:
        array = np.asarray(values)
    except (TypeError, ValueError):
        array = np.asarray(values, dtype=object)
    if array.dtype.kind in "iu":
        return list(map(str, array.tolist()))
    if array.dtype.kind == "f" and convert is _score and not np.isnan(array).any():
        return list(map(repr, array.tolist()))
    if array.dtype.kind == "f" and convert is _relevance and np.isfinite(array).all() and (array == np.round(array)
                                                                                          ).all():
        return list(map(str, array.astype(np.int64).tolist()))
    return [convert(v, what, row) for row, v in enumerate(values, start=1)]


def _triples(data: Any, what: str, value_names: Sequence[str], role: str
             ) -> tuple[list[Any], list[Any], list[Any], str | None]:
    """(query ids, doc ids, values, the frame's run tag or None) of nested dicts, a DataFrame or records."""
    tag = None
    if isinstance(data, Mapping):
        rows = ((q, d, v) for q, docs in data.items() for d, v in docs.items())
        qids, docs, values = (list(c) for c in zip(*rows, strict=True)) if data else ([], [], [])
    elif _is_frame(data):
        qids, docs, values = _frame_columns(data, what, value_names, role)
        tags = _column(data, TAG_COLUMNS, what, "tag") if role == "score" else None
        if tags and tags.count(tags[0]) == len(tags) and str(tags[0]).strip():
            tag = _tag(str(tags[0]))  # the frame's own run tag, as a run file's last field
    else:
        qids, docs, values = _records(data, what, value_names)
    return qids, docs, values, tag


def qrels_text(qrels: QrelsLike, what: str = "qrels") -> bytes:
    """Qrels given as data written as TREC qrels lines (``qid 0 docno rel``)."""
    qids, docs, rels, _ = _triples(qrels, what, RELEVANCE_COLUMNS, "relevance")
    lines = [f"{q} 0 {d} {r}" for q, d, r in zip(_ids(qids, what, "query_id"), _ids(docs, what, "doc_id"),
                                                  _numbers(rels, what, _relevance), strict=True)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def run_text(run: RunLike, tag: str, what: str = "run") -> bytes:
    """A run given as data written as TREC run lines (``qid Q0 docno rank score tag``), in the order given (the
    order a CLEF TAR run is ranked by; the rank column is the row number, which no reader ranks by)."""
    qids, docs, scores, own_tag = _triples(run, what, SCORE_COLUMNS, "score")
    tag = own_tag or tag
    lines = [f"{q} Q0 {d} {rank} {s} {tag}" for rank, (q, d, s) in enumerate(
        zip(_ids(qids, what, "query_id"), _ids(docs, what, "doc_id"), _numbers(scores, what, _score), strict=True),
        start=1)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _byte_column(values: list[Any], what: str, field: str, *, few: bool = False) -> Any:
    """The ids as the scanner's fixed-width byte strings (UTF-8), checked as `_identifier` checks them. ``few``:
    the column repeats a few values (query ids), which are then encoded once each."""
    import numpy as np

    texts = values if set(map(type, values)) <= {str} else [v if isinstance(v, str) else str(v) for v in values]
    joined = "".join(texts)
    # a substring search per character is a memchr over the text, faster than one pattern over it
    if any(c in joined for c in " \t\n\r\x0b\x0c\0") or "" in texts:  # rows only to name the first bad one
        for row, text in enumerate(texts, start=1):
            _identifier(text, what, row, field)
            if "\0" in text:
                raise InputShapeError(f"{what}: row {row}: field {field}: {text!r} holds a NUL character")
    if few:
        index: dict[str, int] = {}
        codes = np.fromiter((index.setdefault(t, len(index)) for t in texts), dtype=np.int64, count=len(texts))
        return _encoded(list(index))[codes]
    return _encoded(texts)


def _encoded(texts: list[str]) -> Any:
    import numpy as np

    try:
        return np.array(texts, dtype=np.bytes_)  # ASCII, the usual ids: numpy encodes them in C
    except UnicodeEncodeError:
        return np.array([t.encode("utf-8") for t in texts], dtype=np.bytes_)


def _float_column(values: list[Any], what: str) -> Any:
    import numpy as np

    try:
        raw = np.asarray(values)
    except (TypeError, ValueError):
        raw = np.asarray(values, dtype=object)
    if raw.dtype.kind in "fiu" and not (raw.dtype.kind == "f" and np.isnan(raw).any()):
        return raw.astype(np.float64)
    # anything else (text, booleans, NaN, mixed) row by row: `_score` names the first value that is no number
    return np.array([float(_score(v, what, row)) for row, v in enumerate(values, start=1)], dtype=np.float64)


def _int_column(values: list[Any], what: str) -> Any:
    import numpy as np

    try:
        raw = np.asarray(values)
    except (TypeError, ValueError):
        raw = np.asarray(values, dtype=object)
    if raw.dtype.kind in "iu":
        return raw.astype(np.int64)
    if raw.dtype.kind == "f" and np.isfinite(raw).all() and (raw == np.round(raw)).all():
        return raw.astype(np.int64)
    return np.array([int(_relevance(v, what, row)) for row, v in enumerate(values, start=1)], dtype=np.int64)


def qrels_columns(qrels: QrelsLike, what: str = "<qrels>") -> Any:
    """Qrels given as data as the columns the qrels reader makes of a file (`QrelsColumns`, rows in the order
    given; an error names ``what`` and the row as a file's line)."""
    from reviewdepth.formats.scan import LineNumbers, StringColumn
    from reviewdepth.formats.trec import QrelsColumns

    qids, docs, rels, _ = _triples(qrels, what, RELEVANCE_COLUMNS, "relevance")
    if not qids:
        raise InputShapeError(f"{what}: no judgments")
    return QrelsColumns(what, _byte_column(qids, what, "query_id", few=True),
                        StringColumn(_byte_column(docs, what, "doc_id"), None), _int_column(rels, what),
                        LineNumbers(len(qids)))


def run_columns(run: RunLike, name: str = "run") -> Any:
    """A run given as data as the columns the run reader makes of a file (`reviewdepth.formats.runs.Run`)."""
    from reviewdepth.formats.runs import Run
    from reviewdepth.formats.scan import LineNumbers, StringColumn

    qids, docs, scores, own_tag = _triples(run, name, SCORE_COLUMNS, "score")
    if not qids:
        raise InputShapeError(f"{name}: no ranked documents")
    return Run(name, _byte_column(qids, name, "query_id", few=True),
               StringColumn(_byte_column(docs, name, "doc_id"), None), LineNumbers(len(qids)), own_tag or _tag(name),
               _float_column(scores, name))


def _tag(name: str) -> str:
    tag = "".join("_" if c.isspace() else c for c in name)
    return tag or "run"


def qrels_input(qrels: QrelsLike) -> EvalInput:
    """`EvalInput` of qrels: a path (gzip ok) as it is; nested dicts ``{qid: {docno: rel}}``, a DataFrame with
    query, document and relevance columns, or records (ir_measures' ``Qrel`` or tuples) as TREC text."""
    if isinstance(qrels, (str, os.PathLike)):
        return EvalInput(os.fspath(qrels))
    return EvalInput("<qrels>", qrels_text(qrels))


def run_input(run: RunLike, name: str = "run") -> EvalInput:
    """`EvalInput` of a run: a path as it is; nested dicts ``{qid: {docno: score}}``, a DataFrame with query,
    document and score columns, or records (ir_measures' ``ScoredDoc`` or tuples) as TREC text tagged ``name``."""
    if isinstance(run, (str, os.PathLike)):
        return EvalInput(os.fspath(run))
    return EvalInput(name, run_text(run, _tag(name), what=name))


def named_runs(runs: Mapping[str, RunLike] | Sequence[RunLike]) -> list[EvalInput]:
    """Runs of `compare`: a mapping name -> run (its order kept, the first the baseline), or a sequence (paths keep
    their names, the others are ``run1``, ``run2``, …)."""
    if isinstance(runs, Mapping):
        return [run_input(run, str(name)) if not isinstance(run, (str, os.PathLike))
                else EvalInput(os.fspath(run)) for name, run in runs.items()]
    if isinstance(runs, (str, os.PathLike)) or _is_frame(runs):
        raise InputShapeError("runs: give several runs (a list, or a mapping of names to runs), not one")
    return [run_input(run, _name(run, f"run{i}")) for i, run in enumerate(runs, start=1)]
