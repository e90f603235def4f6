"""What every router shares: the dependencies (engine, key by scope) and the problem responses."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query
from sqlalchemy import Engine

from reviewdepth.api.auth import admin_key, engine_of, read_key, write_key
from reviewdepth.api.problems import problem_responses
from reviewdepth.services.confidence import CONFIDENCE_MAX, CONFIDENCE_MIN, CONFIDENCE_RULE
from reviewdepth.services.keys import KeyRecord

EngineDep = Annotated[Engine, Depends(engine_of)]
Reader = Annotated[KeyRecord, Depends(read_key)]
Writer = Annotated[KeyRecord, Depends(write_key)]
Admin = Annotated[KeyRecord, Depends(admin_key)]
AUTH = problem_responses(401, 403)
READ = {**AUTH, **problem_responses(404, 422)}
WRITE = {**AUTH, **problem_responses(404, 409, 413, 422)}
JSON = "application/json"
CONFIDENCE_DESCRIPTION = f"Confidence level, {CONFIDENCE_RULE}."
# the range in the OpenAPI document; the decimals are checked by the service (`checked_confidence`), for both doors
ConfidenceQuery = Annotated[float, Query(ge=CONFIDENCE_MIN, le=CONFIDENCE_MAX, description=CONFIDENCE_DESCRIPTION)]
