import pathlib

import pytest

HERE = pathlib.Path(__file__).parent


@pytest.fixture(scope="session")
def kapiserver_config():
    # The session's server starts with the operator's CRD Established.
    return {"crds": [HERE.parent / "crd.yaml"]}
