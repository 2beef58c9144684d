"""Fixtures of the batch tests."""

import pytest


@pytest.fixture
def core_validation():
    """The pod template validation Jobs call (``kapiserver.apis.core.validation``)."""
    return pytest.importorskip("kapiserver.apis.core.validation",
                               reason="pod template validation (kapiserver.apis.core) absent")
