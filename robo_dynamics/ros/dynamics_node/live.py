"""What dynamics_node's parts work on, in place of the node itself.

A part is built with this view, the ROS entities it needs made for it (a subscription or
timer factory, a parameter reader), and nothing else of the node: it can be built and tested
with a Live of its own (test/node/test_node_parts.py)."""


class Live:
    """The node's state as the last configuration or model change left it (None before the
    first): `controller` (control/controller.py), `model` and its `solver` and `checker`;
    `lock`, held by every callback while it touches them; now() the node's clock [s];
    report(event) tells a controller Event (log and ~/events)."""

    def __init__(self, lock, now, report):
        self.lock, self.now, self.report = lock, now, report
        self.controller = self.model = self.solver = self.checker = None


def live_field(name):
    """A node attribute that is the Live view's (the node's own code and its tests keep
    reading node.controller, node.model, ...)."""
    return property(lambda node: getattr(node.live, name),
                    lambda node, value: setattr(node.live, name, value))
