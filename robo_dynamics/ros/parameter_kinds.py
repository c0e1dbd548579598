"""What a parameter table's entries are: Spec, the parameter types and read-only flags."""

import collections

from rcl_interfaces.msg import ParameterType

Spec = collections.namedtuple("Spec", ["default", "kind", "description", "read_only"])
Spec.__doc__ = """default (None: optional, an empty array until given), kind (a
ParameterType), description, read_only (True: fixed at start-up)."""

READ_ONLY = True     # fixed at start-up
RUNTIME = False      # may be changed while running (validated first)
STRING, STRINGS = ParameterType.PARAMETER_STRING, ParameterType.PARAMETER_STRING_ARRAY
DOUBLE, DOUBLES = ParameterType.PARAMETER_DOUBLE, ParameterType.PARAMETER_DOUBLE_ARRAY
BOOL, INTEGER = ParameterType.PARAMETER_BOOL, ParameterType.PARAMETER_INTEGER
