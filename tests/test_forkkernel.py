"""The forked notebook kernels of ``tests/forkkernel.py`` behave as kernels jupyter_client starts.

* a kernel from the server runs code in the directory, environment and argv of the process
  jupyter_client started, with the server's imports already done, as a child of the server, and
  its garbage collector leaves those imports alone (frozen);
* an interrupt reaches the forked kernel (a cell stops with KeyboardInterrupt, the kernel lives);
* killing the client (``shutdown_kernel(now=True)``) kills the forked kernel; closing the server's
  standard input stops the server and every kernel it forked;
* without a server, the client becomes an ordinary kernel;
* ``--then MODULE:FUNCTION`` runs in the server before it forks (what it leaves, every kernel has).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux" or not hasattr(os, "pidfd_open"),
                                reason="forked kernels are Linux-only (pidfd_open)")

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

FORKKERNEL = Path(__file__).resolve().with_name("forkkernel.py")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (ended, not yet reaped) counts as ended
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def _wait_until(condition, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture
def server(tmp_path):
    path = str(tmp_path / "server.sock")
    proc = subprocess.Popen([sys.executable, str(FORKKERNEL), "serve", path, "json", "fractions"],
                            stdin=subprocess.PIPE)
    assert _wait_until(lambda: os.path.exists(path))
    yield proc, path
    if proc.poll() is None:
        proc.stdin.close()
        proc.wait(timeout=10)


def _start(path, cwd, **env):
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpec

    km = KernelManager()
    km._kernel_spec = KernelSpec(argv=[sys.executable, "-I", "-S", str(FORKKERNEL), "connect", path,
                                       "-f", "{connection_file}"], language="python", display_name="forked")
    km.start_kernel(cwd=str(cwd), env={**os.environ, **env}, stderr=subprocess.DEVNULL)
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    return km, kc


def _run(kc, code, timeout=30):
    """(status, stdout) of ``code`` run in the kernel."""
    out = []
    reply = kc.execute_interactive(code, timeout=timeout, output_hook=lambda msg: out.append(
        msg["content"].get("text", "")) if msg["msg_type"] == "stream" else None)
    return reply["content"]["status"], "".join(out)


def test_kernel_is_forked_and_takes_the_clients_setting(server, tmp_path):
    proc, path = server
    km, kc = _start(path, tmp_path, RBDYN_FORK_TEST="yes")
    try:
        status, out = _run(kc, "import gc, os, sys\n"
                               "print(os.getppid(), os.getcwd(), os.environ.get('RBDYN_FORK_TEST'), sys.path[0],\n"
                               "      'fractions' in sys.modules, os.path.basename(sys.argv[0]), os.getsid(0) == os.getpid(),\n"
                               "      any(o is sys.modules['fractions'].__dict__ for o in gc.get_objects()),\n"
                               "      ','.join(map(str, gc.get_threshold())))")
        assert status == "ok"
        ppid, cwd, env, path0, preloaded, argv0, leader, collectable, threshold = out.split()
        assert int(ppid) == proc.pid  # forked by the server
        assert cwd == path0 == str(tmp_path)
        assert env == "yes" and preloaded == "True" and argv0 == "ipykernel_launcher.py" and leader == "True"
        # the collector leaves the server's imports alone (not among the objects it walks), and
        # runs less often than Python's default
        assert collectable == "False"
        assert tuple(map(int, threshold.split(","))) > (700, 10, 10)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_interrupt_reaches_the_kernel_and_kill_ends_it(server, tmp_path):
    proc, path = server
    km, kc = _start(path, tmp_path)
    try:
        _, pid = _run(kc, "import os; print(os.getpid())")
        pid = int(pid)
        # stop_on_error=False: the interrupted cell must not abort the next one (ipykernel drops
        # requests that arrive just after an error otherwise)
        msg_id = kc.execute("import time; print('sleeping', flush=True); time.sleep(60)", stop_on_error=False)
        while True:  # interrupt once the cell runs (an interrupt of an idle kernel is dropped)
            msg = kc.get_iopub_msg(timeout=20)
            if msg["msg_type"] == "stream" and "sleeping" in msg["content"]["text"]:
                break
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=20)
        assert reply["parent_header"]["msg_id"] == msg_id
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
        assert _run(kc, "print(6 * 7)") == ("ok", "42\n")  # it lives on
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)  # SIGKILL to the client
    assert _wait_until(lambda: not _alive(pid))
    assert proc.poll() is None  # the server serves on


def test_closing_the_servers_input_ends_it_and_its_kernels(server, tmp_path):
    proc, path = server
    km, kc = _start(path, tmp_path)
    try:
        pid = int(_run(kc, "import os; print(os.getpid())")[1])
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
        assert _wait_until(lambda: not _alive(pid))
        assert _wait_until(lambda: not km.is_alive())  # the client reports its kernel's end
        assert not os.path.exists(path)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_without_a_server_the_client_becomes_a_kernel(tmp_path):
    import socket

    gone = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # a server's socket, nobody listening
    gone.bind(str(tmp_path / "gone.sock"))
    km, kc = _start(str(tmp_path / "gone.sock"), tmp_path)
    try:
        status, out = _run(kc, "import os, sys; print(os.getpid(), 'fractions' in sys.modules)")
        assert status == "ok"
        pid, preloaded = out.split()
        assert int(pid) == km.provisioner.pid and preloaded == "False"  # the started process itself
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        gone.close()


def test_the_servers_then_function_runs_before_the_kernels_fork(tmp_path):
    (tmp_path / "warmup.py").write_text("import builtins\n\ndef run():\n    builtins.WARMED_UP = 42\n")
    path = str(tmp_path / "server.sock")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, str(FORKKERNEL), "serve", path, "json", "--then", "warmup:run"],
                            stdin=subprocess.PIPE, env=env)
    try:
        km, kc = _start(path, tmp_path)
        try:
            assert _run(kc, "import builtins, sys; print(builtins.WARMED_UP, 'json' in sys.modules)") == ("ok", "42 True\n")
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
