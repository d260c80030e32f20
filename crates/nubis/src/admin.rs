//! `nubis admin ...`: operators' commands, run directly on the database.

use nubis_app::admin::InstanceFlag;

use crate::cli::{AccountCommand, AdminArgs, AdminCommand, InstanceCommand, RuntimeCommand, TokenCommand, UserCommand};
use crate::controls;
use crate::refusal::fail;

pub async fn run(args: AdminArgs) -> anyhow::Result<()> {
    let _log = crate::logging::init(crate::cli::LogFormat::Text);
    // The test controls act on the running server (its clock and faults live in its process).
    if controls::is_remote(&args.command) {
        return controls::run(&args.remote, args.command).await;
    }
    // Backups and restores work on the database as a whole, without opening (or migrating) it.
    match &args.command {
        AdminCommand::Backup { file } => {
            nubis_store::backup::backup(&args.state.database_url(), file).await.map_err(fail)?;
            println!("backup written to {}", file.display());
            return Ok(());
        }
        AdminCommand::Restore { file } => {
            let url = args.state.database_url();
            nubis_store::backup::restore(&url, file).await.map_err(fail)?;
            println!("{} restored from {}", nubis_store::redact(&url), file.display());
            return Ok(());
        }
        AdminCommand::Runtime(RuntimeCommand::Check) => return crate::serve::runtime_check(&args.state),
        AdminCommand::Runtime(RuntimeCommand::Sweep) => return crate::serve::runtime_sweep(&args.state).await,
        _ => {}
    }
    let (app, admin) = crate::serve::open(&args.state).await?;
    let admin = &admin;
    let result = match args.command {
        AdminCommand::Account(AccountCommand::Create { company, username, email, parent }) => {
            let (a, u) =
                app.admin_account_create(admin, &company, &username, &email, parent.as_deref()).await.map_err(fail)?;
            println!("account {} ({}) created with owner {}", a.euuid, a.company, u.username);
            Ok(())
        }
        AdminCommand::Account(AccountCommand::List) => {
            println!("{:<38} {:<8} {:<24} CREATED", "EUUID", "CHILD", "COMPANY");
            for a in app.admin_accounts(admin).await.map_err(fail)? {
                println!("{:<38} {:<8} {:<24} {}", a.euuid, a.parent_id.is_some(), a.company, a.active_since);
            }
            Ok(())
        }
        AdminCommand::Account(AccountCommand::TosViolation { euuid, on, off: _ }) => {
            let a = app.admin_account_tos_violation(admin, &euuid, on).await.map_err(fail)?;
            let state =
                if on { "has an active terms-of-service violation" } else { "has no terms-of-service violation" };
            println!("account {} ({}) {state}", a.euuid, a.company);
            Ok(())
        }
        AdminCommand::User(UserCommand::Create { account, username, email, restricted }) => {
            let u = app.admin_user_create(admin, &account, &username, &email, restricted).await.map_err(fail)?;
            println!("user {} created (restricted: {})", u.username, u.restricted);
            Ok(())
        }
        AdminCommand::User(UserCommand::List) => {
            println!("{:<34} {:<10} {:<8} {:<10} EMAIL", "USERNAME", "ACCOUNT", "OWNER", "RESTRICTED");
            for u in app.admin_users(admin).await.map_err(fail)? {
                println!("{:<34} {:<10} {:<8} {:<10} {}", u.username, u.account_id, u.is_owner, u.restricted, u.email);
            }
            Ok(())
        }
        AdminCommand::User(UserCommand::Password { username, password_stdin: true }) => {
            let mut password = String::new();
            std::io::stdin().read_line(&mut password)?;
            let password = password.trim_end_matches(['\r', '\n']);
            app.admin_user_set_password(admin, &username, password).await.map_err(fail)?;
            println!("password of {username} set");
            Ok(())
        }
        AdminCommand::User(UserCommand::Password { username, password_stdin: false }) => {
            let link = app.admin_password_link(admin, &username).await.map_err(fail)?;
            println!("{link}");
            Ok(())
        }
        AdminCommand::Token(TokenCommand::Create { operator: true, label, .. }) => {
            let secret = app.admin_operator_token_create(admin, &label, None).await.map_err(fail)?;
            println!("{secret}");
            Ok(())
        }
        AdminCommand::Token(TokenCommand::Create { username, scopes, expiry_days, label, .. }) => {
            let username = username.unwrap_or_default();
            let secret = app.admin_token_create(admin, &username, &scopes, expiry_days, &label).await.map_err(fail)?;
            println!("{secret}");
            Ok(())
        }
        AdminCommand::Instance(InstanceCommand::AllowExtraIpv4 { id, off }) => {
            app.admin_instance_flag(admin, id, InstanceFlag::ExtraIpv4, !off).await.map_err(fail)?;
            let state = if off { "no longer allowed" } else { "allowed" };
            println!("instance {id}: additional public IPv4 addresses {state}");
            Ok(())
        }
        AdminCommand::Instance(InstanceCommand::Console { id }) => match app.instance_console(id) {
            Some(log) => {
                print!("{log}");
                Ok(())
            }
            None => Err(anyhow::anyhow!(
                "instance {id} has no console here: the netns driver is not configured ([runtime] driver = \"netns\", \
                 --runtime-driver netns or NUBIS_RUNTIME_DRIVER=netns)"
            )),
        },
        AdminCommand::Instance(InstanceCommand::LiveMigration { id, on, off: _ }) => {
            app.admin_instance_flag(admin, id, InstanceFlag::LiveMigration, on).await.map_err(fail)?;
            println!("instance {id}: live migration {}", if on { "on" } else { "off" });
            Ok(())
        }
        AdminCommand::Clock(_)
        | AdminCommand::Fault(_)
        | AdminCommand::Snapshot(_)
        | AdminCommand::Reset
        | AdminCommand::Fixtures { .. } => {
            unreachable!("handled by controls::run")
        }
        AdminCommand::Backup { .. } | AdminCommand::Restore { .. } | AdminCommand::Runtime(_) => {
            unreachable!("handled above")
        }
        AdminCommand::Account(AccountCommand::Show { euuid }) => {
            crate::admin_billing::account_show(&app, admin, &euuid).await
        }
        AdminCommand::Billing(cmd) => crate::admin_billing::billing(&app, admin, cmd).await,
        AdminCommand::Promo(cmd) => crate::admin_billing::promo(&app, admin, cmd).await,
        AdminCommand::Instance(InstanceCommand::Maintenance(cmd)) => {
            crate::admin_billing::maintenance(&app, admin, cmd).await
        }
        AdminCommand::Outbox { bodies } => {
            for m in app.admin_outbox(admin).await.map_err(fail)? {
                let state = match (&m.delivered, &m.last_error) {
                    (Some(t), _) => format!("delivered {t}"),
                    (None, Some(e)) => format!("pending after {} attempts: {e}", m.attempts),
                    (None, None) => "pending".to_string(),
                };
                println!("#{} {} to {} \"{}\" ({state})", m.id, m.created, m.recipient, m.subject);
                if bodies {
                    println!("{}", m.body);
                }
            }
            Ok(())
        }
    };
    app.store().close().await;
    result
}
