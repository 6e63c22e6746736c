"""Stand-in for ``shape_msgs`` (not in the rclpy wheels installed here); see ``_msg.py``."""
