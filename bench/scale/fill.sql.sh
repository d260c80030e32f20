#!/usr/bin/env bash
# Prints the SQL that fills account ACCOUNT with VPCS VPCs (one subnet each, alternating
# us-east/us-west, labels vpc-000001...) and EVENTS events, for ENGINE (sqlite|postgres).
# Usage: fill.sql.sh ENGINE ACCOUNT VPCS EVENTS
set -euo pipefail
ENGINE=$1 ACCOUNT=$2 VPCS=$3 EVENTS=$4
TS="'2026-11-01T00:00:00'"
if [ "$ENGINE" = sqlite ]; then
  cat <<SQL
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $VPCS)
INSERT INTO vpcs (account_id, label, description, region, created, updated)
SELECT $ACCOUNT, printf('vpc-%06d', i), '', CASE i % 2 WHEN 0 THEN 'us-west' ELSE 'us-east' END, $TS, $TS FROM n;
INSERT INTO vpc_subnets (vpc_id, account_id, label, ipv4, first_v4, last_v4, created, updated)
SELECT id, account_id, 'main', '10.0.0.0/24', 167772160, 167772415, $TS, $TS FROM vpcs WHERE account_id = $ACCOUNT AND label LIKE 'vpc-%';
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $EVENTS)
INSERT INTO events (account_id, action, created, entity_type, entity_id, entity_label, entity_url, status, username)
SELECT $ACCOUNT, 'vpc_update', strftime('%Y-%m-%dT%H:%M:%S', 'now', '-' || (i % 80) || ' days'), 'vpc', i % $VPCS + 1,
       'vpc', '/v4/vpcs/1', 'finished', 'admin' FROM n;
COMMIT;
ANALYZE;
SQL
else
  cat <<SQL
BEGIN;
INSERT INTO vpcs (account_id, label, description, region, created, updated)
SELECT $ACCOUNT, 'vpc-' || lpad(i::text, 6, '0'), '', CASE i % 2 WHEN 0 THEN 'us-west' ELSE 'us-east' END, $TS, $TS
FROM generate_series(1, $VPCS) i;
INSERT INTO vpc_subnets (vpc_id, account_id, label, ipv4, first_v4, last_v4, created, updated)
SELECT id, account_id, 'main', '10.0.0.0/24', 167772160, 167772415, $TS, $TS FROM vpcs WHERE account_id = $ACCOUNT AND label LIKE 'vpc-%';
INSERT INTO events (account_id, action, created, entity_type, entity_id, entity_label, entity_url, status, username)
SELECT $ACCOUNT, 'vpc_update', to_char(now() - (i % 80) * interval '1 day', 'YYYY-MM-DD"T"HH24:MI:SS'), 'vpc', i % $VPCS + 1,
       'vpc', '/v4/vpcs/1', 'finished', 'admin' FROM generate_series(1, $EVENTS) i;
COMMIT;
VACUUM ANALYZE;
SQL
fi
