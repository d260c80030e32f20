//! The default driver: no machine behind it, each step simply takes its configured time.

use std::time::Duration;

use nubis_model::config::RuntimeConfig;

use super::{Driver, DriverFuture, Step};

/// Simulates power transitions with the delays of `[runtime]` in the configuration.
#[derive(Debug, Clone)]
pub struct SimulatedDriver {
    config: RuntimeConfig,
}

impl SimulatedDriver {
    pub fn new(config: RuntimeConfig) -> SimulatedDriver {
        SimulatedDriver { config }
    }

    fn delay(&self, step: Step) -> Duration {
        Duration::from_millis(match step {
            Step::Provision => self.config.provision_ms,
            Step::Boot => self.config.boot_ms,
            Step::Shutdown => self.config.shutdown_ms,
            Step::Reboot => self.config.reboot_ms,
        })
    }
}

impl Driver for SimulatedDriver {
    fn run(&self, _instance_id: i64, step: Step) -> DriverFuture {
        let delay = self.delay(step);
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            Ok(())
        })
    }
}
