"""``POST /topics/{topic}/judgments``, the hot endpoint: the reply both of its paths send, and the fast path.

`FastJudgmentsRoute` answers the common request — a ``Bearer`` key that `reviewdepth.api.gate.RequestGate`
verified with scope ``write``, an ``application/json`` body that `schemas.judgment_batch_validator` accepts, no
foreign ``reviewer`` — without FastAPI's per-request machinery (dependency solving, ``json.loads`` then a pydantic model
per judgment). Any other request (a key not cached yet, a bad body, another content type…) goes to FastAPI's
standard handler of the same endpoint, so every error response is exactly the standard one; errors of the
service itself (unknown topic, invalid label, idempotency conflict) are raised the same way on both paths.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import anyio.to_thread
from fastapi import Request, Response
from fastapi.routing import APIRoute
from fastapi.security.utils import get_authorization_scheme_param
from pydantic import ValidationError

from reviewdepth.api.calls import INLINE_JUDGMENTS, write_call
from reviewdepth.api.gate import KEY_STATE
from reviewdepth.api.problems import ApiProblem
from reviewdepth.api.schemas import (
    judgment_batch_columns_validator,
    judgment_batch_lean_columns_validator,
    judgment_batch_validator,
)
from reviewdepth.services.admin.keys import key_digest
from reviewdepth.services.evidence.access import ADJUDICATE, KeyRecord
from reviewdepth.services.review.batches import BatchColumns, BatchItem, record_batch
from reviewdepth.store import validation

JSON = "application/json"
INLINE_BODY_BYTES = 64 * 1024  # a body parsed on the event loop at most (~2,000 judgments, ~1 ms); larger: a thread
ADJUDICATION = "adjudication"  # the judgment role only keys with scope ADJUDICATE may record


async def recorded(request: Request, topic: str, key: KeyRecord, items: Sequence[BatchItem],
                   idempotency_key: str | None, queue: str | None = None,
                   allow_unqueued: bool = False) -> Response:
    """Record ``items`` as ``key``'s reviewer and answer 201 ``{"topic", "reviewer", "recorded", "ids"}``; an
    adjudication needs a key with scope ``adjudicate`` or ``admin`` (403 otherwise)."""
    roles = {shape[1] for shape in items.shapes} if isinstance(items, BatchColumns) else {i.role for i in items}
    if not key.allows(ADJUDICATE) and ADJUDICATION in roles:
        raise ApiProblem(403, f"role {ADJUDICATION}: this API key has scope {key.scope!r}; recording an "
                              f"adjudication needs {ADJUDICATE!r} or 'admin'")
    result = await write_call(request, len(items) <= INLINE_JUDGMENTS, record_batch, request.app.state.engine, topic,
                              items, reviewer=key.reviewer, source="api", idempotency_key=idempotency_key,
                              queue=queue, allow_unqueued=allow_unqueued,
                              idempotency_ttl_seconds=request.app.state.settings.idempotency_ttl_seconds)
    # the bytes FastAPI makes of this dict through response_model JudgmentBatchOut, without re-validating it
    reply = {"topic": topic, "reviewer": key.reviewer, "recorded": len(result.ids), "ids": result.ids}
    content = _json(reply) if len(result.ids) <= INLINE_JUDGMENTS else await anyio.to_thread.run_sync(_json, reply)
    return Response(content, status_code=201, media_type=JSON,
                    headers={"Idempotent-Replayed": "true"} if result.replayed else None)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


async def fast_post_judgments(request: Request) -> Response | None:
    """The reply to a common request, or None for the standard handler (see the module docstring)."""
    content_type = request.headers.get("content-type")
    if content_type is None or content_type.split(";", 1)[0].strip().lower() != JSON:
        return None
    key: KeyRecord | None = request.scope.get("state", {}).get(KEY_STATE)  # verified by the RequestGate
    if key is None:
        scheme, secret = get_authorization_scheme_param(request.headers.get("authorization"))  # as HTTPBearer
        if not secret or scheme.lower() != "bearer":
            return None
        key = request.app.state.key_cache.get(key_digest(secret))
    if key is None or not key.allows("write"):
        return None
    raw = await request.body()  # kept on the request for the standard handler
    if not raw:
        return None
    body = fast_body(raw) if len(raw) <= INLINE_BODY_BYTES else await anyio.to_thread.run_sync(fast_body, raw)
    if body is None:
        return None
    reviewer = body.get("reviewer")
    if reviewer is not None and reviewer != key.reviewer:
        return None
    return await recorded(request, request.path_params["topic"], key, body["judgments"],
                          body.get("idempotency_key"), body.get("queue"), body.get("allow_unqueued", False))


def fast_body(raw: bytes) -> dict[str, Any] | None:
    """The body as `schemas.judgment_batch_validator` reads it (a large one: ``judgments`` as one `BatchColumns`,
    `_columns_body`), or None for the standard handler. Read first by the lean validator, whose document ids and
    labels are then checked in bulk; a body with any that is not plain is read again by the full one."""
    try:
        body = judgment_batch_validator(lean=True).validate_json(raw) if len(raw) <= INLINE_BODY_BYTES else \
            _columns_body(raw, lean=True)
        if body is not None and not _plain(body["judgments"]):
            body = judgment_batch_validator().validate_json(raw) if len(raw) <= INLINE_BODY_BYTES else \
                _columns_body(raw, lean=False)
    except ValidationError:
        return None
    return body


def _plain(items: Sequence[BatchItem]) -> bool:
    """Every document id and label one the store's identifier check keeps as it is (`validation.all_plain`)."""
    if isinstance(items, BatchColumns):
        doc_ids, labels = items.doc_ids, list({shape[0] for shape in items.shapes})
    else:
        doc_ids, labels = [item.doc_id for item in items], list({item.label for item in items})
    return validation.all_plain(doc_ids, validation.DOC_ID_LENGTH) and \
        validation.all_plain(labels, validation.LABEL_LENGTH)


def _columns_body(raw: bytes, *, lean: bool = False) -> dict[str, Any] | None:
    """A large body validated by `judgment_batch_columns_validator` (or its lean form), its ``judgments`` as one
    `BatchColumns` (no object per judgment stays alive); None for the standard handler when its ``judgments``
    were not read as exactly one list (a repeated key)."""
    columns = BatchColumns()
    validator = judgment_batch_lean_columns_validator() if lean else judgment_batch_columns_validator()
    body: dict[str, Any] = validator.validate_json(raw, context=columns)
    if len(body["judgments"]) != len(columns):
        return None
    body["judgments"] = columns
    return body


class FastJudgmentsRoute(APIRoute):
    """The route of ``POST /topics/{topic}/judgments``: `fast_post_judgments`, else FastAPI's handler."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        standard = super().get_route_handler()

        async def handler(request: Request) -> Response:
            response = await fast_post_judgments(request)
            return response if response is not None else await standard(request)

        return handler
