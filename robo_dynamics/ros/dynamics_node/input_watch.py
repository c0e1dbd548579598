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
    """Two timers (`create_timer`: the node's, for its executor) over `live` (live.py),
    its lock held while each decides; on_simulated_time() whether /clock drives the clock;
    model_changes: the ModelChangeSchedule (a state the clock waits for is not a stop)."""

    def __init__(self, live, create_timer, on_simulated_time, model_changes):
        self.live, self.on_simulated_time = live, on_simulated_time
        self.model_changes = model_changes
        self.clock_watch = ClockWatch()
        create_timer(STALE_PERIOD, self.look_for_stale_input)
        create_timer(CLOCK_PERIOD, self.look_at_the_clock,
                     clock=Clock(clock_type=ClockType.STEADY_TIME))

    def look_for_stale_input(self):
        live = self.live
        with live.lock:
            if live.controller is not None:
                for event in live.controller.watch(live.now()):
                    live.report(event)

    def look_at_the_clock(self):
        live = self.live
        if live.controller is None or not self.on_simulated_time():
            if self.clock_watch.last is not None:   # a simulated clock is watched afresh
                self.clock_watch = ClockWatch()     # from its first tick
            return
        event = self.clock_watch.update(live.now(), time.monotonic(),
                                        self.model_changes.waiting_for)
        if event is not None:
            with live.lock:
                live.report(event)
