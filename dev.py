"""Developer entry point for rbdyn (standard library only).

    python3.11 dev.py book                 build the HTML validation manual into _build/html
    python3.11 dev.py test [pytest args]   run the unit tests and every notebook page (pytest --nbval)

Both commands create ``.venv`` in the repository root if it is missing and (re)install
``requirements.txt`` plus an editable ``rbdyn`` whenever requirements.txt or pyproject.toml
changed since the last install (a sha256 stamp is kept in ``.venv/.rbdyn-stamp``).
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
STAMP = VENV / ".rbdyn-stamp"
INPUTS = ("requirements.txt", "pyproject.toml")


def run(*cmd):
    """Run a command from the repository root; exit with its status if it fails."""
    status = subprocess.run([str(c) for c in cmd], cwd=ROOT, env=environment()).returncode
    if status:
        sys.exit(status)


def environment():
    env = dict(os.environ, PYTHONHASHSEED="0", VIRTUAL_ENV=str(VENV))
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    # An inherited MPLBACKEND (e.g. Agg) would override the inline backend in the notebook
    # kernels and drop every figure from the pages; headless matplotlib falls back to Agg anyway.
    env.pop("MPLBACKEND", None)
    return env


def ensure_venv():
    if not (BIN / "python").exists():
        print("dev.py: creating .venv", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    digest = hashlib.sha256(b"".join((ROOT / f).read_bytes() for f in INPUTS)).hexdigest()
    if STAMP.exists() and STAMP.read_text().strip() == digest:
        return
    print("dev.py: installing requirements.txt and rbdyn (editable) into .venv", flush=True)
    # -qq: pip prints errors only
    pip = (BIN / "python", "-m", "pip", "install", "-qq", "--disable-pip-version-check")
    run(*pip, "-r", "requirements.txt")
    run(*pip, "--no-deps", "-e", ".")
    STAMP.write_text(digest + "\n")


# Everything a build leaves that could show results of an older rbdyn: the HTML, Sphinx's environment
# (it skips pages whose source did not change, so a change in rbdyn/ alone would reach no page), the
# executed notebooks and their cache, and the acceptance records of the validation matrix.
STALE = ("html", ".doctrees", "jupyter_execute", ".jupyter_cache", "checks")


def book(args):
    build = ROOT / "_build"
    for name in STALE:
        shutil.rmtree(build / name, ignore_errors=True)
    env = environment()
    env["RBDYN_CHECKS_DIR"] = str(build / "checks")  # rbdyn.verify.check writes the matrix's records here
    cmd = [BIN / "jupyter-book", "build", ".", "-W", "-n", "--keep-going", *args]
    status = subprocess.run([str(c) for c in cmd], cwd=ROOT, env=env).returncode
    print(f"dev.py: HTML in {ROOT / '_build' / 'html' / 'index.html'}"
          + ("" if status == 0 else f" (build FAILED, exit status {status})"))
    return status


def test(args):
    cmd = [BIN / "python", "-m", "pytest", "--nbval", *args]
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, env=environment()).returncode


COMMANDS = {"book": book, "test": test}


def main(argv):
    if not argv or argv[0] not in COMMANDS:
        sys.exit(__doc__)
    ensure_venv()
    sys.exit(COMMANDS[argv[0]](argv[1:]))


if __name__ == "__main__":
    main(sys.argv[1:])
