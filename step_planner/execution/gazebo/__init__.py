"""Gazebo: the scene as an SDF world and the bridge of its poses (pure Python: no Gazebo is imported)."""
