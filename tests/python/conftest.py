"""pytest settings of the tool's Python-side checks (tests/python; the package suite in package/
has its own conftest.py, which registers the same marker for runs of that directory alone)."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu: needs a CUDA device (deselected in CI by -m 'not gpu'; run by the device "
        "check with -m gpu)")
