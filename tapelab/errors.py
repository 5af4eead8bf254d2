"""Exception types with TensorFlow's names."""


class InvalidArgumentError(ValueError):
    """An op was given inputs it cannot work with (shapes, dtypes, values); the message says which."""
