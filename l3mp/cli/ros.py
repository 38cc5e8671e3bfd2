"""``l3mp ros``: a memory as a ROS 2 node on rmw_zenoh (PlanSys2's problem expert and l3mp's own services)."""

from __future__ import annotations

import signal
import threading

import click

from l3mp.cli._base import CliState, pass_state


@click.command()
@click.option("--memory", required=True, help="the memory the node serves")
@click.option("--name", default="l3mp", show_default=True, help="the node's name")
@click.option("--namespace", default="/", show_default=True, help="the node's namespace")
@pass_state
def ros(state: CliState, memory: str, name: str, namespace: str) -> int:
    """Serve a memory to ROS 2 over rmw_zenoh until SIGINT or SIGTERM.

    The session is an rmw_zenoh node's: a peer connecting to the router on tcp/localhost:7447
    (`ros2 run rmw_zenoh_cpp rmw_zenohd`), changed by ZENOH_SESSION_CONFIG_URI, ZENOH_CONFIG_OVERRIDE,
    ROS_DOMAIN_ID and ZENOH_ROUTER_CHECK_ATTEMPTS.
    """
    from l3mp.ros.app import ros_door

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    door = ros_door(settings=state.settings(), memory=memory, name=name, namespace=namespace)
    state.console.print(f"ROS 2 node {name} serving memory {memory!r}; Ctrl-C stops it", highlight=False)
    door.run(stop)
    return 0
