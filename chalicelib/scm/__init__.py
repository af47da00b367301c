"""Source control: reading the repositories builds build, and checking their commits out."""
