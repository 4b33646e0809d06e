//! Pre-packed B: `Context::pack_b` copies B into column panels for the chosen kernel; the
//! packed copy holds exactly B's elements (zeros in the padding), and GEMMs that read it
//! match the reference computed from the original B, on every backend.

mod common;

use coopgemm::testing::Reference;
use coopgemm::{BackendKind, Element, Gemm, GemmBuffers, GemmTypes, MatrixLayout, Order, PackedB};

use common::cases::{packing_cases, Rng, PACKING_TYPES};
use common::{backend_for, backend_tests};

/// Packs B, checks the packed elements, runs the GEMM on the packed B and compares with the
/// reference of the unpacked GEMM.
fn check_packed<I: Element, O: Element>(
    context: &coopgemm::Context,
    gemm: &Gemm,
    seed: u64,
) -> Result<PackedB, String> {
    let describe = || format!("seed {seed}, {gemm:?}");
    let resolved = gemm.resolve().map_err(|e| e.to_string())?;
    let mut rng = Rng::new(seed);
    let a: Vec<I> = rng.values(resolved.a.required_elements().max(1) as usize);
    let b: Vec<I> = rng.values(resolved.b.required_elements().max(1) as usize);
    let c: Vec<O> = rng.values(resolved.c.required_elements().max(1) as usize);
    let bias: Option<Vec<f32>> = resolved
        .bias
        .map(|bias| rng.values(bias.end_index() as usize));
    let upload = |label, data: &[I]| context.upload(label, data).map_err(|e| e.to_string());
    let (a_buffer, b_buffer) = (upload("A", &a)?, upload("B", &b)?);
    let c_buffer = context.upload("C", &c).map_err(|e| e.to_string())?;
    let bias_buffer = match &bias {
        Some(values) => Some(context.upload("bias", values).map_err(|e| e.to_string())?),
        None => None,
    };
    let packed = context
        .pack_b(gemm, &b_buffer)
        .map_err(|e| format!("{}: pack: {e}", describe()))?;

    // The packed copy: every element of B where the panel layout says, zeros elsewhere.
    let packed_gemm = packed.gemm(gemm);
    let packed_resolved = packed_gemm.resolve().map_err(|e| e.to_string())?;
    let packed_elements = (packed.buffer().size() / I::DTYPE.size_bytes()) as usize;
    let packed_host: Vec<I> =
        pollster::block_on(context.download(packed.buffer(), packed_elements))
            .map_err(|e| e.to_string())?;
    let mut expected_packed = vec![0.0f64; packed_elements];
    for batch in 0..gemm.batch {
        for row in 0..gemm.k {
            for col in 0..gemm.n {
                let value = b[resolved.b.index(batch, row, col) as usize].to_f64();
                expected_packed[packed_resolved.b.index(batch, row, col) as usize] = value;
            }
        }
    }
    for (index, (got, want)) in packed_host.iter().zip(&expected_packed).enumerate() {
        if got.to_f64() != *want {
            return Err(format!(
                "{}: packed element {index} is {} but should be {want}",
                describe(),
                got.to_f64()
            ));
        }
    }

    let mut buffers = GemmBuffers::new(&a_buffer, packed.buffer(), &c_buffer);
    buffers.bias = bias_buffer.as_ref();
    context
        .run(&packed_gemm, &buffers)
        .map_err(|e| format!("{}: run: {e}", describe()))?;
    let result: Vec<O> =
        pollster::block_on(context.download(&c_buffer, c.len())).map_err(|e| e.to_string())?;
    let reference = Reference::compute_with_bias(&resolved, &a, &b, &c, bias.as_deref())
        .map_err(|e| e.to_string())?;
    let comparison = reference.compare(&result);
    if !comparison.passed() {
        return Err(format!(
            "{}: {} of {} wrong, first {:?}",
            describe(),
            comparison.mismatches,
            comparison.checked,
            comparison.first_mismatch
        ));
    }
    Ok(packed)
}

fn check_types(
    types: GemmTypes,
    context: &coopgemm::Context,
    gemm: &Gemm,
    seed: u64,
) -> Result<PackedB, String> {
    match types {
        GemmTypes::F32 => check_packed::<f32, f32>(context, gemm, seed),
        GemmTypes::F16_F32 => check_packed::<half::f16, f32>(context, gemm, seed),
        GemmTypes::BF16_F32 => check_packed::<half::bf16, f32>(context, gemm, seed),
        GemmTypes::I8_I32 => check_packed::<i8, i32>(context, gemm, seed),
        other => Err(format!("no host types for {other}")),
    }
}

backend_tests! {
    fn packed_b_matches_unpacked_on_every_backend(kind) {
        let mut failures = Vec::new();
        let mut ran = 0;
        for types in PACKING_TYPES {
            if let Some(context) = backend_for(kind, types) {
                for (gemm, seed) in packing_cases(types) {
                    let k = gemm.k;
                    ran += 1;
                    match check_types(types, &context, &gemm, seed) {
                        Ok(packed) => {
                            // Column panels of the packed width, or (coopmat2, 8-bit inputs)
                            // column-major with each column's K padded to 16 bytes.
                            let layout = packed.layout();
                            let k_bytes = types.input.size_bytes();
                            let panels = matches!(layout.order, Order::ColumnPanels { width } if width == packed.width());
                            let k_contiguous = layout.order == Order::ColumnMajor
                                && packed.width() == 1
                                && layout.leading_dimension.is_some_and(|ld| {
                                    ld >= u64::from(k) && (ld * k_bytes).is_multiple_of(16)
                                });
                            assert!(
                                panels || k_contiguous,
                                "{kind} {types}: packed as {layout:?}"
                            );
                        }
                        Err(message) => failures.push(format!("{kind} {types}: {message}")),
                    }
                }
                eprintln!("{types}: packed B on {kind}");
            }
        }
        // SIMT runs every type; another backend may run none of them here.
        if kind == BackendKind::Simt {
            common::assert_all_passed(ran, &failures);
        } else {
            common::assert_none_failed(&failures);
        }
    }
}

/// A packed B only fits kernels of its panel width; a GEMM whose B is already packed cannot be
/// packed again, and panels are rejected for A and C.
#[test]
fn packed_layout_errors() {
    let context = common::context();
    let panels = MatrixLayout {
        order: Order::ColumnPanels { width: 64 },
        ..Default::default()
    };
    for gemm in [Gemm::new(8, 8, 8).a(panels), Gemm::new(8, 8, 8).c(panels)] {
        assert!(matches!(
            gemm.resolve(),
            Err(coopgemm::Error::PanelsOnlyForB { .. })
        ));
    }
    let odd_width = Gemm::new(8, 8, 8).b(MatrixLayout {
        order: Order::ColumnPanels { width: 48 },
        ..Default::default()
    });
    assert!(matches!(
        context.select(&odd_width),
        Err(coopgemm::Error::NoBackend { .. })
    ));
    let b = context.upload("B", &[0.0f32; 64 * 8]).unwrap();
    assert!(context.pack_b(&Gemm::new(8, 8, 8).b(panels), &b).is_err());
}
