-- Backups of instances (the hosted API's Backup service): each backup holds what the instance's
-- disks (label, size, filesystem, image) and configuration profiles (their settings, devices
-- naming the backup's disks by position) were when it was taken, as JSON. A backup goes with
-- its instance.
CREATE TABLE instance_backups (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id BIGINT NOT NULL REFERENCES instances(id) ON DELETE CASCADE,
    -- 'auto' or 'snapshot'.
    kind TEXT NOT NULL,
    label TEXT,
    status TEXT NOT NULL,
    region TEXT NOT NULL,
    disks TEXT NOT NULL,
    configs TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    finished TEXT
);
CREATE INDEX instance_backups_instance ON instance_backups(instance_id, id);

-- The backup schedule of an instance (`backups.schedule`): a weekday and a two-hour window
-- (`W0`..`W22`); no row or nulls: not chosen yet.
CREATE TABLE instance_backup_schedules (
    instance_id BIGINT PRIMARY KEY REFERENCES instances(id) ON DELETE CASCADE,
    sched_day TEXT,
    sched_window TEXT
);
