"""Simulation: replays of stopping rules on stored or given queues (`simulate`), their worker processes, the jobs
that run them for the API, and the portfolio calibration of heuristic rules."""
