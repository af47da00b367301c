"""conveyor exec: a checkout's appveyor.yml run on this machine as a build would run it (docs/exec.md)."""
