"""A stand-in for the ``moveit`` (moveit_py) Python package of MoveIt 2, for tests only, built from its source.

It is put on ``sys.path`` only by the tests of the MoveIt backend; nothing in ``step_planner`` imports it. Each
class accepts exactly the signatures of the pybind11 bindings (keyword names, positional-only constructors,
mutually exclusive arguments that raise ``ValueError`` like ``std::invalid_argument`` does through pybind11),
RETURNS what they return, and RECORDS every call in :data:`moveit._standin.LOG`. Behaviour the tests steer
(plan failures, execution status, a blocked execution) is set on :data:`moveit._standin.CONTROL`.

Source: moveit/moveit2 branch ``jazzy``, commit 4d841063574c31a21f69ae12a39fddb77a7eb984 (moveit_py 2.12.4; the
jazzy branch released 2.10.0 to 2.12.4), read in the fetched mirror; each module cites the lines it follows:

- :mod:`moveit.planning` -- MoveItPy (moveit_py/src/moveit/moveit_ros/moveit_cpp/moveit_cpp.cpp:65-197;
  moveit_ros/planning/moveit_cpp/src/moveit_cpp.cpp): its node's parameters come from the ``--params-file`` files
  it is given, by rcl's node-name rules (:mod:`moveit._params`); without a robot description or planning pipelines
  its constructor raises RuntimeError; ``execute(None)`` and a group without a configured controller are ABORTED.
  PlanningComponent (planning_component.cpp of both): an unknown group raises RuntimeError; ``set_goal_state``
  always returns True for a pose goal, False for an unknown named state (which keeps the previous goal);
  ``set_start_state_to_current_state`` returns None; ``plan()`` holds no trajectory on failure.
  PlanningSceneMonitor: ``process_collision_object`` / ``process_attached_collision_object`` return a bool and
  publish the change; edits inside ``read_write()`` are not published.
- :mod:`moveit.core.planning_scene` -- MoveIt's object rules (planning_scene.cpp): ``apply_collision_object``
  returns None, unknown frames and links are refused, ``planning_frame`` is the SRDF's ``world``.
- :mod:`moveit._models` -- the Panda's and the FR3's groups, links and named states from their SRDFs.
- ``moveit_msgs.msg.MoveItErrorCodes`` -- ``val``, ``message``, ``source`` (moveit/moveit_msgs, branch ros2).

Stricter than the real thing (documented so nobody relies on it): writing through a ``read_only()`` scene raises,
and using a scene after its ``with`` block raises. Simpler than the real thing: no planning (a plan reaches its
goal unless a test says otherwise) and no controllers (an execution succeeds unless a test says otherwise; it
never reaches the controllers' action servers).
"""
