"""What every router shares: the dependencies (engine, key by scope) and the problem responses."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

from fastapi import Depends, Query, UploadFile
from pydantic import StringConstraints
from sqlalchemy import Engine

from reviewdepth.api.auth import admin_key, engine_of, read_key, write_key
from reviewdepth.api.problems import ApiProblem, problem_responses
from reviewdepth.services.evidence.access import KeyRecord
from reviewdepth.services.evidence.confidence import CONFIDENCE_MAX, CONFIDENCE_MIN, CONFIDENCE_RULE
from reviewdepth.store.validation import INT64_MAX

EngineDep = Annotated[Engine, Depends(engine_of)]
Reader = Annotated[KeyRecord, Depends(read_key)]
Writer = Annotated[KeyRecord, Depends(write_key)]
Admin = Annotated[KeyRecord, Depends(admin_key)]
AUTH = problem_responses(401, 403)
READ = {**AUTH, **problem_responses(404, 409, 422)}  # 409: the state refuses it (a topic with no queue)
WRITE = {**AUTH, **problem_responses(404, 409, 413, 422)}
JSON = "application/json"
CONFIDENCE_DESCRIPTION = f"Confidence level, {CONFIDENCE_RULE}."
# the range in the OpenAPI document; the decimals are checked by the service (`checked_confidence`), for both doors
ConfidenceQuery = Annotated[float, Query(ge=CONFIDENCE_MIN, le=CONFIDENCE_MAX, description=CONFIDENCE_DESCRIPTION)]
# a target recall as a decimal (what `services.answers.monitor.checked_target` and the report read as a fraction)
TARGET_PATTERN = r"^(?:0*\.[0-9]*[1-9][0-9]*|0*1(?:\.0*)?)$"  # in (0, 1]
BELOW_ONE_PATTERN = r"^0*\.[0-9]*[1-9][0-9]*$"  # in (0, 1): a sample cannot certify recall 1
TARGET_LENGTH = 40
Target = Annotated[str, StringConstraints(max_length=TARGET_LENGTH, pattern=TARGET_PATTERN)]
TargetQuery = Annotated[str, Query(description="Target recall in (0, 1], as a decimal (0.95).",
                                   max_length=TARGET_LENGTH, pattern=TARGET_PATTERN)]
CertifiableTargetQuery = Annotated[str, Query(description="Target recall to certify, in (0, 1), as a decimal.",
                                              max_length=TARGET_LENGTH, pattern=BELOW_ONE_PATTERN)]
AsOfId = Annotated[int | None, Query(ge=0, le=INT64_MAX, description="Judgment id: the state when it was recorded.")]


def upload_bytes(upload: UploadFile, name: str, limit: int) -> bytes:
    """The bytes of an uploaded file, gzip decompressed through a temporary file with at most ``limit``
    decompressed bytes (`DecompressedTooLarge` → 413), so a gzip bomb never fills memory."""
    from reviewdepth.formats.compressed import GZIP_MAGIC, copy_decompressed

    source = upload.file
    source.seek(0)
    if source.read(len(GZIP_MAGIC)) != GZIP_MAGIC:
        source.seek(0)
        return source.read()
    source.seek(0)
    with tempfile.TemporaryFile(prefix="reviewdepth-gunzip-") as spool:
        copy_decompressed(source, spool, name, limit)  # type: ignore[arg-type]
        spool.seek(0)
        return spool.read()


@contextmanager
def measure_problems() -> Iterator[None]:
    """`/evaluate` and `/compare`: an unknown measure or a bad option value is a 422 naming it; a bad line of an
    uploaded file (`InputError`, itself a ValueError) goes on to the application's handler, which names the file,
    line and field."""
    from reviewdepth.formats.errors import InputError
    from reviewdepth.measures.suite import MeasureError

    try:
        yield
    except MeasureError as exc:
        raise ApiProblem(422, f"measure: {exc}") from None
    except ValueError as exc:
        if isinstance(exc, InputError):
            raise
        raise ApiProblem(422, str(exc)) from None
