//! A database made by the previous release's schema upgrades in place: the fixture (a SQL dump of
//! a database at migration 0006 with some data) is loaded into a file, the current store opens
//! it, applies the newer migrations, and reads the old data through the new read path.

use nubis_model::filter::Filter;
use nubis_store::{Store, StoreOptions};

const FIXTURE: &str = include_str!("fixtures/release-0006.sqlite.sql");

async fn upgraded() -> (Store, std::path::PathBuf) {
    let dir =
        std::env::temp_dir().join(format!("nubis-upgrade-{}-{:?}", std::process::id(), std::thread::current().id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("nubis.db");
    rusqlite::Connection::open(&path).unwrap().execute_batch(FIXTURE).unwrap();
    let store = Store::open(&format!("sqlite://{}", path.display()), &StoreOptions::default()).await.unwrap();
    (store, dir)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_database_of_the_previous_release_upgrades_in_place() {
    let (store, dir) = upgraded().await;
    let all = Filter::default();

    // The kept counts start from the rows already there.
    let (vpcs, results) = store.vpcs_page(1, None, &all, 1, 25).await.unwrap();
    assert_eq!(results, 3);
    assert_eq!(vpcs.iter().map(|v| v.label.as_str()).collect::<Vec<_>>(), ["prod", "stage", "dev"]);
    let (_, theirs) = store.vpcs_page(2, None, &all, 1, 25).await.unwrap();
    assert_eq!(theirs, 1);
    let (page2, results) = store.vpcs_page(1, None, &all, 2, 2).await.unwrap();
    assert_eq!((page2.len(), results), (1, 3), "a page past the first reads the kept count");

    // Old rows read through the keyed reads.
    let prod = store.vpc_parts(1, 1).await.unwrap().expect("vpc 1");
    assert_eq!(prod.subnets.iter().map(|s| s.label.as_str()).collect::<Vec<_>>(), ["web", "db"]);
    assert!(store.vpc_parts(2, 1).await.unwrap().is_none(), "another account's VPC is not found");
    let (granted, n) = store.vpcs_page(1, Some(2), &all, 1, 25).await.unwrap();
    assert_eq!((granted.len(), n, granted[0].label.as_str()), (1, 1, "stage"));
    let (fws, n) = store.firewalls_page(1, None, None, &all, 1, 25).await.unwrap();
    assert_eq!((n, fws[0].tags.clone()), (1, vec!["blue".to_string()]));
    assert_eq!(store.users_page(1, &all, 1, 25).await.unwrap().1, 2);

    // New writes keep the counts.
    let mut tx = store.begin().await.unwrap();
    tx.vpc_insert(&nubis_store::vpcs::NewVpc {
        account_id: 1,
        label: "new",
        description: "",
        region: "us-east",
        ipv6_range: None,
        created: nubis_model::Timestamp::now(),
    })
    .await
    .unwrap();
    tx.vpc_delete(3).await.unwrap();
    tx.commit().await.unwrap();
    let (_, results) = store.vpcs_page(1, None, &all, 2, 2).await.unwrap();
    assert_eq!(results, 3);
    store.close().await;

    // Opening it again applies nothing twice.
    let again =
        Store::open(&format!("sqlite://{}", dir.join("nubis.db").display()), &StoreOptions::default()).await.unwrap();
    assert_eq!(again.vpcs_page(1, None, &all, 2, 2).await.unwrap().1, 3);
    again.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
