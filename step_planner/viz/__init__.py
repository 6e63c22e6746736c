"""What viewers show of a running goal, as plain data (no rclpy): the ROS edge converts it (step_planner/ros/)."""
