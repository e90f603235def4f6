"""The request gate: the key is checked before any body byte is read, each content type has its own limit
(refused on ``Content-Length`` and on the first streamed byte past it), and gzip uploads are refused on the
first decompressed byte past ``max_decompressed_bytes``. Memory figures are bench/body_limits_bench.py's."""

from __future__ import annotations

import gzip
import uuid
import zlib
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.services.admin.keys import create_key

from .test_auth_and_errors import problem

JSON_LIMIT, TEXT_LIMIT, MULTIPART_LIMIT, GUNZIP_LIMIT = 1_000, 40_000, 50_000, 20_000


@pytest.fixture
def client(engine: Engine, empty_db_url: str) -> Iterator[TestClient]:
    app = create_app(ApiSettings(database_url=empty_db_url, max_body_bytes=JSON_LIMIT, max_text_bytes=TEXT_LIMIT,
                                 max_multipart_bytes=MULTIPART_LIMIT, max_decompressed_bytes=GUNZIP_LIMIT))
    with TestClient(app) as test_client:
        writer = {"Authorization": f"Bearer {create_key(engine, 'ana', 'write')[1]}"}
        test_client.headers.update(writer)
        assert test_client.post("/topics", json={"name": "t"}).status_code == 201
        yield test_client


class CountedBody:
    """A request body handed out in pieces, counting how many the server pulled."""

    def __init__(self, pieces: int, size: int = 64 * 1024) -> None:
        self.pieces, self.size, self.pulled = pieces, size, 0

    def __iter__(self) -> Iterator[bytes]:
        for _ in range(self.pieces):
            self.pulled += 1
            yield b"x" * self.size


@pytest.mark.parametrize("path", ["/topics", "/topics/t/queues/q", "/evaluate", "/topics/t/judgments",
                                  "/topics/t/imports/csv", "/compare", "/no/such/path"])
def test_no_key_is_refused_before_the_body_is_read(client: TestClient, path: str) -> None:
    body = CountedBody(200)  # 13 MB, over every limit of the app: a 413 would show the body was looked at
    response = client.request("PUT" if "queues" in path else "POST", path, content=body,
                              headers={"Authorization": "", "Content-Type": "text/plain"})
    problem(response, 401, "missing API key")
    assert body.pulled == 0
    body = CountedBody(200)
    response = client.post(path, content=body, headers={"Authorization": "Bearer rd_wrong",
                                                        "Content-Type": "text/plain"})
    problem(response, 401, "unknown API key")
    assert body.pulled == 0


def topic_json(size: int) -> bytes:
    body = b'{"name": "u%s"}' % uuid.uuid4().hex[:6].encode()
    return body[:-1] + b" " * (size - len(body)) + b"}"


def run_text(size: int) -> bytes:
    lines = b"".join(b"t Q0 d%d %d %d.0 r\n" % (i, i + 1, 100 - i) for i in range(40))
    return lines + b"\n" * (size - len(lines))


def multipart(size: int) -> tuple[bytes, str]:
    """An /evaluate form of exactly ``size`` bytes (the qrels file padded with blank lines)."""
    boundary = "b" * 20

    def form(padding: int) -> bytes:
        return (f"--{boundary}\r\nContent-Disposition: form-data; name=\"qrels\"; filename=\"q\"\r\n\r\n"
                f"t 0 d1 1\n{chr(10) * padding}\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"run\"; "
                f"filename=\"r\"\r\n\r\nt Q0 d1 1 2.0 r\r\n--{boundary}--\r\n").encode()

    body = form(size - len(form(0)))
    assert len(body) == size
    return body, f"multipart/form-data; boundary={boundary}"


def chunked(data: bytes) -> Iterator[bytes]:
    for start in range(0, len(data), 97):
        yield data[start:start + 97]


@pytest.mark.parametrize("streamed", [False, True], ids=["content-length", "chunked"])
def test_each_content_type_has_its_limit_exactly(client: TestClient, streamed: bool) -> None:
    def send(method: str, path: str, body: bytes, content_type: str) -> object:
        return client.request(method, path, content=chunked(body) if streamed else body,
                              headers={"Content-Type": content_type})

    assert send("POST", "/topics", topic_json(JSON_LIMIT), "application/json").status_code == 201
    problem(send("POST", "/topics", topic_json(JSON_LIMIT + 1), "application/json"), 413, f"{JSON_LIMIT:,}")

    assert send("PUT", "/topics/t/queues/a", run_text(TEXT_LIMIT), "text/plain").status_code == 201
    problem(send("PUT", "/topics/t/queues/b", run_text(TEXT_LIMIT + 1), "text/plain"), 413, f"{TEXT_LIMIT:,}")
    assert client.get("/topics/t/queues/b").status_code == 404  # nothing stored

    body, content_type = multipart(MULTIPART_LIMIT)
    response = send("POST", "/evaluate", body, content_type)
    assert response.status_code == 200, response.text  # type: ignore[attr-defined]
    body, content_type = multipart(MULTIPART_LIMIT + 1)
    problem(send("POST", "/evaluate", body, content_type), 413, f"{MULTIPART_LIMIT:,}")
    if not streamed:  # another type falls under the JSON limit (streamed, the endpoint refuses it unread: 415)
        problem(send("PUT", "/topics/t/queues/c", b"x" * (JSON_LIMIT + 1), "image/png"), 413, f"{JSON_LIMIT:,}")


def test_gzip_is_capped_on_the_decompressed_size(client: TestClient) -> None:
    exact = run_text(GUNZIP_LIMIT)
    packed = gzip.compress(exact)
    assert len(packed) < TEXT_LIMIT
    response = client.put("/topics/t/queues/a", content=packed, headers={"Content-Type": "text/plain"})
    assert response.status_code == 201 and response.json()["size"] == 40, response.text
    over = gzip.compress(run_text(GUNZIP_LIMIT + 1))
    problem(client.put("/topics/t/queues/b", content=over, headers={"Content-Type": "text/plain"}), 413,
            f"{GUNZIP_LIMIT:,}", "decompressed")
    assert client.get("/topics/t/queues/b").status_code == 404

    qrels = gzip.compress(b"t 0 d1 1\n" + b"\n" * (GUNZIP_LIMIT - 9))
    run = gzip.compress(b"t Q0 d1 1 2.0 r\n")
    response = client.post("/evaluate", files={"qrels": ("q.gz", qrels), "run": ("r.gz", run)})
    assert response.status_code == 200, response.text
    deflate = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    bomb = b"".join(deflate.compress(bytes(1 << 20)) for _ in range(32)) + deflate.flush()  # 32 MiB of zeros
    assert len(bomb) < MULTIPART_LIMIT
    body = problem(client.post("/evaluate", files={"qrels": ("q.gz", qrels), "run": ("r.gz", bomb)}), 413,
                   "r.gz", "decompressed")
    assert body["file"] == "r.gz"
    problem(client.put("/topics/t/queues/c", content=bomb, headers={"Content-Type": "text/plain"}), 413)
    assert client.get("/health").status_code == 200


def test_upload_errors_name_the_upload_not_a_server_path(client: TestClient) -> None:
    bad = run_text(0) + b"t Q0 d1 99 1.0 r\n"  # d1 again
    body = problem(client.put("/topics/t/queues/a", content=bad, headers={"Content-Type": "text/plain"}), 422)
    assert body["detail"].startswith("run:41") and body["file"] == "run", body  # type: ignore[union-attr]
    assert "/" not in body["detail"] and "reviewdepth-upload" not in str(body)  # type: ignore[operator]
