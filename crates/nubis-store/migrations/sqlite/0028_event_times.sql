-- When an event finished or failed (the hosted API's `complete_time`; its `duration` is the time
-- from `created` to this). Events written before this migration are taken as finished at once.
ALTER TABLE events ADD COLUMN completed TEXT;
UPDATE events SET completed = created WHERE status IN ('finished', 'failed', 'notification');
