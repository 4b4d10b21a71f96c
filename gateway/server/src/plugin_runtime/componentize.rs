//! Turning plugin bytes into a component the host trusts (upload checks 1–4):
//! size, hash, `wasmparser` validation, then for a core module (the
//! `wasm32-unknown-unknown` build) the host's **own** world metadata and
//! `wit_component::ComponentEncoder`. A component is taken as is.
//!
//! Any `component-type*` section a module brought is stripped first, so a plugin can
//! never describe its own interface: the host's `wit/` always does. Which of its
//! versions is chosen by the module's export names alone (`...@0.3.0#decide`,
//! `...@0.2.0#decide`, `...@0.1.0#classify`, or a transform's
//! `hookgate:transform/transform@0.1.0#transform`), since the module's own
//! metadata is not trusted.

use sha2::{Digest, Sha256};
use wit_component::{ComponentEncoder, StringEncoding};

use super::PluginError;
use super::versions::WitVersion;

/// The prefix of the custom sections carrying component metadata.
const COMPONENT_TYPE_PREFIX: &str = "component-type";

/// Plugin bytes checked and made a component.
#[derive(Debug, Clone)]
pub(crate) struct PreparedPlugin {
    /// The component to compile.
    pub component: Vec<u8>,
    /// SHA-256 of the bytes as given, hex.
    pub sha256: String,
    /// Whether the bytes were a core module that the host turned into a component.
    pub componentized: bool,
}

/// Checks plugin bytes and turns a core module into a component of the `plugin`
/// world of the version its exports name.
///
/// # Errors
/// `TooLarge` past `max_bytes`, `Invalid` if `wasmparser` refuses them, and
/// `Componentize` if a core module does not fit the world (for example it lacks
/// the exports of every version), `Imports` if it imports anything (WASI).
pub(crate) fn prepare(bytes: &[u8], max_bytes: usize) -> Result<PreparedPlugin, PluginError> {
    if bytes.len() > max_bytes {
        return Err(PluginError::TooLarge {
            size: bytes.len(),
            limit: max_bytes,
        });
    }
    let sha256 = hex::encode(Sha256::digest(bytes));
    wasmparser::Validator::new()
        .validate_all(bytes)
        .map_err(|e| PluginError::Invalid(e.to_string()))?;
    if wasmparser::Parser::is_component(bytes) {
        return Ok(PreparedPlugin {
            component: bytes.to_vec(),
            sha256,
            componentized: false,
        });
    }
    let imports = core_imports(bytes)?;
    if !imports.is_empty() {
        return Err(PluginError::Imports(imports.join(", ")));
    }
    let component = componentize(bytes)?;
    Ok(PreparedPlugin {
        component,
        sha256,
        componentized: true,
    })
}

/// Makes a component of a core module with the host's world metadata, of the
/// version the module's exports name.
///
/// # Errors
/// `Componentize` if the module exports no version's functions, or does not
/// fit the world.
pub(crate) fn componentize(module: &[u8]) -> Result<Vec<u8>, PluginError> {
    let err = |e: anyhow::Error| PluginError::Componentize(format!("{e:#}"));
    let version = core_version(module)?;
    let mut module = strip_component_types(module)?;
    // wit-component does not re-export wit-parser; its metadata type carries a Resolve.
    let mut resolve = wit_component::metadata::Bindgen::default().resolve;
    let (file, text) = version.wit_file();
    let package = resolve.push_str(file, text).map_err(err)?;
    let world = resolve
        .select_world(&[package], Some(version.world_name()))
        .map_err(err)?;
    wit_component::embed_component_metadata(&mut module, &resolve, world, StringEncoding::UTF8)
        .map_err(err)?;
    ComponentEncoder::default()
        .validate(true)
        .module(&module)
        .map_err(err)?
        .encode()
        .map_err(err)
}

