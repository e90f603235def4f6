"""What every router shares: the dependencies (engine, key by scope) and the problem responses."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import Depends, Query, UploadFile
from pydantic import PlainSerializer, PlainValidator, WithJsonSchema
from sqlalchemy import Engine

from reviewdepth.api.auth import admin_key, engine_of, read_key, write_key
from reviewdepth.api.problems import ApiProblem, problem_responses
from reviewdepth.estimation.target import DEFAULT_TARGET, TARGET_RANGE, Target
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
# a target recall as the API takes it: a decimal (the schema's pattern, which the CLI's fractions such as 19/20 do
# not match), parsed into a `Target` (`reviewdepth.estimation.target`: one range, one message) before the route runs
TARGET_PATTERN = r"^(?:0*\.[0-9]*[1-9][0-9]*|0*1(?:\.0*)?)$"  # in (0, 1]
BELOW_ONE_PATTERN = r"^0*\.[0-9]*[1-9][0-9]*$"  # in (0, 1): a sample cannot certify recall 1
TARGET_LENGTH = 40
DEFAULT_TARGET_TEXT = DEFAULT_TARGET.text  # the schemas' default (a `Target` is not JSON)


def _target_parser(pattern: str, *, certify: bool) -> Callable[[object], Target]:
    """Reads a decimal matching ``pattern`` as a `Target`; a ValueError (a 422 problem body naming the parameter)
    otherwise."""
    decimal = re.compile(pattern)

    def parsed(given: object) -> Target:
        if isinstance(given, Target):
            return given
        if not isinstance(given, str) or len(given) > TARGET_LENGTH or not decimal.match(given):
            raise ValueError(f"the target recall must be a decimal in {'(0, 1)' if certify else TARGET_RANGE} "
                             f"(e.g. 0.95), not {given!r}")
        tau = Target.parse(given)  # `TargetError`, a ValueError: a 422 naming the parameter
        return tau.require_certifiable() if certify else tau

    return parsed


# a `Target` in and its text out; the schema states the decimal pattern
TargetValue = Annotated[Target, PlainValidator(_target_parser(TARGET_PATTERN, certify=False)),
                        PlainSerializer(str, return_type=str),
                        WithJsonSchema({"type": "string", "maxLength": TARGET_LENGTH, "pattern": TARGET_PATTERN})]
CertifiableTargetValue = Annotated[Target, PlainValidator(_target_parser(BELOW_ONE_PATTERN, certify=True)),
                                   PlainSerializer(str, return_type=str),
                                   WithJsonSchema({"type": "string", "maxLength": TARGET_LENGTH,
                                                   "pattern": BELOW_ONE_PATTERN})]



def _query_schema(pattern: str, description: str) -> dict[str, Any]:
    """A ``target`` query parameter's schema, written whole (pydantic cannot write a `Target` default itself)."""
    return {"type": "string", "maxLength": TARGET_LENGTH, "pattern": pattern, "description": description,
            "default": DEFAULT_TARGET_TEXT}


TARGET_QUERY = "Target recall in (0, 1], as a decimal (0.95)."
CERTIFIABLE_QUERY = "Target recall to certify, in (0, 1), as a decimal."
TargetQuery = Annotated[Target, Query(description=TARGET_QUERY),
                        PlainValidator(_target_parser(TARGET_PATTERN, certify=False)),
                        PlainSerializer(str, return_type=str),
                        WithJsonSchema(_query_schema(TARGET_PATTERN, TARGET_QUERY))]
CertifiableTargetQuery = Annotated[Target, Query(description=CERTIFIABLE_QUERY),
                                   PlainValidator(_target_parser(BELOW_ONE_PATTERN, certify=True)),
                                   PlainSerializer(str, return_type=str),
                                   WithJsonSchema(_query_schema(BELOW_ONE_PATTERN, CERTIFIABLE_QUERY))]
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
