"""The review as it happens: judgments one at a time or in batches, serving the queue, random samples and the
audit stream, their voiding and status, the screening settings, and the exports of what was judged. Everything
that appends to the judgment log or to a sample lives here."""
