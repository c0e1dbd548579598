"""`python -m robo_dynamics.ros.demo`: run.py's main."""

import sys

from .run import main

sys.exit(main())
