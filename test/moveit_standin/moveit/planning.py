"""``moveit.planning`` stand-in: MoveItPy, PlanningComponent, plan parameters, scene monitor.

Signatures follow the bindings listed in ``moveit/__init__.py``; every call is recorded in
``moveit._standin.LOG``.
"""

from __future__ import annotations

import threading
from typing import Any

from geometry_msgs.msg import PoseStamped

from moveit._standin import CONTROL, LOG
from moveit.core.controller_manager import ExecutionStatus
from moveit.core.planning_interface import MotionPlanResponse
from moveit.core.planning_scene import PlanningScene
from moveit.core.robot_state import RobotState
from moveit.core.robot_trajectory import RobotTrajectory

PIPELINES = ("ompl", "pilz_industrial_motion_planner", "chomp")


class _RobotModel:
    def __init__(self) -> None:
        self.groups = {g: dict(s) for g, s in CONTROL.groups.items()}
        self.links = set(CONTROL.links)


class _Robot:
    """The stand-in's shared state: model, current state, collision world, attached bodies."""

    def __init__(self) -> None:
        self.model = _RobotModel()
        self.state = RobotState(self.model)
        self.world: dict[str, Any] = {}
        self.attached: dict[str, Any] = {}
        self.planning_frame = "panda_link0"
        self.plan_count = 0
        self.execute_count = 0
        self.stop_event = threading.Event()


class MoveItPy:
    def __init__(self, node_name: str = "moveit_py", name_space: str = "",
                 launch_params_filepaths: list[str] | None = None, config_dict: Any = None,
                 provide_planning_service: bool = True) -> None:
        if not isinstance(node_name, str):
            raise TypeError("MoveItPy(): node_name must be str")
        LOG.add("MoveItPy", node_name=node_name, name_space=name_space,
                launch_params_filepaths=launch_params_filepaths, config_dict=config_dict)
        self._robot = _Robot()
        self._tem = TrajectoryExecutionManager(self._robot)
        self._psm = PlanningSceneMonitor(self._robot)

    def get_planning_component(self, planning_component_name: str) -> PlanningComponent:
        return PlanningComponent(planning_component_name, self)

    def get_planning_scene_monitor(self) -> PlanningSceneMonitor:
        return self._psm

    def get_trajectory_execution_manager(self) -> TrajectoryExecutionManager:
        return self._tem

    def get_robot_model(self) -> Any:
        return self._robot.model

    def shutdown(self) -> None:
        LOG.add("shutdown")

    def execute(self, robot_trajectory: RobotTrajectory, controllers: list[str]) -> ExecutionStatus:
        if not isinstance(robot_trajectory, RobotTrajectory):
            raise TypeError("execute(): robot_trajectory must be a moveit.core.robot_trajectory.RobotTrajectory")
        if not isinstance(controllers, list) or not all(isinstance(c, str) for c in controllers):
            raise TypeError("execute(): controllers must be a list of str")
        robot = self._robot
        index = robot.execute_count
        robot.execute_count += 1
        LOG.add("execute", index=index, group=robot_trajectory.joint_model_group_name,
                goal=dict(robot_trajectory._goal), plan_index=robot_trajectory._plan_index)
        if CONTROL.before_execute is not None:
            CONTROL.before_execute(index)
        if CONTROL.block_execute == index:
            robot.stop_event.clear()
            stopped = robot.stop_event.wait(10.0)
            return ExecutionStatus("PREEMPTED" if stopped else "TIMED_OUT")
        status = CONTROL.execute_status.get(index, "SUCCEEDED")
        if status == "SUCCEEDED" and robot_trajectory._end is not None:
            group = robot_trajectory.joint_model_group_name
            end = robot_trajectory._end
            if robot_trajectory._goal.get("configuration_name") == "close":
                end = [CONTROL.finger_after_close] * len(end)
            robot.state.set_joint_group_positions(group, end)
        return ExecutionStatus(status)


