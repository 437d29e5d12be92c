"""Each convention's own code (``Convention.numpy_code`` and ``torch_code``, shown by the worked
example) reproduces pe_core's matrix; the worked example's pe_core snippet is checked in
tests/dashboard/test_views.py."""

import numpy as np
import pytest

import pe_core


@pytest.mark.parametrize("convention", list(pe_core.CONVENTIONS))
@pytest.mark.parametrize(
    ("length", "d_model", "base"),
    [(10, 4, 100.0), (2048, 512, 10000.0), (60, 7, 10000.0), (5, 1, 10000.0), (30, 2, 500.0)],
)
def test_numpy_snippet_reproduces_pe_core(convention, length, d_model, base):
    namespace = {}
    exec(pe_core.CONVENTIONS[convention].numpy_code(length, d_model, base), namespace)
    expected = pe_core.sinusoidal_encoding(length, d_model, base=base, convention=convention)
    assert namespace["pe"].shape == expected.shape
    np.testing.assert_allclose(namespace["pe"], expected, rtol=0, atol=1e-12)


@pytest.mark.library
@pytest.mark.parametrize("convention", list(pe_core.CONVENTIONS))
@pytest.mark.parametrize(("length", "d_model"), [(300, 20), (60, 7), (5, 1)])
def test_torch_snippet_reproduces_pe_core(convention, length, d_model):
    torch = pytest.importorskip(
        "torch", reason="PyTorch is not a dependency; the snippet is checked where it is installed"
    )
    namespace = {}
    exec(pe_core.CONVENTIONS[convention].torch_code(length, d_model, 10000.0), namespace)
    np.testing.assert_allclose(
        namespace["pe"].numpy(),
        pe_core.sinusoidal_encoding(length, d_model, convention=convention),
        atol=1e-12,
    )
    del torch
