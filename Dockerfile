# reviewdepth: the CLI and the HTTP API (`reviewdepth serve`). Build: docker build -t reviewdepth .
# pinned by version tag and digest: bump both together
FROM python:3.12.8-slim-bookworm@sha256:2199a62885a12290dc9c5be3ca0681d367576ab7bf037da120e564723292a2f0 AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# the run/qrels scanner is a C extension: build the wheel here, install it in a slim image without a compiler
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.12.8-slim-bookworm@sha256:2199a62885a12290dc9c5be3ca0681d367576ab7bf037da120e564723292a2f0
RUN useradd --create-home --uid 10001 reviewdepth
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels \
    && install -d -o reviewdepth -g reviewdepth -m 0700 /var/tmp/reviewdepth
USER reviewdepth
# no .pyc writes: the container's root file system is read-only (docker-compose.yml)
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --retries=5 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health?database=true', timeout=2)"
CMD ["reviewdepth", "serve", "--host", "0.0.0.0", "--port", "8000"]
