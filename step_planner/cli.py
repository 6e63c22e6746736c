"""``step-planner``: plan and execute, benchmark, replay, and talk to the ROS node.

    step-planner plan "put the tape and the screwdriver in the drawer" --scene config/scenes/drawer_desk.yaml
    step-planner bench --suite table3 --planners step,react,oneshot --noise 0,0.1,0.2
    step-planner replay EPISODE --backend symbolic|sim|moveit [--video out.mp4]
    step-planner replay EPISODE --publish           (ROS 2: play the recorded run back on /joint_states, ~/tree)
    step-planner replay EPISODE --controllers [--robot panda|fr3] (the recorded motion through the robot's controllers)
    step-planner replan EPISODE
    step-planner config check [FILE ...]            (every config file against its schema; config schemas|docs)
    step-planner export-world SCENE --sdf OUT.sdf [--bridge OUT.yaml]   (the scene as a Gazebo world)
    step-planner send "..." | watch | node          (ROS 2; see step_planner.ros; `node --help`: parameters)
    step-planner recover                            (ROS 2: bring the FR3 back after a reflex, through the node)
    step-planner fault reflex [cartesian_reflex]    (ROS 2: the MuJoCo robot's next goal meets a fault, to rehearse it)
    step-planner hmi                                (ROS 2: a web page to send, watch, answer and cancel a goal)

Without an LLM endpoint (no --base-url, no STEP_PLANNER_BASE_URL, no OPENAI_API_KEY) ``plan`` uses
answers recorded with the project (``config/replay/``, produced by the scripted expert, not an
LLM) served by a loopback OpenAI-compatible server, and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from step_planner.execution.factory import BACKENDS
from step_planner.resources import config_dir


def _resolve_scene(value: str) -> Path:
    path = Path(value)
    if path.exists():
        return path
    candidate = config_dir() / "scenes" / (value if value.endswith(".yaml") else f"{value}.yaml")
    if candidate.exists():
        return candidate
    raise SystemExit(f"step-planner: no scene {value!r} (looked at {path} and {candidate})")


def llm_settings(args: argparse.Namespace) -> tuple[dict[str, Any], bool]:
    """The LLM config, and whether to run offline on the shipped answers."""
    from step_planner.llm.config import load_llm_file

    data = load_llm_file(args.llm_config) if args.llm_config else {}
    base_url = args.base_url or os.environ.get("STEP_PLANNER_BASE_URL") or data.get("base_url")
    model = args.model or os.environ.get("STEP_PLANNER_MODEL") or data.get("model")
    if base_url:
        data["base_url"] = base_url
    if model:
        data["model"] = model
    key_env = data.get("api_key_env", "OPENAI_API_KEY")
    offline = args.offline or not (base_url or os.environ.get(key_env))
    return data, offline


def _make_llm(args: argparse.Namespace, stack: ExitStack, out: Any) -> Any:
    from step_planner.llm.client import LLMClient
    from step_planner.llm.config import LLMConfig

    settings, offline = llm_settings(args)
    if offline:
        from step_planner.llm.offline import OfflineAnswers

        folder = Path(args.answers) if args.answers else config_dir() / "replay"
        try:
            answers = stack.enter_context(OfflineAnswers(folder))
        except FileNotFoundError as exc:
            raise SystemExit(f"step-planner: {exc}") from exc
        settings, changed = answers.settings(settings)
        out.write(answers.notice() + "\n")
        if changed:
            out.write(f"(pinned to what the answers were recorded with: {', '.join(changed)})\n")
        out.write("Set --base-url/--model (or STEP_PLANNER_BASE_URL, OPENAI_API_KEY) to plan with a real model.\n\n")
    return LLMClient(LLMConfig.from_dict(settings))


def cmd_plan(args: argparse.Namespace) -> int:
    from step_planner.config_schema import ConfigFileError
    from step_planner.console import TreePrinter
    from step_planner.domain.primitives import DomainError, PrimitiveLibrary
    from step_planner.domain.safety import SafetyEnvelope
    from step_planner.domain.scene import SceneError, load_scene
    from step_planner.execution.errors import BackendUnavailable
    from step_planner.execution.factory import make_executor
    from step_planner.llm.config import LLMConfig
    from step_planner.planner.config import PlannerConfig
    from step_planner.planner.runner import run_goal, safety_gate

    out = sys.stdout
    cfg = config_dir()
    try:
        library = PrimitiveLibrary.load(args.primitives or cfg / "primitives.yaml")
        world = load_scene(_resolve_scene(args.scene))
        planner_config = PlannerConfig.from_yaml(args.planner_config or cfg / "planner.yaml")
        if args.profile:
            planner_config = planner_config.with_changes(profile=args.profile)
        if args.features is not None:
            planner_config = planner_config.with_changes(extra_features=[f for f in args.features.split(",") if f])
        envelope = SafetyEnvelope.load(args.safety or cfg / "safety.yaml")
        LLMConfig.from_dict(llm_settings(args)[0], args.llm_config or "llm")  # a bad file stops before the robot
    except (ConfigFileError, DomainError) as exc:
        print(f"step-planner: {exc}", file=sys.stderr)
        return 2
    options: dict[str, Any] = {}
    if args.video:
        options["video_path"] = args.video
    if args.robot:
        if args.backend != "controllers":
            print("step-planner: --robot is for the controllers backend", file=sys.stderr)
            return 2
        options["robot"] = args.robot
    if args.realtime:
        if args.backend != "sim":
            print("step-planner: --realtime is for the sim backend", file=sys.stderr)
            return 2
        options["realtime"] = True
    goal_id = args.goal_id or uuid.uuid4().hex[:8]
    with ExitStack() as stack:
        try:
            executor = make_executor(args.backend, library, world, **options)
        except (BackendUnavailable, SceneError) as exc:
            print(f"step-planner: {exc}", file=sys.stderr)
            return 2
        if hasattr(executor, "close"):
            stack.callback(executor.close)
        llm = _make_llm(args, stack, out)
        printer = TreePrinter(out)
        listeners: list[Any] = [printer]
        steps = [printer.on_step]
        recorder = None
        if args.record:
            from step_planner.episodes.recorder import EpisodeRecorder, world_at_start

            # a robot backend (controllers, moveit): the world as it perceives it at the start, not the scene's
            start, source = world_at_start(executor, world, perceives=args.backend in ("controllers", "moveit"))
            recorder = EpisodeRecorder(args.record, goal_id, instruction=args.instruction, scene=args.scene,
                                       backend=args.backend, config=planner_config.to_dict(), world=start,
                                       world_source=source)
            listeners.append(recorder)
            steps.append(recorder.on_step)
            llm.add_listener(recorder.on_exchange)
            if (detach := recorder.attach_executor(executor)) is not None:  # the simulator's joints, /tf, poses
                stack.callback(detach)
        episodic = None
        if "episodic_memory" in planner_config.features:
            from step_planner.planner.memory import EpisodicMemory, minilm_embedder

            store = Path(args.episodic_store or Path.home() / ".step_planner" / "episodic.jsonl")
            episodic = EpisodicMemory(store, minilm_embedder(), seed=cfg / "episodic_seed.yaml")
        person = None
        if not args.no_input and sys.stdin.isatty():
            from step_planner.console import TerminalPerson

            person = TerminalPerson(sys.stdin, out, timeout_s=args.person_timeout)
        elif args.confirm_goal:
            out.write("(--confirm-goal: nobody at a terminal to confirm the goal; it will end GOAL_NOT_CONFIRMED)\n")
        result = run_goal(
            args.instruction, library=library, executor=executor, llm=llm, config=planner_config,
            listeners=listeners, goal_id=goal_id, gate=safety_gate(envelope, library, executor),
            on_step=lambda c, o, w: [f(c, o, w) for f in steps], episodic=episodic, goal=args.goal or None,
            person=person, confirm_goal=args.confirm_goal,
        )
        printer.result(result)
        if recorder is not None:
            from step_planner.episodes.recorder import Retention, prune

            print(f"episode recorded in {recorder.finish(result)}")
            prune(args.record, Retention())
        if args.json:
            Path(args.json).write_text(json.dumps(result.to_dict(), indent=2, default=str) + "\n")
    return 0 if result.success else 1


def cmd_replay(args: argparse.Namespace) -> int:
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.domain.scene import SceneError
    from step_planner.episodes.bag import EpisodeError
    from step_planner.episodes.episode import comparison_table, load_episode, replay_episode
    from step_planner.execution.errors import BackendUnavailable
    from step_planner.execution.factory import make_executor

    try:
        episode = load_episode(args.episode)
    except EpisodeError as exc:
        print(f"step-planner: {exc}", file=sys.stderr)
        return 2
    if args.controllers:
        return _replay_controllers(args, episode)
    if args.publish:
        try:
            from step_planner.ros.replay_publisher import publish_episode
        except ImportError as exc:
            print(f"step-planner: --publish needs ROS 2 (rclpy) and the built interfaces ({exc})", file=sys.stderr)
            return 2
        return 1 if publish_episode(episode, rate=args.rate, prefix=args.prefix, delay_s=args.delay) < 0 else 0
    world = episode.initial_world
    if world is None:
        print("step-planner: the episode has no initial world to replay from", file=sys.stderr)
        return 2
    library = PrimitiveLibrary.load(config_dir() / "primitives.yaml")
    options = {"video_path": args.video} if args.video else {}
    try:
        executor = make_executor(args.backend, library, world, **options)
    except (BackendUnavailable, SceneError) as exc:
        print(f"step-planner: {exc}", file=sys.stderr)
        return 2
    try:
        comparisons = replay_episode(episode, executor)
    finally:
        if hasattr(executor, "close"):
            executor.close()
    print(comparison_table(comparisons))
    same = sum(c.matches for c in comparisons)
    print(f"\n{same}/{len(comparisons)} steps match the recording (no LLM was called)")
    return 0 if same == len(comparisons) else 1


def _replay_controllers(args: argparse.Namespace, episode: Any) -> int:
    from step_planner.episodes.controllers_replay import ReplayError, replay_through_controllers

    def approve(k: int, n: int, text: str) -> bool:
        try:
            answer = input(f"[{k + 1}/{n}] {text} -- send? [y/N] ")
        except EOFError:
            return False
        return answer.strip().lower() in ("y", "yes")

    try:
        report = replay_through_controllers(episode, robot=args.robot, load_scene=args.scene_service, seed=args.seed,
                                            speed=args.speed, approve=approve if args.approve else None)
    except ReplayError as exc:
        print(f"step-planner: {exc}", file=sys.stderr)
        return 2
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    if report.stopped:
        print(f"\nstopped: {report.stopped}")
    if report.compared:
        verdict = "the recorded final world" if not report.differences else "NOT the recorded final world"
        print(f"\nthe robot's perceived world is {verdict}" + "".join(f"\n  {d}" for d in report.differences))
    return 0 if report.reached else 1


def cmd_export_world(args: argparse.Namespace) -> int:
    import yaml

    from step_planner.domain.scene import SceneError, load_scene
    from step_planner.domain.scene_geometry import scene_geometry
    from step_planner.execution.gazebo.world_sdf import bridge_config, world_sdf

    path = _resolve_scene(args.scene)
    try:
        geometry = scene_geometry(load_scene(path), args.seed)
    except SceneError as exc:
        print(f"step-planner: {exc}", file=sys.stderr)
        return 2
    name = args.world_name or path.stem
    Path(args.sdf).write_text(world_sdf(geometry, name))
    print(f"wrote {args.sdf}: world {name!r}, {len(geometry.objects)} objects, {len(geometry.drawers)} drawers, "
          f"{len(geometry.containers)} trays/bins/boxes")
    if args.bridge:
        Path(args.bridge).write_text(yaml.safe_dump(bridge_config(geometry, args.pose_topic), sort_keys=False))
        print(f"wrote {args.bridge}: ros_gz_bridge config_file (/clock and every model's poses onto {args.pose_topic})")
    return 0


def _delegate(module: str, func: str, argv: list[str]) -> int:
    import importlib

    try:
        target = getattr(importlib.import_module(module), func)
    except ImportError as exc:
        print(f"step-planner: this command needs {module} ({exc})", file=sys.stderr)
        return 2
    return int(target(argv) or 0)


DELEGATED = {
    "bench": ("step_planner.bench.cli", "main_bench"),
    "config": ("step_planner.config_check", "main_config"),
    "record-answers": ("step_planner.bench.offline_answers", "main"),
    "replan": ("step_planner.episodes.replan", "main_replan"),
    "send": ("step_planner.ros.send", "main_send"),
    "recover": ("step_planner.ros.recover", "main_recover"),
    "fault": ("step_planner.ros.fault", "main_fault"),
    "watch": ("step_planner.ros.watch", "main_watch"),
    "hmi": ("step_planner.hmi.main", "main_hmi"),
    "node": ("step_planner.ros.node", "main_node"),
    "mujoco-robot": ("step_planner.ros.mujoco_robot", "main_robot"),
    "franka-gripper": ("step_planner.ros.franka_gripper_node", "main_gripper"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="step-planner", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    plan = sub.add_parser("plan", help="plan and execute one instruction")
    plan.add_argument("instruction")
    plan.add_argument("--scene", default="drawer_desk", help="scene YAML path or name in config/scenes")
    plan.add_argument("--backend", default="symbolic", choices=BACKENDS,
                      help="controllers: a robot behind ros2_control's actions (config/robot_boundary.yaml), whose "
                           "own world --scene describes; see --robot")
    plan.add_argument("--robot", help="backend controllers: the robot of config/robot_boundary.yaml (panda, fr3)")
    plan.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1")
    plan.add_argument("--model", help="model name at the endpoint")
    plan.add_argument("--offline", action="store_true", help="use the answers shipped with the project")
    plan.add_argument("--answers", help="folder of recorded answers for --offline (default config/replay)")
    plan.add_argument("--llm-config", default=str(config_dir() / "llm.yaml"))
    plan.add_argument("--planner-config")
    plan.add_argument("--primitives")
    plan.add_argument("--safety")
    plan.add_argument("--profile", help="planner profile from config/profiles.yaml (default: planner.yaml's, "
                                        "grounded)")
    plan.add_argument("--features", help="feature changes to the profile, comma-separated: +name adds, -name removes "
                                         "(--features -overlap and --features=-overlap both work)")
    plan.add_argument("--goal", action="append", default=[], metavar="FACT",
                      help="a fact of the instruction's goal, e.g. 'in(tape, drawer)' (repeat); default: the model "
                           "states them")
    plan.add_argument("--confirm-goal", action="store_true",
                      help="show the goal the model read into the instruction and wait for you to accept, correct or "
                           "refuse it at the terminal before anything moves")
    plan.add_argument("--person-timeout", type=float, default=300.0, metavar="S",
                      help="seconds to wait for your reply to --confirm-goal or to the model's question (default 300)")
    plan.add_argument("--no-input", action="store_true",
                      help="never read replies from the terminal: a question from the model ends the goal "
                           "CLARIFICATION_NEEDED (without a terminal this is what happens anyway)")
    plan.add_argument("--episodic-store", help="episodic memory JSONL store (default ~/.step_planner)")
    plan.add_argument("--record", default=os.environ.get("STEP_PLANNER_EPISODES", str(Path.home() / ".step_planner"
                                                                                         / "episodes")),
                      help="episode folder (MCAP + summary.json; default ~/.step_planner/episodes, "
                           "or $STEP_PLANNER_EPISODES); the oldest are pruned past 200 episodes / 2 GB / 30 days")
    plan.add_argument("--no-record", dest="record", action="store_const", const="", help="do not record")
    plan.add_argument("--video", help="MP4 of the run (sim backend)")
    plan.add_argument("--realtime", action="store_true", help="sim backend: physics at real-time pace (as on the "
                                                              "robot), e.g. to watch it or to time the overlap feature")
    plan.add_argument("--json", help="write the result (with the final tree) as JSON")
    plan.add_argument("--goal-id")
    plan.set_defaults(func=cmd_plan)
    replay = sub.add_parser("replay", help="re-execute a recorded episode without any LLM, or play it back on ROS "
                                           "topics (--publish)")
    replay.add_argument("episode")
    replay.add_argument("--backend", default="symbolic", choices=BACKENDS)
    replay.add_argument("--video")
    replay.add_argument("--publish", action="store_true",
                        help="execute nothing: publish the recorded joint trajectory on /joint_states and the tree "
                             "on /step_planner/tree, in recorded timing, to watch the run in RViz or Foxglove; not "
                             "where a robot or Gazebo publishes /joint_states (refused there: use --controllers)")
    replay.add_argument("--controllers", action="store_true",
                        help="send the recorded motion to the robot's controllers (config/robot_boundary.yaml: "
                             "FollowJointTrajectory per arm segment, GripperCommand per gripper event) -- Gazebo, the "
                             "arm or the MuJoCo robot; reports each segment's tracking error and compares the final "
                             "world it perceives with the recording's. No LLM, no planning")
    replay.add_argument("--robot", help="with --controllers: the robot of config/robot_boundary.yaml (panda, fr3)")
    replay.add_argument("--approve", action="store_true",
                        help="with --controllers: ask before every segment (the real arm); a no stops the replay")
    replay.add_argument("--speed", type=float, default=None,
                        help="with --controllers: fraction of the recorded speed, at most 1 (start a real arm at 0.2); "
                             "default: the recorded speed, slowed only as far as config/safety.yaml requires")
    replay.add_argument("--scene-service", default="",
                        help="with --controllers: a simulator's LoadScene service (the MuJoCo robot: "
                             "/mujoco_robot/load_scene) to put the robot into the episode's initial world first; "
                             "without it the robot must already stand in it (Gazebo launched on the episode's scene)")
    replay.add_argument("--seed", type=int, default=0, help="with --scene-service: the scene's seed (0: as recorded "
                                                            "by `plan --backend sim`)")
    replay.add_argument("--json", help="with --controllers: write the report (segments, differences) as JSON")
    replay.add_argument("--rate", type=float, default=1.0, help="with --publish: playback speed factor")
    replay.add_argument("--prefix", default="/step_planner", help="with --publish: namespace of the tree topics")
    replay.add_argument("--delay", type=float, default=1.0,
                        help="with --publish: seconds to let subscribers connect before playing")
    replay.set_defaults(func=cmd_replay)
    export = sub.add_parser("export-world", help="write the scene as a Gazebo world (SDF 1.9) and its pose bridge")
    export.add_argument("scene", help="scene YAML path or name in config/scenes")
    export.add_argument("--sdf", required=True, help="the world file to write")
    export.add_argument("--bridge", help="also write a ros_gz_bridge config_file: /clock and the model poses")
    export.add_argument("--pose-topic", default="/model_poses",
                        help="ROS topic of the bridged model poses (robot_boundary.yaml object_poses)")
    export.add_argument("--world-name", help="the world's name, the poses' root frame (default: the scene file's "
                                             "name, as the MuJoCo robot's world_name)")
    export.add_argument("--seed", type=int, default=0, help="jitter object poses as the simulators' seed does")
    export.set_defaults(func=cmd_export_world)
    for name in DELEGATED:
        sub.add_parser(name, help=f"see `step-planner {name} --help`", add_help=False)
    return parser


def _join_dash_values(argv: list[str], options: tuple[str, ...] = ("--features",)) -> list[str]:
    """``--features -overlap`` as ``--features=-overlap``: argparse reads a value that starts with ``-`` as an
    option of its own, and ``-name`` is how a feature is removed."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] in options and i + 1 < len(argv) and argv[i + 1][:1] in "-+" and argv[i + 1] != "--":
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def main(argv: list[str] | None = None) -> int:
    argv = _join_dash_values(list(sys.argv[1:] if argv is None else argv))
    if argv and argv[0] in DELEGATED:
        module, func = DELEGATED[argv[0]]
        return _delegate(module, func, argv[1:])
    args = build_parser().parse_args(argv)
    from step_planner.config_schema import ConfigFileError

    try:
        return int(args.func(args))
    except ConfigFileError as exc:  # a bad config file anywhere: its problems, never a traceback
        print(f"step-planner: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
