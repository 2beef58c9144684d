"""The example third-party plugin, importable without installing it (README example)."""

import importlib.util
import os

_path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "thirdparty",
                     "kapiserver-example-apikey", "kapiserver_example_apikey", "__init__.py")
_spec = importlib.util.spec_from_file_location("kapiserver_example_apikey_source", _path)
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

kapiserver_add_options = _module.kapiserver_add_options
kapiserver_authenticators = _module.kapiserver_authenticators
