"""What users of the official SDK and CLI do with an instance beyond the spec's resources:
profile SSH keys installed at creation, configuration profiles with VPC interfaces, disks,
rebuild and resize, through the clients' own methods and commands."""

from linode_api4 import Instance
from linode_api4.objects import ConfigInterface

PASSWORD = "aComplexP@ssword-3"
# Public keys (ed25519 with 32 bytes of 0x01 and 0x02).
KEY_A = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEB clients-a"
KEY_B = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIC clients-b"


def wait_status(nubis, instance, status):
    def current():
        instance.invalidate()
        return instance.status == status

    nubis.wait_for(current, f"instance {instance.id} to be {status}", timeout=40)


def test_sdk_ssh_key_vpc_profile_disks_rebuild_and_resize(nubis, client):
    # A profile key, named by its user at creation.
    key = client.profile.ssh_key_upload(KEY_A, "sdk-key")
    assert key.label == "sdk-key" and key.ssh_key == KEY_A
    assert key.id in [k.id for k in client.profile.ssh_keys()]
    me = client.profile().username
    instance = client.linode.instance_create(
        "g6-nanode-1", "us-east", image="linode/debian12", authorized_users=[me], booted=False, label="sdk-hosted"
    )
    assert isinstance(instance, Instance)
    wait_status(nubis, instance, "offline")
    # The image deployment's disks and profile.
    disks = list(instance.disks)
    assert [d.filesystem for d in disks] == ["ext4", "swap"]
    assert sum(d.size for d in disks) == instance.specs.disk
    assert len(instance.configs) == 1
    # A second profile with a VPC interface on a subnet.
    vpc = client.vpcs.create("sdk-hosted-vpc", "us-east", subnets=[{"label": "web", "ipv4": "10.20.0.0/24"}])
    subnet = vpc.subnets[0]
    config = instance.config_create(
        label="sdk-vpc-profile",
        disks=[disks[0], disks[1]],
        interfaces=[ConfigInterface(purpose="public"), ConfigInterface(purpose="vpc", subnet_id=subnet.id)],
    )
    assert config.label == "sdk-vpc-profile"
    assert config.devices.sda.id == disks[0].id
    assert [i.purpose for i in config.interfaces] == ["public", "vpc"]
    vpc_iface = config.interfaces[1]
    assert vpc_iface.vpc_id == vpc.id and vpc_iface.subnet_id == subnet.id
    assert vpc_iface.ipv4.vpc.startswith("10.20.0.")
    # An interface added on its own, and the profile saved back as fetched.
    vlan = config.interface_create_vlan("sdk-vlan", ipam_address="10.30.0.1/24")
    assert vlan.purpose == "vlan" and vlan.label == "sdk-vlan"
    config.invalidate()
    config.comments = "edited by the SDK"
    config.save()
    config.invalidate()
    assert config.comments == "edited by the SDK" and len(config.interfaces) == 3
    # Booted with that profile: its interfaces are the active ones.
    assert instance.boot(config)
    wait_status(nubis, instance, "running")
    config.invalidate()
    assert all(n.active for n in config.network_interfaces)
    # A disk of its own after a rebuild with keys, then a resize to a larger plan.
    assert instance.rebuild("linode/alpine3.20", authorized_keys=KEY_B)
    wait_status(nubis, instance, "running")
    instance.invalidate()
    assert instance.image.id == "linode/alpine3.20"
    assert [c.label for c in instance.configs] == ["My Alpine 3.20 Disk Profile"]
    assert instance.resize("g6-standard-1")
    nubis.wait_for(lambda: (instance.invalidate() or instance.type.id == "g6-standard-1" and instance.status == "running"),
                   "the resize", timeout=40)
    assert sum(d.size for d in instance.disks) == 51200
    instance.shutdown()
    wait_status(nubis, instance, "offline")
    main = instance.disks[0]
    main.resize(40000)
    extra = instance.disk_create(size=1000, label="sdk-extra", filesystem="ext4")
    assert extra.size == 1000 and extra.status == "ready"
    # The hosted names and the spec's read the same records.
    spec = nubis.api("GET", f"/compute/instances/{instance.id}/disks").json()
    assert spec["results"] == 3


