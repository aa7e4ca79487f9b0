"""dsh-tool-schedule: durable, session-local reminders."""
