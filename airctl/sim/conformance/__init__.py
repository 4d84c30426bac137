"""Stand-ins for the test hardware of TorchAir's own system tests (``tests/st`` of Ascend/torchair).

TorchAir's CI builds a fake-device module ``_privateuse1_backend`` (``tests/privateuse1/privateuse1.cpp``)
and puts it beside the tests. ``scripts/conformance.py`` puts this folder on ``PYTHONPATH`` so that
``import _privateuse1_backend`` finds :mod:`._privateuse1_backend`, the Python version airctl ships,
and copies ``ascend_ir.yaml`` (the tests' op registry, which CI links into its fake Graph Engine) beside
the tests, where sim reads a model's IR declarations. Nothing else reads this package. See
docs/conformance.md.
"""
