"""The SQS and scheduled handlers' side: a message or a tick becomes one domain or runner call."""
