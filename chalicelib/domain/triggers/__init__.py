"""What starts builds on its own: repository webhooks, schedules."""
