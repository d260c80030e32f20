//! Balancer ownership across data-plane processes: members (processes with a fresh heartbeat)
//! and leases (which member serves which balancer). Times are milliseconds since the epoch read
//! from the database's clock ([`Tx::db_now_ms`]), never from a process's clock. The policy (how
//! many to hold, when to let go) is the application's; these are its steps, run inside one write
//! transaction per heartbeat.

use nubis_model::Result;

use crate::db::query;
use crate::{Backend, Tx};

impl Tx<'_> {
    /// The database's clock, in milliseconds since the epoch.
    pub async fn db_now_ms(&mut self) -> Result<i64> {
        let sql = match self.backend() {
            Backend::Postgres => "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
            Backend::Sqlite => "SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)",
        };
        query(sql).fetch_i64(self.h()).await
    }

    /// Records that `owner` is alive until `expires`.
    pub async fn dataplane_member_beat(&mut self, owner: &str, expires: i64) -> Result<()> {
        query(
            "INSERT INTO dataplane_members (owner, expires) VALUES ($1, $2) \
             ON CONFLICT (owner) DO UPDATE SET expires = excluded.expires",
        )
        .bind(owner)
        .bind(expires)
        .execute(self.h())
        .await?;
        Ok(())
    }

    /// Extends every lease `owner` holds until `expires`.
    pub async fn dataplane_leases_renew(&mut self, owner: &str, expires: i64) -> Result<()> {
        query("UPDATE dataplane_leases SET expires = $1 WHERE owner = $2")
            .bind(expires)
            .bind(owner)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Gives up `owner`'s leases of these balancers.
    pub async fn dataplane_leases_release(&mut self, owner: &str, balancers: &[i64]) -> Result<()> {
        for id in balancers {
            query("DELETE FROM dataplane_leases WHERE owner = $1 AND balancer_id = $2")
                .bind(owner)
                .bind(*id)
                .execute(self.h())
                .await?;
        }
        Ok(())
    }

    /// Forgets `owner` entirely: its membership and every lease it holds (a clean stop).
    pub async fn dataplane_member_leave(&mut self, owner: &str) -> Result<()> {
        query("DELETE FROM dataplane_leases WHERE owner = $1").bind(owner).execute(self.h()).await?;
        query("DELETE FROM dataplane_members WHERE owner = $1").bind(owner).execute(self.h()).await?;
        Ok(())
    }

    /// Removes members and leases that expired before `now`, and leases of balancers that no
    /// longer exist.
    pub async fn dataplane_sweep(&mut self, now: i64) -> Result<()> {
        query("DELETE FROM dataplane_members WHERE expires < $1").bind(now).execute(self.h()).await?;
        query(
            "DELETE FROM dataplane_leases WHERE expires < $1 \
             OR NOT EXISTS (SELECT 1 FROM nodebalancers n WHERE n.id = dataplane_leases.balancer_id)",
        )
        .bind(now)
        .execute(self.h())
        .await?;
        Ok(())
    }

    /// How many data-plane processes are alive.
    pub async fn dataplane_member_count(&mut self) -> Result<i64> {
        query("SELECT COUNT(*) FROM dataplane_members").fetch_i64(self.h()).await
    }

    /// How many balancers exist (every one is to be served by some member).
    pub async fn dataplane_balancer_count(&mut self) -> Result<i64> {
        query("SELECT COUNT(*) FROM nodebalancers").fetch_i64(self.h()).await
    }

    /// The balancers `owner` holds, by id.
    pub async fn dataplane_leases_of(&mut self, owner: &str) -> Result<Vec<i64>> {
        query("SELECT balancer_id FROM dataplane_leases WHERE owner = $1 ORDER BY balancer_id")
            .bind(owner)
            .fetch_column_i64(self.h())
            .await
    }

    /// Takes up to `n` balancers nobody holds, lowest ids first, until `expires`.
    pub async fn dataplane_leases_claim(&mut self, owner: &str, expires: i64, n: i64) -> Result<u64> {
        query(
            "INSERT INTO dataplane_leases (balancer_id, owner, expires) \
             SELECT n.id, $1, $2 FROM nodebalancers n \
             WHERE NOT EXISTS (SELECT 1 FROM dataplane_leases l WHERE l.balancer_id = n.id) \
             ORDER BY n.id LIMIT $3",
        )
        .bind(owner)
        .bind(expires)
        .bind(n)
        .execute(self.h())
        .await
    }
}

impl crate::Store {
    /// Who holds each balancer's lease, `(balancer id, owner)` by balancer id (for status pages
    /// and tests).
    pub async fn dataplane_leases(&self) -> Result<Vec<(i64, String)>> {
        use crate::rows::RowExt;
        query("SELECT balancer_id, owner FROM dataplane_leases ORDER BY balancer_id")
            .fetch_all(self.r())
            .await?
            .iter()
            .map(|r| Ok((r.i64("balancer_id")?, r.str("owner")?)))
            .collect()
    }
}
