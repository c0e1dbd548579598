# Quick start: `make demo` runs the main job on the default arm, `make test` runs the tests.
# Both create (or reuse) the virtual environment .venv: pinned requirements.txt from PyPI,
# then control_msgs (FollowJointTrajectory; where none is installed) and
# robo_dynamics_interfaces built from their .msg/.srv/.action files into the venv, then this
# package installed into it (editable: dynamics_node, sim_arm, dynamics_demo on its PATH).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# test worker processes: one more than the cores this process may use (nproc: taskset counts),
# at most 4: the ROS tests wait on discovery and on other processes, which leaves a core idle
# (2 workers on 2 cores: the CPU 82 % busy, 3: 95 %; BENCHMARKS.md, "The test suite and
# the demo")
TEST_WORKERS ?= $(shell n=$$(nproc); echo $$(( n < 3 ? n + 1 : 4 )))
INTERFACES := $(wildcard interfaces/*/*/*.msg interfaces/*/*/*.srv interfaces/*/*/*.action \
                         interfaces/*/CMakeLists.txt interfaces/*/package.xml)

.PHONY: demo test unit venv clean bench soak corpus workspace matrix held contact demo-output pictures

demo: $(STAMP)
	$(PY) -m robo_dynamics.demo

test: $(STAMP)
	ROBO_DYNAMICS_REQUIRE_TEST_DATA=1 $(PY) -m pytest -q --durations=30 -n $(TEST_WORKERS) --dist loadfile \
	  --no-loadscope-reorder    # conftest.LONG_FILES first, as ordered there

# the rclpy-free library tests alone (about a minute): the edit-and-test loop. make test runs
# them too, with test/arms (every arm, rclpy-free but long), test/node (nodes in the test's
# process) and test/process (other processes: the demo, colcon, ros2 launch)
unit: $(STAMP)
	$(PY) -m pytest -q -n $(TEST_WORKERS) test/unit

venv: $(STAMP)

$(STAMP): requirements.txt $(INTERFACES) interfaces/install_into_venv.sh setup.py package.xml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	bash interfaces/install_into_venv.sh $(VENV) build/robo_dynamics_interfaces
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
	  --use-pep517 -e .    # PEP 660: console scripts in .venv/bin (setup.cfg is for colcon)
	touch $(STAMP)

clean:
	rm -rf $(VENV) build .pytest_cache

bench: $(STAMP)
	$(PY) -m benchmarks.run

soak: $(STAMP)
	$(PY) -m benchmarks.soak $(SOAK_ARGS)

# every URDF of example-robot-data, every candidate tip: docs/testing.md's table, written
# there (also in make test)
corpus: $(STAMP)
	PYTHONPATH=.:test:test/support $(PY) scripts/figures.py docs/testing.md corpus -- \
	  $(PY) test/arms/test_example_robot_data.py

# every mode on six real arms of example-robot-data at the node's defaults: docs/testing.md's
# tables, written there (its cells are asserted in make test, test/arms/test_arm_matrix.py)
matrix: $(STAMP)
	PYTHONPATH=.:test:test/support $(PY) scripts/figures.py docs/testing.md matrix -- \
	  $(PY) test/support/arm_matrix.py

# pushes of a person's size on three held arms, in three modes, and Cartesian targets:
# docs/testing.md's table, written there (a trimmed sweep is in make test,
# test/node/test_held_arm.py)
held: $(STAMP)
	PYTHONPATH=.:test:test/support $(PY) scripts/figures.py docs/testing.md held -- \
	  $(PY) test/support/held_arm.py

# fast swings on three arms against the speed a contact allows, limited and not:
# docs/testing.md, "Next to a person"
contact: $(STAMP)
	PYTHONPATH=.:test:test/support $(PY) scripts/figures.py docs/testing.md contact -- \
	  $(PY) test/support/contact_sweep.py

# the demo's whole output, written into docs/demo.md (a full run: about four minutes)
demo-output: $(STAMP)
	$(PY) scripts/figures.py docs/demo.md demo-output -- $(PY) -m robo_dynamics.demo

# the default rviz2 views of the shipped arms, drawn headless from the node's markers:
# docs/images/ (docs/node.md, "In rviz2")
pictures: $(STAMP)
	PYTHONPATH=.:test:test/support $(PY) test/support/rviz_view.py

# colcon workspace in build/ws against the venv's wheel-based ROS 2 (docs/install.md: ROS 2 workspace)
workspace: $(STAMP)
	bash scripts/build_workspace.sh $(VENV) build/ws
