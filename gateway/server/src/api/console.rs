//! The web console at `/console/`: static files built into the binary (plain
//! ES modules and CSS, no build step), served with a strict Content Security
//! Policy. The console is a client of API v1 like any other; it adds no route
//! of its own beyond its files.

use axum::Router;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use crate::context::AppContext;
use crate::ids::TenantId;

/// The console's files: name, content type, bytes.
macro_rules! console_files {
    ($(($name:literal, $type:expr)),* $(,)?) => {
        &[$(($name, $type, include_bytes!(concat!("../../console/", $name)))),*]
    };
}

const HTML: &str = "text/html; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

pub(crate) const FILES: &[(&str, &str, &[u8])] = console_files![
    ("index.html", HTML),
    ("console.css", CSS),
    ("console.js", JS),
    ("api.js", JS),
    ("chart_axes.js", JS),
    ("charts.js", JS),
    ("json_text.js", JS),
    ("forms.js", JS),
    ("rows_editor.js", JS),
    ("filter_editor.js", JS),
    ("event_types.js", JS),
    ("event_type_picker.js", JS),
    ("destination_picker.js", JS),
    ("endpoint_form.js", JS),
    ("endpoint_stats.js", JS),
    ("overview.js", JS),
    ("endpoints.js", JS),
    ("endpoint.js", JS),
    ("deliveries.js", JS),
    ("attempt_item.js", JS),
    ("delivery.js", JS),
    ("dlq.js", JS),
    ("policies.js", JS),
    ("plugins.js", JS),
];

/// Only this origin, for everything (images also from `data:` URLs, as a
/// portal theme's logo comes); no inline code. Framing is added per config.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; \
     form-action 'self'";

/// The headers every console file is served with: the CSP with who may frame
/// it (`console.embed_origins`, else nobody), and `X-Frame-Options: DENY`
/// unless some origin may.
#[derive(Clone)]
struct FramePolicy {
    csp: HeaderValue,
    deny: bool,
}

impl FramePolicy {
    fn new(embed_origins: &[String]) -> Self {
        let ancestors = if embed_origins.is_empty() {
            "'none'".to_owned()
        } else {
            embed_origins.join(" ")
        };
        let csp = format!("{CSP}; frame-ancestors {ancestors}");
        Self {
            // The config checked each origin's characters at load.
            csp: HeaderValue::from_str(&csp)
                .unwrap_or_else(|_| HeaderValue::from_static("frame-ancestors 'none'")),
            deny: embed_origins.is_empty(),
        }
    }
}

/// `/console`, `/console/` and `/console/{file}`. The page may be framed by
/// `console.embed_origins` and, when its address names a tenant
/// (`/console/?tenant=acme`, as portal-session URLs do), that tenant's own.
pub(super) fn routes(embed_origins: &[String]) -> Router<Arc<AppContext>> {
    let files = FramePolicy::new(embed_origins);
    let config_origins = embed_origins.to_vec();
    Router::new()
        .route(
            "/console",
            get(|| async { Redirect::permanent("/console/") }),
        )
        .route(
            "/console/",
            get(
                move |State(ctx): State<Arc<AppContext>>, Query(page): Query<PageQuery>| {
                    let origins = config_origins.clone();
                    async move {
                        let mut origins = origins;
                        origins.extend(tenant_origins(&ctx, page.tenant.as_deref()).await);
                        file("index.html", &FramePolicy::new(&origins))
                    }
                },
            ),
        )
        .route(
            "/console/{file}",
            get(move |Path(name): Path<String>| async move { file(&name, &files) }),
        )
}

/// The console page's query: the tenant whose portal it opens, if any.
#[derive(Debug, Default, serde::Deserialize)]
struct PageQuery {
    tenant: Option<String>,
}

/// The origins tenant `named` lets frame its portal; none for no tenant, an
/// unknown one, or a store that cannot answer now (the page is then framed
/// as the config alone allows).
async fn tenant_origins(ctx: &AppContext, named: Option<&str>) -> Vec<String> {
    let Some(named) = named.filter(|n| crate::ids::is_valid_uid(n)) else {
        return Vec::new();
    };
    match ctx.store.find_tenant(&TenantId::from(named)).await {
        Ok(Some(t)) if t.is_live() => t.portal.embed_origins,
        _ => Vec::new(),
    }
}

/// One of the console's files with its headers, or 404.
fn file(name: &str, policy: &FramePolicy) -> Response {
    let Some((_, content_type, bytes)) = FILES.iter().find(|(n, _, _)| *n == name) else {
        return super::error::ApiError::not_found("console file").into_response();
    };
    let mut response = (StatusCode::OK, *bytes).into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, *content_type),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::CACHE_CONTROL, "no-cache"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    headers.insert(header::CONTENT_SECURITY_POLICY, policy.csp.clone());
    if policy.deny {
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_in_the_console_dir_is_served() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("console");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut served: Vec<String> = FILES.iter().map(|(n, _, _)| (*n).to_owned()).collect();
        served.sort();
        assert_eq!(on_disk, served, "add new console files to FILES");
    }

    #[test]
    fn only_the_configured_origins_may_frame_the_console() {
        let none = file("index.html", &FramePolicy::new(&[]));
        let csp = none.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap();
        assert!(csp.ends_with("frame-ancestors 'none'"), "{csp}");
        assert_eq!(none.headers()[header::X_FRAME_OPTIONS], "DENY");
        let origins = [
            "https://app.example.com".to_owned(),
            "http://127.0.0.1:8081".to_owned(),
        ];
        let some = file("console.js", &FramePolicy::new(&origins));
        let csp = some.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap();
        assert!(
            csp.ends_with("frame-ancestors https://app.example.com http://127.0.0.1:8081"),
            "{csp}"
        );
        assert!(
            csp.contains("script-src 'self';"),
            "the strict policy stays: {csp}"
        );
        assert!(!some.headers().contains_key(header::X_FRAME_OPTIONS));
    }
}
