//! A JSON object's top-level fields, each value kept as written: a transform
//! that renames, drops or adds fields reads and writes a payload this way
//! without parsing the values or escaping them again, which for a payload of
//! long strings is most of the work of `serde_json::Value`.

use core::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The fields of a JSON object, in their order, each value as written.
pub(crate) struct ObjectFields<'a>(pub(crate) Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for ObjectFields<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(FieldsVisitor)
    }
}

struct FieldsVisitor;

impl<'de> Visitor<'de> for FieldsVisitor {
    type Value = ObjectFields<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(8));
        while let Some(name) = map.next_key::<String>()? {
            fields.push((name, map.next_value::<&'de RawValue>()?));
        }
        Ok(ObjectFields(fields))
    }
}

/// `fields` as one JSON object, in their order.
pub(crate) fn encode<K: AsRef<str>>(fields: &[(K, &RawValue)]) -> Vec<u8> {
    let size: usize = fields
        .iter()
        .map(|(name, value)| name.as_ref().len() + value.get().len() + 4)
        .sum();
    let mut out = Vec::with_capacity(size + 2);
    out.push(b'{');
    for (i, (name, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // A string always serialises.
        let name = serde_json::to_string(name.as_ref()).unwrap_or_default();
        out.extend_from_slice(name.as_bytes());
        out.push(b':');
        out.extend_from_slice(value.get().as_bytes());
    }
    out.push(b'}');
    out
}
