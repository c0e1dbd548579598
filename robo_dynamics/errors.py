"""Exceptions raised by robo_dynamics.

The library never prints, logs or exits: it raises one of these, and the caller (the ROS
layer, a script) decides how to report it.
"""


class RoboDynamicsError(Exception):
    """Base class of every error this package raises on purpose."""


class URDFError(RoboDynamicsError, ValueError):
    """The robot description cannot be used; the message names the element and the problem."""


class ArgumentError(RoboDynamicsError, ValueError):
    """An argument of a dynamics call has the wrong size or a non-finite value."""


class UnclosedState(ArgumentError):
    """A closed linkage's loops cannot close at the given coordinates (outside the
    mechanism's workspace, or at a singular pose)."""


class BackendUnavailable(RoboDynamicsError, ImportError):
    """The requested backend cannot be loaded (Pinocchio not installed or broken); the
    in-house backend "rnea" needs only NumPy."""


class ModelWarning(UserWarning):
    """The robot description loaded, but something in it deserves the user's attention (the
    loader also lists it in RobotModel.warnings)."""
