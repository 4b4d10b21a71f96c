//! `plugin list|bind|unbind|delete` against a real gateway, with a real plugin: the
//! end-to-end suite's WAT fixture `tryagain` (tests/fixtures/plugins/), assembled
//! here, uploaded twice and rolled back, so the list has something to show.

use std::path::{Path, PathBuf};

use crate::common::{ADMIN, CliClient, Gateway};

/// The shared WAT fixtures; `tests/src/plugin_files.rs` wraps them the same way.
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/plugins");

/// The fixture `NAME.wat` with the shared prelude, as a module file in `dir`.
fn fixture_module(dir: &Path, name: &str) -> PathBuf {
    let read = |file: &str| {
        let path = format!("{FIXTURES}/{file}");
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let text = format!(
        "(module\n{}\n{}\n)",
        read("prelude.wat"),
        read(&format!("{name}.wat"))
    );
    let path = dir.join(format!("{name}.wasm"));
    std::fs::write(&path, wat::parse_str(text).unwrap()).unwrap();
    path
}

/// A table line's cells: columns are two or more spaces apart.
fn cells(line: &str) -> Vec<&str> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

#[test]
fn plugins_are_listed_bound_unbound_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::spawn(dir.path(), &[]);
    let acme = CliClient::new(&gw.base, ADMIN).create_tenant("acme");
    assert_eq!(acme.ok("plugin list --tenant acme").stdout, "no plugins\n");
    let wasm = fixture_module(dir.path(), "tryagain");
    let upload = format!("plugin upload --tenant acme retry {}", wasm.display());
    assert!(
        acme.ok(&upload)
            .stdout
            .starts_with("uploaded plugin retry version 1 ")
    );
    assert!(
        acme.ok(&upload)
            .stdout
            .starts_with("uploaded plugin retry version 2 ")
    );
    acme.ok("plugin rollback --tenant acme retry");

    // The list: a table of what a plugin object holds, and the API's JSON as it is.
    let listed = acme.ok("plugin list --tenant acme --json").json();
    let plugin = &listed["data"][0];
    assert_eq!(plugin["active_version"], 1, "{listed}");
    let newest = plugin["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["version"] == 2)
        .unwrap()["created_at"]
        .as_str()
        .unwrap();
    let table = acme.ok("plugin list --tenant acme");
    let header = cells(table.line("NAME"));
    let columns = [
        "NAME",
        "ACTIVE VERSION",
        "VERSIONS KEPT",
        "SOURCE",
        "LAST UPLOAD",
    ];
    assert_eq!(header, columns, "{}", table.stdout);
    let row = cells(table.line("retry "));
    assert_eq!(
        row,
        ["retry", "1", "1,2", "upload", newest],
        "{}",
        table.stdout
    );
    assert_eq!(table.stdout.lines().count(), 2, "{}", table.stdout);

    // Bind: by name, then pinned to a version; the endpoint's binding is printed.
    let ep = acme.create_endpoint("http://127.0.0.1:9/p", "");
    let bound = acme.ok(&format!("plugin bind --tenant acme retry --endpoint {ep}"));
    let expected = format!(
        "endpoint {ep} is bound to plugin retry: it decides retries before the policy does\n"
    );
    assert_eq!(bound.stdout, expected);
    let show = format!("endpoints show --tenant acme {ep}");
    assert_eq!(acme.ok(&format!("{show} --json")).json()["plugin"], "retry");
    let pinned = format!("plugin bind --tenant acme retry@2 --endpoint {ep} --json");
    let pinned = acme.ok(&pinned).json();
    assert_eq!(pinned["id"], ep.as_str());
    assert_eq!(pinned["plugin"], "retry@2");
    assert!(acme.ok(&show).line("plugin:").ends_with(" retry@2"));
    acme.fails(
        &format!("plugin bind --tenant acme nope --endpoint {ep}"),
        1,
        "invalid plugin: no plugin named \"nope\"",
    );
    acme.fails(
        "plugin bind --tenant acme retry --endpoint ep_nope",
        1,
        "endpoint not found",
    );
    acme.fails(
        "plugin bind --tenant acme retry",
        2,
        "--endpoint <ENDPOINT_ID>",
    );

    // Delete is refused while bound, in one line naming the endpoint and the way out.
    let refusal = format!(
        "conflict: plugin \"retry\" is bound by endpoint(s) {ep}; unbind it first; \
         with this CLI, run plugin unbind --endpoint ID for each (conflict)"
    );
    acme.fails("plugin delete --tenant acme retry", 1, &refusal);
    assert_eq!(
        acme.ok("plugin list --tenant acme --json").json()["data"][0]["name"],
        "retry"
    );

    // Unbind: the field goes back to null, and the endpoint says so.
    let unbound = acme.ok(&format!("plugin unbind --tenant acme --endpoint {ep}"));
    let expected = format!("endpoint {ep} is bound to no plugin: its policy decides retries\n");
    assert_eq!(unbound.stdout, expected);
    assert!(acme.ok(&format!("{show} --json")).json()["plugin"].is_null());
    acme.fails(
        "plugin unbind --tenant acme --endpoint ep_nope",
        1,
        "endpoint not found",
    );

    // Now the delete goes through, and a second one finds nothing.
    let deleted = acme.ok("plugin delete --tenant acme retry");
    assert_eq!(
        deleted.stdout,
        "deleted plugin retry and every version of it\n"
    );
    assert_eq!(acme.ok("plugin list --tenant acme").stdout, "no plugins\n");
    acme.fails("plugin delete --tenant acme retry", 1, "plugin not found");
}
