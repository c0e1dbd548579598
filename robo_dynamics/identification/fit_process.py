"""A fit run in a process of its own, so that it never holds the node's GIL: a native
solver (Clarabel's semidefinite program) keeps Python's lock for its whole solve, and the
joint-state thread, which publishes the commands, would wait that long.

The process is a fresh interpreter (never a fork of a process with threads, and nothing of
the caller's main module imported again) at BACKGROUND_NICE below the caller's priority,
its BLAS on one thread as in the node (blas_threads.py), and it ends with the call. The
arrays among the arguments go through .npy files (written from their own memory, the GIL
released while the bytes go out: pickling megabytes would hold it for milliseconds), the
rest and the result as pickles on its stdin and stdout.
"""

import os
import pickle
import subprocess
import sys
import tempfile

import numpy as np

BACKGROUND_NICE = 10
WORKER = ("import os; os.nice({nice}); from robo_dynamics.identification.fit_process import main; main()")


def run_in_process(function, *args, nice=BACKGROUND_NICE):
    """function(*args) computed in a new process, `nice` below the caller's priority; its
    result, or its exception raised here (RuntimeError if the process itself failed).
    `function` must be importable at module level and its arguments (arrays apart) and
    result picklable."""
    with tempfile.TemporaryDirectory(prefix="robo_dynamics_fit_") as folder:
        sent = []
        for k, arg in enumerate(args):
            if isinstance(arg, np.ndarray):
                path = os.path.join(folder, f"{k}.npy")
                np.save(path, arg, allow_pickle=False)
                sent.append(("array", path))
            else:
                sent.append(("value", arg))
        done = subprocess.run(
            [sys.executable, "-c", WORKER.format(nice=nice)],
            input=pickle.dumps((function, sent)), capture_output=True, check=False)
    if done.returncode != 0 or not done.stdout:
        raise RuntimeError(f"the fit's process failed (exit status {done.returncode}): "
                           f"{done.stderr.decode(errors='replace')[-2000:]}")
    ok, value = pickle.loads(done.stdout)
    if not ok:
        raise value
    return value


def main():
    """The process's side: the call from stdin, its (ok, result or exception) to stdout."""
    from ..blas_threads import single_threaded_blas
    single_threaded_blas()
    function, sent = pickle.loads(sys.stdin.buffer.read())
    args = [np.load(value, allow_pickle=False) if kind == "array" else value
            for kind, value in sent]
    try:
        out = (True, function(*args))
    except Exception as exc:       # handed to the caller, who raises it
        out = (False, exc)
    sys.stdout.buffer.write(pickle.dumps(out))
