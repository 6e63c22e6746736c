"""The `step-planner hmi` page in a real browser (Debian's chromium, driven by selenium through the system's
chromedriver), at a phone's size (390x844), a tablet's (820x1180) and a desktop's (1366x900): the demo instruction
to SUCCEEDED with the tree shown (offline answers) and the table's picture following the world, a question
answered on the page, a goal corrected at confirmation, and a cancel mid-motion on backend sim (with the camera
panel showing the simulator's rendered frames; on backend symbolic the panel is absent).

At each size: no sideways scrolling, Send, Cancel and the controls the goal waits for on screen with the page
scrolled to its end (the sticky dock), and no accessibility violation of serious or critical impact by axe-core
(the version the Makefile pins, fetched by `make browser` into build/axe-core/, test-only: never shipped).

The node is the real StepPlannerNode (test/ros_support.py's harness, loopback DDS); the page's server is the
real `step-planner hmi` command in a process of its own. One node and one page server per test serve all
three sizes, one goal each. With STEP_PLANNER_HMI_SCREENSHOTS=1 the screenshots go to docs/images/ (the README
shows the phone's beside the desktop's), else to the test's temporary folder.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("step_planner_interfaces", reason="build the interfaces first: make interfaces")

import test_ros_person as person_tests  # noqa: E402
import yaml  # noqa: E402
from conftest import CONFIG  # noqa: E402
from ros_support import PLANS, TASK, RosHarness, ScriptedPlans  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.timeout(300)]
ROOT = Path(__file__).resolve().parents[1]
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
DEMO = yaml.safe_load((CONFIG / "demo_tasks.yaml").read_text())[0]["instruction"]
SIM_TASK = "put the red block on the tray"
SIZES = {"phone": (390, 844), "tablet": (820, 1180), "desktop": (1366, 900)}
AXE_VERSION = re.search(r"^AXE_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.M).group(1)
AXE_JS = ROOT / "build" / "axe-core" / f"axe-{AXE_VERSION}.min.js"
SERIOUS = ("serious", "critical")


def _system_browser() -> None:
    """CI must have Debian's chromium and chromedriver (`make browser` installs them); elsewhere they skip."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not shutil.which(p)]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{', '.join(missing)} missing: `make browser` installs chromium and chromium-driver")
        pytest.skip(f"no {', '.join(missing)} here (make browser installs them)")


@pytest.fixture
def browser(monkeypatch):
    _system_browser()
    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager, were it asked, may not download anything
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # the system browser; with an explicit driver Selenium Manager never runs
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1500",
                "--disable-gpu", "--no-first-run"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    system = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=60).stdout
    assert driver.capabilities["browserVersion"] in system, (system, driver.capabilities)  # Debian's, not another
    yield driver
    driver.quit()


@pytest.fixture
def axe() -> str:
    """axe-core's source (`make browser` fetches the pinned version); CI must have it, elsewhere the test skips."""
    if not AXE_JS.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{AXE_JS} missing: `make browser` fetches axe-core {AXE_VERSION}")
        pytest.skip(f"no {AXE_JS} here (make browser fetches it)")
    return AXE_JS.read_text()


@pytest.fixture
def shots(tmp_path) -> Path:
    if os.environ.get("STEP_PLANNER_HMI_SCREENSHOTS") == "1":
        return ROOT / "docs" / "images"
    return tmp_path


