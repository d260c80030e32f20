//! The OpenAPI document, generated from the handlers' annotations, so it always describes what
//! the server does.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::error::ErrorEnvelope;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "nubis",
        description = "nubis: a self-hostable cloud control plane serving an API in the style of the Linode API v4.",
        license(name = "Apache-2.0"),
    ),
    components(schemas(ErrorEnvelope, nubis_model::FieldError)),
    modifiers(&Bearer),
    security(("bearer" = [])),
)]
pub struct ApiDoc;

struct Bearer;

impl Modify for Bearer {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    }
}
