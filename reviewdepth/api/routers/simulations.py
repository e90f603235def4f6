"""``/simulations``: replay completed reviews in the background (`reviewdepth.services.simulation.simulation_jobs`).

``POST /simulations`` checks the request (plan and topics) and answers 202 with the job and its ``Location`` at
once; the job then runs in this process's `reviewdepth.api.jobs.JobRunner`, after the jobs posted before it.
``GET /simulations/{job_id}`` gives its status and progress, and the report when it is done (the object of
``reviewdepth simulate --format json``). A job the server could not finish because it stopped is ``interrupted``;
``POST /simulations/{job_id}/rerun`` runs it again. A job is seen (and rerun) only by the key that posted it and
by admin keys: any other key gets the 404 of an unknown id."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Request, Response
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from reviewdepth.api.problems import problem_responses
from reviewdepth.api.routers.common import (
    AUTH,
    CONFIDENCE_DESCRIPTION,
    READ,
    CertifiableTargetValue,
    EngineDep,
    Reader,
    Writer,
)
from reviewdepth.api.schemas import JsonInt, RuleName, SimulationReportOut, TopicName
from reviewdepth.estimation.target import DEFAULT_TARGET
from reviewdepth.report.simulation_model import DesignKind
from reviewdepth.services.evidence.confidence import CONFIDENCE_MAX, CONFIDENCE_MIN
from reviewdepth.services.simulation.simulation_jobs import MAX_REPLICATES, MAX_TOPICS, JobRecord
from reviewdepth.store.validation import INT64_MAX

JobStatus = Literal["queued", "running", "done", "failed", "cancelled", "interrupted"]
JobId = Annotated[int, Path(ge=1, le=INT64_MAX)]
Number = float | None  # NaN and infinities are written as null


class DesignIn(BaseModel):
    """What the replayed team judges besides the ranked prefix."""

    model_config = ConfigDict(extra="forbid")

    kind: DesignKind = Field(default="none", description=(
        "none (nothing: the heuristics only), rest (a fresh random sample of the unreviewed rest at every look), "
        "population (one random sample of the whole queue before the review), audit (the audit stream)."))
    sample_size: JsonInt = Field(default=0, ge=0, le=INT64_MAX, strict=True,
                             description="Sample size n (rest, population).")
    every: JsonInt = Field(default=0, ge=0, le=INT64_MAX, strict=True,
                       description="One audit document after every K ranked documents (audit).")


class CostIn(BaseModel):
    """The cost of one document by role, as ``reviewdepth simulate --cost review=R,sample=S,produce=P``."""

    model_config = ConfigDict(extra="forbid")

    # strict: a number (integers included), never a boolean or a numeric string (lax mode read false as 0)
    review: float = Field(default=1.0, gt=0, le=1e6, strict=True, description="Judged in first-pass review.")
    sample: float = Field(default=1.0, gt=0, le=1e6, strict=True,
                          description="Judged in a sample or audit (often a senior reviewer's).")
    produce: float = Field(default=1.0, ge=0, le=1e6, strict=True, description=(
        "Produced without being reviewed: recorded; a replayed review is one-phase and produces none."))


def _cost_kind(value: object) -> str:
    return "text" if isinstance(value, str) else "roles"


# an object of roles, or the CLI's text: the one the value is is checked (so an error names that one alone)
CostField = Annotated[Annotated[CostIn, Tag("roles")] | Annotated[str, Tag("text"), Field(max_length=200)],
                      Discriminator(_cost_kind)]


class SimulationIn(BaseModel):
    """A simulation: the store's fully judged topics replayed under a design, per rule."""

    model_config = ConfigDict(extra="forbid")

    topics: list[TopicName] = Field(default_factory=list, max_length=MAX_TOPICS, description=(
        "Topics to replay (each fully judged); none: every topic of the store whose newest queue is."))
    design: DesignIn = Field(default_factory=DesignIn)
    rules: list[RuleName] = Field(default_factory=list, max_length=20,
                                  description="Rules to replay; none: every rule the design allows.")
    target: CertifiableTargetValue = Field(default=DEFAULT_TARGET, description=(
        "Target recall, strictly between 0 and 1, as a decimal."), json_schema_extra={
        "minLength": 1, "default": DEFAULT_TARGET.text})
    confidence: float = Field(default=0.95, ge=CONFIDENCE_MIN, le=CONFIDENCE_MAX, description=CONFIDENCE_DESCRIPTION)
    looks: JsonInt = Field(default=100, ge=1, le=INT64_MAX, strict=True,
                       description="The replayed team looks after every K ranked documents.")
    replicates: JsonInt = Field(default=100, ge=1, le=MAX_REPLICATES, strict=True,
                            description="Seeded replays per topic.")
    seed: JsonInt = Field(default=0, ge=0, le=INT64_MAX, strict=True, description="Seed of the replays.")
    cost: CostField | None = Field(default=None, description=(
        "Per-role costs of a document: an object ({\"review\": 1, \"sample\": 3, \"produce\": 1}) or the string "
        "`simulate --cost` takes (\"review=1,sample=3,produce=1\"); a role left out costs 1. The planned policy "
        "weighs them and the cost column reads them."))


