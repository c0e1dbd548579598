"""The closed-loop demo (`python -m robo_dynamics.demo`, `make demo`)."""
