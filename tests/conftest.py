def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "binder: simulates the Binder build in a fresh virtual environment (needs PyPI, takes minutes); "
        'runs by default, `-m "not binder"` leaves it out',
    )
