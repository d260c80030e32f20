"""The official SDK and CLI on the Backup service of an instance: enable it, take a snapshot,
list it and restore it to another instance."""

from linode_api4 import Instance


def wait_status(nubis, instance, status):
    def current():
        instance.invalidate()
        return instance.status == status

    nubis.wait_for(current, f"instance {instance.id} to be {status}", timeout=40)


def test_sdk_enables_backups_snapshots_lists_and_restores(nubis, client):
    source = client.linode.instance_create(
        "g6-nanode-1", "us-east", image="linode/debian12", root_pass="aComplexP@ssword-3", booted=False,
        label="sdk-backed-up",
    )
    wait_status(nubis, source, "offline")
    assert source.backups.enabled is False
    source.enable_backups()
    assert source.backups.enabled is True
    snap = source.snapshot(label="sdk-snap")
    assert snap.type == "snapshot" and snap.status == "successful" and snap.label == "sdk-snap"
    listed = source.available_backups
    assert listed.automatic == []
    assert listed.snapshot.current.id == snap.id
    assert listed.snapshot.in_progress is None
    target = client.linode.instance_create("g6-nanode-1", "us-east", booted=False, label="sdk-restored")
    wait_status(nubis, target, "offline")
    assert len(target.disks) == 0
    assert listed.snapshot.current.restore_to(target, overwrite=True)
    target = client.load(Instance, target.id)
    assert sorted((d.label, d.size) for d in target.disks) == sorted((d.label, d.size) for d in source.disks)
    source.cancel_backups()
    assert client.load(Instance, source.id).backups.enabled is False


def test_cli_enables_backups_snapshots_lists_and_restores(nubis, cli):
    source = cli("linodes", "create", "--type", "g6-nanode-1", "--region", "us-east", "--image", "linode/debian12",
                 "--root_pass", "aComplexP@ssword-3", "--booted", "false", "--label", "cli-backed-up")[0]
    nubis.wait_for(lambda: cli("linodes", "view", str(source["id"]))[0]["status"] == "offline", "offline", timeout=40)
    cli("linodes", "backups-enable", str(source["id"]))
    assert cli("linodes", "view", str(source["id"]))[0]["backups"]["enabled"] is True
    snap = cli("linodes", "snapshot", str(source["id"]), "--label", "cli-snap")[0]
    assert snap["label"] == "cli-snap" and snap["status"] == "successful"
    # The CLI's list shows the automatic backups (none); the snapshot is read by its id.
    cli("linodes", "backups-list", str(source["id"]))
    viewed = cli("linodes", "backup-view", str(source["id"]), str(snap["id"]))[0]
    assert viewed["id"] == snap["id"] and viewed["type"] == "snapshot"
    target = cli("linodes", "create", "--type", "g6-nanode-1", "--region", "us-east", "--booted", "false",
                 "--label", "cli-restored")[0]
    nubis.wait_for(lambda: cli("linodes", "view", str(target["id"]))[0]["status"] == "offline", "offline", timeout=40)
    cli("linodes", "backup-restore", str(source["id"]), str(snap["id"]), "--linode_id", str(target["id"]),
        "--overwrite", "true")
    disks = cli("linodes", "disks-list", str(target["id"]))
    assert sorted(d["label"] for d in disks) == sorted(d["label"] for d in snap["disks"])
