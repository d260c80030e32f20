//! The documents of the metadata service, built from the database for one instance: the same
//! facts as the API's instance and address records, in the shapes of Metadata API v1.

use std::sync::Weak;

use nubis_model::Result;
use nubis_netns::metadata::{Doc, DocFuture, Source};
use serde_json::{Value, json};

use crate::{App, AppInner};

/// The application as the metadata service's source.
pub(crate) struct AppSource(pub Weak<AppInner>);

impl Source for AppSource {
    fn document(&self, id: i64, doc: Doc) -> DocFuture {
        let app = self.0.upgrade().map(App);
        Box::pin(async move {
            let app = app?;
            match app.metadata_document(id, doc).await {
                Ok(d) => d,
                Err(e) => {
                    tracing::warn!(instance = id, error = %e, "metadata document failed");
                    None
                }
            }
        })
    }
}

fn cidr(a: &nubis_model::ip::IpAddress) -> String {
    format!("{}/{}", a.address, a.prefix)
}

impl App {
    async fn metadata_document(&self, id: i64, doc: Doc) -> Result<Option<Vec<u8>>> {
        let Some(inst) = self.store.instance_by_id(id).await? else { return Ok(None) };
        let v: Value = match doc {
            Doc::UserData => {
                let data = self.store.instance_boot_data(id).await?.unwrap_or_default();
                return Ok(Some(data.user_data.unwrap_or_default().into_bytes()));
            }
            Doc::SshKeys => {
                let data = self.store.instance_boot_data(id).await?.unwrap_or_default();
                json!({ "users": { "root": data.authorized_keys } })
            }
            Doc::Instance => {
                let t = self.catalog.instance_type(&inst.kind);
                json!({
                    "id": inst.id,
                    "label": inst.label,
                    "region": inst.region,
                    "type": inst.kind,
                    "tags": inst.tags,
                    "host_uuid": inst.host_uuid,
                    "specs": {
                        "vcpus": t.map_or(0, |t| t.vcpus),
                        "memory": t.map_or(0, |t| t.memory),
                        "disk": t.map_or(0, |t| t.disk),
                        "transfer": t.map_or(0, |t| t.transfer),
                        "gpus": t.map_or(0, |t| t.gpus),
                    },
                    "backups": { "enabled": inst.backups_enabled, "status": null },
                    "image": inst.image.as_ref().map(|i| json!({ "id": i, "label": self.catalog.image(i).map(|m| m.label.clone()) })),
                })
            }
            Doc::Network => {
                let ips = self.address_book_of_instance(&inst).await?.instance_ips(&inst);
                let mut interfaces = self.store.interfaces_of_instances(&[id]).await?;
                interfaces.sort_by_key(|f| f.position);
                let interfaces: Vec<Value> = interfaces
                    .iter()
                    .map(|f| json!({ "label": f.label, "purpose": f.purpose, "ipam_address": f.ipam_address }))
                    .collect();
                json!({
                    "interfaces": interfaces,
                    "ipv4": {
                        "public": ips.ipv4.public.iter().map(cidr).collect::<Vec<_>>(),
                        "private": ips.ipv4.private.iter().map(cidr).collect::<Vec<_>>(),
                        "shared": ips.ipv4.shared.iter().map(cidr).collect::<Vec<_>>(),
                    },
                    "ipv6": {
                        "slaac": ips.ipv6.slaac.as_ref().map(cidr),
                        "link_local": ips.ipv6.link_local.as_ref().map(cidr),
                        "ranges": ips.ipv6.global.iter().map(|r| format!("{}/{}", r.range, r.prefix)).collect::<Vec<_>>(),
                        "shared_ranges": Vec::<String>::new(),
                    },
                })
            }
        };
        Ok(Some(v.to_string().into_bytes()))
    }
}