class PlanRequestParameters:
    def __init__(self, moveit_cpp: MoveItPy, ns: str, /) -> None:
        if not isinstance(moveit_cpp, MoveItPy) or not isinstance(ns, str):
            raise TypeError("PlanRequestParameters(): takes (MoveItPy, str) positionally")
        LOG.add("PlanRequestParameters", ns=ns)
        self._values: dict[str, Any] = {
            "planner_id": "", "planning_pipeline": "ompl", "planning_attempts": 1, "planning_time": 1.0,
            "max_velocity_scaling_factor": 1.0, "max_acceleration_scaling_factor": 1.0,
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
        if joint_model_group_name not in robot.model.groups:
            raise RuntimeError(f"Invalid joint model group name: {joint_model_group_name}")
        LOG.add("get_planning_component", group=joint_model_group_name)
        self._group = joint_model_group_name
        self._moveit = moveit_py_instance
        self._robot = robot
        self._goal: dict[str, Any] | None = None
        self._start = "unset"

    @property
    def planning_group_name(self) -> str:
        return self._group

    @property
    def named_target_states(self) -> list[str]:
        return list(self._robot.model.groups[self._group])

    def get_named_target_state_values(self, name: str) -> dict[str, float]:
        values = self._robot.model.groups[self._group].get(name, [])
        return {f"{self._group}_joint{i + 1}": v for i, v in enumerate(values)}

    def set_start_state_to_current_state(self) -> bool:
        LOG.add("set_start_state_to_current_state", group=self._group)
        self._start = "current"
        return True

    def set_start_state(self, configuration_name: str | None = None, robot_state: Any = None) -> bool:
        if configuration_name is not None and robot_state is not None:
            raise ValueError("Cannot specify both configuration name and robot state")
        if configuration_name is None and robot_state is None:
            raise ValueError("Must specify at least one argument")
        LOG.add("set_start_state", group=self._group, configuration_name=configuration_name)
        self._start = f"explicit:{configuration_name}"
        return True

    def set_goal_state(self, configuration_name: str | None = None, robot_state: Any = None,
                       pose_stamped_msg: PoseStamped | None = None, pose_link: str | None = None,
                       motion_plan_constraints: list[Any] | None = None) -> bool:
        given = {k for k, v in (("configuration_name", configuration_name), ("robot_state", robot_state),
                                ("pose_stamped_msg", pose_stamped_msg),
                                ("motion_plan_constraints", motion_plan_constraints)) if v is not None}
        if len(given) > 1:
            raise ValueError(f"Cannot specify both {' and '.join(sorted(given))}")
        if (pose_stamped_msg is None) != (pose_link is None):
            raise ValueError("Must specify both message and corresponding link")
        if not given:
            raise ValueError("Must specify at least one argument")
        if pose_stamped_msg is not None:
            if not isinstance(pose_stamped_msg, PoseStamped):
                raise TypeError("set_goal_state(): pose_stamped_msg must be a geometry_msgs.msg.PoseStamped")
            if not isinstance(pose_link, str):
                raise TypeError("set_goal_state(): pose_link must be str")
            p, q = pose_stamped_msg.pose.position, pose_stamped_msg.pose.orientation
            goal = {"pose": (p.x, p.y, p.z), "orientation": (q.x, q.y, q.z, q.w),
                    "frame": pose_stamped_msg.header.frame_id, "link": pose_link}
            ok = pose_link in self._robot.model.links and bool(pose_stamped_msg.header.frame_id)
        elif configuration_name is not None:
            goal = {"configuration_name": configuration_name}
            ok = configuration_name in self._robot.model.groups[self._group]
        else:
            goal = {"robot_state": robot_state} if robot_state is not None else {"constraints": motion_plan_constraints}
            ok = True
        LOG.add("set_goal_state", group=self._group, ok=ok, **goal)
        self._goal = goal if ok else None
        return ok

    def plan(self, single_plan_parameters: PlanRequestParameters | None = None,
             multi_plan_parameters: MultiPipelinePlanRequestParameters | None = None,
             planning_scene: Any = None, solution_selection_function: Any = None,
             stopping_criterion_callback: Any = None) -> MotionPlanResponse:
        from moveit_msgs.msg import MoveItErrorCodes

        if single_plan_parameters is not None and multi_plan_parameters is not None:
            raise ValueError("Cannot specify both single and multi plan parameters")
        if planning_scene is not None and single_plan_parameters is None and multi_plan_parameters is None:
            raise ValueError("Cannot specify planning scene without specifying plan parameters")
        if single_plan_parameters is not None and not isinstance(single_plan_parameters, PlanRequestParameters):
            raise TypeError("plan(): single_plan_parameters must be a PlanRequestParameters")
        robot = self._robot
        index = robot.plan_count
        robot.plan_count += 1
        params = dict(single_plan_parameters._values) if single_plan_parameters is not None else None
        LOG.add("plan", index=index, group=self._group, start=self._start, goal=dict(self._goal or {}),
                params=params)
        self._start = "stale"
        code = MoveItErrorCodes()
        if self._goal is None:
            code.val = MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS
        elif params is not None and params["planning_pipeline"] not in PIPELINES:
            code.val = MoveItErrorCodes.FAILURE
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
            traj._end = list(robot.model.groups[self._group][name])
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
            self._scene._open = False


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
        with self.read_write() as scene:
            return scene.apply_collision_object(collision_object_msg, color_msg)

    def process_attached_collision_object(self, attached_collision_object_msg: Any) -> bool:
        with self.read_write() as scene:
            return scene.process_attached_collision_object(attached_collision_object_msg)

    def wait_for_current_robot_state(self) -> bool:
        return True
