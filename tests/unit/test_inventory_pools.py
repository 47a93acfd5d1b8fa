"""Generator pools in an inventory: [[client]] / [[server]] tables paired in order or by `pairs`, each
host a role of its own (client2 ...); one [client] table stays a pool of one with the same identity."""

import hashlib

import pytest

from linerate.errors import ConfigError
from linerate.model import ONE_PAIR
from linerate.testbed.inventory import parse_inventory
from linerate.testbed.knobs import refuse_unsupported
from linerate.testbed.ssh import SshTestbeds

ONE = """name = "bench"
[client]
ssh = "root@198.19.250.2"
test_address = "198.18.1.10"
[server]
ssh = "root@198.19.250.10"
test_address = "198.18.2.10"
[dut]
ssh = "root@198.19.250.6"
"""

POOL = """name = "pool"
[[client]]
ssh = "root@198.19.250.2"
[[client]]
ssh = "root@198.19.250.14"
[[server]]
ssh = "root@198.19.250.10"
test_address = "198.18.2.10"
[[server]]
ssh = "root@198.19.250.18"
test_address = "198.18.5.10"
test_address6 = "2001:2:0:5::10"
"""


def test_one_table_is_a_pool_of_one_with_the_identity_it_always_had():
    inventory = parse_inventory(ONE)
    assert not inventory.pooled and inventory.pair_roles() == [("client", "server")]
    assert list(inventory.hosts()) == ["client", "dut", "server"]
    # the journal and locks of a testbed are keyed by this: one written before pools must still be found
    text = "client=root@198.19.250.2:22|dut=root@198.19.250.6:22|server=root@198.19.250.10:22"
    assert inventory.identity_key() == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert inventory.address(4) == "198.18.2.10" and inventory.address(6) is None


def test_tables_of_a_pool_pair_in_order_each_server_with_its_own_addresses():
    inventory = parse_inventory(POOL)
    assert inventory.pooled and inventory.pair_roles() == [("client", "server"), ("client2", "server2")]
    assert list(inventory.generator_hosts()) == ["client", "client2", "server", "server2"]
    assert inventory.address(4, "server2") == "198.18.5.10" and inventory.address(6, "server2") == "2001:2:0:5::10"
    assert inventory.address(6, "server") is None


def test_pairs_names_hosts_one_based_client_then_server():
    inventory = parse_inventory("pairs = [[1, 2], [2, 1]]\n" + POOL)
    assert inventory.pair_roles() == [("client", "server2"), ("client2", "server")]
    # a client in two pairs sends twice from one host; the servers are still one each
    three = parse_inventory("pairs = [[1, 1], [1, 2]]\n" + POOL.replace('[[client]]\nssh = "root@198.19.250.14"\n', ""))
    assert three.pair_roles() == [("client", "server"), ("client", "server2")]


@pytest.mark.parametrize("text, says", [
    (POOL.replace('[[client]]\nssh = "root@198.19.250.14"\n', ""), "1 client(s) and 2 server(s): pair them"),
    ("pairs = [[1, 1]]\n" + POOL, "client2 is in no pair"),
    ("pairs = [[1, 1], [2, 1]]\n" + POOL, "server2 is in no pair"),
    ("pairs = [[1, 1], [2, 1], [1, 2]]\n" + POOL, "server is in two pairs"),
    ("pairs = [[1, 3], [2, 1]]\n" + POOL, "[1, 3] names a host the inventory does not have"),
    ('pairs = [["1", 1], [2, 2]]\n' + POOL, "pairs.0.0"),
    ("pairs = []\n" + POOL, "pairs"),
    (POOL.replace("198.19.250.18", "198.19.250.10"), "two servers are one host"),
    (POOL.replace('test_address = "198.18.5.10"\ntest_address6 = "2001:2:0:5::10"\n', ""),
     "server2 needs test_address"),
    (POOL + '[[server]]\nssh = "root@198.19.250.22"\ntest_address = "198.18.8.10"\nos = "linux"\n',
     "server3: os and interfaces are DUT keys"),
    (POOL.replace('ssh = "root@198.19.250.14"', 'ssh = "root@198.19.250.14"\nbogus = 1'), "unknown key 'client2.bogus'"),
    (POOL.replace('ssh = "root@198.19.250.14"', 'ssh = "root\\n@198.19.250.14"'), "client2.ssh"),
    ('client = "root@198.19.250.2"\n[server]\nssh = "root@198.19.250.10"\ntest_address = "198.18.2.10"\n',
     "client: is not a table"),
    ("".join(f'[[client]]\nssh = "root@198.19.250.{i}"\n' for i in range(20, 37)) + "[[server]]"
     + POOL.split("[[server]]", 1)[1], "a pool holds 1 to 16 hosts"),
])
def test_a_pool_that_cannot_be_paired_is_one_line_naming_the_key(text, says):
    with pytest.raises(ConfigError) as caught:
        parse_inventory(text)
    assert says in str(caught.value) and "\n" not in str(caught.value), str(caught.value)


def test_a_pool_refuses_a_test_that_drives_one_pair_before_it_connects():
    pooled = SshTestbeds(parse_inventory(POOL), None)
    with pytest.raises(ConfigError, match="generator pool of 2 pairs"):
        pooled.check([{}], {"binary h2load", ONE_PAIR})
    assert "axes ok" in pooled.check([{}], set())  # throughput: the pool sums its pairs
    assert "axes ok" in SshTestbeds(parse_inventory(ONE), None).check([{}], {ONE_PAIR})


def test_bidir_on_a_pool_is_refused_before_anything_runs_and_one_pair_takes_it():
    with pytest.raises(ConfigError) as caught:
        refuse_unsupported([{"direction": "bidir"}], "ssh", parse_inventory(POOL))
    assert caught.value.field == "direction" and "a pool sums one direction's receivers" in caught.value.problem
    refuse_unsupported([{"direction": "bidir"}], "ssh", parse_inventory(ONE))
