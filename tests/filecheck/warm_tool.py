"""teir-opt and filecheck for lit's RUN lines without their start-up: a server that
imported them once forks a process per call.

Python spends most of a small teir-opt call importing xDSL (a few hundred
milliseconds; the suite makes some three hundred calls, and as many of
filecheck). lit.cfg.py starts `warm_tool.py serve SOCKET` and runs each
`teir-opt ARGS` of a RUN line as `python -S warm_tool.py teir-opt ARGS`: a
client that passes its argv, working directory, environment and standard
streams (the descriptors themselves) to the server. The server forks; the child
takes them over and runs the tool's `main`, as its console script does; the
exit status (a signal as 128 + its number) comes back to the client, which
exits with it. Without a server (none started, it is gone, or
`TEIR_WARM_SOCKET` is empty) the client runs the installed tool instead.
"""

import os
import socket
import struct
import sys

ENV = "TEIR_WARM_SOCKET"
STATUS = struct.Struct("!i")


def call(tool: str, args: list[str]) -> None:
    """The client: the tool's run in the server's fork, or the tool itself."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(os.environ[ENV])
    except (KeyError, OSError):  # no server (or `env TEIR_WARM_SOCKET= ...`)
        os.execvp(tool, [tool, *args])
    request = repr((tool, args, os.getcwd(), dict(os.environ))).encode()
    socket.send_fds(connection, [STATUS.pack(len(request))], [0, 1, 2])
    connection.sendall(request)
    received = b""
    while len(received) < STATUS.size:
        chunk = connection.recv(STATUS.size - len(received))
        if not chunk:
            sys.exit(f"warm_tool: the server ended {tool} without a status")
        received += chunk
    sys.exit(STATUS.unpack(received)[0])


def serve(path: str) -> None:
    """The server: imports the tools, then forks per connection."""
    import ast
    import gc
    import signal

    from filecheck.main import main as filecheck

    from teir_tools.teir_opt import main as teir_opt

    tools = {"teir-opt": teir_opt, "filecheck": filecheck}
    gc.freeze()  # the imported objects stay shared with the forks, never copied
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the handlers reap their runs
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".new")
    listener.listen(64)
    os.rename(path + ".new", path)  # ready: clients that find the path are served
    listener.settimeout(1.0)
    parent = os.getppid()
    while True:
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            if os.getppid() != parent:  # lit is gone, killed or not
                return
            continue
        connection.settimeout(None)
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _handle(connection, tools, ast.literal_eval)
        connection.close()


def _handle(connection: socket.socket, tools: dict, literal_eval) -> None:
    """One call: the tool run in a child on the client's streams, its status sent."""
    header, fds, _, _ = socket.recv_fds(connection, STATUS.size, 3)
    size = STATUS.unpack(header)[0]
    request = b""
    while len(request) < size:
        request += connection.recv(size - len(request))
    tool, args, cwd, environment = literal_eval(request.decode())
    pid = os.fork()
    if pid == 0:
        code = 1
        try:  # whatever happens, the child never returns into the server's loop
            connection.close()
            code = _run(tools[tool], tool, args, cwd, environment, fds)
        finally:
            os._exit(code)
    for fd in fds:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    connection.sendall(STATUS.pack(code if code >= 0 else 128 - code))
    os._exit(0)


def _run(main, tool: str, args: list[str], cwd: str, environment: dict, fds: list[int]) -> int:
    """The tool's exit code, run as its console script runs it, on the client's
    descriptors, directory and environment."""
    import traceback

    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        # Streams over those descriptors, as Python makes them at start-up (the
        # server's own ones keep the state of the server's descriptors).
        # They live as long as the process, as sys's own do.
        sys.stdin = open(0, closefd=False, encoding="utf-8")  # noqa: SIM115
        sys.stdout = open(1, "w", buffering=1 if os.isatty(1) else -1,  # noqa: SIM115
                          closefd=False, encoding="utf-8")
        sys.stderr = open(2, "w", buffering=1, closefd=False,  # noqa: SIM115
                          encoding="utf-8", errors="backslashreplace")
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(environment)
        sys.argv = [tool, *args]
        code = main() or 0
    except SystemExit as exit:
        if isinstance(exit.code, str):
            print(exit.code, file=sys.stderr)
        code = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
    except Exception:  # noqa: BLE001 (a crash shows as in the tool's own process)
        traceback.print_exc()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            pass
    return code


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        call(sys.argv[1], sys.argv[2:])