class ProgressOut(BaseModel):
    done: int = Field(description="Jobs (topic × chunk of replicates) finished.")
    total: int | None = Field(description="Jobs in all; null until the job starts replaying.")


class SimulationRequestOut(BaseModel):
    """The request as stored."""

    topics: list[str]
    design: DesignKind
    sample_size: int
    every: int
    rules: list[RuleName]
    target: str
    confidence: float
    looks: int
    replicates: int
    seed: int
    # a job stored before per-role costs has none: 1
    review_cost: float = 1.0
    sample_cost: float = 1.0
    produce_cost: float = 1.0


class SimulationJobOut(BaseModel):
    """A simulation job: status, progress, and the report once done (``error`` says why a job failed)."""

    id: int
    status: JobStatus
    request: SimulationRequestOut
    created_by: str
    created_at: str
    started_at: str | None
    finished_at: str | None
    progress: ProgressOut
    error: str | None
    result: SimulationReportOut | None  # type: ignore[valid-type]


def queued(job: JobRecord, request: Request, response: Response) -> dict[str, Any]:
    """The 202 body of a job just queued, handed to the process's `JobRunner`, with its ``Location``."""
    request.app.state.jobs.submit(job.id)
    response.headers["Location"] = f"/simulations/{job.id}"
    return job.as_dict()


def post_simulation(body: SimulationIn, request: Request, response: Response, engine: EngineDep,
                    key: Writer) -> dict[str, Any]:
    """Replay the store's fully judged topics under a sampling design, ``replicates`` seeded times each, and
    measure every rule: failure rate (stops with recall below the target) with its Clopper–Pearson interval,
    recall at stop, cost against the oracle depth. Answers 202 at once with the queued job (``Location``:
    its URL); poll ``GET /simulations/{id}``. A bad plan, an unknown topic or one that is not fully judged is
    refused here (422/404) and no job is stored."""
    from reviewdepth.services.simulation.costs import RoleCosts, parse_costs
    from reviewdepth.services.simulation.simulation_jobs import SimulationRequest, create_job

    cost = (RoleCosts() if body.cost is None else parse_costs(body.cost) if isinstance(body.cost, str)
            else RoleCosts(body.cost.review, body.cost.sample, body.cost.produce))
    simulation = SimulationRequest(
        topics=tuple(body.topics), design=body.design.kind, sample_size=body.design.sample_size,
        every=body.design.every, rules=tuple(body.rules), target=body.target.text, confidence=body.confidence,
        looks=body.looks, replicates=body.replicates, seed=body.seed, review_cost=cost.review,
        sample_cost=cost.sample, produce_cost=cost.produce_recorded)
    return queued(create_job(engine, simulation, reviewer=key.reviewer, key_id=key.id), request, response)


def rerun_simulation(job_id: JobId, request: Request, response: Response, engine: EngineDep,
                     key: Writer) -> dict[str, Any]:
    """Run an ``interrupted`` job again, from the start (a server that stopped while the job was queued or
    running marks it so): 202 with the job, queued again; 409 for a job in any other status. Only the key
    that posted the job, or an admin key, may (404 for any other)."""
    from reviewdepth.services.simulation.simulation_jobs import rerun_job

    return queued(rerun_job(engine, job_id, viewer=key), request, response)


def get_simulation(job_id: JobId, engine: EngineDep, key: Reader) -> dict[str, Any]:
    """A simulation job: ``queued``, ``running`` (with progress), ``done`` (with the report: the object of
    ``reviewdepth simulate --format json``), ``failed`` (with the one-line reason) or ``interrupted`` (the
    server stopped before it finished: ``POST /simulations/{id}/rerun``). Only the key that posted the job,
    or an admin key, sees it (404 for any other, as for an unknown id)."""
    from reviewdepth.services.simulation.simulation_jobs import get_job

    return get_job(engine, job_id, viewer=key).as_dict()


def add_routes(router: APIRouter) -> None:
    router.add_api_route("/simulations", post_simulation, methods=["POST"], status_code=202,
                         response_model=SimulationJobOut, tags=["simulations"],
                         responses={**AUTH, **problem_responses(404, 409, 413, 422)})
    router.add_api_route("/simulations/{job_id}/rerun", rerun_simulation, methods=["POST"], status_code=202,
                         response_model=SimulationJobOut, tags=["simulations"],
                         responses={**AUTH, **problem_responses(404, 409, 422)})
    router.add_api_route("/simulations/{job_id}", get_simulation, methods=["GET"], response_model=SimulationJobOut,
                         responses=READ, tags=["simulations"])
