"""The BLAS libraries of this process on one thread, so that its figures do not depend on the
machine: what every node's main() and the command-line tools that fit call first."""

import ctypes
import glob
import importlib.util
import os


def single_threaded_blas():
    """NumPy's and SciPy's OpenBLAS (each wheel bundles its own; SciPy's serves Clarabel's
    semidefinite programs) on one thread in this process: how many threads they use for a
    large product changes the result's last bits, so a node's figures would depend on the
    machine and its load; and no BLAS worker thread competes with the joint-state thread.
    True when NumPy's was set (False: a NumPy without its bundled OpenBLAS, left as it is)."""
    found = {}
    for package in ("numpy", "scipy"):
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            continue
        folder = os.path.join(os.path.dirname(spec.origin), os.pardir, f"{package}.libs")
        for path in glob.glob(os.path.join(folder, "*openblas*")):
            library = ctypes.CDLL(path)
            for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                         "openblas_set_num_threads64_", "openblas_set_num_threads"):
                setter = getattr(library, name, None)
                if setter is not None:
                    setter(1)
                    found[package] = True
                    break
    return found.get("numpy", False)
