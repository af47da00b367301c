#!/usr/bin/env python3
"""A stand-in for ``pwsh`` where PowerShell cannot be installed (this machine's registries have none): it speaks the
job's PowerShell bridge protocol (chalicelib/runner/powershell.py) as BRIDGE does, but runs each script in Bash.
It tests Bash's side of the exchange; the bridge itself is tested where a real pwsh is installed.

``exit N`` as a whole script ends it with code N, as ``exit`` ends a PowerShell session; ``throw ...`` fails the
script as a PowerShell exception does."""

import os
import subprocess
import sys

folder = sys.argv[-1]
runs = 0
with open(f"{folder}/asks") as asks, open(f"{folder}/answers", "w") as answers:
    while asks.readline():
        runs += 1
        with open(f"{folder}/env.in") as given:
            env = dict(pair.split("=", 1) for pair in given.read().split("\0") if "=" in pair)
        with open(f"{folder}/cwd.in") as given:
            cwd = given.read()
        with open(f"{folder}/script.ps1") as given:
            script = given.read()
        print(f"stand-in pwsh {os.getpid()} run {runs}", flush=True)
        if script.startswith("exit "):
            sys.exit(int(script.split()[1]))
        if script.startswith("throw "):
            print(f"Command executed with exception: {script[6:]}", flush=True)
            answers.write("1\n")
            answers.flush()
            continue
        trailer = '\n__status=$?; env -0 > "$0.env"; pwd > "$0.cwd"; exit $__status'
        done = subprocess.run(["bash", "-c", script + trailer, f"{folder}/back"], env=env, cwd=cwd)
        os.replace(f"{folder}/back.env", f"{folder}/env.out")
        with open(f"{folder}/back.cwd") as back, open(f"{folder}/cwd.out", "w") as out:
            out.write(back.read().rstrip("\n"))
        answers.write("0\n" if done.returncode == 0 else "1\n")
        answers.flush()
