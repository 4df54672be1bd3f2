"""Notebook kernels forked from a process that has imported their libraries already.

Every page of the book runs in its own IPython kernel under ``pytest --nbval``. A new kernel
process spends about two seconds before the page's own work starts: half a second starting
ipykernel, then importing numpy, scipy, sympy, matplotlib and rbdyn. With 17 pages that is more
than half a minute of the cores' time in every test run and every book build.

Here one *server* process per pytest worker imports those libraries once and then forks one
kernel per page. A forked kernel is a fresh process like any other: it starts ipykernel with the
connection file jupyter_client wrote, in the directory, environment and standard streams of the
process jupyter_client started, and it ends when that kernel ends. What it saves is the imports:
its modules are already in memory, as they were when the server imported them (nothing else has
run in the server, unless it was given a function to call first: ``--then``, which conftest.py
uses to load rbdyn's compiled kernels once dev.py has compiled them).
The one difference is the garbage collector's: it never walks the objects the server imported
(``gc.freeze``, which also spares each kernel copying their memory), and it runs less often
(``KERNEL_GC_THRESHOLD``).

jupyter_client manages a kernel through the process it starts. That process is the *client* of
this module (standard library only, started with ``python -I -S``): it hands the server its
request and its standard streams, stays alive as long as the forked kernel does, passes on the
signals it receives (an interrupt is SIGINT), and exits with the kernel's exit status. If the
client is killed (``shutdown_kernel(now=True)`` sends SIGKILL), the server kills its kernel; if
the server's parent (the pytest worker) closes the server's standard input or dies, the server
kills every kernel it forked and exits.

    python tests/forkkernel.py serve SOCKET MODULE... [--then MODULE:FUNCTION]
        the server: import the MODULEs (and call FUNCTION, e.g. to load compiled code), then fork
    python -I -S tests/forkkernel.py connect SOCKET -f CONNECTION_FILE   a kernel, via the server

Linux only (it waits on process file descriptors, ``os.pidfd_open``).

References
----------
.. [1] Jupyter client documentation, "Making kernels for Jupyter: kernel specs",
   https://jupyter-client.readthedocs.io/en/stable/kernels.html
"""

import gc
import json
import os
import select
import signal
import socket
import sys
import time

# what ipykernel sets before it imports matplotlib unless MPLBACKEND is set (IPKernelApp.init_gui_pylab);
# matplotlib reads MPLBACKEND when it is imported, so the server must set it before its imports do
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
# The collector's thresholds in the kernels (Python's default is (700, 10, 10)): the pages build
# and drop objects by the million (sympy's expressions, matplotlib's artists, numba compiling),
# and collecting every 700 of them is a few percent of their time. Measured on the pages alone,
# two workers, compiled kernels in the cache: 102.4 s with the defaults, 97.7 and 98.5 s with
# these (the pages' outputs are the same; only when unreachable cycles are freed changes).
KERNEL_GC_THRESHOLD = (100_000, 50, 50)


# ------------------------------------------------------------------------------------------
# the client: what jupyter_client starts as the kernel


