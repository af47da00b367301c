"""Repositories at their forges: providers, clone credentials, webhook payloads, commit statuses."""
