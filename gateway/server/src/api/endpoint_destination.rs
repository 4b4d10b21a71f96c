//! An endpoint's destination in the API: `{"type": "http"}` (the default, to
//! `url`) or a broker kind with its settings (docs/destinations.md). A broker's
//! host passes the address guard as an HTTP URL's does; its credentials are
//! never shown again, and `********` given back keeps the stored ones.

use serde_json::Value;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use super::AppContext;
use super::error::ApiError;
use crate::address_guard::UrlError;
use crate::destination::{
    self, BrokerDestination, Credentials, DestinationKind, KinesisSettings, NatsSettings,
    RabbitmqSettings, RedisSettings, SnsSettings, SqsSettings,
};
use crate::store::EndpointRecord;

/// The API schema of a destination: one flat object per kind, told apart by
/// `type`, each holding its kind's settings. Only described. (Derived, the
/// kinds would be `allOf`s of the settings, which refuse unknown fields, and
/// the tag: no object could match, and client generators cannot read them.)
pub(super) enum DestinationSchema {}

/// `schema` (an object's) with a required `type` of `kind`, and `about`.
fn tagged(kind: &str, about: &str, schema: RefOr<Schema>) -> RefOr<Schema> {
    let mut v = serde_json::to_value(schema).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("description".into(), about.into());
        let props = o
            .entry("properties")
            .or_insert_with(|| serde_json::json!({}));
        if let Some(p) = props.as_object_mut() {
            p.insert(
                "type".into(),
                serde_json::json!({"type": "string", "enum": [kind]}),
            );
        }
        let required = o.entry("required").or_insert_with(|| serde_json::json!([]));
        if let Some(r) = required.as_array_mut() {
            r.insert(0, "type".into());
        }
    }
    serde_json::from_value(v).unwrap_or_else(|_| RefOr::T(Schema::default()))
}

impl PartialSchema for DestinationSchema {
    fn schema() -> RefOr<Schema> {
        let http = ObjectBuilder::new()
            .property(
                "type",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["http"])),
            )
            .required("type")
            .additional_properties(Some(AdditionalProperties::FreeForm(false)))
            .description(Some(
                "A POST to the endpoint's `url`; delivered means a 2xx. Takes nothing but its type.",
            ))
            .into();
        let kinds = [
            http,
            tagged(
                "rabbitmq",
                "RabbitMQ (AMQP 0-9-1), with publisher confirms and `mandatory`.",
                RabbitmqSettings::schema(),
            ),
            tagged(
                "nats",
                "A NATS JetStream subject; delivered means the stream's `PubAck`.",
                NatsSettings::schema(),
            ),
            tagged(
                "redis",
                "A Redis stream; delivered means `XADD` answered an id.",
                RedisSettings::schema(),
            ),
            tagged(
                "sqs",
                "An Amazon SQS queue; delivered means `SendMessage` answered a message id.",
                SqsSettings::schema(),
            ),
            tagged(
                "sns",
                "An Amazon SNS topic; delivered means `Publish` answered a message id.",
                SnsSettings::schema(),
            ),
            tagged(
                "kinesis",
                "An Amazon Kinesis data stream; delivered means `PutRecord` answered a sequence number.",
                KinesisSettings::schema(),
            ),
        ];
        let mut one_of = OneOfBuilder::new().description(Some(
            "Where an endpoint's attempts go, by `type` (docs/destinations.md)",
        ));
        for kind in kinds {
            one_of = one_of.item(kind);
        }
        one_of.into()
    }
}

impl ToSchema for DestinationSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        "Destination".into()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push(("Credentials".into(), Credentials::schema()));
    }
}

/// The view of `ep`'s destination, every secret masked.
pub(super) fn shown(ep: &EndpointRecord) -> Value {
    match &ep.destination {
        Some(d) => serde_json::to_value(d.masked()).unwrap_or(Value::Null),
        None => serde_json::json!({"type": DestinationKind::Http.as_str()}),
    }
}

/// The endpoint's URL and broker destination from what was given: `url` for
/// `http`, else the destination's own address. `ep` is the endpoint as stored
/// (a new one's is blank).
///
/// # Errors
/// 422 `validation_failed` naming the field, or 422 `url_blocked`.
pub(super) async fn checked(
    ctx: &AppContext,
    url: Option<&str>,
    given: Option<&Value>,
    ep: &EndpointRecord,
) -> Result<(String, Option<BrokerDestination>), ApiError> {
    let http_only = given.is_none_or(|v| {
        v.get("type").and_then(Value::as_str) == Some("http")
            && v.as_object().is_some_and(|o| o.len() == 1)
    });
    if http_only {
        let url = super::endpoint_input::checked_url(ctx, url).await?;
        return Ok((url.to_string(), None));
    }
    let given = given.unwrap_or(&Value::Null);
    if given.get("type").and_then(Value::as_str) == Some("http") {
        return Err(ApiError::validation(
            "destination",
            "an http destination takes nothing but its type; the endpoint's url is where it posts",
        ));
    }
    if !given.is_object() {
        return Err(ApiError::validation(
            "destination",
            "destination must be an object with a type",
        ));
    }
    let named = &ctx.config.destinations.credentials;
    let (mut destination, parsed) = destination::parse(given, ctx.config.limits.url_len, named)
        .map_err(|e| ApiError::validation(e.field, e.message))?;
    let stored = ep
        .destination
        .as_ref()
        .and_then(BrokerDestination::credentials);
    if let Some(c) = destination.credentials() {
        let kept = stored.map(Credentials::secrets);
        for (i, (field, given)) in c.secrets().into_iter().enumerate() {
            let kept = kept.as_ref().and_then(|k| k[i].1);
            if given.map(String::as_str) == Some(destination::MASK) && kept.is_none() {
                return Err(ApiError::validation(
                    format!("destination.credentials.{field}"),
                    format!(
                        "{} keeps a stored {field}, and this endpoint has none",
                        destination::MASK
                    ),
                ));
            }
        }
    }
    let credentials = destination.credentials_mut();
    *credentials = credentials.take().map(|c| c.unmasked_from(stored));
    // The url a view showed (the broker's, or the stored HTTP one a change
    // starts from) may come back; another is a mistake.
    if let Some(u) = url
        && u != destination.url()
        && u != ep.url
    {
        return Err(ApiError::validation(
            "url",
            format!(
                "a {} endpoint's address is destination.url; leave url out",
                destination.kind().as_str()
            ),
        ));
    }
    ctx.guard
        .check_at_creation(&parsed)
        .await
        .map_err(|e| match e {
            UrlError::Blocked { .. } | UrlError::NotAllowListed { .. } => {
                ApiError::url_blocked(e.to_string())
            }
            other => ApiError::validation("destination.url", other.to_string()),
        })?;
    let url = destination.url().into_owned();
    Ok((url, Some(destination)))
}
