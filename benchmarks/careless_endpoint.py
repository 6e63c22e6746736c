"""Trust: goals planned by a careless endpoint (valid JSON of the schema, arbitrary content).

    python benchmarks/careless_endpoint.py --profile grounded --planner-config config/planner.yaml \
        --cli-goals 200 --ros-goals 50 [--client-goal] [--model-word]

The endpoint is ``step_planner.bench.careless.CarelessModel`` behind the loopback OpenAI-compatible
server, in two styles: ``random`` (junk strings) and ``plausible`` (calls, facts and phrases made of
the prompt's own names, so answers often parse and validate while meaning nothing).

1. The CLI: ``step-planner plan INSTRUCTION --scene S --base-url URL`` (its ``main()``, in process) on
   every Table III instruction and the demo instructions, cycling styles and seeds.
2. The action server: ``step_planner_node`` started as a separate process (symbolic backend); this
   process is the outside ROS client that sends ExecuteTask goals, each naming its scene.
3. With ``--client-goal``: the CLI goals again, with the task's true goal given by ``--goal``, so the
   careless model's steps and 'done' claims (not its goal) are what is tested.

Printed per path: goals, how each ended (error codes), SUCCEEDED goals (the target is 0), executed
calls whose preconditions failed (target 0), crashes (an exception or an exit code other than 0/1;
target 0), and whether every goal was answered. With the ``questions`` feature on (``grounded``) a careless
answer is often a question, and with nobody to answer it the goal ends at once (CLARIFICATION_NEEDED, nothing
executed); ``--profile grounded-questions`` takes questions away so the goal, child and done checks meet the
careless answers. ``--profile paper`` with ``--model-word`` shows what
the model's word alone gives (require_verified_success off). The CLI plans with the budgets of
``--planner-config``; the node with its own defaults (``config/step_planner.yaml``) and the profile.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

import yaml  # noqa: E402

from step_planner.bench.careless import STYLES, CarelessModel  # noqa: E402
from step_planner.bench.tasks import load_suite  # noqa: E402
from step_planner.llm.loopback import LoopbackServer  # noqa: E402

RESULT_TIMEOUT_S = 120.0


class Switch:
    """One loopback endpoint whose careless model is swapped per goal (style, seed)."""

    def __init__(self) -> None:
        self.model = CarelessModel()

    def __call__(self, request: dict) -> str:
        return self.model(request)


def goals() -> list[tuple[str, str, list[str]]]:
    """(instruction, scene path, goal facts): Table III and the demo instructions."""
    out = [(t.instruction, str(ROOT / "config" / "scenes" / t.scene), [str(a) for a in t.goal])
           for t in load_suite("table3")]
    for task in yaml.safe_load((ROOT / "config" / "demo_tasks.yaml").read_text()):
        out.append((task["instruction"], str(ROOT / "config" / "scenes" / task["scene"]), list(task["goal"])))
    return out


def planner_config(base: str, profile: str, model_word: bool, folder: Path) -> str:
    from step_planner.planner.config import PlannerConfig

    path = Path(base) if Path(base).is_absolute() else ROOT / base
    config = PlannerConfig.from_yaml(path).with_changes(profile=profile, require_verified_success=not model_word)
    path = folder / "planner.yaml"
    path.write_text(yaml.safe_dump({"planner": config.to_dict()}))
    return str(path)


def run_cli(n: int, switch: Switch, url: str, base_config: str, profile: str, model_word: bool,
            client_goal: bool = False) -> collections.Counter:
    from step_planner.cli import main

    counts: collections.Counter = collections.Counter()
    pool = goals()
    with tempfile.TemporaryDirectory() as tmp:
        config = planner_config(base_config, profile, model_word, Path(tmp))
        for i in range(n):
            instruction, scene, facts = pool[i % len(pool)]
            switch.model = CarelessModel(seed=i, style=STYLES[i % 2])
            out = Path(tmp) / "result.json"
            out.unlink(missing_ok=True)
            argv = ["plan", instruction, "--scene", scene, "--base-url", url, "--model", "careless",
                    "--planner-config", config, "--no-record", "--json", str(out)]
            if client_goal:  # the goal is stated by the client: only the model's steps are careless
                argv += [arg for fact in facts for arg in ("--goal", fact)]
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    code = main(argv)
            except BaseException as exc:  # noqa: BLE001 - a crash is what is being counted
                counts["crashes"] += 1
                counts[f"crash: {type(exc).__name__}"] += 1
                continue
            counts["goals"] += 1
            if code not in (0, 1) or not out.exists():
                counts["crashes"] += 1
                continue
            result = json.loads(out.read_text())
            counts[result["error"]] += 1
            counts["SUCCEEDED"] += bool(result["success"])
            counts["verified"] += bool(result["verified"])
            counts["executed"] += len(result["executed"])
            counts["executed_precondition_failed"] += sum(
                1 for e in result["executed"] if e["outcome"]["code"] == "PRECONDITION_FAILED")
    return counts


def split_profile(name: str) -> tuple[str, list[str]]:
    """``grounded-questions`` -> ("grounded", ["-questions"]): the node's planner.profile and planner.features."""
    import re

    base, *rest = re.split(r"(?=[+-])", name)
    return base, rest


