"""Full-text search of what was said: every message of every Session (`GET /api/sessions?q=`)."""
