"""dsh-notify: alerts reach a person with the tab closed (Web Push, Apprise, a durable outbox)."""