class Page:
    """`step-planner hmi` for the harness's node, and the browser on its page."""

    def __init__(self, ros: RosHarness, driver, axe: str = "") -> None:
        self.driver, self.axe_source = driver, axe
        env = {**os.environ, "STEP_PLANNER_HMI_TOKEN": "",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen([sys.executable, "-m", "step_planner.cli", "hmi", "--node", ros.name,
                                      "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=env)
        line = self.proc.stdout.readline()
        if not line:
            self.proc.kill()
            pytest.fail(f"step-planner hmi did not start: {self.proc.stderr.read()}")
        self.url = line.split("open ", 1)[1].split()[0]
        self.size = ""

    def open(self, size: str) -> None:
        """The page at ``size`` (a phone and a tablet as mobile devices: the page's viewport meta applies)."""
        width, height = SIZES[size]
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": size != "desktop"})
        self.size = size
        self.driver.get(self.url)
        self.wait(lambda d: self.text("server").endswith("ready"), 60)  # the action server is discovered
        assert self.js("return [innerWidth, innerHeight]") == [width, height]

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    def wait(self, predicate, timeout: float = 120):
        return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(predicate)

    def el(self, id_: str):
        return self.driver.find_element(By.ID, id_)

    def text(self, id_: str) -> str:
        return self.el(id_).text

    def type(self, id_: str, text: str) -> None:
        field = self.el(id_)
        field.clear()
        field.send_keys(text)

    def send(self, instruction: str) -> None:
        self.before = self.el("outcome").get_attribute("data-goal")
        self.type("instruction", instruction)
        self.el("send").click()

    def outcome(self, timeout: float = 120) -> str:
        """The status of the outcome of the goal sent last (not the one before it, still shown until then)."""
        def ended(d):
            box = self.el("outcome")
            goal = box.get_attribute("data-goal")
            return goal and goal != self.before and box.get_attribute("data-status")
        return self.wait(ended, timeout)

    def outcome_text(self) -> str:
        """The outcome's text, the collapsed engineer's detail too."""
        return self.js("return document.getElementById('outcome').textContent")

    def reachable(self, *ids: str) -> None:
        """With the page scrolled to its end, each control is wholly on screen (the sticky dock), and nothing
        scrolls sideways."""
        self.js("window.scrollTo(0, document.documentElement.scrollHeight)")
        for id_ in ids:
            left, top, right, bottom, width, height = self.js(
                "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
                "return [r.left, r.top, r.right, r.bottom, innerWidth, innerHeight]", id_)
            assert left >= 0 and top >= 0 and right <= width and bottom <= height and bottom > top, (
                self.size, id_, (left, top, right, bottom), (width, height))
        assert self.js("return document.documentElement.scrollWidth <= innerWidth"), f"{self.size}: scrolls sideways"
        self.js("window.scrollTo(0, 0)")

    def no_serious_axe_violations(self) -> None:
        if not self.axe_source:
            return
        self.driver.set_script_timeout(120)
        self.js(self.axe_source)  # through the driver, as a tester's tool: the page's own policy loads only its files
        found = self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, {resultTypes: ['violations']}).then((r) => done(r.violations.map((v) => ({"
            "id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' '))}))))"
            ".catch((e) => done(String(e)));")
        assert isinstance(found, list), found
        assert [v for v in found if v["impact"] in SERIOUS] == [], (self.size, found)

    def picture(self) -> dict[str, dict]:
        """Each object the page's SVG draws: its data attributes, and where its shape is drawn in SVG units."""
        return {o["name"]: o for o in self.js(
            "return [...document.querySelectorAll('#picture g[data-object]')].map((g) => {"
            "  const shape = g.querySelector(':scope > circle:not(.active-ring), :scope > rect:not([fill=none])');"
            "  const b = shape.getBBox();"
            "  return {name: g.dataset.object, x: +g.dataset.x, y: +g.dataset.y, location: g.dataset.location,"
            "          believed: g.dataset.believed, cx: b.x + b.width / 2, cy: b.y + b.height / 2}; })")}

    def tree_nodes(self) -> list:
        return self.driver.find_elements(By.CSS_SELECTOR, "#tree li.node")

    def shot(self, folder: Path, name: str) -> Path:
        path = folder / name
        assert self.driver.save_screenshot(str(path))
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
        return path

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        assert self.proc.returncode in (0, -15), self.proc.stderr.read()


def test_the_demo_instruction_at_each_size_with_the_table_shown(browser, axe, shots):
    asked: list = []  # the configured endpoint: an offline node must never call it
    ros = RosHarness(lambda request: asked.append(request) or '{"done": true}',
                     **{"llm.offline": True, "llm.model": "some-real-model"})
    page = None
    try:
        page = Page(ros, browser, axe)
        last: dict = {}
        for size in SIZES:
            page.open(size)
            page.wait(lambda d: page.picture(), 60)  # the scene, latched by the node before any goal
            start = page.picture()
            if not last:  # the scene as the node starts with it
                assert start["tape"]["location"] == "table" and start["tape"]["believed"] == "false"
            else:  # the world as the last goal left it, until the next goal starts from the scene again
                assert start == last
            page.send(DEMO)
            assert page.outcome() == "SUCCEEDED", page.outcome_text()
            final = ros.node._last_tree
            page.wait(lambda d, final=final: len(page.tree_nodes()) == len(final.nodes) > 6)
            statuses = [li.get_attribute("data-status") for li in page.tree_nodes()]
            assert statuses[0] == "succeeded" and statuses.count("succeeded") >= 6
            outcome = page.text("outcome")
            assert "Done: the tape and the screwdriver are in the drawer, which is closed" in outcome.splitlines()[0]
            assert "Each fact at the end (checked in the world)" in outcome
            for cond in final.nodes[0].conditions:  # each goal fact with its final truth
                assert f"✓ {cond.words or cond.text}" in outcome
            assert "place(object=screwdriver, target=drawer)" not in outcome  # collapsed: the engineer's detail
            assert "place(object=screwdriver, target=drawer)" in page.outcome_text()
            log = page.text("log")
            for call in ("open_drawer(drawer=drawer)", "place(object=screwdriver, target=drawer)"):
                assert f"ran {call} -> SUCCESS" in log  # each primitive as it ran (the action's feedback)
            assert "stated by: model" in page.text("goal-card")
            page.wait(lambda d: "3 of 3 goal facts hold now." in page.text("progress"))
            assert not re.search(r"active_node|leaves_done|waiting_for|readings", page.text("goal-card"))

            def drawn_as_perceived(d) -> bool:  # the page's picture: the node's snapshot of the world, object by object
                snap, drawn = ros.node.markers.model.snapshot(), page.picture()
                return set(drawn) == {o["name"] for o in snap["objects"]} and all(
                    abs(drawn[o["name"]]["x"] - o["centre"][0]) < 1e-3
                    and abs(drawn[o["name"]]["y"] - o["centre"][1]) < 1e-3
                    and drawn[o["name"]]["location"] == o["location"] for o in snap["objects"])
            page.wait(drawn_as_perceived, 30)
            end = page.picture()
            for name, o in end.items():  # drawn where its data says: x up the picture, y to the left, in mm
                assert abs(o["cx"] + o["y"] * 1000) < 0.5 and abs(o["cy"] + o["x"] * 1000) < 0.5, (name, o)
            for name in ("tape", "screwdriver"):  # moved into the drawer, shut in: drawn elsewhere, as believed
                assert end[name]["location"] == "drawer" and end[name]["believed"] == "true"
                if not last:
                    assert (end[name]["x"], end[name]["y"]) != (start[name]["x"], start[name]["y"])
            assert end["cup"] == start["cup"]
            last = end
            ticks = page.js("return [...document.querySelectorAll('#picture [data-fact]')].map("
                            "(t) => [t.dataset.fact, t.dataset.holds, t.textContent])")
            assert sorted(ticks) == [["closed(drawer)", "true", "✓ closed"],
                                     ["in(screwdriver, drawer)", "true", "✓ screwdriver"],
                                     ["in(tape, drawer)", "true", "✓ tape"]]
            assert not page.el("camera-card").is_displayed()  # backend symbolic: no camera, no panel
            page.reachable("instruction", "send", "cancel")
            page.no_serious_axe_violations()
            page.shot(shots, f"hmi_{size}.png")  # the README shows the phone's beside the desktop's
        assert asked == []
    finally:
        if page is not None:
            page.close()
        ros.close()


def test_the_models_question_is_answered_on_the_page_at_each_size(browser, axe, shots, tmp_path):
    handler = person_tests.Asking(PLANS)
    ros = RosHarness(handler)
    page = None
    try:
        page = Page(ros, browser, axe)
        for size in SIZES:
            page.open(size)
            page.send(TASK)
            page.wait(lambda d: page.el("ask").is_displayed() and person_tests.QUESTION in page.text("question"))
            assert not ros.node._last_tree or not any(n.outcome_code for n in ros.node._last_tree.nodes)
            page.wait(lambda d: page.text("progress").startswith(f"Waiting for your answer: {person_tests.QUESTION}"))
            page.reachable("answer", "answer-send", "cancel")  # while the goal waits: on screen, scrolled or not
            page.no_serious_axe_violations()
            page.el("answer-send").click()  # an empty answer is refused on the page, before the node
            page.wait(lambda d: "the answer is empty" in page.text("message"))
            page.type("answer", person_tests.ANSWER)
            page.shot(shots if size == "desktop" else tmp_path, "hmi_question.png")
            page.el("answer-send").click()
            assert page.outcome() == "SUCCEEDED", page.outcome_text()
            assert not page.el("ask").is_displayed()
            page.wait(lambda d: f"reply (answer): {person_tests.ANSWER}" in page.text("dialogue"))
            assert f"asked: {person_tests.QUESTION}" in page.text("dialogue")
        later = [p for p in handler.prompts if "Answers from the person" in p]
        assert len(later) >= len(SIZES)
        assert all(f"- Q: {person_tests.QUESTION}\n  A: {person_tests.ANSWER}" in p for p in later)
    finally:
        if page is not None:
            page.close()
        ros.close()


def test_a_goal_corrected_at_confirmation_on_the_page_at_each_size(browser, axe, shots, tmp_path):
    ros = RosHarness(ScriptedPlans({**PLANS, TASK: ["open_drawer(drawer)", "put the tape in the drawer",
                                                    "close_drawer(drawer)"]}), confirm_goal=True)
    page = None
    try:
        page = Page(ros, browser, axe)
        for size in SIZES:
            page.open(size)
            page.send(TASK)
            page.wait(lambda d: page.el("confirm").is_displayed())
            shown = page.text("confirm-goal")
            assert "the tape is in the drawer" in shown and "in(screwdriver, drawer)" in shown
            assert page.el("facts").get_attribute("value").splitlines() == [
                "in(tape, drawer)", "in(screwdriver, drawer)", "closed(drawer)"]
            page.reachable("accept", "correct", "refuse", "cancel")
            page.no_serious_axe_violations()
            page.type("facts", "in(banana, drawer)")  # the node checks a correction against the world
            page.el("correct").click()
            page.wait(lambda d: "banana" in page.text("message")
                      and "refused" in page.el("message").get_attribute("class"))
            page.type("facts", "in(tape, drawer); closed(drawer)")
            page.shot(shots if size == "desktop" else tmp_path, "hmi_confirm.png")
            assert not any(n.outcome_code for n in ros.node._last_tree.nodes)  # nothing moved while it waited
            page.el("correct").click()
            assert page.outcome() == "SUCCEEDED", page.outcome_text()
            outcome = page.text("outcome")
            assert outcome.splitlines()[0].endswith("Done: the tape is in the drawer, which is closed")
            assert "✓ the tape is in the drawer" in outcome and "screwdriver" not in outcome
            assert "stated by: person" in page.text("goal-card")
            page.wait(lambda d: "reply (correct): in(tape, drawer); closed(drawer)" in page.text("dialogue"))
            assert not page.el("confirm").is_displayed()
    finally:
        if page is not None:
            page.close()
        ros.close()


def test_cancel_mid_motion_on_the_simulator_at_each_size(browser, axe, shots, tmp_path):
    pytest.importorskip("mujoco")
    from sensor_msgs.msg import JointState

    ros = RosHarness(ScriptedPlans({SIM_TASK: ["pick(red_block)", "place(red_block, tray)"]}), backend="sim")
    joints: list = []
    ros.client_node.create_subscription(JointState, "/joint_states", joints.append, 50)

    def arm_moving(d) -> bool:  # the simulator's arm between two joint states (a pick plans each of its motions)
        if len(joints) < 2:
            return False
        a, b = joints[-2].position[:7], joints[-1].position[:7]
        return max(abs(x - y) for x, y in zip(a, b, strict=True)) > 1e-4

    page = None
    try:
        page = Page(ros, browser, axe)
        for size in SIZES:
            page.open(size)
            page.send(SIM_TASK)
            page.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "#tree li.node[data-status=executing]"), 180)
            page.wait(lambda d: "Picking up the red block, step 1 of about" in page.text("progress"), 60)
            # MuJoCo's view of the scene, refreshed while the arm works (the page fetches the latest frame)
            page.wait(lambda d: page.el("camera-card").is_displayed() and page.js(
                "const i = document.getElementById('camera'); return i.complete && i.naturalWidth") == 480, 60)
            seen = int(page.el("camera").get_attribute("data-frames") or 0)
            page.wait(lambda d, seen=seen: int(page.el("camera").get_attribute("data-frames") or 0) >= seen + 2, 30)
            assert "/sim/camera/image/compressed" in page.text("camera-card")
            page.reachable("cancel")  # scrolled to the end: Cancel still on screen, one tap away
            page.js("window.scrollTo(0, document.documentElement.scrollHeight)")
            page.wait(arm_moving, 120)
            page.el("cancel").click()
            assert page.outcome(180) == "CANCELED", page.outcome_text()
            outcome = page.outcome_text()
            assert page.text("outcome").splitlines()[0].endswith("Stopped: you cancelled the goal")
            assert "canceled by the client" in outcome  # the engineer's detail, below
            assert "place(" not in outcome  # the arm stopped in the pick; the place never ran
            assert "canceled during motion" in page.text("tree")  # the simulator's word: the arm was moving
            page.wait(lambda d: "canceling: the arm stops" in page.text("message") or "CANCELED" in page.text("log"))
            page.js("window.scrollTo(0, 0)")
            page.shot(shots if size == "desktop" else tmp_path, "hmi_sim_canceled.png")
    finally:
        if page is not None:
            page.close()
        ros.close()
