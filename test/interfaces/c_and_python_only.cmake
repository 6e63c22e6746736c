# Test-only interface packages are read by Python alone (the stand-ins, the MuJoCo robot process, the tests: rclpy
# loads the C typesupports), so their builds skip the four C++ generators: half the compile time (franka_msgs:
# 20 s of CPU instead of 41 s). Included after the packages are found and before rosidl_generate_interfaces():
# finding a dependency (geometry_msgs, ...) registers the C++ generators again, so they are filtered out of the
# extension point rosidl_generate_interfaces() runs (ament_cmake_core's ament_register_extension keeps it as the list
# AMENT_EXTENSIONS_rosidl_generate_idl_interfaces). The product's step_planner_interfaces keeps every generator.
list(FILTER AMENT_EXTENSIONS_rosidl_generate_idl_interfaces EXCLUDE REGEX
  "^rosidl_(generator|typesupport|typesupport_fastrtps|typesupport_introspection)_cpp:")
