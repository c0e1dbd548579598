"""The closed-loop demo (`python -m robo_dynamics.ros.demo`, `make demo`)."""
