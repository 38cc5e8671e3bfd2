"""rmw_zenoh's wire format as l3mp writes it: type hashes against their published values, CDR against
rosbags' own reading of the same definitions and against bytes taken from a real exchange, names,
tokens and attachments, and the session's configuration from rmw_zenoh's environment variables."""

from __future__ import annotations

from pathlib import Path

import pytest
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from l3mp.ros.config import RMW_ZENOH_DEFAULTS, SessionConfig, parse_overrides
from l3mp.ros.errors import RosSessionError, RosTypeError
from l3mp.ros.types import Interfaces, dds_type_name, interfaces_root
from l3mp.ros.wire import Attachment, AttachmentError, EntityKind, NodeIdentity, data_key, mangle

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "ros"

# RIHS01 values published for these types: rmw_zenoh's design document (String, AddTwoInts) and the
# recorded metadata of ROS 2 bags (Empty)
PUBLISHED = {
    "std_msgs/msg/String": "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18",
    "std_msgs/msg/Empty": "RIHS01_20b625256f32d5dbc0d04fee44f43c41e51c70d3502f84b4a08e7a9c26a96312",
    "example_interfaces/srv/AddTwoInts": "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a",
}


@pytest.fixture(scope="module")
def interfaces() -> Interfaces:
    return Interfaces.load(FIXTURES)


@pytest.mark.parametrize("type_name", sorted(PUBLISHED))
def test_type_hashes_equal_their_published_values(interfaces: Interfaces, type_name: str) -> None:
    assert interfaces.type_hash(type_name) == PUBLISHED[type_name]


def test_every_bundled_type_has_a_hash_and_services_hash_apart_from_their_halves(interfaces: Interfaces) -> None:
    for service in sorted(interfaces.services):
        whole = interfaces.type_hash(service)
        assert whole.startswith("RIHS01_") and len(whole) == len("RIHS01_") + 64
        assert whole != interfaces.type_hash(f"{service}_Request") != interfaces.type_hash(f"{service}_Response")
    assert "plansys2_msgs/srv/AffectNode" in interfaces.services and "l3mp_msgs/srv/Report" in interfaces.services


def test_cdr_bytes_equal_those_of_a_real_exchange(interfaces: Interfaces) -> None:
    hello = interfaces.new("std_msgs/msg/String", data="hello 13")
    assert interfaces.encode(hello, "std_msgs/msg/String").hex() == "000100000900000068656c6c6f20313300"
    empty_request = interfaces.new("plansys2_msgs/srv/GetProblem_Request")
    assert interfaces.encode(empty_request, "plansys2_msgs/srv/GetProblem_Request").hex() == "0001000000"
    problem = "(define (problem p1) (:domain demo))"
    answer = interfaces.new("plansys2_msgs/srv/GetProblem_Response", success=True, problem=problem)
    expected = "00010000" + "01000000" + "25000000" + problem.encode().hex() + "00" + "000000" + "01000000" + "00"
    assert interfaces.encode(answer, "plansys2_msgs/srv/GetProblem_Response").hex() == expected


def _rosbags_store() -> object:
    """rosbags reading the bundled .msg files its own way (no renaming, no char rewrite)."""
    store = get_typestore(Stores.EMPTY)
    types: dict[str, object] = {}
    for path in sorted(interfaces_root().glob("*/msg/*.msg")):
        types.update(get_types_from_msg(path.read_text(), f"{path.parent.parent.name}/msg/{path.stem}"))
    store.register(types)
    return store


def test_cdr_bytes_equal_rosbags_serialisation_of_every_message_type(interfaces: Interfaces) -> None:
    theirs = _rosbags_store()
    for path in sorted(interfaces_root().glob("*/msg/*.msg")):
        type_name = f"{path.parent.parent.name}/msg/{path.stem}"
        ours = interfaces.new(type_name)
        message = theirs.types[type_name](**{k: getattr(ours, k) for k in ours.__dataclass_fields__})  # type: ignore[attr-defined]
        assert interfaces.encode(ours, type_name) == bytes(theirs.serialize_cdr(message, type_name)), type_name  # type: ignore[attr-defined]
    node = interfaces.new(
        "plansys2_msgs/msg/Node",
        node_type=5,
        name="on",
        parameters=[interfaces.new("plansys2_msgs/msg/Param", name="mug_1")],
    )
    data = interfaces.encode(node, "plansys2_msgs/msg/Node")
    assert theirs.deserialize_cdr(data, "plansys2_msgs/msg/Node").parameters[0].name == "mug_1"  # type: ignore[attr-defined]
    assert interfaces.decode(data, "plansys2_msgs/msg/Node").name == "on"


