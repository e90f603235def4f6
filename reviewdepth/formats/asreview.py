"""ASReview LAB project files (``.asreview``): a zip of ``project.json`` and ``results.db`` (SQLite).

The layout read here is ASReview's project file version 3 (ASReview 2.x and 3.x)::

    project.json         {"id", "name", "version", "project_file_version": 3, "datasets": [...], "review": ...}
    results.db           SQLite:
      record             record_id (the document id ASReview exports), dataset_row, title, …, group_id
      results            record_id, label (1 relevant, 0 irrelevant, NULL shown but not decided yet),
                         time (Unix seconds of the decision), user_id, querier (NULL for prior knowledge), …
                         in the order the records were labelled (rowid)
      last_ranking       record_id, ranking (0 = the model's first choice), … : the last model's ranking
      decision_changes   record_id, label, time, user_id: a results row as it was before its label changed
                         or the row was deleted (ASReview's triggers write it)
    data/…               the dataset as uploaded

Records of one duplicate group (same ``group_id``) are labelled together by ASReview, so each has its own
results row. The review order (`AsreviewProject.review_order`) is the order ASReview screened and would go on
screening: the labelled records in labelling order, then the rest in ``last_ranking`` order, then any record
the ranking does not hold in record_id order.

Pure: the zip and the database are read in memory with the standard library (``zipfile``,
``sqlite3.Connection.deserialize``); nothing is written to disk.
"""

from __future__ import annotations

import io
import json
import math
import sqlite3
import zipfile
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime

from reviewdepth.formats.errors import InputError

CONFIG = "project.json"
DATABASE = "results.db"
SUPPORTED_VERSION = 3
REQUIRED_COLUMNS = {
    "record": ("record_id",),
    "results": ("record_id", "label", "time", "user_id"),
    "last_ranking": ("record_id", "ranking"),
    "decision_changes": ("record_id", "label", "time"),
}


@dataclass(frozen=True)
class AsreviewDecision:
    """A labelling decision: ``label`` 1 (relevant) or 0; ``time`` UTC (None when ASReview kept no time);
    ``user_id`` ASReview's user (None for a project without accounts or for prior knowledge)."""

    record_id: int
    label: int
    time: datetime | None
    user_id: int | None
    prior: bool


@dataclass(frozen=True)
class AsreviewProject:
    """One project: ``labels`` in labelling order (the current decision per record); ``history`` the earlier
    decisions ASReview logged in ``decision_changes`` (oldest first), each superseded by a later one or by the
    record's return to the pool; ``pending`` the records shown but not decided; ``ranking`` the last model
    ranking (first choice first)."""

    path: str
    project_id: str
    name: str
    version: str
    records: list[int]
    labels: list[AsreviewDecision]
    history: list[AsreviewDecision]
    pending: list[int]
    ranking: list[int]

    def review_order(self) -> list[int]:
        """The labelled records in labelling order, then the rest in the model's ranking, then any record the
        ranking lacks (record_id order): every record once."""
        order: list[int] = []
        seen: set[int] = set()
        for record in [d.record_id for d in self.labels] + self.ranking + self.records:
            if record not in seen:
                seen.add(record)
                order.append(record)
        return order

    def unlabelled(self) -> list[int]:
        labelled = {d.record_id for d in self.labels}
        return [r for r in self.review_order() if r not in labelled]


# how far a member may inflate: INFLATION_RATIO × the archive's actual bytes, at least INFLATION_FLOOR and at most
# INFLATION_CAP. Counted on the bytes actually inflated, never on the sizes the zip declares (a member declaring
# 100 bytes was inflated in full, and a 248 KiB archive inflating to 250 MiB took a server from 307 to 1,056 MB).
# SQLite databases compress about 3-10×; zip bombs 1,000× and more.
INFLATION_RATIO = 100
INFLATION_FLOOR = 64 * 1024 * 1024
INFLATION_CAP = 1024 * 1024 * 1024
_CHUNK = 1024 * 1024


def inflation_limit(archive_bytes: int) -> int:
    """The most bytes a member of an archive of ``archive_bytes`` may inflate to."""
    return min(INFLATION_CAP, max(INFLATION_FLOOR, INFLATION_RATIO * archive_bytes))


def _member(archive: zipfile.ZipFile, path: str, name: str, archive_bytes: int) -> tuple[str, bytearray]:
    """The member ``name`` at the zip's root or in its one top folder (as some archivers write it), inflated in
    chunks and refused as soon as it passes `inflation_limit` of the archive's ``archive_bytes``."""
    limit = inflation_limit(archive_bytes)
    names = archive.namelist()
    candidates = [n for n in names if n == name or (n.endswith("/" + name) and n.count("/") == 1)]
    if not candidates:
        raise InputError(path, None, name, f"not an ASReview project file: the zip holds no {name}")
    out = bytearray()
    try:
        with archive.open(candidates[0]) as stream:
            while chunk := stream.read(_CHUNK):
                out += chunk
                if len(out) > limit:
                    raise InputError(path, None, candidates[0], (
                        f"inflates beyond {limit // (1024 * 1024):,} MiB from a {archive_bytes:,}-byte archive: "
                        "not read (a zip bomb, or a project larger than this import allows; export the "
                        "project again from ASReview LAB)"))
    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, ValueError, zlib.error) as exc:
        raise InputError(path, None, name, f"corrupt zip member: {exc}") from None
    return candidates[0], out


