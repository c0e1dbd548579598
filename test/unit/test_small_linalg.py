"""algorithms/small_linalg against np.linalg (the reference it stands in for)."""

import numpy as np
import pytest

from robo_dynamics.algorithms import small_linalg


def spd(rng, n, condition):
    """A random symmetric positive definite n × n matrix with the given condition number."""
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (Q * np.geomspace(1.0, 1.0 / condition, n)) @ Q.T


@pytest.mark.parametrize("condition", [1.0, 1e3, 1e8])
@pytest.mark.parametrize("n", [2, 6, 7])
def test_eigvalsh_and_inv_equal_numpy(n, condition):
    rng = np.random.default_rng(n)
    for _ in range(20):
        A = spd(rng, n, condition)
        sigma = small_linalg.eigvalsh(A)
        assert np.allclose(sigma, np.linalg.eigvalsh(A), rtol=1e-12, atol=1e-15)
        assert np.all(np.diff(sigma) >= 0.0)                  # ascending, as np.linalg
        A_inv = small_linalg.inv(A)
        assert np.allclose(A_inv, np.linalg.inv(A), rtol=1e-12 * condition, atol=0.0)
        assert np.abs(A @ A_inv - np.eye(n)).max() < 1e-14 * condition


@pytest.mark.parametrize("condition", [1.0, 1e3, 1e8])
@pytest.mark.parametrize("n", [2, 6, 7])
def test_eigh_and_cholesky_are_factorisations(n, condition):
    """A V = V diag(λ) with V orthonormal and λ as np.linalg's; A = C Cᵀ with C lower
    triangular and equal to np.linalg's factor."""
    rng = np.random.default_rng(n + 10)
    for _ in range(20):
        A = spd(rng, n, condition)
        lam, V = small_linalg.eigh(A)
        assert np.allclose(lam, np.linalg.eigvalsh(A), rtol=1e-12, atol=1e-15)
        assert np.abs(V.T @ V - np.eye(n)).max() < 1e-13
        assert np.abs(A @ V - V * lam).max() < 1e-14
        C = small_linalg.cholesky(A)
        assert np.array_equal(C, np.tril(C))
        assert np.abs(C @ C.T - A).max() < 1e-15
        assert np.allclose(C, np.linalg.cholesky(A), rtol=1e-10 * condition, atol=1e-15)


def test_eigvalsh_reads_the_lower_triangle():
    rng = np.random.default_rng(1)
    A = spd(rng, 6, 10.0)
    garbage = np.triu(rng.standard_normal((6, 6)), 1) * 100.0
    assert np.allclose(small_linalg.eigvalsh(np.tril(A) + garbage), np.linalg.eigvalsh(A),
                       rtol=1e-12)


def test_failure_is_nan_not_a_number():
    with pytest.warns(RuntimeWarning):
        assert np.isnan(small_linalg.inv(np.zeros((6, 6)))).all()
    with pytest.warns(RuntimeWarning):
        assert np.isnan(small_linalg.eigvalsh(np.full((6, 6), np.nan))).all()
    with pytest.warns(RuntimeWarning):                    # not positive definite
        assert np.isnan(small_linalg.cholesky(-np.eye(6))).all()


def test_fallback_without_numpy_kernels(monkeypatch):
    monkeypatch.setattr(small_linalg, "_kernels", None)
    A = spd(np.random.default_rng(2), 6, 100.0)
    assert np.allclose(small_linalg.eigvalsh(A), np.linalg.eigvalsh(A), rtol=1e-14)
    assert np.allclose(small_linalg.inv(A) @ A, np.eye(6), atol=1e-12)
    lam, V = small_linalg.eigh(A)
    assert np.abs(A @ V - V * lam).max() < 1e-14
    assert np.abs(small_linalg.cholesky(A) @ small_linalg.cholesky(A).T - A).max() < 1e-15
