"""The `step-planner hmi` page in a real browser (Debian's chromium, driven by selenium through the system's
chromedriver: nothing is downloaded): the demo instruction to SUCCEEDED with the tree shown (offline answers),
a question answered on the page, a goal corrected at confirmation, and a cancel mid-motion on backend sim.

The node is the real StepPlannerNode (test/ros_support.py's harness, loopback DDS); the page's server is the
real `step-planner hmi` command in a process of its own. With STEP_PLANNER_HMI_SCREENSHOTS=1 the screenshots
go to docs/images/ (the README shows one), else to the test's temporary folder.
"""

from __future__ import annotations

import os
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
def shots(tmp_path) -> Path:
    if os.environ.get("STEP_PLANNER_HMI_SCREENSHOTS") == "1":
        return ROOT / "docs" / "images"
    return tmp_path


class Page:
    """`step-planner hmi` for the harness's node, and the browser on its page."""

    def __init__(self, ros: RosHarness, driver) -> None:
        self.driver = driver
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
        driver.get(self.url)
        self.wait(lambda d: self.text("server").endswith("ready"), 60)  # the action server is discovered

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
        self.type("instruction", instruction)
        self.el("send").click()

    def outcome(self, timeout: float = 120) -> str:
        return self.wait(lambda d: self.el("outcome").get_attribute("data-status"), timeout)

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


def test_the_demo_instruction_through_the_page_succeeds_with_the_tree_shown(browser, shots):
    asked: list = []  # the configured endpoint: an offline node must never call it
    ros = RosHarness(lambda request: asked.append(request) or '{"done": true}',
                     **{"llm.offline": True, "llm.model": "some-real-model"})
    page = None
    try:
        page = Page(ros, browser)
        page.send(DEMO)
        assert page.outcome() == "SUCCEEDED", page.text("outcome")
        final = ros.node._last_tree
        page.wait(lambda d: len(page.tree_nodes()) == len(final.nodes) > 6)
        statuses = [li.get_attribute("data-status") for li in page.tree_nodes()]
        assert statuses[0] == "succeeded" and statuses.count("succeeded") >= 6
        outcome = page.text("outcome")
        assert "SUCCEEDED: the instruction is achieved (checked in the world)" in outcome
        for cond in ros.node._last_tree.nodes[0].conditions:  # each goal fact with its final truth
            assert f"✓ {cond.words or cond.text}" in outcome
        log = page.text("log")
        for call in ("open_drawer(drawer=drawer)", "place(object=screwdriver, target=drawer)"):
            assert f"ran {call} -> SUCCESS" in log  # each primitive as it ran (the action's feedback)
        assert "stated by: model" in page.text("goal-card")
        page.shot(shots, "hmi_demo_succeeded.png")
        assert asked == []
    finally:
        if page is not None:
            page.close()
        ros.close()


def test_the_models_question_is_answered_on_the_page(browser, shots):
    handler = person_tests.Asking(PLANS)
    ros = RosHarness(handler)
    page = None
    try:
        page = Page(ros, browser)
        page.send(TASK)
        page.wait(lambda d: page.el("ask").is_displayed() and person_tests.QUESTION in page.text("question"))
        assert not ros.node._last_tree or not any(n.outcome_code for n in ros.node._last_tree.nodes)
        page.el("answer-send").click()  # an empty answer is refused on the page, before the node
        page.wait(lambda d: "the answer is empty" in page.text("message"))
        page.type("answer", person_tests.ANSWER)
        page.shot(shots, "hmi_question.png")
        page.el("answer-send").click()
        assert page.outcome() == "SUCCEEDED", page.text("outcome")
        assert not page.el("ask").is_displayed()
        page.wait(lambda d: f"reply (answer): {person_tests.ANSWER}" in page.text("dialogue"))
        assert f"asked: {person_tests.QUESTION}" in page.text("dialogue")
        later = [p for p in handler.prompts if "Answers from the person" in p]
        assert later and all(f"- Q: {person_tests.QUESTION}\n  A: {person_tests.ANSWER}" in p for p in later)
    finally:
        if page is not None:
            page.close()
        ros.close()


def test_a_goal_corrected_at_confirmation_on_the_page(browser, shots):
    ros = RosHarness(ScriptedPlans({**PLANS, TASK: ["open_drawer(drawer)", "put the tape in the drawer",
                                                    "close_drawer(drawer)"]}), confirm_goal=True)
    page = None
    try:
        page = Page(ros, browser)
        page.send(TASK)
        page.wait(lambda d: page.el("confirm").is_displayed())
        shown = page.text("confirm-goal")
        assert "the tape is in the drawer" in shown and "in(screwdriver, drawer)" in shown
        assert page.el("facts").get_attribute("value").splitlines() == [
            "in(tape, drawer)", "in(screwdriver, drawer)", "closed(drawer)"]
        page.type("facts", "in(banana, drawer)")  # the node checks a correction against the world
        page.el("correct").click()
        page.wait(lambda d: "banana" in page.text("message") and "refused" in page.el("message").get_attribute("class"))
        page.type("facts", "in(tape, drawer); closed(drawer)")
        page.shot(shots, "hmi_confirm.png")
        assert not any(n.outcome_code for n in ros.node._last_tree.nodes)  # nothing moved while it waited
        page.el("correct").click()
        assert page.outcome() == "SUCCEEDED", page.text("outcome")
        outcome = page.text("outcome")
        assert "✓ the tape is in the drawer" in outcome and "screwdriver" not in outcome.split("What the arm did")[0]
        assert "stated by: person" in page.text("goal-card")
        page.wait(lambda d: "reply (correct): in(tape, drawer); closed(drawer)" in page.text("dialogue"))
        assert not page.el("confirm").is_displayed()
    finally:
        if page is not None:
            page.close()
        ros.close()


def test_cancel_mid_motion_on_the_simulator(browser, shots):
    pytest.importorskip("mujoco")
    ros = RosHarness(ScriptedPlans({SIM_TASK: ["pick(red_block)", "place(red_block, tray)"]}), backend="sim")
    page = None
    try:
        page = Page(ros, browser)
        page.send(SIM_TASK)
        moving = "#tree li.node[data-status=executing]"
        page.wait(lambda d: d.find_elements(By.CSS_SELECTOR, moving), 180)
        page.el("cancel").click()
        assert page.outcome(180) == "CANCELED", page.text("outcome")
        outcome = page.text("outcome")
        assert "canceled by the client" in outcome
        assert "place(" not in outcome  # the arm stopped in the pick; the place never ran
        assert "canceled during motion" in page.text("tree")  # the simulator's word: the arm was moving
        page.wait(lambda d: "canceling: the arm stops" in page.text("message") or "CANCELED" in page.text("log"))
        page.shot(shots, "hmi_sim_canceled.png")
    finally:
        if page is not None:
            page.close()
        ros.close()