def run_ros(n: int, switch: Switch, url: str, profile: str, model_word: bool) -> collections.Counter:
    import rclpy
    from rclpy.action import ActionClient

    from step_planner.ros.conversions import ERROR_NAMES
    from step_planner_interfaces.action import ExecuteTask

    counts: collections.Counter = collections.Counter()
    pool = goals()
    domain = str(random.randint(120, 200))
    env = {**os.environ, "ROS_DOMAIN_ID": domain, "ROS_LOG_DIR": tempfile.mkdtemp(prefix="careless_ros_log_")}
    os.environ["ROS_DOMAIN_ID"] = domain
    name = f"careless_{uuid.uuid4().hex[:6]}"
    base, changes = split_profile(profile)  # the node takes the profile and its feature changes apart
    features = ["-p", f"planner.features:={json.dumps(changes)}"] if changes else []
    node = subprocess.Popen(
        [str(Path(sys.executable).with_name("step_planner_node")), "--ros-args", "-r", f"__node:={name}",
         "-p", f"llm.base_url:={url}", "-p", "llm.model:=careless", "-p", "llm.max_retries:=0",
         "-p", "episodes.record:=false", "-p", f"planner.profile:={base}", *features,
         "-p", f"planner.require_verified_success:={'false' if model_word else 'true'}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rclpy.init()
    client_node = rclpy.create_node("careless_client")
    try:
        client = ActionClient(client_node, ExecuteTask, f"/{name}/execute_task")
        if not client.wait_for_server(timeout_sec=30.0):
            counts["server_missing"] += 1
            return counts
        for i in range(n):
            instruction, scene, _ = pool[i % len(pool)]
            switch.model = CarelessModel(seed=1000 + i, style=STYLES[i % 2])
            future = client.send_goal_async(ExecuteTask.Goal(instruction=instruction, scene=scene))
            handle = _wait(client_node, future, 30.0)
            if handle is None or not handle.accepted:
                counts["not_accepted"] += 1
                continue
            got = _wait(client_node, handle.get_result_async(), RESULT_TIMEOUT_S)
            if got is None:
                counts["unanswered"] += 1
                continue
            result = got.result
            counts["goals"] += 1
            counts[ERROR_NAMES.get(result.error_code, str(result.error_code))] += 1
            counts["SUCCEEDED"] += bool(result.success)
            counts["verified"] += bool(result.verified)
            counts["executed"] += len(result.executed_primitives)
            counts["executed_precondition_failed"] += sum(
                1 for p in result.executed_primitives if p.endswith("PRECONDITION_FAILED"))
        counts["node_alive_at_end"] += node.poll() is None
    finally:
        client_node.destroy_node()
        rclpy.try_shutdown()
        node.terminate()
        try:
            _, err = node.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            node.kill()
            _, err = node.communicate()
        counts["node_tracebacks"] += (err or "").count("Traceback")
    return counts


def _wait(node, future, timeout: float):
    import rclpy

    deadline = time.monotonic() + timeout
    while not future.done():
        if time.monotonic() > deadline:
            return None
        rclpy.spin_once(node, timeout_sec=0.05)
    return future.result()


def show(title: str, counts: collections.Counter) -> None:
    fixed = ("goals", "SUCCEEDED", "verified", "executed", "executed_precondition_failed", "crashes")
    head = ", ".join(f"{k} {counts.get(k, 0)}" for k in fixed)
    codes = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k not in fixed)
    print(f"{title}: {head}; {codes}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchmarks/careless_endpoint.py", description=__doc__.split("\n")[0])
    p.add_argument("--cli-goals", type=int, default=200)
    p.add_argument("--ros-goals", type=int, default=50)
    p.add_argument("--profile", default="grounded", help="planner profile (config/profiles.yaml)")
    p.add_argument("--planner-config", default="config/planner.yaml",
                   help="the CLI's budgets (the profile comes from --profile)")
    p.add_argument("--model-word", action="store_true", help="require_verified_success false")
    p.add_argument("--client-goal", action="store_true",
                   help="also run the CLI goals with their true goal facts given by --goal (a SUCCEEDED goal "
                        "there is a true success: its facts hold in the world)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    switch = Switch()
    started = time.perf_counter()
    print(f"planner: profile {args.profile}, CLI budgets {args.planner_config}, require_verified_success "
          f"{'false (--model-word)' if args.model_word else 'true'}; answers: a careless endpoint (NOT an LLM)")
    with LoopbackServer(switch) as server:
        cli = run_cli(args.cli_goals, switch, server.base_url, args.planner_config, args.profile, args.model_word)
        show(f"CLI, profile {args.profile}", cli)
        if args.client_goal:
            stated = run_cli(args.cli_goals, switch, server.base_url, args.planner_config, args.profile,
                             args.model_word, client_goal=True)
            show(f"CLI with the goal stated by the client (--goal), profile {args.profile}", stated)
            cli.update({k: v for k, v in stated.items() if k in ("crashes", "executed_precondition_failed")})
        ros = run_ros(args.ros_goals, switch, server.base_url, args.profile, args.model_word) if args.ros_goals else \
            collections.Counter()
        if args.ros_goals:
            show(f"action server (separate process), profile {args.profile}", ros)
    print(f"careless endpoint (random and plausible content, NOT an LLM); {time.perf_counter() - started:.0f} s")
    bad = cli["crashes"] + ros["node_tracebacks"] + ros["unanswered"] + ros["not_accepted"] + \
        cli["executed_precondition_failed"] + ros["executed_precondition_failed"]
    if not args.model_word:
        bad += cli["SUCCEEDED"] + ros["SUCCEEDED"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
