"""The endpoints, one module per resource: each endpoint a module-level function (importable and named in
the OpenAPI document by its name), added to a router by its module's ``add_routes``.

`add_all` adds them to the application's own router (so a request is matched once), in an order where a fixed
path comes before a parameter that would take it (``/samples/stream`` before ``/samples/{sample_id}``)."""

from __future__ import annotations

from fastapi import APIRouter

from reviewdepth.api.routers import (
    compare,
    evaluate,
    files,
    judgments,
    monitor,
    queues,
    reports,
    samples,
    service,
    simulations,
    topics,
)


def add_all(router: APIRouter) -> APIRouter:
    for module in (service, topics, files, queues, judgments, samples, reports, evaluate, compare, monitor,
                   simulations):
        module.add_routes(router)
    return router
