//! The plugin records' own logic (rollback target, pruning) and that versions
//! stored by older builds still read.

use crate::store::*;

fn record(versions: &[u32], active: u32) -> PluginRecord {
    PluginRecord {
        tenant_id: "t".into(),
        name: "p".into(),
        versions: versions
            .iter()
            .map(|&version| PluginVersionRecord {
                version,
                sha256: String::new(),
                size: 0,
                created_at_ms: 0,
                disabled: false,
                checks: None,
            })
            .collect(),
        active,
    }
}

#[test]
fn a_version_stored_by_an_older_build_reads_with_no_checks() {
    let old = br#"{"version":3,"sha256":"ab","size":7,"created_at_ms":9,"disabled":true}"#;
    let v: PluginVersionRecord = serde_json::from_slice(old).expect("decodes");
    assert_eq!(
        (v.version, v.size, v.disabled, v.checks),
        (3, 7, true, None)
    );
}

#[test]
fn rollback_moves_to_the_version_listed_before_the_active_one() {
    assert_eq!(record(&[1, 2, 3], 3).previous(), Some(2));
    assert_eq!(record(&[1, 2, 3], 2).previous(), Some(1));
    assert_eq!(record(&[1, 2, 3], 1).previous(), None);
    assert_eq!(record(&[1, 2, 3], 9).previous(), None);
}

#[test]
fn growth_that_never_shrinks_prunes_old_versions_but_not_active_or_pinned() {
    let rec = record(&[1, 2, 3, 4, 5, 6], 6);
    assert_eq!(rec.prunable(3, &[]), [1, 2, 3]);
    assert_eq!(rec.prunable(3, &[2]), [1, 3]);
    assert!(rec.prunable(6, &[]).is_empty());
    assert!(rec.prunable(10, &[]).is_empty());
    // Rolled back to 2: the active version stays however old it is.
    assert_eq!(record(&[1, 2, 3, 4, 5, 6], 2).prunable(2, &[]), [1, 3, 4]);
}
