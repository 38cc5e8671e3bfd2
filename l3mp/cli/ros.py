"""``l3mp ros``: a memory as a ROS 2 node on rmw_zenoh (PlanSys2's problem expert and l3mp's own services)."""

from __future__ import annotations

import re
import signal
import threading

import click

from l3mp.cli._base import CliState, pass_state

# a ROS 2 name token: what rcl takes for a node's name and for each part of a namespace
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RULE = "letters, digits and '_', not starting with a digit"


def _node_name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    # checked up front: Zenoh refuses a bad name only once the node starts, in its own words
    if not _TOKEN.fullmatch(value):
        raise click.BadParameter(f"{value!r}: a ROS 2 node name is {_RULE}", ctx=ctx, param=param)
    return value


def _namespace(ctx: click.Context, param: click.Parameter, value: str) -> str:
    parts = value.strip("/")  # leading and trailing '/' as the node takes them ("x" is "/x")
    if parts and not all(_TOKEN.fullmatch(part) for part in parts.split("/")):
        raise click.BadParameter(
            f"{value!r}: a ROS 2 namespace is '/'-separated names of {_RULE}", ctx=ctx, param=param
        )
    return value


@click.command()
@click.option("--memory", required=True, help="the memory the node serves")
@click.option("--name", default="l3mp", show_default=True, callback=_node_name, help="the node's name")
@click.option("--namespace", default="/", show_default=True, callback=_namespace, help="the node's namespace")
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
