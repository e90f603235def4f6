"""Files in: every import a team brings (TREC runs and qrels, RIS, record CSVs, ASReview, Rayyan and Covidence
exports, judgment files), the import record that makes a file count once, deduplication across searches, and
re-rankings stored as queues. A use case here reads a file, checks it line by line and writes it in one
transaction; it takes its shared vocabulary from `reviewdepth.services.evidence`, never from another sibling."""
