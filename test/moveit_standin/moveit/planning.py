"""``moveit.planning`` stand-in: MoveItPy, PlanningComponent, plan parameters, scene monitor.

Signatures follow the bindings listed in ``moveit/__init__.py``; behaviour follows moveit2@4d84106 (jazzy,
moveit_py 2.12.4), cited per rule: ``PYC`` moveit_py/src/moveit/moveit_ros/moveit_cpp/moveit_cpp.cpp, ``PYPC``
moveit_py/.../planning_component.cpp, ``PYPSM`` moveit_py/.../planning_scene_monitor/planning_scene_monitor.cpp,
``MC`` moveit_ros/planning/moveit_cpp/src/moveit_cpp.cpp, ``PC`` .../planning_component.cpp, ``PCH``
.../include/moveit/moveit_cpp/planning_component.hpp, ``PSM`` moveit_ros/planning/planning_scene_monitor/src/
planning_scene_monitor.cpp, ``PPI`` moveit_ros/planning/planning_pipeline_interfaces/src/
planning_pipeline_interfaces.cpp. Every call is recorded in ``moveit._standin.LOG``.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from geometry_msgs.msg import PoseStamped

from moveit import _models, _params
from moveit._standin import CONTROL, LOG
from moveit.core.controller_manager import ExecutionStatus
from moveit.core.planning_interface import MotionPlanResponse
from moveit.core.planning_scene import PlanningScene
from moveit.core.robot_model import RobotModel
from moveit.core.robot_state import RobotState
from moveit.core.robot_trajectory import RobotTrajectory


def _robot_name(urdf: str) -> str | None:
    match = re.search(r"<robot[^>]*\bname\s*=\s*[\"']([^\"']+)", urdf)
    return match.group(1) if match else None


class _Robot:
    """The stand-in's shared state: parameters, model, current state, collision world, attached bodies."""

    def __init__(self, params: dict[str, Any], data: _models.RobotModelData) -> None:
        self.params = params
        self.model = RobotModel(data)
        self.state = RobotState(self.model)
        self.world: dict[str, Any] = {}
        self.attached: dict[str, Any] = {}
        self.plan_count = 0
        self.execute_count = 0
        self.stop_event = threading.Event()
        names = params.get("moveit_simple_controller_manager.controller_names") or []
        self.controllers = {n: list(params.get(f"moveit_simple_controller_manager.{n}.joints") or []) for n in names}
        self.pipelines = list(params.get("planning_pipelines.pipeline_names") or [])


class MoveItPy:
    def __init__(self, node_name: str = "moveit_py", name_space: str = "",
                 launch_params_filepaths: list[str] | None = None, config_dict: Any = None,
                 provide_planning_service: bool = True, remappings: dict[str, str] | None = None) -> None:
        if not isinstance(node_name, str) or not isinstance(name_space, str):
            raise TypeError("MoveItPy(): node_name and name_space must be str")
        # PYC:73-89: a config_dict wins over the files (written keyed by node_name, moveit/utils.py:44-49);
        # otherwise the files given, which default to the process's --params-file arguments (moveit/utils.py:52-61)
        node_fqn = _params.fqn(name_space, node_name)
        if config_dict is not None:
            params: dict[str, Any] = {}
            _params._flatten("", config_dict, params)
            params = params if _params.node_matches(node_name, node_fqn) else {}
        else:
            params = _params.resolve(list(launch_params_filepaths or []), node_fqn)
        LOG.add("MoveItPy", node_name=node_name, name_space=name_space, node_fqn=node_fqn,
                launch_params_filepaths=launch_params_filepaths, config_dict=config_dict, params=sorted(params))
        # MC:55-77: the scene monitor needs the robot model from robot_description(_semantic); then the pipelines
        data = _models.MODELS.get(_robot_name(str(params.get("robot_description", ""))) or "")
        if data is None or not params.get("robot_description_semantic"):
            raise RuntimeError("Unable to configure planning scene monitor")
        if not params.get("planning_pipelines.pipeline_names"):
            raise RuntimeError("Failed to load planning pipelines from parameter server")
        self._robot = _Robot(params, data)
        self._tem = TrajectoryExecutionManager(self._robot)
        self._psm = PlanningSceneMonitor(self._robot)

    def get_planning_component(self, planning_component_name: str) -> PlanningComponent:
        return PlanningComponent(planning_component_name, self)

    def get_planning_scene_monitor(self) -> PlanningSceneMonitor:
        return self._psm

    def get_trajectory_execution_manager(self) -> TrajectoryExecutionManager:
        return self._tem

    def get_robot_model(self) -> RobotModel:
        return self._robot.model

    def shutdown(self) -> None:
        LOG.add("shutdown")

    def execute(self, robot_trajectory: RobotTrajectory | None, controllers: list[str]) -> ExecutionStatus:
        if robot_trajectory is not None and not isinstance(robot_trajectory, RobotTrajectory):
            raise TypeError("execute(): robot_trajectory must be a moveit.core.robot_trajectory.RobotTrajectory")
        if not isinstance(controllers, list) or not all(isinstance(c, str) for c in controllers):
            raise TypeError("execute(): controllers must be a list of str")
        robot = self._robot
        if robot_trajectory is None:  # MC:207-211
            LOG.add("execute", index=None, group=None, status="ABORTED")
            return ExecutionStatus("ABORTED")
        group = robot_trajectory.joint_model_group_name
        joints = set(robot.model.data.groups.get(group, []))
        if not any(joints <= set(cj) for cj in robot.controllers.values()):  # MC:215-220
            LOG.add("execute", index=None, group=group, status="ABORTED", why="no controller for the group")
            return ExecutionStatus("ABORTED")
        index = robot.execute_count
        robot.execute_count += 1
        LOG.add("execute", index=index, group=group, goal=dict(robot_trajectory._goal),
                plan_index=robot_trajectory._plan_index)
        if CONTROL.before_execute is not None:
            CONTROL.before_execute(index)
        if CONTROL.block_execute == index:
            robot.stop_event.clear()
            stopped = robot.stop_event.wait(10.0)
            return ExecutionStatus("PREEMPTED" if stopped else "TIMED_OUT")
        status = CONTROL.execute_status.get(index, "SUCCEEDED")
        if status == "SUCCEEDED" and robot_trajectory._end is not None:
            robot.state.set_joint_group_positions(group, robot_trajectory._end)
        return ExecutionStatus(status)


