"""A ROS 2 peer of the dynamics node for the transport-level tests, run as a process of its
own (so it can be SIGKILLed, and so messages cross DDS, not a Python call):

    python test/support/ros_peer.py good NAMES POSITIONS RATE [say]   joint states at RATE [Hz]
                                                   forever ('say': each one's stamp printed
                                                   before it is published)
    python test/support/ros_peer.py flood KIND COUNT NAMES       COUNT malformed joint states, at once
    python test/support/ros_peer.py clock START BACK_AFTER BACK_TO RATE    /clock, jumping back once

NAMES and POSITIONS are JSON lists. Flood KIND: 'mixed' (NaN, wrong lengths, unknown and
duplicated names, empty, in turn) or 'huge' (100 000 names). Prints 'ready' once a
subscriber has matched, 'done' when a finite job has been sent; each line flushed.
"""

import itertools
import json
import math
import os
import sys
import time

from robo_dynamics.ros.isolation import isolate

# loopback only, whatever the caller's shell says; the domain comes from the test
if "ROS_DOMAIN_ID" not in os.environ:
    sys.exit("ros_peer: ROS_DOMAIN_ID must be set by the test that starts it")
isolate(os.environ["ROS_DOMAIN_ID"])

import rclpy                                           # noqa: E402 (after the environment)
from rosgraph_msgs.msg import Clock                    # noqa: E402
from sensor_msgs.msg import JointState                 # noqa: E402
from builtin_interfaces.msg import Time                # noqa: E402

HUGE = 100_000


def wait_for_subscriber(publisher):
    """Until this publisher has matched a subscription. The subscriber may see the match a
    moment later and drop what comes before: every peer goes on publishing after that."""
    while publisher.get_subscription_count() == 0:
        time.sleep(0.01)
    print("ready", flush=True)


def stamp_now(node, msg):
    msg.header.stamp = node.get_clock().now().to_msg()
    return msg


def good(node, names, positions, rate, say=False):
    publisher = node.create_publisher(JointState, "/joint_states", 10)
    wait_for_subscriber(publisher)
    period, next_time = 1.0 / rate, time.monotonic()
    while True:
        msg = stamp_now(node, JointState(name=names, position=positions,
                                         velocity=[0.0] * len(names)))
        if say:      # before publishing: a process killed between the two said one more
            print(f"stamp {msg.header.stamp.sec} {msg.header.stamp.nanosec}", flush=True)
        publisher.publish(msg)
        next_time += period
        time.sleep(max(0.0, next_time - time.monotonic()))


def malformed(names):
    """Messages the node must reject, in turn."""
    n = len(names)
    return itertools.cycle([
        JointState(name=names, position=[math.nan] * n),
        JointState(name=names, position=[0.0] * (n - 1)),
        JointState(name=names, position=[0.0] * n, velocity=[math.inf] * n),
        JointState(name=names + ["ghost"], position=[0.0] * (n + 1)),
        JointState(name=names[:1] * 2, position=[0.0, 0.0]),
        JointState(),
        JointState(name=names, position=[1e300] * n),
    ])


def flood(node, kind, count, names):
    publisher = node.create_publisher(JointState, "/joint_states", 10)
    wait_for_subscriber(publisher)
    if kind == "huge":
        big = JointState(name=[f"joint_{k}" for k in range(HUGE)], position=[0.0] * HUGE)
        messages = itertools.repeat(big)
    else:
        messages = malformed(names)
    for msg in itertools.islice(messages, count):
        publisher.publish(stamp_now(node, msg))
    print("done", flush=True)
    while True:                    # until stopped, one more a second: should the node's
        time.sleep(1.0)            # subscription have matched after the flood, it sees these
        publisher.publish(stamp_now(node, next(messages)))


def clock(node, start, back_after, back_to, rate):
    """Simulated time from `start` [s], advancing in real time; after `back_after` ticks it
    jumps back to `back_to` and goes on from there."""
    publisher = node.create_publisher(Clock, "/clock", 10)
    wait_for_subscriber(publisher)
    period, t = 1.0 / rate, start
    for tick in itertools.count():
        if tick == back_after:
            t = back_to
            print("jumped", flush=True)
        sec = int(t)
        publisher.publish(Clock(clock=Time(sec=sec, nanosec=int((t - sec) * 1e9))))
        t += period
        time.sleep(period)


def main(argv):
    rclpy.init()
    node = rclpy.create_node(f"ros_peer_{os.getpid()}")
    job = argv[0]
    if job == "good":
        good(node, json.loads(argv[1]), json.loads(argv[2]), float(argv[3]),
             argv[4:5] == ["say"])
    elif job == "flood":
        flood(node, argv[1], int(argv[2]), json.loads(argv[3]))
    elif job == "clock":
        clock(node, float(argv[1]), int(argv[2]), float(argv[3]), float(argv[4]))
    else:
        sys.exit(f"ros_peer: unknown job {job!r}")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except KeyboardInterrupt:
        pass
