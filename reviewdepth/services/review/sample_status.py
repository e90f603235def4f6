"""A stored sample by id, whatever queue of the topic it was drawn from."""

from __future__ import annotations

from sqlalchemy import Engine, select

from reviewdepth.services.errors import NotFound
from reviewdepth.services.review.judgments import topic_id_of
from reviewdepth.services.review.samples import SampleRecord, load_samples
from reviewdepth.store.models import Queue, Sample


def sample_status(engine: Engine, topic: str, sample_id: int, *, policy: str = "latest") -> SampleRecord:
    """The sample with each drawn document's current label (judged / missing) under ``policy``."""
    topic_id = topic_id_of(engine, topic)
    with engine.connect() as conn:
        queue = conn.execute(select(Queue.name).join(Sample, Sample.queue_id == Queue.id)
                             .where(Sample.id == sample_id, Sample.topic_id == topic_id)).scalar_one_or_none()
    if queue is None:
        raise NotFound(f"topic {topic!r} has no sample {sample_id}")
    return load_samples(engine, topic, queue, policy=policy, sample_id=sample_id)[0]
