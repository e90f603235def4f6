"""The OpenAPI document, completed: what FastAPI cannot derive from the endpoints' signatures.

* components used only through ``openapi_extra`` or ``responses`` (`schemas.RankingIn`, the JSON body of a queue
  upload; the bodies of routes that answer bytes, `schemas.DOCUMENTED_BODIES` and `schemas.JSON_SAFE_BODIES`);
* the problem responses every operation can give beyond its own: 503 when the database is busy or unavailable
  (any operation that reads or writes it), and for operations with a body 400 (a body that cannot be decoded:
  bad multipart, bad gzip), 413 (over a size limit) and 415 (a content type the operation does not take);
* what the application's parameter check (`reviewdepth.api.parameters`) accepts, stated on every path and query
  parameter (`parameter_schemas`), and integer bounds written as integers (FastAPI's document model holds them as
  floats, which rounds the int64 limits to 2**63);
* OpenAPI links between operations (create a topic → store a queue → record judgments → report, draw a sample
  → read it, start an audit stream → read it, serve it, a topic or its stream → its monitor), which clients and
  stateful testers (schemathesis) follow with real names and ids.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema

from reviewdepth.api import schemas
from reviewdepth.api.parameters import parameter_schema
from reviewdepth.api.problems import PROBLEM_TYPE
from reviewdepth.store.validation import INT64_MAX, INT64_MIN

PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
BODY_STATUSES = {400: "Bad Request", 413: "Content Too Large", 415: "Unsupported Media Type"}
NO_DATABASE = {"/health"}  # answers 503 itself, documented on the route

TOPIC_FROM_BODY = "$response.body#/topic"


def _links(operation_ids: dict[tuple[str, str], str]) -> dict[tuple[str, str, str], dict[str, dict[str, Any]]]:
    """The links, by the operations' ids as FastAPI named them (found by path and method)."""

    def target(path: str, method: str, parameters: dict[str, str]) -> dict[str, Any] | None:
        operation_id = operation_ids.get((path, method))
        return None if operation_id is None else {"operationId": operation_id, "parameters": parameters}

    topic_from_name = {"topic": "$response.body#/name"}
    topic = {"topic": TOPIC_FROM_BODY}
    queue = {"topic": TOPIC_FROM_BODY, "queue": "$response.body#/queue"}
    wanted: dict[tuple[str, str, str], dict[str, tuple[str, str, dict[str, str]]]] = {
        ("/topics", "post", "201"): {
            "GetTopic": ("/topics/{topic}", "get", topic_from_name),
            "PutQueue": ("/topics/{topic}/queues/{queue}", "put", topic_from_name),
            "PostJudgments": ("/topics/{topic}/judgments", "post", topic_from_name),
            "GetJudgments": ("/topics/{topic}/judgments", "get", topic_from_name),
            "GetReport": ("/topics/{topic}/report", "get", topic_from_name),
            "GetMonitor": ("/topics/{topic}/monitor", "get", topic_from_name),
            "PutScreeningOrder": ("/topics/{topic}/screening-order", "put", topic_from_name),
            "GetScreening": ("/topics/{topic}/screening", "get", topic_from_name),
            "PatchScreening": ("/topics/{topic}/screening", "patch", topic_from_name),
            "GetPrisma": ("/topics/{topic}/prisma", "get", topic_from_name),
            "GetValidation": ("/topics/{topic}/validation", "get", topic_from_name),
        },
        ("/topics/{topic}/queues/{queue}", "put", "201"): {
            "GetQueue": ("/topics/{topic}/queues/{queue}", "get", queue),
            "GetEntries": ("/topics/{topic}/queues/{queue}/entries", "get", queue),
            "PostJudgments": ("/topics/{topic}/judgments", "post", topic),
            "PostSample": ("/topics/{topic}/samples", "post", topic),
            "GetReport": ("/topics/{topic}/report", "get", queue),
        },
        ("/topics/{topic}/judgments", "post", "201"): {
            "GetJudgments": ("/topics/{topic}/judgments", "get", {**topic, "as_of": "$response.body#/ids/0"}),
            "GetConflicts": ("/topics/{topic}/conflicts", "get", topic),
            "GetReport": ("/topics/{topic}/report", "get", topic),
        },
        ("/topics/{topic}/samples/stream", "post", "201"): {
            "GetStream": ("/topics/{topic}/samples/stream", "get", topic),
            "PostNext": ("/topics/{topic}/next", "post", topic),
            "GetMonitor": ("/topics/{topic}/monitor", "get", topic),
            "VoidStream": ("/topics/{topic}/samples/stream/void", "post", topic),
        },
        ("/topics/{topic}/samples", "post", "201"): {
            "GetSample": ("/topics/{topic}/samples/{sample_id}", "get",
                          {**topic, "sample_id": "$response.body#/id"}),
            "GetReport": ("/topics/{topic}/report", "get", topic),
        },
    }
    out: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {}
    for source, links in wanted.items():
        found = {name: link for name, (path, method, parameters) in links.items()
                 if (link := target(path, method, parameters)) is not None}
        if found:
            out[source] = found
    return out


