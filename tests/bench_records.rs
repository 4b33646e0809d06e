//! The bench's JSON records (`examples/common/record.rs`): strings that JSON must escape
//! survive a write and a read unchanged, and every record committed under
//! `examples/results/` parses. No GPU needed.

#[allow(dead_code)]
#[path = "../examples/common/record.rs"]
mod record;

use std::path::{Path, PathBuf};

use record::BenchRecord;

fn sample(config: &str, adapter: &str) -> BenchRecord {
    BenchRecord {
        backend: "coopmat".into(),
        dtype: "f16".into(),
        m: 64,
        n: 4096,
        k: 4096,
        batch: 1,
        b_layout: "row".into(),
        config: config.into(),
        timing: "wall-clock".into(),
        median_ms: Some(0.125),
        host_submit_ms: Some(0.0123),
        gflops: Some(17179.869184),
        max_rel_error: Some(1.5e-4),
        verified: true,
        reference_tflops: Some(62.7),
        ratio: Some(0.274),
        ratio_to_cpu: None,
        adapter: adapter.into(),
        extra: Default::default(),
    }
}

#[test]
fn awkward_strings_round_trip() {
    let awkward = [
        ("plain", "NVIDIA H100 80GB HBM3"),
        ("say \"fast\"", "llvmpipe (LLVM 15.0.6, 256 bits)"),
        ("C:\\cache\\dir\\", "back\\slash \\\" quote"),
        (
            "tab\there\nnewline\r\u{0}nul\u{1f}unit\u{7f}del",
            "control \u{8}\u{c}",
        ),
        ("ünïcödé ✓ 行列 🚀", "Radeon™ «RX» – 7900"),
        ("", "</script><!-- -->"),
    ];
    let mut records: Vec<BenchRecord> = awkward
        .iter()
        .map(|(config, adapter)| sample(config, adapter))
        .collect();
    records[1].extra.insert(
        "sweep_label".into(),
        serde_json::Value::String("128x128x32x16 \"quoted\"".into()),
    );
    records[2]
        .extra
        .insert("override".into(), serde_json::Value::Null);
    records[3].median_ms = None;
    records[3].gflops = record::finite(f64::NAN);
    records[3].max_rel_error = record::finite(f64::INFINITY);
    let text = record::to_json(&records).expect("records serialise");
    // One record per line, so that committed results diff line by line.
    assert_eq!(text.lines().count(), records.len() + 2, "{text}");
    // Valid JSON for any reader, not only this one.
    let generic: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(generic.as_array().map(Vec::len), Some(records.len()));
    assert_eq!(generic[3]["gflops"], serde_json::Value::Null);
    let parsed = record::from_json(&text).expect("records parse back");
    assert_eq!(parsed, records);

    let path = std::env::temp_dir().join(format!("coopgemm-records-{}.json", std::process::id()));
    record::write(&path, &records).expect("records written");
    let read = record::read(&path).expect("records read");
    let _ = std::fs::remove_file(&path);
    assert_eq!(read, records);
}

#[test]
fn empty_and_missing_optional_fields() {
    assert_eq!(record::to_json(&[]).unwrap(), "[]\n");
    assert!(record::from_json("[]").unwrap().is_empty());
    // Records written before `host_submit_ms` existed lack it.
    let old = r#"[{"backend": "simt", "dtype": "f32", "m": 1, "n": 2, "k": 3, "batch": 1, "b_layout": "row", "config": "c", "timing": "gpu-timestamps", "median_ms": 1, "gflops": 2.5, "max_rel_error": 0, "verified": false, "reference_tflops": null, "ratio": null, "ratio_to_cpu": null, "adapter": "a"}]"#;
    let parsed = record::from_json(old).unwrap();
    assert_eq!(parsed[0].host_submit_ms, None);
    assert_eq!(parsed[0].median_ms, Some(1.0));
    assert!(parsed[0].extra.is_empty());
    // A record missing a field it must have is an error, not a default.
    assert!(record::from_json(r#"[{"backend": "simt"}]"#).is_err());
}

fn json_files(folder: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(folder).expect("results folder") {
        let path = entry.expect("folder entry").path();
        if path.is_dir() {
            json_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "json") {
            found.push(path);
        }
    }
}

#[test]
fn committed_records_parse() {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/results");
    let mut files = Vec::new();
    json_files(&results, &mut files);
    assert!(!files.is_empty(), "no records under {}", results.display());
    let (mut count, mut networks) = (0, 0);
    for file in &files {
        // examples/networks.rs's records (one per network, rows and kernel: a `net` field)
        // are JSON arrays of another shape; they must parse as JSON.
        let text = std::fs::read_to_string(file).expect("read records");
        let value: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        if value.get(0).and_then(|r| r.get("net")).is_some() {
            networks += value.as_array().map_or(0, Vec::len);
            continue;
        }
        let records = record::read(file).unwrap_or_else(|e| panic!("{e}"));
        // Written and read again, each record is unchanged (extra fields included).
        let again = record::from_json(&record::to_json(&records).unwrap()).unwrap();
        assert_eq!(again, records, "{}", file.display());
        count += records.len();
    }
    println!(
        "{count} bench records and {networks} network records in {} files parse",
        files.len()
    );
}
