"""The use cases both doors call (the CLI in ``cli/`` and the API in `reviewdepth.api`), grouped by what they serve:

- `files`: files in (runs, qrels, RIS, record CSVs, ASReview, Rayyan, Covidence, judgment files), deduplication;
- `review`: the review as it happens (judgments, batches, samples, the audit stream, screening settings, exports);
- `answers`: what a team reads (report, monitor, plans, validation, PRISMA, methods, protocol, charts);
- `evaluation`: runs against qrels as files (trec_eval and CLEF TAR measures, comparisons);
- `simulation`: replays of stopping rules, their jobs and the portfolio calibration;
- `admin`: the database, topics and API keys.

These six import none of each other. What two of them share sits one floor down in `evidence` (loaders that read
through the caller's connection, and the vocabulary every use case checks: label words, screening reasons, served
queues, key scopes), with `errors` beneath it. `demo` alone composes use cases of several packages, as a user would.
The import contracts in pyproject.toml keep this shape."""
