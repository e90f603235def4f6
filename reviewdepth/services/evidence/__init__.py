"""The lower tier of the services: loaders that read the evidence of a topic through ONE connection the caller
opened (a use case opens it, in one read snapshot: `reviewdepth.store.snapshot.read_snapshot`) and return plain
data — the topic and its queue, the labels as of a judgment, the reviewed set and the samples on a queue, the
audit stream, the calibration. They never open a connection of their own and never import a use case (an
import-linter contract checks it)."""
