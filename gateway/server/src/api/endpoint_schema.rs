//! Schema-only descriptions of the endpoint's input: an event type pattern, and
//! the merge patch derived from [`EndpointInput`]'s own schema so the two cannot
//! drift. Only described, never built.

use super::endpoint_input::EndpointInput;

/// The API schema of an event type pattern: `*`, an exact type, or a prefix ending
/// in `.*`. Only described, never built.
pub(super) enum EventTypePattern {}

impl utoipa::PartialSchema for EventTypePattern {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .pattern(Some(r"^(\*|[A-Za-z0-9._:-]+)$"))
            .description(Some(
                "`*` (every type), an exact type, or a prefix ending in `.*` (`order.*`)",
            ))
            .into()
    }
}

impl utoipa::ToSchema for EventTypePattern {}

/// The API schema of a payload filter (docs/payload-filters.md): an object of
/// field paths and `$and`, `$or`, `$not`. Only described, never built.
pub(super) enum PayloadFilterSchema {}

impl utoipa::PartialSchema for PayloadFilterSchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, SchemaType, Type};
        let value = ObjectBuilder::new()
            .schema_type(SchemaType::AnyValue)
            .description(Some(
                "a value to equal, or an operator object; under `$and`, `$or`, `$not`, filters",
            ))
            .build();
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .additional_properties(Some(AdditionalProperties::RefOr(value.into())))
            .description(Some(
                "Field paths (`data.amount`) with a value to equal or an operator object \
                 (`$eq`, `$neq`, `$in`, `$nin`, `$gt`, `$gte`, `$lt`, `$lte`, `$exists`, `$not`), \
                 and `$and`, `$or`, `$not` of filters; at most 4 096 bytes, 8 levels, 64 conditions",
            ))
            .into()
    }
}

impl utoipa::ToSchema for PayloadFilterSchema {}

/// The API schema of a record's metadata: at most 50 keys of 1 to 64 bytes,
/// values of at most 512 bytes, none with control characters (in a merge
/// patch, a `null` value removes its key). Only described, never built.
pub(super) enum MetadataSchema {}

impl utoipa::PartialSchema for MetadataSchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Type};
        let no_controls = r"^[^\u0000-\u001F\u007F-\u009F]*$";
        let key = ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(super::metadata::MAX_KEY_BYTES))
            .pattern(Some(no_controls))
            .build();
        let value = ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
                Type::String,
                Type::Null,
            ]))
            .max_length(Some(super::metadata::MAX_VALUE_BYTES))
            .pattern(Some(no_controls))
            .build();
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .max_properties(Some(super::metadata::MAX_KEYS))
            .property_names(Some(key))
            .additional_properties(Some(AdditionalProperties::RefOr(value.into())))
            .description(Some(
                "Strings the platform keeps on the record: at most 50 keys of 1 to 64 bytes, \
                 values of at most 512 bytes; in a merge patch a null value removes its key",
            ))
            .into()
    }
}

impl utoipa::ToSchema for MetadataSchema {}

/// The API schema of an endpoint merge patch: the fields of [`EndpointInput`] but
/// `secret`, none required, each nullable (`null` resets it). Only described, never built.
pub(super) enum EndpointPatch {}

impl utoipa::PartialSchema for EndpointPatch {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        merge_patch_schema::<EndpointInput>(
            "A JSON merge patch (RFC 7396) of the endpoint: absent fields stay, null resets one to its default",
            &["secret"],
            serde_json::json!({"description": "orders, v2", "rate_limit_per_s": null}),
        )
    }
}

/// The API schema of a JSON merge patch of `T`, an input object: its
/// properties but `skip`, none required, each nullable (`null` resets it).
pub(super) fn merge_patch_schema<T: utoipa::PartialSchema>(
    description: &str,
    skip: &[&str],
    example: serde_json::Value,
) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::schema::{AnyOfBuilder, ObjectBuilder, Schema, Type};
    let RefOr::T(Schema::Object(input)) = T::schema() else {
        unreachable!("a derived struct schema is an object")
    };
    let mut patch = ObjectBuilder::new()
        .description(Some(description))
        .additional_properties(Some(
            utoipa::openapi::schema::AdditionalProperties::FreeForm(false),
        ));
    for (name, property) in input.properties {
        if skip.contains(&name.as_str()) {
            continue;
        }
        // anyOf, not oneOf: a property that already allows null must not make
        // null match twice.
        let nullable = AnyOfBuilder::new()
            .item(property)
            .item(ObjectBuilder::new().schema_type(Type::Null));
        patch = patch.property(name, nullable);
    }
    patch.examples([example]).into()
}

impl utoipa::ToSchema for EndpointPatch {}
