"""gunicorn settings for kapiserver: ``gunicorn -c conf/gunicorn.conf.py``.

kapiserver's options come from the YAML file named by ``$KAPISERVER_CONFIG`` (default:
``kapiserver.yaml`` beside this file); bind address, TLS, worker class and limits are
derived from them exactly as ``kapiserver serve`` derives them. Settings given on
gunicorn's own command line still override these.
"""

import os

from kapiserver.server.serving import settings_from_environment

globals().update(settings_from_environment(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "kapiserver.yaml")))
