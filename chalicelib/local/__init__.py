"""The local stack: embedded AWS emulator, the resources, chalice local, and the SQS pump."""
