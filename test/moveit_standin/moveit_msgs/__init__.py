"""Stand-in for the ``moveit_msgs`` package (not installable from PyPI here); see ``_msg.py``."""