class PlanRequestParameters:
    def __init__(self, moveit_cpp: MoveItPy, ns: str, /) -> None:
        if not isinstance(moveit_cpp, MoveItPy) or not isinstance(ns, str):
            raise TypeError("PlanRequestParameters(): takes (MoveItPy, str) positionally")
        LOG.add("PlanRequestParameters", ns=ns)
        p = moveit_cpp._robot.params  # PCH:81-97: <ns>.plan_request_params.<name>, else these defaults
        prefix = f"{ns}.plan_request_params." if ns else "plan_request_params."
        self._values: dict[str, Any] = {
            "planner_id": p.get(prefix + "planner_id", ""),
            "planning_pipeline": p.get(prefix + "planning_pipeline", ""),
            "planning_attempts": p.get(prefix + "planning_attempts", 5),
            "planning_time": p.get(prefix + "planning_time", 1.0),
            "max_velocity_scaling_factor": p.get(prefix + "max_velocity_scaling_factor", 1.0),
            "max_acceleration_scaling_factor": p.get(prefix + "max_acceleration_scaling_factor", 1.0),
        }

    def _get(self, key: str) -> Any:
        return self._values[key]

    def _set(self, key: str, value: Any, kind: type) -> None:
        if isinstance(value, bool) or not isinstance(value, kind if kind is not float else (int, float)):
            raise TypeError(f"PlanRequestParameters.{key}: incompatible type {type(value).__name__}")
        self._values[key] = value

    planner_id = property(lambda s: s._get("planner_id"), lambda s, v: s._set("planner_id", v, str))
    planning_pipeline = property(lambda s: s._get("planning_pipeline"),
                                 lambda s, v: s._set("planning_pipeline", v, str))
    planning_attempts = property(lambda s: s._get("planning_attempts"),
                                 lambda s, v: s._set("planning_attempts", v, int))
    planning_time = property(lambda s: s._get("planning_time"), lambda s, v: s._set("planning_time", v, float))
    max_velocity_scaling_factor = property(lambda s: s._get("max_velocity_scaling_factor"),
                                           lambda s, v: s._set("max_velocity_scaling_factor", v, float))
    max_acceleration_scaling_factor = property(lambda s: s._get("max_acceleration_scaling_factor"),
                                               lambda s, v: s._set("max_acceleration_scaling_factor", v, float))


class MultiPipelinePlanRequestParameters:
    def __init__(self, moveit_cpp: MoveItPy, planning_pipeline_names: list[str], /) -> None:
        self.multi_plan_request_parameters = [PlanRequestParameters(moveit_cpp, n) for n in planning_pipeline_names]


