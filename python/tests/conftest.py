"""Shared fixtures: the `tessel` command line whose answers the binding must
give, and the repository's example inputs."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "test" / "Hlo" / "corpus"
EXAMPLES = ROOT / "examples"


def _tessel_bin() -> str:
    path = os.environ.get("TESSEL_BIN", str(ROOT / "build" / "bin" / "tessel"))
    if not os.access(path, os.X_OK):
        pytest.exit(f"no tessel binary at {path}: build it or set TESSEL_BIN")
    return path


class Cli:
    """Runs `tessel ARGS...`; returns (exit status, stdout, stderr)."""

    def __init__(self):
        self.path = _tessel_bin()

    def __call__(self, *args, check=False):
        done = subprocess.run([self.path, *map(str, args)], capture_output=True,
                              text=True, timeout=300)
        if check and done.returncode != 0:
            raise AssertionError(f"tessel {' '.join(map(str, args))} failed: "
                                 f"{done.stderr}")
        return done.returncode, done.stdout, done.stderr

    def out(self, *args) -> str:
        return self(*args, check=True)[1]

    def error(self, *args, file=None) -> str:
        """The text of the ValueError the binding raises for the error of a
        failing command: the message after 'tessel: error: ', or, for an
        error with a position, the whole rendering (SOURCE:LINE:COL: error:,
        the line, the caret). The binding is given text, not `file`: its
        rendering has no file name."""
        status, _, err = self(*args)
        assert status == 1, f"tessel {args} exited {status}: {err}"
        return self.message(err, file)

    @staticmethod
    def message(err: str, file=None) -> str:
        """`error`'s text for a command's standard error `err`."""
        prefix = "tessel: error: "
        if err.startswith(prefix):
            return err[len(prefix):].rstrip("\n")
        if file is not None:
            assert err.startswith(f"{file}:"), err
            err = err[len(f"{file}:"):].removeprefix(" error: ")
        return err.rstrip("\n")


@pytest.fixture(scope="session")
def cli():
    return Cli()


def corpus_modules():
    return sorted(p.name for p in CORPUS.iterdir() if (p / "module.hlo").exists())
