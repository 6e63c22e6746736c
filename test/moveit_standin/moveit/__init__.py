"""A faithful stand-in for the ``moveit`` (moveit_py) Python package of MoveIt 2, for tests only.

It is put on ``sys.path`` only inside ``test/test_moveit_backend.py``; nothing in ``step_planner``
imports it. Each class accepts exactly the signatures of the pybind11 bindings (keyword names,
positional-only constructors, mutually exclusive arguments that raise ``ValueError`` like
``std::invalid_argument`` does through pybind11) and RECORDS every call in :data:`moveit._standin.LOG`.
Behaviour the tests steer (plan failures, execution status, finger gap after closing) is set on
:data:`moveit._standin.CONTROL`.

Signature sources (moveit/moveit2 and moveit/moveit2_tutorials, read with the search tool):

- ``MoveItPy`` -- ``moveit_py/src/moveit/moveit_ros/moveit_cpp/moveit_cpp.cpp`` at commit
  e07752a068c88904ed8c320a7bf56a228337df82: ``MoveItPy(node_name="moveit_py", name_space="",
  launch_params_filepaths=..., config_dict=None, provide_planning_service=True)``,
  ``execute(robot_trajectory, controllers)`` (no ``blocking``; older releases had
  ``execute(robot_trajectory, blocking=True, controllers)``), ``get_planning_component(
  planning_component_name)``, ``get_planning_scene_monitor()``, ``get_trajectory_execution_manager()``,
  ``get_robot_model()``, ``shutdown()``.
- ``PlanningComponent``, ``PlanRequestParameters``, ``MultiPipelinePlanRequestParameters`` --
  ``moveit_py/src/moveit/moveit_ros/moveit_cpp/planning_component.cpp``: ``set_goal_state(
  configuration_name=None, robot_state=None, pose_stamped_msg=None, pose_link=None,
  motion_plan_constraints=None)`` with its exclusivity checks and bool return,
  ``set_start_state(configuration_name=None, robot_state=None)``, ``set_start_state_to_current_state()``,
  ``plan(single_plan_parameters=None, multi_plan_parameters=None, planning_scene=None,
  solution_selection_function=None, stopping_criterion_callback=None)``;
  ``PlanRequestParameters(moveit_cpp, ns)`` (positional) with read-write ``planner_id,
  planning_pipeline, planning_attempts, planning_time, max_velocity_scaling_factor,
  max_acceleration_scaling_factor``; ``MultiPipelinePlanRequestParameters(moveit_cpp,
  planning_pipeline_names)``.
- ``MotionPlanResponse`` -- ``moveit_py/src/moveit/moveit_core/planning_interface/planning_response.cpp``:
  ``trajectory``, ``error_code`` (a ``moveit_msgs/MoveItErrorCodes``), ``planning_time``, ``__bool__``.
- ``PlanningSceneMonitor`` and the RO/RW context managers --
  ``moveit_py/src/moveit/moveit_ros/planning_scene_monitor/planning_scene_monitor.cpp``:
  ``read_only()``, ``read_write()`` (``with`` only), ``process_collision_object(collision_object_msg,
  color_msg=None)``, ``process_attached_collision_object(attached_collision_object_msg)``.
- ``PlanningScene`` -- ``moveit_py/src/moveit/moveit_core/planning_scene/planning_scene.cpp`` and
  ``moveit_py/moveit/core/planning_scene.pyi``: ``current_state``, ``planning_frame``,
  ``apply_collision_object(collision_object_msg, color_msg=None)``,
  ``process_attached_collision_object(object)``, ``remove_all_collision_objects()``,
  ``is_state_colliding(robot_state, joint_model_group_name, verbose=False)``.
- ``RobotState`` -- ``moveit_py/src/moveit/moveit_core/robot_state/robot_state.cpp``:
  ``set_from_ik(joint_model_group_name, geometry_pose, tip_name, timeout=0.0)``,
  ``get_joint_group_positions(joint_model_group_name)``, ``update(force=False)``.
- ``TrajectoryExecutionManager`` --
  ``moveit_py/src/moveit/moveit_ros/trajectory_execution_manager/trajectory_execution_manager.cpp``:
  ``stop_execution(auto_clear=True)`` (and the rest is absent here on purpose).
- ``ExecutionStatus`` -- ``moveit_py/src/moveit/moveit_core/controller_manager/controller_manager.cpp``:
  ``status`` (string) and ``__bool__``.
- Usage of ``read_write()`` + ``apply_collision_object`` + ``current_state.update()``:
  moveit2_tutorials ``doc/examples/motion_planning_python_api/scripts/
  motion_planning_python_api_planning_scene.py``.

Versions: ROS 2 Jazzy ships moveit_py 2.10.x (moveit_py/CHANGELOG.rst). The MoveItPy binding read
above is from >= 2.11 (it has ``name_space``, added in 2.11.0 by #2884); the backend passes only
``node_name`` and ``launch_params_filepaths``, which 2.10 has too, and calls ``execute(trajectory,
controllers=[])``, valid for both the old (``blocking=True`` default) and the new signature. The
TrajectoryExecutionManager binding exists since 2.9.0 (#2406), so it is in Jazzy.

Stricter than the real thing (documented so nobody relies on it): writing through a
``read_only()`` scene raises, and using a scene after its ``with`` block raises.
"""
