"""testbed.toml: reading, refusing bad files with one clear message, writing, scenario checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from inaplanner.deploy.device_config import config_cookie, pack_tofino_config, unpack_tofino_config
from inaplanner.errors import InaplannerError, ValidationError
from inaplanner.testbed.inventory import (
    DEFAULT_ELECTION_ID,
    TARGET_DEFAULTS,
    HostInventory,
    Inventory,
    SwitchInventory,
    TLSSettings,
    check_against_scenario,
    dump_inventory,
    load_inventory,
    parse_inventory,
    save_inventory,
    split_address,
)
from inaplanner.topologies import leaf_spine

GOOD = """
[defaults]
ssh_user = "ina"
ssh_key = "keys/id_ed25519"
known_hosts = "kh"
connect_timeout = 4
build_timeout = 120

[[switch]]
id = "L1"
p4runtime = "10.0.0.1:9559"
device_id = 1
election_id = [0, 7]
target = "bmv2"
ssh_host = "build1"
ssh_port = 2222
[switch.ports]
H1 = 5
S1 = 9

[[switch]]
id = "S1"
p4runtime = "[fd00::1]:9559"
device_id = 0
target = "tofino"
ssh_host = "tofino1"
ssh_user = "admin"
build_command = "cd {workdir} && ./build.sh {program} {p4info}"

[[host]]
id = "H1"
ssh_host = "10.0.1.1"
config_path = "/etc/ina/worker.json"

