//! Child accounts as their parent sees them (spec 4.5), and the short-lived tokens that let a
//! parent user act as its proxy user on a child account. A proxy token is an ordinary token of
//! the proxy user (kind `proxy`), so on the child account it is a child-account user in every
//! respect: it gets the proxy user's grants, and billing writes refuse it like any child user.

use nubis_model::account::Account;
use nubis_model::billing::CreditCardSummary;
use nubis_model::filter::Filter;
use nubis_model::page::{Page, PageRequest};
use nubis_model::signin::{ChildAccount, ProxyUserToken};
use nubis_model::{Error, Result, Timestamp};
use nubis_store::tokens::NewToken;

use crate::App;
use crate::auth::{Actor, Op, hash_secret_hex, new_secret};

fn view(a: Account) -> ChildAccount {
    ChildAccount {
        euuid: a.euuid,
        company: a.company,
        email: a.email,
        first_name: a.first_name,
        last_name: a.last_name,
        address_1: String::new(),
        address_2: String::new(),
        city: String::new(),
        state: String::new(),
        zip: String::new(),
        country: String::new(),
        phone: String::new(),
        tax_id: String::new(),
        balance: 0,
        balance_uninvoiced: 0,
        billing_source: "external",
        capabilities: vec!["Linodes", "NodeBalancers", "Cloud Firewall", "VPCs"],
        credit_card: CreditCardSummary { expiry: None, last_four: None },
        active_since: a.active_since,
    }
}

impl App {
    pub async fn child_account_list(
        &self,
        actor: &Actor,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<ChildAccount>> {
        self.authorize(actor, Op::ChildAccountList).await?;
        let (data, n) = self.store.child_accounts_page(actor.account_id(), filter, page.page, page.page_size).await?;
        Ok(Page::new(data.into_iter().map(view).collect(), page, n))
    }

    pub async fn child_account_get(&self, actor: &Actor, euuid: &str) -> Result<ChildAccount> {
        self.authorize(actor, Op::ChildAccountGet).await?;
        self.store.child_account_get(actor.account_id(), euuid).await?.map(view).ok_or(Error::NotFound)
    }

    /// A token acting as the parent's proxy user on the child account: every scope (the proxy
    /// user's grants bound it), short-lived, shown once, stored as its SHA-256.
    pub async fn child_account_token(&self, actor: &Actor, euuid: &str) -> Result<ProxyUserToken> {
        self.authorize(actor, Op::ChildAccountToken).await?;
        let now = Timestamp::now();
        let expiry = now.plus_seconds(self.config.signin.proxy_token_secs);
        let label: String = format!("{}_{}_{}", actor.username(), actor.user_id(), now).chars().take(100).collect();
        let label = &label;
        self.write(|tx| {
            Box::pin(async move {
                let child = tx.child_account_get(actor.account_id(), euuid).await?.ok_or(Error::NotFound)?;
                // As for personal access tokens: a token issued to a third-party OAuth
                // application mints no token that would outlive the application's grant.
                if let Some(Some(client)) = tx.token_client(actor.token_id()).await?
                    && client != crate::console::CONSOLE_CLIENT_ID
                {
                    return Err(Error::Forbidden(
                        "A token issued to an OAuth application cannot create proxy user tokens".into(),
                    ));
                }
                let proxy = tx
                    .users_of_account(child.id)
                    .await?
                    .into_iter()
                    .find(|u| u.is_proxy())
                    .ok_or_else(|| Error::refused("This child account has no proxy user"))?;
                let secret = new_secret();
                let t = tx
                    .token_insert(&NewToken {
                        user_id: proxy.id,
                        label,
                        scopes: "*",
                        secret_hash: &hash_secret_hex(&secret),
                        kind: "proxy",
                        created: now,
                        expiry: Some(expiry),
                    })
                    .await?;
                Ok(ProxyUserToken {
                    id: t.id,
                    label: t.label,
                    scopes: t.scopes,
                    created: t.created,
                    expiry,
                    token: secret,
                })
            })
        })
        .await
    }
}
