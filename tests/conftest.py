import pytest

import tapelab as tl


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "binder: simulates the Binder build in a fresh virtual environment (needs PyPI, takes minutes); "
        'runs by default, `-m "not binder"` leaves it out',
    )


@pytest.fixture(autouse=True)
def fresh_layer_names():
    """Every test's first Dense is ``dense`` again, whatever layers earlier tests made."""
    tl.keras.backend.clear_session()
