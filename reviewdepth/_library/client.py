"""`Client`: the HTTP API (``reviewdepth serve``) from Python, on the standard library's ``urllib`` (no HTTP
package needed). Errors come back as `ApiError` carrying the problem body the server sent."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from reviewdepth._library.results import ComparisonCell, ComparisonResult, EvaluationResult


class ApiError(RuntimeError):
    """A 4xx or 5xx answer: ``status`` and the problem body (``problem``: RFC 9457 fields such as ``detail``)."""

    def __init__(self, status: int, problem: Mapping[str, Any]) -> None:
        super().__init__(f"HTTP {status}: {problem.get('detail') or problem.get('title') or problem}")
        self.status = status
        self.problem = dict(problem)


def _file_bytes(value: Any, what: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (str, os.PathLike)):
        with open(value, "rb") as handle:
            return handle.read()
    from reviewdepth._library.inputs import qrels_text, run_text

    return qrels_text(value, what) if what == "qrels" else run_text(value, what, what)


class Client:
    """The API of a running server: ``Client("http://127.0.0.1:8000", key)``, ``key`` an API key from
    ``reviewdepth keys create``. Reads need a ``read`` key, writes a ``write`` key.

    `report`, `plan` and `monitor` return the JSON the server sends — the same data as
    ``rd.assess(...).to_dict()``, ``rd.plan(...).to_dict()`` and ``rd.monitor(...).to_dict()`` — and `evaluate`
    and `compare` the library's own result types."""

    def __init__(self, url: str, key: str | None = None, *, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.key = key
        self.timeout = timeout

    # ---- the transport ----

    def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None, json_body: Any = None,
                body: bytes | None = None, content_type: str | None = None) -> Any:
        """One call: ``path`` below the base URL, query ``params`` (None values left out, lists repeated), a JSON
        or raw body; the answer's JSON (or text when it is not JSON)."""
        query = urllib.parse.urlencode([(k, str(v).lower() if isinstance(v, bool) else v)
                                        for k, value in (params or {}).items() if value is not None
                                        for v in (value if isinstance(value, (list, tuple)) else [value])])
        headers = {"Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        if json_body is not None:
            body = json.dumps(json_body).encode("utf-8")
            content_type = "application/json"
        if content_type:
            headers["Content-Type"] = content_type
        target = self.url + path + (f"?{query}" if query else "")
        call = urllib.request.Request(target, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(call, timeout=self.timeout) as answer:
                data = answer.read()
                kind = answer.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                problem = json.loads(raw)
            except ValueError:
                problem = {"detail": raw.decode("utf-8", "replace")}
            raise ApiError(exc.code, problem if isinstance(problem, dict) else {"detail": problem}) from None
        if "json" in kind:
            return json.loads(data)
        return data.decode("utf-8")

    def _multipart(self, path: str, files: Sequence[tuple[str, str, bytes]], fields: Iterable[tuple[str, str]]
                   ) -> Any:
        boundary = uuid.uuid4().hex
        parts: list[bytes] = []
        for name, filename, content in files:
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                         "Content-Type: application/octet-stream\r\n\r\n".encode() + content + b"\r\n")
        for name, value in fields:
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
        parts.append(f"--{boundary}--\r\n".encode())
        return self.request("POST", path, body=b"".join(parts),
                            content_type=f"multipart/form-data; boundary={boundary}")

    # ---- topics, rankings, judgments, samples ----

    def health(self) -> Any:
        """``GET /health``: the server is up (no key needed)."""
        return self.request("GET", "/health")

    def topics(self) -> Any:
        """The topics (``GET /topics``)."""
        return self.request("GET", "/topics")

    def create_topic(self, name: str, population_size: int | None = None) -> Any:
        """``POST /topics``."""
        body: dict[str, Any] = {"name": name}
        if population_size is not None:
            body["population_size"] = population_size
        return self.request("POST", "/topics", json_body=body)

    def put_ranking(self, topic: str, queue: str, doc_ids: Sequence[str]) -> Any:
        """Store ``doc_ids`` (rank order) as the topic's queue ``queue`` (``PUT /topics/{topic}/queues/{queue}``)."""
        return self.request("PUT", f"/topics/{_seg(topic)}/queues/{_seg(queue)}",
                            json_body={"documents": [{"doc_id": str(d)} for d in doc_ids]})

    def judge(self, topic: str, judgments: Mapping[str, Any] | Iterable[tuple[str, Any]], *, role: str = "review"
              ) -> Any:
        """Record judgments ``{doc_id: label}`` or ``(doc_id, label)`` pairs in one batch
        (``POST /topics/{topic}/judgments``)."""
        items = judgments.items() if isinstance(judgments, Mapping) else judgments
        return self.request("POST", f"/topics/{_seg(topic)}/judgments", json_body={"judgments": [
            {"doc_id": str(d), "label": str(int(label)) if isinstance(label, bool) else str(label), "role": role}
            for d, label in items]})

    def draw_sample(self, topic: str, size: int, *, frame: str = "unreviewed", seed: int | None = None) -> Any:
        """Draw a random sample (``POST /topics/{topic}/samples``); its ``doc_ids`` are the documents to code."""
        body: dict[str, Any] = {"size": size, "frame": frame}
        if seed is not None:
            body["seed"] = seed
        return self.request("POST", f"/topics/{_seg(topic)}/samples", json_body=body)

    # ---- results ----

    def report(self, topic: str, *, target: float | str | Sequence[float | str] | None = None,
               confidence: float | None = None, **params: Any) -> Any:
        """The depth report's JSON (``GET /topics/{topic}/report``); ``params`` as the route's query."""
        targets = None if target is None else [str(t) for t in
                                               ([target] if isinstance(target, (str, int, float)) else target)]
        return self.request("GET", f"/topics/{_seg(topic)}/report",
                            params={"target": targets, "confidence": confidence, **params})

    def plan(self, topic: str, *, target: float | str | None = None, confidence: float | None = None,
             **params: Any) -> Any:
        """The stop plan's JSON (``GET /topics/{topic}/plan``)."""
        return self.request("GET", f"/topics/{_seg(topic)}/plan",
                            params={"target": target, "confidence": confidence, **params})

    def monitor(self, topic: str, *, target: float | str | None = None, confidence: float | None = None,
                **params: Any) -> Any:
        """The monitor's JSON (``GET /topics/{topic}/monitor``)."""
        return self.request("GET", f"/topics/{_seg(topic)}/monitor",
                            params={"target": target, "confidence": confidence, **params})

    def evaluate(self, qrels: Any, run: Any, measures: Sequence[str] = (), per_query: bool = False, *,
                 suite: str = "trec") -> EvaluationResult:
        """``POST /evaluate``: qrels and run as `reviewdepth.evaluate` takes them (paths, dicts, DataFrames,
        records or bytes). The server's JSON has the numeric measures only (no ``runid`` or ``num_q``)."""
        fields = [("measure", m) for m in measures] + [("per_query", str(per_query).lower()), ("suite", suite)]
        data = self._multipart("/evaluate", [("qrels", "qrels", _file_bytes(qrels, "qrels")),
                                             ("run", "run", _file_bytes(run, "run"))], fields)
        summary = data.get("all", {})
        return EvaluationResult(suite=suite, run_id="", measures=tuple(summary),
                                summary=MappingProxyType(dict(summary)),
                                per_query=MappingProxyType({q: MappingProxyType(v) for q, v in
                                                            data.get("per_query", {}).items()}))

    def compare(self, qrels: Any, runs: Mapping[str, Any], measures: Sequence[str] = (), *, test: str = "t",
                correction: str = "holm", alpha: float = 0.05, suite: str = "trec") -> ComparisonResult:
        """``POST /compare``: ``runs`` a mapping of names to runs (the first the baseline)."""
        fields = [("measure", m) for m in measures] + [("test", test), ("correction", correction),
                                                       ("alpha", str(alpha)), ("suite", suite)]
        files = [("qrels", "qrels", _file_bytes(qrels, "qrels"))]
        files += [("run", str(name), _file_bytes(run, str(name))) for name, run in runs.items()]
        data = self._multipart("/compare", files, fields)
        cells = tuple(ComparisonCell(**{k: c.get(k) for k in ("measure", "run", "mean", "difference", "effect_size",
                                                              "statistic", "p_value", "p_adjusted")},
                                     significant=bool(c.get("significant"))) for c in data.get("cells", []))
        return ComparisonResult(suite=data.get("suite", suite), test=data.get("test", test),
                                correction=data.get("correction", correction), alpha=data.get("alpha", alpha),
                                runs=tuple(data.get("runs", ())), measures=tuple(data.get("measures", ())),
                                queries=tuple(data.get("queries", ())), cells=cells,
                                notes=tuple(data.get("notes", ())))


def _seg(value: str) -> str:
    return urllib.parse.quote(str(value), safe="")
