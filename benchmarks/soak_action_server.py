"""Soak the ExecuteTask action server: many consecutive goals, watching memory, threads and answers.

    python benchmarks/soak_action_server.py --profile grounded --goals 200

The real StepPlannerNode (symbolic backend, episode recording on into a temporary folder, planner
profile ``--profile`` as the node parameter ``planner.profile``, every other parameter at the node's
defaults, ``config/step_planner.yaml``) in a real rclpy context on loopback DDS; its LLM is the real
openai client over HTTP to a loopback server that answers from the scripted expert
(``step_planner/bench/expert.py``, NOT an LLM, no injected mistakes). Goals cycle through the Table III
tasks, each naming its scene. Every goal must get a result; the script exits 1 otherwise. RSS is this
process's resident memory (node, client, DDS and loopback server together).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULT_TIMEOUT_S = 60.0


def proc_status(field: str) -> int:
    """A number from /proc/self/status (VmRSS in kB, Threads)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def thread_kinds() -> dict[str, int]:
    """Live Python threads by name, numbers stripped (``ThreadPoolExecutor-0_3`` -> ``ThreadPoolExecutor-_``)."""
    return dict(collections.Counter(re.sub(r"\d+", "", t.name) for t in threading.enumerate()))


def wait(future, timeout: float):
    deadline = time.monotonic() + timeout
    while not future.done():
        if time.monotonic() > deadline:
            return None
        time.sleep(0.002)
    return future.result()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchmarks/soak_action_server.py", description=__doc__.split("\n")[0])
    p.add_argument("--profile", default="grounded", help="node parameter planner.profile (config/profiles.yaml)")
    p.add_argument("--goals", type=int, default=200)
    p.add_argument("--window", type=int, default=20, help="goals averaged at the start and at the end")
    p.add_argument("--no-record", action="store_true", help="episodes.record false")
    p.add_argument("--trace-memory", action="store_true",
                   help="print the allocation sites that grew most between the first window and the end")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import rclpy
    from rclpy.action import ActionClient
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.parameter import Parameter

    from step_planner.bench.expert import ScriptedExpert
    from step_planner.bench.tasks import load_suite
    from step_planner.domain.primitives import PrimitiveLibrary
    from step_planner.llm.loopback import LoopbackServer
    from step_planner.ros.node import StepPlannerNode
    from step_planner_interfaces.action import ExecuteTask

    library = PrimitiveLibrary.load(ROOT / "config" / "primitives.yaml")
    tasks = load_suite("table3")
    expert = ScriptedExpert(library, seed=0, mistake_rate=0.0)
    for task in tasks:
        expert.register(task.instruction, task.goal, task.stated_goal)
    episodes = tempfile.TemporaryDirectory(prefix="soak_episodes_")
    server = LoopbackServer(expert).start()
    context = rclpy.Context()
    rclpy.init(context=context)
    name = f"soak_{uuid.uuid4().hex[:8]}"
    overrides = {"llm.base_url": server.base_url, "llm.model": "scripted-expert", "llm.max_retries": 0,
                 "llm.timeout_s": 10.0, "episodes.folder": episodes.name,
                 "episodes.record": not args.no_record, "planner.profile": args.profile}
    shown = {k: v for k, v in overrides.items() if k not in ("llm.base_url", "episodes.folder")}
    print(f"node parameters changed from config/step_planner.yaml: {shown} (and a loopback llm.base_url, a "
          "temporary episodes.folder); "
          "answers: the scripted expert (NOT an LLM), no injected mistakes", flush=True)
    node = StepPlannerNode(name, context=context,
                           parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()])
    client_node = rclpy.create_node(f"{name}_client", context=context)
    client = ActionClient(client_node, ExecuteTask, f"/{name}/execute_task")
    executor = MultiThreadedExecutor(num_threads=4, context=context)
    executor.add_node(node)
    executor.add_node(client_node)
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    if not client.wait_for_server(timeout_sec=15):
        print("the action server did not appear", file=sys.stderr)
        return 1

    threads_before, os_threads_before = threading.active_count(), proc_status("Threads")
    kinds_before = thread_kinds()
    rss, durations, codes, unanswered, served = [], [], {}, 0, 0
    for i in range(args.goals):
        task = tasks[i % len(tasks)]
        started = time.perf_counter()
        handle = wait(client.send_goal_async(ExecuteTask.Goal(instruction=task.instruction, scene=task.scene)),
                      RESULT_TIMEOUT_S)
        response = wait(handle.get_result_async(), RESULT_TIMEOUT_S) if handle and handle.accepted else None
        durations.append(time.perf_counter() - started)
        if response is None:
            unanswered += 1
        else:
            code = "NONE" if response.result.success else str(response.result.error_code)
            codes[code] = codes.get(code, 0) + 1
        served += len(server.requests)
        server.requests.clear()  # the loopback server's own request log is test bookkeeping, not the node's
        rss.append(proc_status("VmRSS") / 1024)
        if args.trace_memory and i + 1 == args.window:
            tracemalloc.start(8)
            baseline = tracemalloc.take_snapshot()
        if (i + 1) % 50 == 0:
            print(f"  {i + 1} goals, RSS {rss[-1]:.1f} MiB, threads {threading.active_count()}", flush=True)
    time.sleep(0.5)  # let finished request threads exit before counting
    threads_after, os_threads_after = threading.active_count(), proc_status("Threads")
    kinds_after = thread_kinds()
    if args.trace_memory:
        grown = tracemalloc.take_snapshot().compare_to(baseline, "traceback")[:8]
        for stat in grown:
            print(f"grew {stat.size_diff / 1e6:+.2f} MB in {stat.count_diff:+d} blocks at:")
            print("    " + "\n    ".join(stat.traceback.format()))
    recorded = sum(1 for p in Path(episodes.name).iterdir() if p.is_dir())

    executor.shutdown()
    spin.join(10)
    client.destroy()
    client_node.destroy_node()
    node.destroy_node()
    rclpy.try_shutdown(context=context)
    server.close()
    episodes.cleanup()

    w = min(args.window, len(rss) // 2) or 1
    first, last = statistics.mean(rss[:w]), statistics.mean(rss[-w:])
    answered = args.goals - unanswered
    print(f"goals sent: {args.goals}; answered: {answered}; results: {dict(sorted(codes.items()))} "
          f"(NONE = success, else the ExecuteTask error code)")
    print(f"RSS: mean of goals 1-{w} {first:.1f} MiB, of the last {w} {last:.1f} MiB: growth {last - first:+.1f} MiB "
          f"({(last - first) / max(first, 1e-9) * 100:+.1f} %); peak {max(rss):.1f} MiB")
    print(f"Python threads before/after: {threads_before} / {threads_after}; "
          f"OS threads (incl. DDS) before/after: {os_threads_before} / {os_threads_after}")
    print(f"  Python threads by name before: {kinds_before}\n  after: {kinds_after}")
    print(f"goal time (send -> result): mean {statistics.mean(durations) * 1000:.1f} ms, "
          f"median {statistics.median(durations) * 1000:.1f} ms, max {max(durations) * 1000:.1f} ms")
    print(f"LLM requests served: {served}; episodes on disk at the end: {recorded} "
          f"(retention max_episodes=200)")
    return 0 if unanswered == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