def _time(value: object, path: str, field: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(path, None, field, f"time {value!r} is not a Unix time")
    try:
        return datetime.fromtimestamp(float(value), UTC)
    except (OverflowError, OSError, ValueError):
        raise InputError(path, None, field, f"time {value!r} is out of range") from None


def _int(value: object, path: str, field: str, *, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(path, None, field, f"{value!r} is not an integer")
    return value


def _label(value: object, path: str, field: str) -> int | None:
    label = _int(value, path, field, allow_none=True)
    if label not in (None, 0, 1):
        raise InputError(path, None, field, f"label {label!r} is neither 1 (relevant) nor 0 (irrelevant)")
    return label


def read_asreview(data: bytes, path: str) -> AsreviewProject:
    """Read a ``.asreview`` file's bytes; `InputError` names the file and the member or column that is wrong."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise InputError(path, None, None, "not an ASReview project file (.asreview is a zip archive)") from None
    with archive:
        config_name, config_bytes = _member(archive, path, CONFIG, len(data))
        try:
            config = json.loads(config_bytes.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(path, None, config_name, f"not JSON: {exc}") from None
        if not isinstance(config, dict):
            raise InputError(path, None, config_name, "not a JSON object")
        version = config.get("project_file_version")
        if version != SUPPORTED_VERSION:
            raise InputError(path, None, f"{config_name}: project_file_version",
                             f"{version!r}; project files of version {SUPPORTED_VERSION} (ASReview 2 and 3) are "
                             "read: open the project in a recent ASReview LAB and export it again")
        db_name, db_bytes = _member(archive, path, DATABASE, len(data))
    project_id = str(config.get("id") or "")
    name = str(config.get("name") or project_id)
    if not name:
        raise InputError(path, None, f"{config_name}: name", "the project has neither a name nor an id")
    conn = sqlite3.connect(":memory:")
    try:
        try:
            conn.deserialize(db_bytes)
            tables = _columns(conn)
        except sqlite3.DatabaseError as exc:
            raise InputError(path, None, db_name, f"not an SQLite database: {exc}") from None
        for table, columns in REQUIRED_COLUMNS.items():
            if table not in tables:
                raise InputError(path, None, f"{db_name}: {table}", "table missing (not an ASReview project)")
            for column in columns:
                if column not in tables[table]:
                    raise InputError(path, None, f"{db_name}: {table}.{column}", "column missing")
        try:
            return _read_tables(conn, path, db_name, project_id, name, str(config.get("version") or ""))
        except sqlite3.DatabaseError as exc:
            raise InputError(path, None, db_name, f"corrupt database: {exc}") from None
    finally:
        conn.close()


def _columns(conn: sqlite3.Connection) -> dict[str, set[str]]:
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {t: {r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')} for t in names}


def _read_tables(conn: sqlite3.Connection, path: str, db: str, project_id: str, name: str,
                 version: str) -> AsreviewProject:
    records: list[int] = []
    for (record_id,) in conn.execute("SELECT record_id FROM record ORDER BY record_id"):
        records.append(_int(record_id, path, f"{db}: record.record_id") or 0)
    known = set(records)

    def record_of(value: object, table: str) -> int:
        record = _int(value, path, f"{db}: {table}.record_id")
        if record not in known:
            raise InputError(path, None, f"{db}: {table}.record_id", f"record {record!r} is not in the record table")
        return int(record)  # type: ignore[arg-type]

    has_querier = "querier" in _columns(conn)["results"]
    labels: list[AsreviewDecision] = []
    pending: list[int] = []
    querier = "querier" if has_querier else "NULL"
    for record_id, label, when, user, query in conn.execute(
            f"SELECT record_id, label, time, user_id, {querier} FROM results ORDER BY rowid"):
        record = record_of(record_id, "results")
        value = _label(label, path, f"{db}: results.label")
        if value is None:
            pending.append(record)
            continue
        labels.append(AsreviewDecision(record, value, _time(when, path, f"{db}: results.time"),
                                       _int(user, path, f"{db}: results.user_id", allow_none=True),
                                       prior=query is None))
    history: list[AsreviewDecision] = []
    user_column = "user_id" if "user_id" in _columns(conn)["decision_changes"] else "NULL"
    for record_id, label, when, user in conn.execute(
            f"SELECT record_id, label, time, {user_column} FROM decision_changes ORDER BY rowid"):
        record = record_of(record_id, "decision_changes")
        value = _label(label, path, f"{db}: decision_changes.label")
        if value is None:  # the row was pending (shown, undecided) before its first decision: not a decision
            continue
        history.append(AsreviewDecision(record, value, _time(when, path, f"{db}: decision_changes.time"),
                                        _int(user, path, f"{db}: decision_changes.user_id", allow_none=True),
                                        prior=False))
    ranking: list[int] = []
    ranked: set[int] = set()
    for record_id, rank in conn.execute("SELECT record_id, ranking FROM last_ranking ORDER BY ranking, rowid"):
        record = record_of(record_id, "last_ranking")
        _int(rank, path, f"{db}: last_ranking.ranking")
        if record in ranked:
            raise InputError(path, None, f"{db}: last_ranking.record_id", f"record {record} is ranked twice")
        ranked.add(record)
        ranking.append(record)
    return AsreviewProject(path, project_id, name, version, records, labels, history, pending, ranking)
