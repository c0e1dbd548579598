"""Symmetric eigenvalues (and vectors), the Cholesky factor and the inverse of a small matrix,
for the per-message path.

np.linalg.eigvalsh and np.linalg.inv check the argument's type and shape and enter an
error-state context on every call, which on a 6 × 6 matrix costs more than the LAPACK work
itself (BENCHMARKS.md, "Design measurements"). dynamics_node computes
Λ = (J M⁻¹ Jᵀ)⁻¹ (and in Cartesian impedance the modal damping) for every joint state, so this module calls the LAPACK kernels that
np.linalg itself runs after those checks (NumPy's `_umath_linalg` gufuncs) directly.

Callers pass square float64 arrays. A failure (a singular matrix, NaN input) gives NaN in
the result instead of np.linalg's LinAlgError, with NumPy's "invalid value" RuntimeWarning;
callers test the result. `_umath_linalg` is NumPy's private module: if a release moves it,
the public functions are used (test_small_linalg checks both against np.linalg).
"""

import numpy as np

try:
    from numpy.linalg import _umath_linalg as _kernels
    _kernels.eigvalsh_lo(np.eye(2), signature="d->d")
    _kernels.inv(np.eye(2), signature="d->d")
    _kernels.eigh_lo(np.eye(2), signature="d->dd")
    _kernels.cholesky_lo(np.eye(2), signature="d->d")
except (ImportError, AttributeError, TypeError):
    _kernels = None


def eigvalsh(A):
    """Eigenvalues of the symmetric matrix A (reads its lower triangle), ascending."""
    if _kernels is None:
        return np.linalg.eigvalsh(A)
    return _kernels.eigvalsh_lo(A, signature="d->d")


def inv(A):
    """A⁻¹ by LU factorisation (NaN where A is singular)."""
    if _kernels is None:
        return np.linalg.inv(A)
    return _kernels.inv(A, signature="d->d")


def eigh(A):
    """(eigenvalues ascending, eigenvectors as columns) of the symmetric matrix A (reads its
    lower triangle)."""
    if _kernels is None:
        return np.linalg.eigh(A)
    return _kernels.eigh_lo(A, signature="d->dd")


def cholesky(A):
    """The lower-triangular C with A = C Cᵀ, A symmetric positive definite (reads its lower
    triangle; NaN where A is not positive definite)."""
    if _kernels is None:
        return np.linalg.cholesky(A)
    return _kernels.cholesky_lo(A, signature="d->d")