def connect(path, kernel_args):
    """Ask the server at ``path`` for a kernel with ``kernel_args``; return its exit status.

    Without a server (none started, or it failed), this process becomes an ordinary kernel."""
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        for attempt in range(20):  # a server just started may not have bound its socket yet
            try:
                conn.connect(path)
                break
            except FileNotFoundError:
                if attempt == 19:
                    raise
                time.sleep(0.1)
        request = {"args": kernel_args, "cwd": os.getcwd(), "env": dict(os.environ)}
        socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
        replies = conn.makefile("rb")
        pid = int(replies.readline())
    except (OSError, ValueError) as exc:
        print(f"forkkernel: no kernel from {path} ({exc}); starting one the usual way", file=sys.stderr)
        os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *kernel_args])

    def forward(signum, _frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:  # it has just ended: its status is on its way
            pass

    for signum in FORWARDED:
        signal.signal(signum, forward)
    line = replies.readline()
    # a server that went away has killed its kernels (see serve)
    return int(line) if line.strip() else 1


# ------------------------------------------------------------------------------------------
# the server


def _exit_status(wait_status):
    code = os.waitstatus_to_exitcode(wait_status)
    return code if code >= 0 else 128 - code  # killed by signal n: 128 + n, as a shell reports it


def _become_kernel(request, fds, server):
    """In the forked child: take on the client's streams, directory and environment, run
    ipykernel as ``python -m ipykernel_launcher`` would, and exit with its status."""
    status = 1
    try:
        os.setsid()  # jupyter_client starts a kernel in a session of its own
        _die_with(server)
        for signum in FORWARDED + (signal.SIGCHLD,):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        import ipykernel_launcher
        from ipykernel import kernelapp

        sys.argv = [ipykernel_launcher.__file__, *request["args"]]
        sys.path[0] = request["cwd"]
        try:
            kernelapp.launch_new_instance()
            status = 0
        except SystemExit as stop:
            status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        # what the interpreter would do on its way out, but never return into the server's loop
        try:
            import atexit

            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


def _die_with(server):
    """Be killed if the server dies without killing us (Linux's PR_SET_PDEATHSIG)."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != server:  # it died before we asked
        os._exit(1)


def _request(conn):
    """A client's request (args, cwd, env) and its three standard streams."""
    message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    while not message.endswith(b"\n"):
        more = conn.recv(1 << 20)
        if not more:
            break
        message += more
    request = json.loads(message)
    if len(fds) != 3 or not {"args", "cwd", "env"} <= request.keys():
        for fd in fds:
            os.close(fd)
        raise ValueError("expected args, cwd, env and three file descriptors")
    return request, fds


def serve(path, modules, then=None):
    """Import ``modules`` (and call ``then``, "module:function"), then fork a kernel for every
    client of the socket ``path``."""
    os.close(os.pidfd_open(os.getpid()))  # Linux 5.3 or later; else fail now: clients fall back
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)  # before the imports: clients that come early wait for them in the backlog
    listener.listen(16)
    inline = not os.environ.get("MPLBACKEND")
    if inline:
        os.environ["MPLBACKEND"] = INLINE_BACKEND
    import importlib

    import ipykernel_launcher  # noqa: F401
    from ipykernel import kernelapp  # noqa: F401

    for name in modules:
        importlib.import_module(name)
    if then:
        module, function = then.split(":")
        getattr(importlib.import_module(module), function)()
    if inline:
        del os.environ["MPLBACKEND"]  # each kernel sets it again (its environment is its client's)
    # The kernels never free what the server imported: the collector leaves it alone (in each
    # kernel it would walk, and so copy, every page of those objects), and collects the pages'
    # own objects less often (see KERNEL_GC_THRESHOLD)
    gc.collect()
    gc.freeze()
    gc.set_threshold(*KERNEL_GC_THRESHOLD)
    kernels = {}  # pidfd -> (pid, the client's connection)
    clients = {}  # connection fd -> pidfd
    try:
        while True:
            readable, _, _ = select.select([sys.stdin, listener, *kernels, *clients], [], [])
            for ready in readable:
                if ready is sys.stdin:
                    if not os.read(sys.stdin.fileno(), 4096):
                        return  # our parent is done (or gone)
                elif ready is listener:
                    conn, _ = listener.accept()
                    try:
                        request, fds = _request(conn)
                    except (OSError, ValueError, KeyError) as exc:
                        print(f"forkkernel: a bad request ({exc}); no kernel for it", file=sys.stderr)
                        conn.close()
                        continue
                    sys.stdout.flush()
                    sys.stderr.flush()
                    server = os.getpid()
                    pid = os.fork()
                    if pid == 0:
                        try:
                            listener.close()
                            conn.close()
                            for pidfd, (_, other) in kernels.items():
                                os.close(pidfd)
                                other.close()
                        finally:
                            _become_kernel(request, fds, server)  # never returns
                    for fd in fds:
                        os.close(fd)
                    try:
                        conn.sendall(f"{pid}\n".encode())
                    except OSError:  # the client is gone already: so is its kernel
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                        conn.close()
                        continue
                    pidfd = os.pidfd_open(pid)
                    kernels[pidfd] = (pid, conn)
                    clients[conn.fileno()] = pidfd
                elif ready in kernels:  # a kernel ended: tell its client how
                    pid, conn = kernels.pop(ready)
                    del clients[conn.fileno()]
                    _, wait_status = os.waitpid(pid, 0)
                    os.close(ready)
                    try:
                        conn.sendall(f"{_exit_status(wait_status)}\n".encode())
                    except OSError:
                        pass
                    conn.close()
                elif ready in clients:  # a client ended (it sends nothing after its request): end its kernel
                    pidfd = clients.pop(ready)
                    pid, conn = kernels.pop(pidfd)
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    os.close(pidfd)
                    conn.close()
    finally:
        for pidfd, (pid, conn) in kernels.items():
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(pidfd)
            conn.close()
        listener.close()
        os.unlink(path)


if __name__ == "__main__":
    command, socket_path, *rest = sys.argv[1:]
    if command == "serve":
        then = rest[rest.index("--then") + 1] if "--then" in rest else None
        serve(socket_path, [m for m in rest if m not in ("--then", then)], then)
    elif command == "connect":
        sys.exit(connect(socket_path, rest))
    else:
        sys.exit(__doc__)
