"""The notifiers: one module each, a ``Sender`` (notify/notifier.py), named by its line in notify/providers.py."""
