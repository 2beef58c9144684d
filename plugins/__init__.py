"""kapiserver's built-in plugins, registered through the ``kapiserver`` entry-point group."""
