"""The shared tier of the services, the one floor the use-case packages have in common:

- loaders that read the evidence of a topic through ONE connection the caller opened (a use case opens it, in one
  read snapshot: `reviewdepth.store.snapshot.read_snapshot`) and return plain data: the topic and its queue, the
  labels as of a judgment, the reviewed set and the samples on a queue, the audit stream, the calibration;
- the vocabulary every use case checks input against, in the caller's connection where it reads the store: label
  and decision words (`decision_words`), exclusion reasons and the conflict rule (`screening`), the confidence
  range (`confidence`), which queues a judgment may be served from (`served_queues`), key scopes (`access`).

Nothing here opens a connection of its own or imports a use case (an import contract checks it)."""
