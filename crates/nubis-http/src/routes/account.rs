//! The account itself: its network transfer.

use crate::json::Json;
use axum::extract::State;
use nubis_app::App;
use nubis_model::account::AccountTransfer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiState, Auth};

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new().routes(routes!(account_transfer))
}

#[utoipa::path(get, path = "/v4/account/transfer", tag = "account", responses((status = 200, body = AccountTransfer)))]
async fn account_transfer(State(app): State<App>, actor: Auth) -> ApiResult<Json<AccountTransfer>> {
    Ok(Json(app.account_transfer(&actor).await?))
}
