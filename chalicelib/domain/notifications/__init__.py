"""Who is told of a finished build or deployment, and how: rules, chat notices, the notifications."""
