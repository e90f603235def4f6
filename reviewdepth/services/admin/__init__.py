"""Administration: the database (create, migrate, check), topics (create, list, delete) and API keys."""
