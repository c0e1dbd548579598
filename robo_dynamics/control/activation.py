"""Whether a node commands the arm: a managed (lifecycle) node commands only once activated.
No ROS here: ros/lifecycle.py maps the lifecycle transitions onto it.

    inactive   joint states are taken (services, diagnostics and a later start read them);
               no command, every desired motion refused with the reason
    active     the command stream as the controller runs it; it starts as a ramp from the
               measured effort (Controller._resume)
    stopping   deactivated while commanding: a desired motion ends (its goal with it), the
               safe hold brings the arm to rest for STOP_TIME_CONSTANTS time constants of
               its decay (1/hold_decay_rate), then the stream stops as on stale input (the
               drives' own watchdog holds the arm)
"""

from .cycle_outputs import INFO, Cycle, Event

INACTIVE, ACTIVE, STOPPING = "inactive", "active", "stopping"
STOP_TIME_CONSTANTS = 5.0    # e^-5: the velocity at 0.7 % of where the hold found it


class Activation:
    """The activation state of one controller (control/controller.py)."""

    def __init__(self, controller, active, why_inactive="the node is not active"):
        self.controller, self.why_inactive = controller, why_inactive
        self.state, self.stop_at = (ACTIVE if active else INACTIVE), None
        controller.inactive = "" if active else why_inactive

    def step(self, names, positions, velocities, efforts, now, stamp=0.0):
        """Controller.step while active (or stopping), Controller.observe while inactive:
        the Cycle. Stopping ends with the first state at or after its time."""
        c = self.controller
        if self.state == INACTIVE:
            return c.observe(names, positions, velocities, efforts, now, stamp)
        cycle = c.step(names, positions, velocities, efforts, now, stamp)
        if self.state == STOPPING and cycle.command is None and not c.running:
            self.state = INACTIVE              # stale input or a failed hold stopped it
        elif self.state == STOPPING and cycle.command is not None:
            if self.stop_at is None:               # the first held state sets the clock
                self.stop_at = now + STOP_TIME_CONSTANTS / c.settings.hold_decay_rate
            elif now >= self.stop_at:
                self.state = INACTIVE
                event = c.stop_commanding("deactivated, the arm at rest in the hold")
                return Cycle(cycle.rejected, None, cycle.gravity, cycle.events + (event,),
                             cycle.external, cycle.rest)
        return cycle

    def activate(self):
        """→ Event. The next joint state starts the command stream (a ramp)."""
        self.state, self.controller.inactive = ACTIVE, ""
        return Event(INFO, "activated", "activated: commands start with the next joint "
                                        "state, ramping from the measured effort")

    def deactivate(self):
        """→ Events. While commanding: the hold, then the stop (module docstring); else at
        once inactive. Desired motions are refused from now on."""
        c = self.controller
        c.inactive = self.why_inactive
        if self.state == INACTIVE:
            return ()
        if not c.running:
            self.state = INACTIVE
            return (Event(INFO, "deactivated", "deactivated: no command stream was running"),)
        self.state, self.stop_at = STOPPING, None
        return (Event(INFO, "deactivated", "deactivated: the safe hold brings the arm to "
                                           "rest, then the command stream stops"),
                c.hold_for("deactivated (lifecycle): the node holds the arm and stops "
                           "commanding"))
