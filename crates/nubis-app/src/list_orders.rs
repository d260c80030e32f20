//! Deep pages in a field's order: nubis places the order fences (nubis-store `fences`) outside
//! any request, one range per transaction, so that a page skips fewer rows than a range holds.

use nubis_model::Result;

use crate::App;

impl App {
    /// Cuts every range of an order that grew past its bound and drops the empty ones; returns
    /// how many it placed or dropped.
    pub async fn list_orders_place_due(&self) -> Result<u64> {
        let due = self.store.fences_due().await?;
        for d in &due {
            self.write(|tx| {
                let d = d.clone();
                Box::pin(async move { tx.fence_place(&d).await })
            })
            .await?;
        }
        Ok(due.len() as u64)
    }

    /// Runs [`App::list_orders_place_due`] every `every`, and refreshes the query planner's
    /// statistics (`Store::refresh_statistics`) at start and every 6th round, until aborted
    /// (`nubis serve`).
    pub fn spawn_list_order_keeper(&self, every: std::time::Duration) -> tokio::task::JoinHandle<()> {
        let app = self.clone();
        tokio::spawn(async move {
            for round in 0u64.. {
                if round % 6 == 0
                    && let Err(e) = app.store.refresh_statistics().await
                {
                    tracing::warn!(error = %e, "refreshing the query planner's statistics failed");
                }
                if let Err(e) = app.list_orders_place_due().await {
                    tracing::warn!(error = %e, "placing the order fences of the lists failed");
                }
                tokio::time::sleep(every).await;
            }
        })
    }
}
