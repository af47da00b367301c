"""Who is calling and what they may do: accounts, users, roles, sessions, keys, a project's access rights."""
