"""What dynamics_node's parts work on, in place of the node itself.

A part is built with this view, the ROS entities it needs made for it (a subscription or
timer factory, a parameter reader), and nothing else of the node: it can be built and tested
with a Live of its own (test/node/test_node_parts.py)."""

import functools


class Live:
    """The node's state as the last configuration or model change left it (None before the
    first): `controller` (control/controller.py), `model` and its `solver` and `checker`,
    `urdf_model` (the chain as loaded, before payloads), `payloads` ({link: (mass, com,
    inertia)}), `checking_solvers` (~/check_trajectory's, control/solver_set.py);
    `lock`, held by every callback while it touches them; now() the node's clock [s];
    report(event) tells a controller Event (log and ~/events); failed(exc, what) counts and
    logs a computation that raised (throttled)."""

    def __init__(self, lock, now, report, failed=None):
        self.lock, self.now, self.report, self.failed = lock, now, report, failed
        self.controller = self.model = self.solver = self.checker = None
        self.urdf_model = self.checking_solvers = None
        self.payloads = {}
        self.frame_prefix = ""     # of every frame_id published and taken (frame_prefix)

    def frame(self, link):
        """The frame_id the node publishes for a URDF link: frame_prefix + link."""
        return self.frame_prefix + link

    def link(self, frame_id):
        """The URDF link a frame_id the node is given names: without frame_prefix (a name
        given without it is taken as is)."""
        prefix = self.frame_prefix
        return frame_id[len(prefix):] if prefix and frame_id.startswith(prefix) else frame_id


def live_field(name):
    """A node attribute that is the Live view's (the node's own code and its tests keep
    reading node.controller, node.model, ...)."""
    return property(lambda node: getattr(node.live, name),
                    lambda node, value: setattr(node.live, name, value))


def exclusive(callback):
    """A method run holding its object's `lock`: no two threads work on the node's state
    at once."""
    @functools.wraps(callback)
    def locked(self, *args):
        with self.lock:
            return callback(self, *args)
    return locked