def _components(models: Iterable[type[BaseModel]],
                generator: type[GenerateJsonSchema] = GenerateJsonSchema) -> dict[str, Any]:
    """JSON Schemas of pydantic models as OpenAPI components (their nested models included)."""
    found: dict[str, Any] = {}
    for model in models:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}", schema_generator=generator,
                                         mode="serialization")
        found.update(schema.pop("$defs", {}))
        found[model.__name__] = schema
    return found


BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def exact_integer_bounds(node: object) -> None:
    """The bounds of every integer schema under ``node`` as integers (in place): FastAPI's document model stores
    them as floats, so ``le=INT64_MAX`` arrives as 9.223372036854776e18 = 2**63, one past the limit. Every
    integer bound of this API lies within int64, the store's integers."""
    if isinstance(node, dict):
        if node.get("type") == "integer":
            for key in BOUNDS:
                value = node.get(key)
                if isinstance(value, float) and value.is_integer():
                    node[key] = min(max(int(value), INT64_MIN), INT64_MAX)
        for value in node.values():
            exact_integer_bounds(value)
    elif isinstance(node, list):
        for value in node:
            exact_integer_bounds(value)


def complete(document: dict[str, Any]) -> dict[str, Any]:
    """Add the components, problem responses and links of the module docstring to ``document`` (in place)."""
    components = document.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in {**_components(schemas.DOCUMENTED_BODIES),
                         **_components(schemas.JSON_SAFE_BODIES, schemas.JsonSafeSchema)}.items():
        components.setdefault(name, schema)
    exact_integer_bounds(document)
    operation_ids: dict[tuple[str, str], str] = {}
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            if "operationId" in operation:
                operation_ids[(path, method)] = operation["operationId"]
            for parameter in operation.get("parameters", ()):
                if parameter.get("in") in ("path", "query"):
                    parameter["schema"] = parameter_schema(parameter["name"], parameter["schema"])
            responses = operation["responses"]
            problem = {"content": {PROBLEM_TYPE: {"schema": PROBLEM_REF}}}
            if operation.get("parameters") and (
                    "422" not in responses or "application/json" in responses["422"].get("content", {})):
                # the parameter check answers 422, as problem+json (FastAPI's own declaration says JSON)
                responses["422"] = {"description": "Unprocessable Content", **problem}
            if path not in NO_DATABASE:
                responses.setdefault("503", {"description": "Service Unavailable: the database is busy or "
                                                            "unavailable (see Retry-After)", **problem})
            if "requestBody" in operation:
                for code, phrase in BODY_STATUSES.items():
                    responses.setdefault(str(code), {"description": phrase, **problem})
    for (path, method, status), links in _links(operation_ids).items():
        response = document["paths"][path][method]["responses"].get(status)
        if response is not None:
            response.setdefault("links", {}).update(links)
    return document


def _state_upload_counts(document: dict[str, Any]) -> None:
    """What the upload routes enforce beyond their fields' types, said in the document: ``/compare`` takes 2 to
    `compare.MAX_RUNS` runs; a Covidence import takes at least one list's file."""
    from reviewdepth.api.routers.compare import MAX_RUNS

    components = document.get("components", {}).get("schemas", {})

    def form(path: str) -> dict[str, Any] | None:
        operation = document.get("paths", {}).get(path, {}).get("post", {})
        for content in operation.get("requestBody", {}).get("content", {}).values():
            schema = content.get("schema", {})
            if "$ref" in schema:
                schema = components.get(schema["$ref"].rsplit("/", 1)[-1], {})
            if isinstance(schema, dict):
                return schema
        return None

    compare = form("/compare")
    if compare is not None and "run" in compare.get("properties", {}):
        compare["properties"]["run"].update(minItems=2, maxItems=MAX_RUNS)
    covidence = form("/topics/{topic}/imports/covidence")
    if covidence is not None:
        lists = [name for name in ("screen", "irrelevant", "fulltext", "excluded", "included")
                 if name in covidence.get("properties", {})]
        covidence["anyOf"] = [{"required": [name]} for name in lists]


def install_complete_openapi(app: FastAPI) -> None:
    """Serve the completed document (built once, on first request, like FastAPI's own)."""
    generate: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = complete(generate())
            _state_upload_counts(app.openapi_schema)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