def test_cli_ssh_key_vpc_profile_rebuild_and_resize(nubis, cli):
    key = cli("sshkeys", "create", "--label", "cli-key", "--ssh_key", KEY_B)[0]
    assert key["label"] == "cli-key"
    assert key["id"] in [k["id"] for k in cli("sshkeys", "list")]
    me = nubis.api("GET", "/profile").json()["username"]
    made = cli(
        "linodes", "create", "--type", "g6-nanode-1", "--region", "us-east", "--image", "linode/debian12",
        "--authorized_users", me, "--booted", "false", "--label", "cli-hosted",
    )[0]
    linode = str(made["id"])
    nubis.wait_for(lambda: cli("linodes", "view", linode)[0]["status"] == "offline", "offline")
    disks = cli("linodes", "disks-list", linode)
    assert [d["filesystem"] for d in disks] == ["ext4", "swap"]
    vpc = cli("vpcs", "create", "--label", "cli-hosted-vpc", "--region", "us-east",
              "--subnets.label", "web", "--subnets.ipv4", "10.40.0.0/24")[0]
    subnet = vpc["subnets"][0]["id"]
    config = cli(
        "linodes", "config-create", linode, "--label", "cli-vpc-profile",
        "--devices.sda.disk_id", str(disks[0]["id"]),
        "--interfaces.purpose", "vpc", "--interfaces.subnet_id", str(subnet),
        "--interfaces.purpose", "public",
    )[0]
    assert config["label"] == "cli-vpc-profile"
    listed = cli("linodes", "configs-list", linode)
    assert "cli-vpc-profile" in [c["label"] for c in listed]
    interfaces = cli("linodes", "config-interfaces-list", linode, str(config["id"]))
    assert [i["purpose"] for i in interfaces] == ["vpc", "public"]
    assert interfaces[0]["subnet_id"] == subnet and interfaces[0]["ipv4"]["vpc"].startswith("10.40.0.")
    cli.run("linodes", "boot", linode, "--config_id", str(config["id"]))
    nubis.wait_for(lambda: cli("linodes", "view", linode)[0]["status"] == "running", "running")
    cli.run("linodes", "rebuild", linode, "--image", "linode/alpine3.20", "--root_pass", PASSWORD)
    nubis.wait_for(lambda: cli("linodes", "view", linode)[0]["image"] == "linode/alpine3.20"
                   and cli("linodes", "view", linode)[0]["status"] == "running", "the rebuild", timeout=40)
    cli.run("linodes", "resize", linode, "--type", "g6-standard-1")
    nubis.wait_for(lambda: cli("linodes", "view", linode)[0]["type"] == "g6-standard-1"
                   and cli("linodes", "view", linode)[0]["status"] == "running", "the resize", timeout=40)
    assert sum(d["size"] for d in cli("linodes", "disks-list", linode)) == 51200
    # The events in the hosted names.
    actions = {e["action"] for e in cli("events", "list")}
    assert {"linode_rebuild", "linode_resize", "linode_config_create"} <= actions


def test_sdk_linode_interfaces(nubis, client):
    from linode_api4.objects.linode_interfaces import (
        LinodeInterfaceDefaultRouteOptions,
        LinodeInterfaceOptions,
        LinodeInterfacePublicOptions,
        LinodeInterfaceVPCOptions,
    )

    vpc = client.vpcs.create("sdk-li-vpc", "us-east", subnets=[{"label": "web", "ipv4": "10.50.0.0/24"}])
    subnet = vpc.subnets[0]
    instance = client.linode.instance_create(
        "g6-nanode-1", "us-east", image="linode/debian12", root_pass=PASSWORD, booted=False, label="sdk-li",
        interface_generation="linode",
        interfaces=[
            LinodeInterfaceOptions(
                default_route=LinodeInterfaceDefaultRouteOptions(ipv4=True, ipv6=True),
                public=LinodeInterfacePublicOptions(),
            )
        ],
    )
    assert instance.interface_generation == "linode"
    wait_status(nubis, instance, "offline")
    interfaces = instance.linode_interfaces
    assert len(interfaces) == 1 and interfaces[0].public is not None
    assert interfaces[0].default_route.ipv4 and interfaces[0].default_route.ipv6
    added = instance.interface_create(vpc=LinodeInterfaceVPCOptions(subnet_id=subnet.id))
    assert added.vpc.subnet_id == subnet.id and added.vpc.ipv4.addresses[0].address.startswith("10.50.0.")
    settings = instance.interfaces_settings
    assert settings.default_route.ipv4_interface_id == interfaces[0].id
    assert sorted(settings.default_route.ipv4_eligible_interface_ids) == sorted([interfaces[0].id, added.id])
    # The same interfaces through the spec's names.
    spec = nubis.api("GET", f"/compute/instances/{instance.id}/interfaces").json()
    assert [i["id"] for i in spec["interfaces"]] == [interfaces[0].id, added.id]
