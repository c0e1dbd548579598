"""What the node watches between joint states, where no joint state comes to show it: the
command stream going stale (on the node's clock, as the joint states' own check), and with
use_sim_time a simulated clock that stops (on the wall clock). Both are reported on ~/events
and in the log, as every controller event; the decisions are control/'s."""

import time

from rclpy.clock import Clock, ClockType

from ...control.health import ClockWatch

STALE_PERIOD = 0.02     # [s] on the node's clock: a stale stream is reported this late at most
CLOCK_PERIOD = 0.25     # [s] of wall time between looks at a simulated clock


class InputWatch:
    """The two timers of a DynamicsNode (`node.lock` held while each decides)."""

    def __init__(self, node):
        self.node = node
        self.clock_watch = ClockWatch()
        node.create_timer(STALE_PERIOD, self.look_for_stale_input)
        node.create_timer(CLOCK_PERIOD, self.look_at_the_clock,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))

    def look_for_stale_input(self):
        with self.node.lock:
            if self.node.controller is not None:
                for event in self.node.controller.watch(self.node.now()):
                    self.node.report(event)

    def look_at_the_clock(self):
        if self.node.controller is None or not self.node.on_simulated_time():
            if self.clock_watch.last is not None:   # a simulated clock is watched afresh
                self.clock_watch = ClockWatch()     # from its first tick
            return
        event = self.clock_watch.update(self.node.now(), time.monotonic(),
                                        self.node.model_changes.waiting_for)
        if event is not None:
            with self.node.lock:
                self.node.report(event)