class PlanningComponent:
    def __init__(self, joint_model_group_name: str, moveit_py_instance: MoveItPy) -> None:
        robot = moveit_py_instance._robot
        if not robot.model.has_joint_model_group(joint_model_group_name):  # PC:50-63
            raise RuntimeError(f"Could not find joint model group '{joint_model_group_name}'.")
        LOG.add("get_planning_component", group=joint_model_group_name)
        self._group = joint_model_group_name
        self._moveit = moveit_py_instance
        self._robot = robot
        self._goal: dict[str, Any] | None = None  # current_goal_constraints_
        self._start = "unset"

    @property
    def planning_group_name(self) -> str:
        return self._group

    @property
    def named_target_states(self) -> list[str]:
        return list(self._robot.model.data.states.get(self._group, {}))

    def get_named_target_state_values(self, name: str) -> dict[str, float]:
        values = self._robot.model.data.states.get(self._group, {}).get(name, [])
        return dict(zip(self._robot.model.data.groups[self._group], values, strict=False))

    def set_start_state_to_current_state(self) -> None:  # void: PYPC:288, PC:259-262
        LOG.add("set_start_state_to_current_state", group=self._group)
        self._start = "current"

    def set_start_state(self, configuration_name: str | None = None, robot_state: Any = None) -> bool:
        if configuration_name is not None and robot_state is not None:  # PYPC:170-183
            raise ValueError("Cannot specify both configuration name and robot state")
        if configuration_name is None and robot_state is None:
            raise ValueError("Must specify at least one argument")
        LOG.add("set_start_state", group=self._group, configuration_name=configuration_name)
        if configuration_name is not None and configuration_name not in self.named_target_states:
            return False  # PC:245-252
        self._start = f"explicit:{configuration_name}"
        return True

    def set_goal_state(self, configuration_name: str | None = None, robot_state: Any = None,
                       pose_stamped_msg: PoseStamped | None = None, pose_link: str | None = None,
                       motion_plan_constraints: list[Any] | None = None) -> bool:
        # PYPC:107-146, in its order
        if configuration_name is not None and robot_state is not None:
            raise ValueError("Cannot specify both configuration name and robot state")
        if configuration_name is not None and pose_stamped_msg is not None:
            raise ValueError("Cannot specify both configuration name and pose msg")
        if configuration_name is not None and motion_plan_constraints is not None:
            raise ValueError("Cannot specify both configuration name and motion plan constraints")
        if robot_state is not None and pose_stamped_msg is not None:
            raise ValueError("Cannot specify both robot state and pose msg")
        if robot_state is not None and motion_plan_constraints is not None:
            raise ValueError("Cannot specify both robot state and motion plan constraints")
        if pose_stamped_msg is not None and motion_plan_constraints is not None:
            raise ValueError("Cannot specify both pose goal and motion plan constraints")
        if (pose_stamped_msg is None) != (pose_link is None):
            raise ValueError("Must specify both message and corresponding link")
        if all(v is None for v in (configuration_name, robot_state, pose_stamped_msg, pose_link,
                                   motion_plan_constraints)):
            raise ValueError("Must specify at least one argument")
        if pose_stamped_msg is not None:
            if not isinstance(pose_stamped_msg, PoseStamped):
                raise TypeError("set_goal_state(): pose_stamped_msg must be a geometry_msgs.msg.PoseStamped")
            if not isinstance(pose_link, str):
                raise TypeError("set_goal_state(): pose_link must be str")
            p, q = pose_stamped_msg.pose.position, pose_stamped_msg.pose.orientation
            goal = {"pose": (p.x, p.y, p.z), "orientation": (q.x, q.y, q.z, q.w),
                    "frame": pose_stamped_msg.header.frame_id, "link": pose_link}
            ok = True  # PC:302-306: the constraints are built, whatever the link and frame
        elif configuration_name is not None:
            goal = {"configuration_name": configuration_name}
            ok = configuration_name in self.named_target_states  # PC:308-315
        else:
            goal = {"robot_state": robot_state} if robot_state is not None else {"constraints": motion_plan_constraints}
            ok = True  # PC:290-300
        LOG.add("set_goal_state", group=self._group, ok=ok, **goal)
        if ok:
            self._goal = goal  # a refused name leaves the previous goal in place (PC:308-315)
        return ok

    def plan(self, single_plan_parameters: PlanRequestParameters | None = None,
             multi_plan_parameters: MultiPipelinePlanRequestParameters | None = None,
             planning_scene: Any = None, solution_selection_function: Any = None,
             stopping_criterion_callback: Any = None) -> MotionPlanResponse:
        from moveit_msgs.msg import MoveItErrorCodes

        if single_plan_parameters is not None and multi_plan_parameters is not None:  # PYPC:53-56
            raise ValueError("Cannot specify both single and multi plan parameters")
        if planning_scene is not None and single_plan_parameters is None and multi_plan_parameters is None:
            raise ValueError("Cannot specify planning scene without specifying plan parameters")
        if single_plan_parameters is not None and not isinstance(single_plan_parameters, PlanRequestParameters):
            raise TypeError("plan(): single_plan_parameters must be a PlanRequestParameters")
        robot = self._robot
        index = robot.plan_count
        robot.plan_count += 1
        if single_plan_parameters is None:  # PC:210-223: the default plan_request_params
            single_plan_parameters = PlanRequestParameters(self._moveit, "")
        params = dict(single_plan_parameters._values)
        LOG.add("plan", index=index, group=self._group, start=self._start, goal=dict(self._goal or {}),
                params=params, thread=threading.current_thread().name)
        if CONTROL.during_plan is not None:
            CONTROL.during_plan(index)
        code = MoveItErrorCodes(source="stand-in")
        if self._goal is None:  # PC:122-128
            code.val, code.message = MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS, "No goal constraints set"
        elif params["planning_pipeline"] not in robot.pipelines:  # PPI:57-63
            code.val = MoveItErrorCodes.FAILURE
            code.message = f"No planning pipeline available for name '{params['planning_pipeline']}'"
        elif "link" in self._goal and self._goal["link"] not in robot.model.data.links:
            code.val = MoveItErrorCodes.FAILURE  # UNVERIFIED which code an unknown goal link gives
        else:
            code.val = CONTROL.plan_errors.get(index, MoveItErrorCodes.SUCCESS)
        if code.val != MoveItErrorCodes.SUCCESS:
            return MotionPlanResponse(None, code)
        traj = RobotTrajectory(robot.model)
        traj.joint_model_group_name = self._group
        traj._goal = dict(self._goal)
        traj._plan_index = index
        name = self._goal.get("configuration_name")
        if name is not None:
            traj._end = list(robot.model.data.states[self._group][name])
        return MotionPlanResponse(traj, code)