/// The WIT version (a policy's or a transform's) a core module's export names mark.
///
/// # Errors
/// `Componentize`, naming what each accepted version exports, when it marks none.
fn core_version(module: &[u8]) -> Result<WitVersion, PluginError> {
    let mut names = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(module) {
        if let wasmparser::Payload::ExportSection(section) =
            payload.map_err(|e| PluginError::Invalid(e.to_string()))?
        {
            for export in section {
                let export = export.map_err(|e| PluginError::Invalid(e.to_string()))?;
                names.push(export.name);
            }
        }
    }
    WitVersion::of_core_exports(&names).ok_or_else(|| {
        let accepted: Vec<String> = WitVersion::ALL
            .iter()
            .map(|v| format!("`{}` ({})", v.core_export(), v.package()))
            .collect();
        PluginError::Componentize(format!("it exports neither {}", accepted.join(" nor ")))
    })
}

/// The module without its `component-type*` custom sections.
fn strip_component_types(module: &[u8]) -> Result<Vec<u8>, PluginError> {
    let mut out = Vec::with_capacity(module.len());
    for payload in wasmparser::Parser::new(0).parse_all(module) {
        let payload = payload.map_err(|e| PluginError::Invalid(e.to_string()))?;
        match &payload {
            wasmparser::Payload::Version { range, .. } => {
                out.extend_from_slice(&module[range.clone()])
            }
            wasmparser::Payload::CustomSection(c)
                if c.name().starts_with(COMPONENT_TYPE_PREFIX) => {}
            _ => {
                if let Some((id, range)) = payload.as_section() {
                    out.push(id);
                    write_leb128(&mut out, range.len());
                    out.extend_from_slice(&module[range]);
                }
            }
        }
    }
    Ok(out)
}

/// A core module's imports as `module::name`. A plugin may import nothing, so a
/// `wasm32-wasip1` build (or any other import) is named here rather than left to
/// the encoder's less direct message.
fn core_imports(module: &[u8]) -> Result<Vec<String>, PluginError> {
    let mut out = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(module) {
        if let wasmparser::Payload::ImportSection(section) =
            payload.map_err(|e| PluginError::Invalid(e.to_string()))?
        {
            for import in section.into_imports() {
                let import = import.map_err(|e| PluginError::Invalid(e.to_string()))?;
                out.push(format!("{}::{}", import.module, import.name));
            }
        }
    }
    Ok(out)
}

/// The largest initial linear memory of any core module in `bytes` (a module or
/// a component), in bytes; `None` if they do not parse.
pub(crate) fn largest_initial_memory(bytes: &[u8]) -> Option<u64> {
    let mut largest = 0u64;
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        if let wasmparser::Payload::MemorySection(section) = payload.ok()? {
            for memory in section {
                let memory = memory.ok()?;
                let page = 1u64 << memory.page_size_log2.unwrap_or(16);
                largest = largest.max(memory.initial.saturating_mul(page));
            }
        }
    }
    Some(largest)
}

/// Appends `n` as unsigned LEB128.
fn write_leb128(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leb128_matches_the_spec_examples() {
        for (n, want) in [
            (0, vec![0]),
            (127, vec![0x7f]),
            (128, vec![0x80, 1]),
            (624_485, vec![0xe5, 0x8e, 0x26]),
        ] {
            let mut out = Vec::new();
            write_leb128(&mut out, n);
            assert_eq!(out, want, "{n}");
        }
    }

    #[test]
    fn stripping_keeps_everything_but_component_types() {
        let module = wat::parse_str(
            r#"(module (func (export "f") (result i32) i32.const 7) (@custom "component-type:evil" "garbage") (@custom "name-ish" "keep"))"#,
        )
        .unwrap();
        let stripped = strip_component_types(&module).unwrap();
        wasmparser::Validator::new()
            .validate_all(&stripped)
            .unwrap();
        let names: Vec<String> = wasmparser::Parser::new(0)
            .parse_all(&stripped)
            .filter_map(|p| match p.unwrap() {
                wasmparser::Payload::CustomSection(c) => Some(c.name().to_owned()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["name-ish"]);
        assert!(stripped.len() < module.len());
    }

    #[test]
    fn refuses_oversize_and_invalid_bytes() {
        assert!(matches!(
            prepare(&[0; 10], 5),
            Err(PluginError::TooLarge { size: 10, limit: 5 })
        ));
        assert!(matches!(
            prepare(b"\0asm\x01\0\0\0\xff", 100),
            Err(PluginError::Invalid(_))
        ));
    }
}
