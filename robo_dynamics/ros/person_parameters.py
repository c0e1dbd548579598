"""The dynamics node's parameters for working next to a person (control/contact_safety.py,
control/safety_planes.py, control/safety_limits.py): name → Spec, and their rules."""

import math

from ..control.contact_safety import REGIONS
from ..control.safety_limits import STOP_CATEGORIES
from .parameter_kinds import BOOL, DOUBLE, DOUBLES, INTEGER, READ_ONLY, RUNTIME, STRING, \
    STRINGS, Spec

NEXT_TO_A_PERSON = {
    "power_force_limiting": Spec(True, BOOL, "Keep the tool's speed within what a contact "
                                 "with a person allows (ISO/TS 15066 Annex A) from the mass "
                                 "it carries: trajectories slowed, Cartesian targets "
                                 "approached slower, guiding damped.", RUNTIME),
    "body_regions": Spec(list(REGIONS), STRINGS,
                         f"The body regions a person may put in the tool's way, of "
                         f"{list(REGIONS)}: the most restrictive sets the speed.", RUNTIME),
    "contact_type": Spec("transient", STRING, "transient (the person can move away) or "
                         "clamped (against a fixture: a lower speed).", RUNTIME),
    "tool_speed_limit": Spec(0.0, DOUBLE, "A speed [m/s] the tool never passes, besides "
                             "power_force_limiting's (0: none).", RUNTIME),
    "monitored_links": Spec(None, STRINGS, "Links (e.g. the elbow's; a linkage's passive "
                            "ones too) whose points are kept to the contact's speed and the "
                            "planes too, besides the tool; reported on /diagnostics.",
                            READ_ONLY),
    "monitored_offsets": Spec(None, DOUBLES, "The monitored points [m]: x, y, z in each "
                              "link's frame, 3 per link. Unset: their origins.", READ_ONLY),
    "monitored_radii": Spec(None, DOUBLES, "A sphere's radius [m] around each monitored "
                            "point (1 value for all, or 1 per link), kept inside the safety "
                            "planes. Unset: 0.", READ_ONLY),
    "monitored_speed_limits": Spec(None, DOUBLES, "A speed [m/s] each monitored point never "
                                   "passes (1 value for all, or 1 per link; 0: none).",
                                   READ_ONLY),
    "safety_planes": Spec(None, DOUBLES, "Half-spaces the tool and the monitored spheres "
                          "stay in, 6 values each: a point [m], a normal toward the allowed "
                          "side; base frame.", RUNTIME),
    "safety_stop_category": Spec(2, INTEGER, "How a crossed plane or a point past its speed "
                                 "limit stops the arm (IEC 60204-1): 2, the safe hold (a "
                                 "controlled stop, torque kept); 1, the same, then no "
                                 "command once the arm stands still (its brakes hold it).",
                                 RUNTIME),
}
PERSON_RANGES = {
    "body_regions": lambda v: len(v) > 0,
    "tool_speed_limit": lambda v: 0.0 <= v < math.inf,
    "monitored_radii": lambda v: all(0.0 <= x < math.inf for x in v or ()),
    "monitored_speed_limits": lambda v: all(0.0 <= x < math.inf for x in v or ()),
}
PERSON_CHOICES = {"contact_type": ["transient", "clamped"], "body_regions": list(REGIONS),
                  "safety_stop_category": list(STOP_CATEGORIES)}
