"""Deprecated: payload identification is in robo_dynamics.identification.payload_identification
(issue 60 moved it out of control/). This alias keeps code written against the earlier docs
working, with a DeprecationWarning; it will be removed."""

import warnings

from ..identification import payload_identification as _moved   # the one arrow up: an alias

warnings.warn("robo_dynamics.control.payload_identification moved to "
              "robo_dynamics.identification.payload_identification", DeprecationWarning,
              stacklevel=2)


def __getattr__(name):
    return getattr(_moved, name)