def test_a_message_or_type_that_does_not_fit_is_named(interfaces: Interfaces) -> None:
    with pytest.raises(RosTypeError, match="has no field colour"):
        interfaces.new("plansys2_msgs/msg/Param", colour="red")
    with pytest.raises(RosTypeError, match="not among the loaded definitions"):
        interfaces.type_hash("nav_msgs/msg/Odometry")
    with pytest.raises(RosTypeError, match="cannot decode 2 bytes"):
        interfaces.decode(b"\x00\x01", "std_msgs/msg/String")
    with pytest.raises(RosTypeError, match="pkg/msg/Name"):
        dds_type_name("std_msgs/String")


def test_names_keys_and_tokens_are_rmw_zenohs() -> None:
    assert mangle("/problem_expert/get_problem") == "%problem_expert%get_problem" and mangle("/") == "%"
    hash_ = PUBLISHED["std_msgs/msg/String"]
    assert data_key(0, "/chatter", "std_msgs/msg/String", hash_) == f"0/chatter/std_msgs::msg::dds_::String_/{hash_}"
    node = NodeIdentity(domain=3, session="68092745e4f35731370b304539c31db8", name="l3mp", namespace="/robot")
    assert node.node_token() == "@ros2_lv/3/68092745e4f35731370b304539c31db8/0/0/NN/%/%robot/l3mp"
    token = node.entity_token(
        entity_id=10, kind=EntityKind.SERVICE, name="/robot/problem_expert/get_problem",
        type_name="std_msgs/msg/String", type_hash=hash_, qos="::,10:,:,:,,",
    )  # fmt: skip
    assert token.endswith(
        f"/10/SS/%/%robot/l3mp/%robot%problem_expert%get_problem/std_msgs::msg::dds_::String_/{hash_}/::,10:,:,:,,"
    )
    assert node.resolve("problem_expert/x") == "/robot/problem_expert/x"
    assert (
        node.resolve("~/updates") == "/robot/l3mp/updates" and node.resolve("/planner/get_plan") == "/planner/get_plan"
    )


def test_an_attachment_is_33_bytes_and_a_foreign_one_is_refused() -> None:
    sent = Attachment(
        sequence=1, timestamp_ns=0x1122334455667788, gid=bytes.fromhex("f19a43cfcff32ea55a3ed48c285a111e")
    )
    raw = sent.encode()
    assert raw.hex() == "0100000000000000" + "8877665544332211" + "10" + "f19a43cfcff32ea55a3ed48c285a111e"
    assert Attachment.decode(raw) == sent
    with pytest.raises(AttachmentError, match="not 17"):
        Attachment.decode(raw[:17])


def test_the_session_is_configured_from_rmw_zenohs_environment(tmp_path: Path) -> None:
    default = SessionConfig.from_env({})
    assert (default.domain_id, default.config_file, default.router_check_attempts) == (0, None, 1)
    assert '"tcp/localhost:7447"' in dict(RMW_ZENOH_DEFAULTS)["connect/endpoints"]
    config_file = tmp_path / "session.json5"
    config_file.write_text('{ mode: "client", connect: { endpoints: ["tcp/127.0.0.1:7999"] } }')
    env = {
        "ROS_DOMAIN_ID": "7",
        "ZENOH_SESSION_CONFIG_URI": str(config_file),
        "ZENOH_CONFIG_OVERRIDE": 'mode="peer";connect/endpoints=["tcp/127.0.0.1:1","tcp/127.0.0.1:2"]',
        "ZENOH_ROUTER_CHECK_ATTEMPTS": "-1",
    }
    configured = SessionConfig.from_env(env)
    assert configured.domain_id == 7 and configured.router_check_attempts == -1
    assert configured.overrides == (("mode", '"peer"'), ("connect/endpoints", '["tcp/127.0.0.1:1","tcp/127.0.0.1:2"]'))
    zenoh_config = configured.zenoh_config()
    assert '"peer"' in zenoh_config.get_json("mode") and "tcp/127.0.0.1:2" in zenoh_config.get_json("connect/endpoints")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"ROS_DOMAIN_ID": "kitchen"}, "ROS_DOMAIN_ID must be an integer"),
        ({"ZENOH_CONFIG_OVERRIDE": "mode"}, "is not key=value"),
    ],
)
def test_a_bad_setting_is_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(RosSessionError, match=message):
        SessionConfig.from_env(env)


def test_a_bad_override_value_or_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(RosSessionError, match="mode"):
        SessionConfig(overrides=parse_overrides('mode="kettle"')).zenoh_config()
    broken = tmp_path / "broken.json5"
    broken.write_text("{ mode: ")
    with pytest.raises(RosSessionError, match=r"broken\.json5"):
        SessionConfig(config_file=broken).zenoh_config()
