"""The runner's Windows parts: what a build agent on Windows runs a job with (cmd.exe lines, Windows PowerShell,
Git for Windows, Job Objects). Each module imports only what exists on Windows, and loads Windows APIs when called."""
