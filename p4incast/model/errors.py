"""The error a bad setting raises anywhere in the model."""


class ModelError(ValueError):
    """A setting the model refuses; the message names the key and the allowed values."""
