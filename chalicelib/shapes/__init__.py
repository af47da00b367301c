"""AppVeyor's JSON shapes of the entities, as the API, notifications and deployment webhooks send them: pure
functions of core types, below the domain so that it can send them too."""