[[host]]
id = "H2"
"""


def test_reads_every_field(tmp_path):
    p = tmp_path / "testbed.toml"
    p.write_text(GOOD)
    inv = load_inventory(p)
    l1, s1 = inv.switches["L1"], inv.switches["S1"]
    assert (l1.p4runtime_host, l1.p4runtime_port, l1.device_id, l1.election_id) == (
        "10.0.0.1", 9559, 1, (0, 7))
    assert l1.ssh is not None and l1.ssh.port == 2222 and l1.ssh.user == "ina"
    assert l1.ssh.key == tmp_path / "keys/id_ed25519"  # relative to the file
    assert l1.ssh.known_hosts == tmp_path / "kh" and l1.ssh.connect_timeout == 4.0
    assert l1.build_timeout == 120.0 and l1.ports == {"H1": 5, "S1": 9}
    assert l1.program == "ina_v1model.p4" and l1.render_build_command().endswith("ina_v1model.p4")
    assert s1.p4runtime_host == "fd00::1" and s1.election_id == (0, 1000)  # not the lowest
    assert s1.ssh is not None and s1.ssh.user == "admin" and s1.ssh.port is None
    assert s1.context_json_path.endswith("context.json") and s1.program_name == "ina_tna"
    assert s1.render_build_command() == (
        "cd inaplanner-build && ./build.sh ina_tna.p4 build/ina_tna.p4info.txtpb")
    assert inv.hosts["H1"].ssh is not None and inv.hosts["H1"].config_path == "/etc/ina/worker.json"
    assert inv.hosts["H2"].ssh is None  # written locally


def test_round_trip_through_our_writer(tmp_path):
    inv = parse_inventory(GOOD, base_dir=tmp_path)
    text = dump_inventory(inv, header="made by a test\nsecond line")
    assert text.startswith("# made by a test\n# second line\n")
    again = parse_inventory(text, base_dir=tmp_path)
    assert again.switches == inv.switches and again.hosts == inv.hosts
    assert again.known_hosts == inv.known_hosts


@pytest.mark.parametrize(
    "edit, message",
    [
        (("device_id = 1", "device_id = -1"), "switch 'L1', field 'device_id': must be an integer"),
        (("device_id = 1\n", ""), "switch 'L1', field 'device_id': missing (required)"),
        (('target = "bmv2"', 'target = "asic"'), "switch 'L1', field 'target': must be one of"),
        (('"10.0.0.1:9559"', '"10.0.0.1"'), "switch 'L1', field 'p4runtime': expected 'host:port'"),
        (("election_id = [0, 7]", "election_id = [7]"), "field 'election_id': must be [high, low]"),
        (("S1 = 9", "S1 = 5"), "field 'ports.S1': port 5 is also used toward 'H1'"),
        (("ssh_port = 2222", "ssh_port = 2222\nfoo = 1"), "switch 'L1', field 'foo': unknown field"),
        (("{workdir}", "{nope}"), "switch 'S1', field 'build_command': bad placeholder"),
        (('id = "S1"', 'id = "L1"'), "duplicate switch id 'L1'"),
        (("ssh_port = 2222", 'ssh_port = 2222\npassword = "hunter2"'), "passwords are never stored"),
        (('ssh_user = "ina"', 'ssh_user = "ina"\n[defaults.x]\nPassWord = "p"'),
         "passwords are never stored"),
    ],
)
def test_bad_files_are_refused_with_one_clear_message(tmp_path, edit, message):
    p = tmp_path / "testbed.toml"
    p.write_text(GOOD.replace(edit[0], edit[1], 1))
    with pytest.raises(ValidationError) as err:
        load_inventory(p)
    assert message in str(err.value)
    assert str(err.value).startswith(str(p))


def test_password_error_names_the_key_path(tmp_path):
    with pytest.raises(ValidationError, match=r"host\[0\]\.password"):
        parse_inventory('[[host]]\nid = "H1"\npassword = "x"\n', source="tb.toml")


def test_unreadable_and_broken_files():
    with pytest.raises(ValidationError, match="cannot read"):
        load_inventory(Path("/nonexistent/testbed.toml"))
    with pytest.raises(ValidationError, match="not valid TOML"):
        parse_inventory("[[switch]\n", source="x.toml")


def test_split_address():
    assert split_address("sw1:50001") == ("sw1", 50001)
    assert split_address("[::1]:9559") == ("::1", 9559)
    for bad in ("sw1", "sw1:0", "sw1:99999", ":9559", "a b:1"):
        with pytest.raises(ValueError):
            split_address(bad)


def test_check_against_a_scenario(tmp_path):
    sc = leaf_spine(2, 1, 2)  # L1, L2, S1, H1..H4; L1 ports: H1=1 H2=2 S1=3
    inv = parse_inventory(GOOD, base_dir=tmp_path, source="tb.toml")
    # L1 maps H1 -> 5, S1 -> 9 and keeps the scenario's port 2 for H2
    assert inv.port_of("L1", "H2", sc) == 2 and inv.port_of("L1", "S1", sc) == 9
    check_against_scenario(inv, sc)
    with pytest.raises(ValidationError, match="plan uses this switch"):
        check_against_scenario(inv, sc, required={"L2"})
    bad = parse_inventory(GOOD.replace("H1 = 5", "H3 = 5"), source="tb.toml")
    with pytest.raises(ValidationError,
                       match=r"tb.toml: switch 'L1', field 'ports.H3': 'H3' is not a neighbour"):
        check_against_scenario(bad, sc)
    clash = parse_inventory(GOOD.replace("H1 = 5", "H1 = 2"), source="tb.toml")
    with pytest.raises(ValidationError, match="port 2 leads to both 'H1' and 'H2'"):
        check_against_scenario(clash, sc)
    unknown = parse_inventory(GOOD.replace('id = "S1"', 'id = "X9"'), source="tb.toml")
    with pytest.raises(ValidationError, match="switch 'X9', field 'id': no such node"):
        check_against_scenario(unknown, sc)
    host_as_switch = parse_inventory(GOOD.replace('id = "S1"', 'id = "H3"'), source="tb.toml")
    with pytest.raises(ValidationError, match="is a host in the scenario"):
        check_against_scenario(host_as_switch, sc)


def test_tofino_device_config_packing():
    blob = pack_tofino_config("ina_tna", b"\x01\x02\x03", b'{"ctx": 1}')
    assert blob == (
        (7).to_bytes(4, "little") + b"ina_tna"
        + (3).to_bytes(4, "little") + b"\x01\x02\x03"
        + (10).to_bytes(4, "little") + b'{"ctx": 1}'
    )
    assert unpack_tofino_config(blob) == ("ina_tna", b"\x01\x02\x03", b'{"ctx": 1}')
    assert unpack_tofino_config(pack_tofino_config("p", b"", b"")) == ("p", b"", b"")
    with pytest.raises(InaplannerError, match="truncated"):
        unpack_tofino_config(blob[:2])
    with pytest.raises(InaplannerError, match="needs 10 bytes"):
        unpack_tofino_config(blob[:-1])
    with pytest.raises(InaplannerError, match="after context.json"):
        unpack_tofino_config(blob + b"\x00")
    with pytest.raises(InaplannerError, match="program name is empty"):
        pack_tofino_config("", b"x", b"y")


def test_config_cookie_tells_configs_apart():
    a = config_cookie(b"p4info", b"json")
    assert a == config_cookie(b"p4info", b"json") and 0 < a < 2**64
    assert a != config_cookie(b"p4infoj", b"son") and a != config_cookie(b"p4info", b"json2")


def test_the_testbed_file_of_a_fat_tree_k64_loads(tmp_path):
    """`testbed emulate` of fat-tree k=64 wrote a 5.2 MB testbed file (5,120 switches with 64
    ports each, 2,000 workers) that `monitor` and `deploy` then refused as over the 4 MB limit
    for TOML files; a file of that shape loads, every switch and port as written."""
    inv = Inventory(source=str(tmp_path / "tb.toml"), known_hosts=tmp_path / "known_hosts",
                    base_dir=tmp_path)
    for n in range(5120):
        sid = f"A{n // 64}_{n % 64}"
        inv.switches[sid] = SwitchInventory(
            id=sid, p4runtime=f"127.0.0.1:{20000 + n}", device_id=1, target="bmv2",
            election_id=DEFAULT_ELECTION_ID, ssh=None, workdir="inaplanner-build",
            build_command=TARGET_DEFAULTS["bmv2"]["build_command"], program="ina_v1model.p4",
            program_name="ina_v1model", p4info_path="ina_v1model.p4info.txtpb",
            device_config_path="emulated_device_config.json",
            ports={f"C{n}_{p}": p + 1 for p in range(64)}, tls=TLSSettings(False))
    for h in range(2000):
        inv.hosts[f"H{h}"] = HostInventory(f"H{h}", None, f"workers/H{h}.json")
    save_inventory(inv, tmp_path / "tb.toml")
    assert (tmp_path / "tb.toml").stat().st_size > 4_000_000
    back = load_inventory(tmp_path / "tb.toml")
    assert len(back.switches) == 5120 and len(back.hosts) == 2000
    assert back.switches["A79_63"].ports == inv.switches["A79_63"].ports
    assert back.switches["A79_63"].p4runtime == "127.0.0.1:25119"
