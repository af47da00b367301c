"""Sending notifications: one module per channel (SES e-mail, HTTP webhook), and the messages they carry."""
