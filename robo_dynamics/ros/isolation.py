"""Keep a run of ROS 2 on this machine and in a domain of its own: what the tests, the demo
and the benchmarks call before anything initialises rclpy (their children inherit it).

Kilted ignores ROS_LOCALHOST_ONLY; ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST is what keeps
discovery on the loopback interface. A node on a real arm is not isolated: it must find the
arm's driver wherever that runs.
"""

import os


def isolate(domain_id=None):
    """Loopback-only discovery and ROS_DOMAIN_ID = domain_id (None: 1-100 from this
    process's id, so that concurrent runs rarely meet) for this process and its children.
    Returns the domain id."""
    if domain_id is None:
        domain_id = 1 + os.getpid() % 100
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ["ROS_DOMAIN_ID"] = str(int(domain_id))
    return int(domain_id)
