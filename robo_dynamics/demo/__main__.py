"""`python -m robo_dynamics.demo`: run.py's main."""

import sys

from .run import main

sys.exit(main())
