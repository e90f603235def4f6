"""The answers and documents a team reads: the report, the monitor and its stored summaries, the stopping
assessment, sample and stop plans, the validation packet, PRISMA counts, the methods text, the topic protocol,
queue summaries, conflicts and agreement, and the topic's charts. Each reads the evidence through
`reviewdepth.services.evidence` and returns a typed model that `reviewdepth.report` renders."""