class TrajectoryExecutionManager:
    def __init__(self, robot: _Robot) -> None:
        self._robot = robot

    def stop_execution(self, auto_clear: bool = True) -> None:
        LOG.add("stop_execution", auto_clear=auto_clear)
        self._robot.stop_event.set()


class _Locked:
    def __init__(self, robot: _Robot, writable: bool) -> None:
        self._robot, self._writable = robot, writable
        self._scene: PlanningScene | None = None

    def __enter__(self) -> PlanningScene:
        LOG.add("read_write" if self._writable else "read_only")
        self._scene = PlanningScene(self._robot, self._writable)
        return self._scene

    def __exit__(self, type: Any, value: Any, traceback: Any) -> None:  # noqa: A002
        if self._scene is not None:
            self._scene._open = False  # PYPSM:95-100: only the lock is released, nothing is published


class LockedPlanningSceneContextManagerRO(_Locked):
    def __init__(self, robot: _Robot) -> None:
        super().__init__(robot, False)


class LockedPlanningSceneContextManagerRW(_Locked):
    def __init__(self, robot: _Robot) -> None:
        super().__init__(robot, True)


class PlanningSceneMonitor:
    def __init__(self, robot: _Robot) -> None:
        self._robot = robot

    @property
    def name(self) -> str:
        return "planning_scene_monitor"

    def read_only(self) -> LockedPlanningSceneContextManagerRO:
        return LockedPlanningSceneContextManagerRO(self._robot)

    def read_write(self) -> LockedPlanningSceneContextManagerRW:
        return LockedPlanningSceneContextManagerRW(self._robot)

    def process_collision_object(self, collision_object_msg: Any, color_msg: Any = None) -> bool:
        """PYPSM:44-55 -> PSM:821-839: applied under the lock, then a scene update is triggered, which the
        publishing thread sends on monitored_planning_scene (PSM:463-530, MC:103-104)."""
        scene = PlanningScene(self._robot, True)
        ok = scene._process_collision_object(collision_object_msg)
        if ok:
            LOG.add("published", kind="collision_object", id=collision_object_msg.id,
                    operation=collision_object_msg.operation)
        return ok

    def process_attached_collision_object(self, attached_collision_object_msg: Any) -> bool:
        """PYPSM:57-63 -> PSM:841-859."""
        scene = PlanningScene(self._robot, True)
        ok = scene.process_attached_collision_object(attached_collision_object_msg)
        if ok:
            LOG.add("published", kind="attached_collision_object", id=attached_collision_object_msg.object.id,
                    operation=attached_collision_object_msg.object.operation)
        return ok

    def wait_for_current_robot_state(self) -> bool:
        return True
