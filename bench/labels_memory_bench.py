"""Memory of the labels loader and of the monitor's steps on topic ``big`` (built by bench/bounded_bench.build).

    python bench/labels_memory_bench.py --db URL [--loader-file PATH] [--steps]
    python bench/labels_memory_bench.py --db URL --monitor

Without ``--monitor``: one `load_queue_labels` of topic big's queue in this fresh process, printing its seconds,
the tracemalloc peak, the growth of the process's peak RSS, the totals and a SHA-256 of the label vector (equal
digests: equal labels). ``--loader-file`` loads the loader module from a file instead (a previous version, e.g.
``git show f36df1a:reviewdepth/store/loaders.py > /tmp/old_loaders.py``), so two versions are compared on the same
database; ``--steps`` adds the chunked loader's steps. ``--monitor``: one `build_monitor` of topic big with each
step's traced memory before, at its peak and after (steps do not nest, so each peak is its own).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from types import ModuleType
from typing import Any

from sqlalchemy import select

from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.models import Queue, Topic

MIB = 1 << 20


def rss_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def traced_steps(module: ModuleType, names: list[str], lines: list[str]) -> None:
    """Replace each function ``names`` of ``module`` by one that appends its seconds and traced memory to ``lines``."""
    for name in names:
        original: Callable[..., Any] = getattr(module, name)

        def timed(*args: Any, _original: Callable[..., Any] = original, _name: str = name, **kwargs: Any) -> Any:
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            started = time.perf_counter()
            result = _original(*args, **kwargs)
            current, peak = tracemalloc.get_traced_memory()
            lines.append(f"{_name:<24} {time.perf_counter() - started:6.2f} s  before {before / MIB:5.0f}  "
                         f"peak {peak / MIB:5.0f}  after {current / MIB:5.0f} MiB")
            return result

        setattr(module, name, timed)


def loader_module(path: str | None) -> ModuleType:
    if path is None:
        from reviewdepth.store import loaders

        return loaders
    spec = importlib.util.spec_from_file_location("reviewdepth.store.loaders_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True)
    parser.add_argument("--loader-file")
    parser.add_argument("--steps", action="store_true")
    parser.add_argument("--monitor", action="store_true")
    args = parser.parse_args()
    engine = create_engine_for(args.db)
    lines: list[str] = []
    if args.monitor:
        from reviewdepth.services.answers import monitor
        from reviewdepth.services.evidence import queue_state

        traced_steps(queue_state, ["load_queue_labels", "queue_evidence"], lines)
        traced_steps(monitor, ["_topic", "_last_judgment", "chain_head_at", "load_audit", "_sets_by_rank",
                               "monitor", "_assessment", "_report"], lines)
        base = rss_peak_mb()
        tracemalloc.start()
        started = time.perf_counter()
        monitor.build_monitor(engine, "big")
        print(f"monitor: {time.perf_counter() - started:.2f} s, peak RSS +{rss_peak_mb() - base:.0f} MB")
    else:
        loaders = loader_module(args.loader_file)
        if args.steps:
            traced_steps(loaders, ["_judged_by_hash", "resolve_codes", "_join_by_slices"], lines)
        with engine.connect() as conn:
            queue_id, topic_id, size = conn.execute(
                select(Queue.id, Queue.topic_id, Queue.size).join(Topic, Topic.id == Queue.topic_id)
                .where(Topic.name == "big")).one()
            base = rss_peak_mb()
            tracemalloc.start()
            started = time.perf_counter()
            labels = loaders.load_queue_labels(conn, queue_id, topic_id, size)
            seconds = time.perf_counter() - started
            peak = tracemalloc.get_traced_memory()[1]
        digest = hashlib.sha256(labels.labels.tobytes()).hexdigest()[:12]
        print(f"{args.loader_file or 'reviewdepth.store.loaders'}: {seconds:.2f} s, traced peak {peak / MIB:.0f} MiB, "
              f"peak RSS +{rss_peak_mb() - base:.0f} MB; R {labels.relevant_total:,}, N {labels.nonrelevant_total:,}, "
              f"judged {labels.judged_total:,}; labels sha256 {digest}")
    engine.dispose()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
