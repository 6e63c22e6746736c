"""Stand-in for ``control_msgs`` (not in the rclpy wheels installed here); see ``_msg.py``."""
