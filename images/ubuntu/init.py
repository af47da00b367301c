"""A build job's container's first process (PID 1), run by the image's own python3: the container executor binds
it in read-only (chalicelib/executors/containers.py). It needs nothing but the standard library.

- It prints a ready line, then reads a marker line on standard input (the runner's, for this job's shell).
- It starts the job's Bash, which reads its commands from a pipe this process fills with the rest of its standard
  input: the runner's shell session (chalicelib/runner/session.py) writes them, and reads their output, which
  Bash prints on this process's standard output.
- It serves the Build Worker API inside the container's own network namespace: 127.0.0.1 (and ::1) on
  CONVEYOR_API_PORT, each connection passed to the runner's unix socket bound in at CONVEYOR_API_SOCKET. The
  container reaches nothing else of the machine running it: not its loopback, not the service.
- When Bash ends, it prints ``<marker>-ended <exit code>`` and ends; when its standard input closes (the runner is
  done with the job, or stops it), it ends at once. Either way the kernel then kills every process left in the
  container: it is the first process of the container's PID namespace.
"""

import os
import select
import socket
import subprocess
import sys
import threading


def forward(client: socket.socket, path: str) -> None:
    try:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.connect(path)
    except OSError:
        client.close()
        return
    pair = {client: upstream, upstream: client}
    try:
        while True:
            readable, _, _ = select.select(list(pair), [], [])
            for source in readable:
                data = source.recv(65536)
                if not data:
                    return
                pair[source].sendall(data)
    except OSError:
        return
    finally:
        client.close()
        upstream.close()


def serve(family: int, address: str, port: int, path: str) -> None:
    try:
        server = socket.socket(family, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((address, port))
        server.listen(64)
    except OSError:
        return  # no IPv6 in the container: 127.0.0.1 serves alone
    while True:
        client, _ = server.accept()
        threading.Thread(target=forward, args=(client, path), daemon=True).start()


def feed(commands: int) -> None:
    """Pass standard input to the shell; when it closes, the job is over: end the container."""
    while True:
        data = os.read(0, 65536)
        if not data:
            os._exit(0)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(commands, view) :]
        except OSError:
            return  # the shell ended: main() says so


def main() -> None:
    port, path = int(os.environ["CONVEYOR_API_PORT"]), os.environ["CONVEYOR_API_SOCKET"]
    # the shell reads its commands on descriptor 3 (the session's first line closes it there): taken first, before
    # any socket of the threads below could be given that number
    read_end, commands = os.pipe()
    if read_end != 3:
        os.dup2(read_end, 3)
        os.close(read_end)
    for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        threading.Thread(target=serve, args=(family, address, port, path), daemon=True).start()
    out = sys.stdout.buffer
    out.write(b"conveyor-container-ready\n")
    out.flush()
    marker = b""
    while not marker.endswith(b"\n"):
        byte = os.read(0, 1)
        if not byte:
            os._exit(0)
        marker += byte
    environment = {name: value for name, value in os.environ.items() if not name.startswith("CONVEYOR_")}
    shell = subprocess.Popen(
        ["/bin/bash", "--noprofile", "--norc", "/dev/fd/3"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        pass_fds=(3,),
        env=environment,
    )
    os.close(3)
    threading.Thread(target=feed, args=(commands,), daemon=True).start()
    while True:  # the first process reaps every orphan of the container
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == shell.pid:
            code = os.waitstatus_to_exitcode(status)
            out.write(b"\n" + marker.strip() + b"-ended %d\n" % code)
            out.flush()
            break
    os._exit(0)


if __name__ == "__main__":
    main()
