//! Bad input gets its own typed error, with the offending values, before anything is
//! encoded: never a panic, a device error or silent garbage.

mod common;

use coopgemm::{
    BackendChoice, BackendKind, BiasAxis, Error, Gemm, GemmBuffers, GemmTypes, MatrixLayout,
    Operand, HOST_BUFFER_USAGES,
};

use common::{assert_no_validation_errors, context};

fn buffer(bytes: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    context().device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("test"),
        size: bytes,
        usage,
        mapped_at_creation: false,
    })
}

fn storage(bytes: u64) -> wgpu::Buffer {
    buffer(bytes, HOST_BUFFER_USAGES)
}

/// Runs `gemm` on buffers of the given sizes and returns the error.
fn run_error(gemm: &Gemm, a_bytes: u64, b_bytes: u64, c_bytes: u64) -> Error {
    let (a, b, c) = (storage(a_bytes), storage(b_bytes), storage(c_bytes));
    let error = context()
        .run(gemm, &GemmBuffers::new(&a, &b, &c))
        .expect_err("bad input must fail");
    assert_no_validation_errors();
    error
}

#[test]
fn leading_dimension_smaller_than_a_row_is_rejected_per_operand() {
    let cases = [
        (
            Gemm::new(4, 5, 6).a(MatrixLayout::row_major().leading_dimension(5)),
            Operand::A,
            5,
            6,
        ),
        (
            Gemm::new(4, 5, 6).a(MatrixLayout::column_major().leading_dimension(3)),
            Operand::A,
            3,
            4,
        ),
        (
            Gemm::new(4, 5, 6).b(MatrixLayout::row_major().leading_dimension(4)),
            Operand::B,
            4,
            5,
        ),
        (
            Gemm::new(4, 5, 6).c(MatrixLayout::column_major().leading_dimension(2)),
            Operand::C,
            2,
            4,
        ),
    ];
    for (gemm, operand, leading_dimension, minimum) in cases {
        assert_eq!(
            gemm.resolve(),
            Err(Error::LeadingDimensionTooSmall {
                operand,
                leading_dimension,
                minimum
            })
        );
        assert_eq!(
            run_error(&gemm, 4096, 4096, 4096),
            Error::LeadingDimensionTooSmall {
                operand,
                leading_dimension,
                minimum
            }
        );
    }
}

#[test]
fn buffers_too_small_for_the_extent_are_rejected() {
    // 4x5x6 f32: A needs 24 elements, B 30, C 20.
    let gemm = Gemm::new(4, 5, 6);
    assert_eq!(
        run_error(&gemm, 92, 120, 80),
        Error::BufferTooSmall {
            operand: Operand::A,
            required_bytes: 96,
            buffer_bytes: 92
        }
    );
    assert_eq!(
        run_error(&gemm, 96, 116, 80),
        Error::BufferTooSmall {
            operand: Operand::B,
            required_bytes: 120,
            buffer_bytes: 116
        }
    );
    assert_eq!(
        run_error(&gemm, 96, 120, 76),
        Error::BufferTooSmall {
            operand: Operand::C,
            required_bytes: 80,
            buffer_bytes: 76
        }
    );
    // Offsets and batches count: 3 batches of C (60 elements) starting at element 4.
    let batched = gemm.batch(3).c(MatrixLayout::row_major().offset(4));
    assert_eq!(
        run_error(&batched, 288, 360, 252),
        Error::BufferTooSmall {
            operand: Operand::C,
            required_bytes: 256,
            buffer_bytes: 252
        }
    );
    // A broadcast A (batch stride 0) needs one matrix only.
    let broadcast = Gemm::new(4, 5, 6)
        .batch(3)
        .a(MatrixLayout::row_major().batch_stride(0));
    assert_eq!(
        run_error(&broadcast, 96, 352, 240),
        Error::BufferTooSmall {
            operand: Operand::B,
            required_bytes: 360,
            buffer_bytes: 352
        }
    );
}

#[test]
fn buffers_without_storage_usage_are_rejected() {
    let plain = buffer(
        4096,
        wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
    );
    let good = storage(4096);
    let good_c = storage(4096);
    let gemm = Gemm::new(4, 4, 4);
    for (operand, buffers) in [
        (Operand::A, GemmBuffers::new(&plain, &good, &good_c)),
        (Operand::B, GemmBuffers::new(&good, &plain, &good_c)),
        (Operand::C, GemmBuffers::new(&good, &good_c, &plain)),
    ] {
        let error = context()
            .run(&gemm, &buffers)
            .expect_err("missing STORAGE must fail");
        assert_eq!(
            error,
            Error::MissingBufferUsage {
                operand,
                missing: wgpu::BufferUsages::STORAGE
            }
        );
    }
    assert_no_validation_errors();
}

#[test]
fn output_aliasing_an_input_is_rejected() {
    let shared = storage(4096);
    let other = storage(4096);
    let gemm = Gemm::new(4, 4, 4).c(MatrixLayout::row_major().offset(512));
    let error = context()
        .run(&gemm, &GemmBuffers::new(&shared, &other, &shared))
        .unwrap_err();
    assert_eq!(error, Error::OutputAliasesInput { input: Operand::A });
    let error = context()
        .run(&gemm, &GemmBuffers::new(&other, &shared, &shared))
        .unwrap_err();
    assert_eq!(error, Error::OutputAliasesInput { input: Operand::B });
    // A and B may share a buffer: both are only read.
    let a_and_b = context().upload("a and b", &[1.0f32; 16]).unwrap();
    let c = storage(64);
    context()
        .run(
            &Gemm::new(4, 4, 4),
            &GemmBuffers::new(&a_and_b, &a_and_b, &c),
        )
        .expect("A and B may alias");
    assert_no_validation_errors();
}

#[test]
fn overlapping_output_batches_are_rejected() {
    let broadcast_c = Gemm::new(4, 5, 6)
        .batch(2)
        .c(MatrixLayout::row_major().batch_stride(0));
    assert_eq!(
        broadcast_c.resolve(),
        Err(Error::OverlappingOutputBatches {
            batch_stride: 0,
            minimum: 20
        })
    );
    let too_close = Gemm::new(4, 5, 6).batch(2).c(MatrixLayout::column_major()
        .leading_dimension(6)
        .batch_stride(27));
    assert_eq!(
        too_close.resolve(),
        Err(Error::OverlappingOutputBatches {
            batch_stride: 27,
            minimum: 28
        })
    );
    assert_eq!(
        run_error(&broadcast_c, 4096, 4096, 4096),
        Error::OverlappingOutputBatches {
            batch_stride: 0,
            minimum: 20
        }
    );
}

#[test]
fn indices_beyond_32_bits_are_rejected() {
    // A leading dimension of 5e9 elements puts row 1 of A past the kernels' u32 indices.
    let gemm = Gemm::new(2, 2, 2).a(MatrixLayout::row_major().leading_dimension(5_000_000_000));
    match run_error(&gemm, 4096, 4096, 4096) {
        Error::IndexOverflow {
            operand: Operand::A,
            last_index,
            limit,
        } => {
            assert_eq!(last_index, 5_000_000_001);
            assert_eq!(limit, u32::MAX as u64);
        }
        other => panic!("expected IndexOverflow, got {other:?}"),
    }
    // Absurd strides saturate instead of wrapping around.
    let absurd = Gemm::new(3, 2, 2)
        .batch(2)
        .b(MatrixLayout::row_major().batch_stride(u64::MAX / 2));
    assert!(matches!(
        run_error(&absurd, 4096, 4096, 4096),
        Error::IndexOverflow {
            operand: Operand::B,
            ..
        }
    ));
}

#[test]
fn ranges_larger_than_the_device_can_bind_are_rejected() {
    let limit = context().device().limits().max_storage_buffer_binding_size;
    // One row-major row of (limit / 4 + 16) f32: fits 32-bit indices, but not one binding.
    let elements = (limit / 4 + 16).min(u32::MAX as u64 - 1) as u32;
    let gemm = Gemm::new(1, 1, elements);
    match run_error(&gemm, 4096, 4096, 4096) {
        Error::BindingTooLarge {
            operand: Operand::A,
            bytes,
            limit: reported,
        } => {
            assert_eq!(reported, limit);
            assert!(bytes > limit);
        }
        Error::IndexOverflow {
            operand: Operand::A,
            ..
        } => {} // devices whose limit exceeds 16 GiB
        other => panic!("expected BindingTooLarge, got {other:?}"),
    }
}

#[test]
fn too_many_workgroups_are_rejected() {
    let limit = context()
        .device()
        .limits()
        .max_compute_workgroups_per_dimension;
    let batch = limit + 1;
    let gemm = Gemm::new(1, 1, 1).batch(batch);
    let bytes = batch as u64 * 4;
    let error = context()
        .with_backend(BackendChoice::Force(BackendKind::Simt))
        .run(
            &gemm,
            &GemmBuffers::new(&storage(bytes), &storage(bytes), &storage(bytes)),
        );
    assert_eq!(
        error.unwrap_err(),
        Error::TooManyWorkgroups {
            dimension: 2,
            count: batch as u64,
            limit
        }
    );
}

#[test]
fn types_a_backend_cannot_run_are_unsupported_not_garbage() {
    let simt = context().with_backend(BackendChoice::Force(BackendKind::Simt));
    // SIMT stores f32, f16 and bf16, never integers, and never two 16-bit formats at once.
    for types in [
        GemmTypes::I8_I32,
        GemmTypes::new(
            coopgemm::DType::F16,
            coopgemm::DType::F32,
            coopgemm::DType::BF16,
        ),
    ] {
        match simt.select(&Gemm::new(8, 8, 8).types(types)) {
            Err(Error::Unsupported {
                backend: BackendKind::Simt,
                reason,
            }) => assert!(reason.contains(&types.to_string()), "{reason}"),
            other => panic!("expected Unsupported, got {other:?}"),
        }
    }
    // i8 has no backend on plain lavapipe or GL: NoBackend with every backend's reason.
    if !context()
        .backend(BackendKind::Coopmat)
        .types
        .contains(&GemmTypes::I8_I32)
    {
        match context().select(&Gemm::new(8, 8, 8).types(GemmTypes::I8_I32)) {
            Err(Error::NoBackend { reasons }) => {
                assert_eq!(reasons.len(), BackendKind::ALL.len(), "{reasons:?}")
            }
            other => panic!("expected NoBackend, got {other:?}"),
        }
    }
    // A forced coopmat backend that is missing is an error, not a silent fallback.
    if !context().backend(BackendKind::Coopmat).is_available() {
        let forced = context().with_backend(BackendChoice::Force(BackendKind::Coopmat));
        assert!(matches!(
            forced.select(&Gemm::new(8, 8, 8)),
            Err(Error::Unsupported {
                backend: BackendKind::Coopmat,
                ..
            })
        ));
    }
}

#[test]
fn bias_buffers_must_match_the_epilogue() {
    let with_bias = Gemm::new(4, 6, 5).bias(BiasAxis::PerColumn);
    let (a, b, c) = (storage(4 * 20), storage(4 * 30), storage(4 * 24));
    // The epilogue has a bias but no buffer was given, and the other way round.
    assert_eq!(
        context()
            .run(&with_bias, &GemmBuffers::new(&a, &b, &c))
            .err(),
        Some(Error::MissingBiasBuffer)
    );
    let bias = storage(4 * 6);
    assert_eq!(
        context()
            .run(
                &Gemm::new(4, 6, 5),
                &GemmBuffers::new(&a, &b, &c).with_bias(&bias)
            )
            .err(),
        Some(Error::UnexpectedBiasBuffer)
    );
    // Too short for n values from the offset, and a per-row bias of m values from offset 3.
    let short = storage(4 * 5);
    assert!(matches!(
        context().run(&with_bias, &GemmBuffers::new(&a, &b, &c).with_bias(&short)),
        Err(Error::BufferTooSmall {
            operand: Operand::Bias,
            required_bytes: 24,
            buffer_bytes: 20
        })
    ));
    let per_row =
        Gemm::new(4, 6, 5).epilogue(coopgemm::Epilogue::default().bias_at(BiasAxis::PerRow, 3));
    assert!(matches!(
        context().run(&per_row, &GemmBuffers::new(&a, &b, &c).with_bias(&short)),
        Err(Error::BufferTooSmall {
            operand: Operand::Bias,
            required_bytes: 28,
            ..
        })
    ));
    // Host vectors: too short, missing.
    assert!(matches!(
        context().multiply_with_bias(
            &with_bias,
            &[0.0f32; 20],
            &[0.0f32; 30],
            &[0.0f32; 24],
            Some(&[0.0; 5])
        ),
        Err(Error::HostDataLength {
            operand: Operand::Bias,
            expected: 6,
            actual: 5
        })
    ));
    assert_eq!(
        context().multiply(&with_bias, &[0.0f32; 20], &[0.0f32; 30], &[0.0f32; 24]),
        Err(Error::MissingBiasBuffer)
    );
    // An epilogue needs a float C.
    assert!(matches!(
        Gemm::new(4, 4, 4)
            .types(GemmTypes::I8_I32)
            .bias(BiasAxis::PerRow)
            .resolve(),
        Err(Error::EpilogueNeedsFloatOutput { .. })
    ));
    assert_no_validation_errors();
}

#[test]
fn coopmat_cannot_share_a_user_encoder() {
    let forced = context().with_backend(BackendChoice::Force(BackendKind::Coopmat));
    let (a, b, c) = (storage(256), storage(256), storage(256));
    let mut encoder = context()
        .device()
        .create_command_encoder(&Default::default());
    let error = forced
        .encode(
            &mut encoder,
            &Gemm::new(4, 4, 4),
            &GemmBuffers::new(&a, &b, &c),
        )
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::Unsupported {
                backend: BackendKind::Coopmat,
                ..
            }
        ),
        "{error:?}"
    );
    // The same encoder still works for the SIMT backend.
    let simt = context().with_backend(BackendChoice::Force(BackendKind::Simt));
    simt.encode(
        &mut encoder,
        &Gemm::new(4, 4, 4),
        &GemmBuffers::new(&a, &b, &c),
    )
    .unwrap();
    context().queue().submit([encoder.finish()]);
    context().wait().unwrap();
    assert_no_validation_errors();
}

#[test]
fn host_data_of_wrong_length_or_type_is_rejected() {
    let gemm = Gemm::new(4, 5, 6);
    let error = context()
        .multiply(&gemm, &[0.0f32; 23], &[0.0f32; 30], &[0.0f32; 20])
        .unwrap_err();
    assert_eq!(
        error,
        Error::HostDataLength {
            operand: Operand::A,
            expected: 24,
            actual: 23
        }
    );
    let error = context()
        .multiply(&gemm, &[0.0f32; 24], &[0.0f32; 30], &[0.0f32; 19])
        .unwrap_err();
    assert_eq!(
        error,
        Error::HostDataLength {
            operand: Operand::C,
            expected: 20,
            actual: 19
        }
    );
    let halves = vec![half::f16::ZERO; 30];
    let error = context()
        .multiply(&gemm, &halves, &halves, &[0.0f32; 20])
        .unwrap_err();
    assert_eq!(
        error,
        Error::HostTypeMismatch {
            operand: Operand::A,
            types: GemmTypes::F32
        }
    );
    let error = context()
        .multiply(
            &gemm.types(GemmTypes::F16_F32),
            &halves,
            &halves,
            &[half::f16::ZERO; 20],
        )
        .unwrap_err();
    assert_eq!(
        error,
        Error::HostTypeMismatch {
            operand: Operand::C,
            types: GemmTypes::F16_F32
        }
    );
}

#[test]
fn downloading_from_a_buffer_without_copy_source_is_rejected() {
    let no_copy = buffer(64, wgpu::BufferUsages::STORAGE);
    let error = pollster::block_on(context().download::<f32>(&no_copy, 16)).unwrap_err();
    assert_eq!(
        error,
        Error::MissingBufferUsage {
            operand: Operand::C,
            missing: wgpu::BufferUsages::COPY_SRC
        }
    );
    let small = storage(64);
    let error = pollster::block_on(context().download::<f32>(&small, 17)).unwrap_err();
    assert_eq!(
        error,
        Error::BufferTooSmall {
            operand: Operand::C,
            required_bytes: 68,
            buffer_bytes: 64
        }
    );
}

#[test]
fn errors_explain_themselves() {
    let error = Error::BufferTooSmall {
        operand: Operand::B,
        required_bytes: 120,
        buffer_bytes: 116,
    };
    assert_eq!(
        error.to_string(),
        "B: buffer holds 116 bytes but the description reaches 120"
    );
    let error: Box<dyn std::error::Error> =
        Box::new(Error::OutputAliasesInput { input: Operand::A });
    assert_eq!(error.to_string(), "C overlaps A in the same buffer");
}

#[test]
fn buffers_beyond_the_device_limit_are_errors_not_panics() {
    let limit = context().device().limits().max_buffer_size;
    let error = context()
        .create_buffer("huge", limit + 4, HOST_BUFFER_USAGES)
        .unwrap_err();
    assert_eq!(
        error,
        Error::BufferTooLarge {
            bytes: limit + 4,
            limit
        }
    );
    // A usage combination wgpu rejects is reported by the error scope, not the panic handler.
    let error = context()
        .create_buffer(
            "bad usage",
            64,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
        )
        .unwrap_err();
    assert!(matches!(error, Error::Device(_)), "{error:?}");
}

#[test]
fn a_lost_device_is_reported_as_an_error() {
    // A context of its own: this test destroys its device.
    let options = common::test_options().with_coopmat(false);
    let doomed = pollster::block_on(coopgemm::Context::with_options(options)).unwrap();
    let (a, b, c) = (
        doomed.upload("a", &[1.0f32; 16]).unwrap(),
        doomed.upload("b", &[1.0f32; 16]).unwrap(),
        doomed.upload("c", &[0.0f32; 16]).unwrap(),
    );
    doomed
        .run(&Gemm::new(4, 4, 4), &GemmBuffers::new(&a, &b, &c))
        .unwrap();
    doomed.wait().unwrap();
    doomed.device().destroy();
    let _ = doomed.device().poll(wgpu::PollType::Poll);
    let error = doomed
        .run(&Gemm::new(4, 4, 4), &GemmBuffers::new(&a, &b, &c))
        .unwrap_err();
    assert!(matches!(error, Error::DeviceLost(_)), "{error:?}");
    assert!(matches!(doomed.wait(), Err(Error::DeviceLost(_))));
    assert!(matches!(
        doomed.multiply(
            &Gemm::new(4, 4, 4),
            &[1.0f32; 16],
            &[1.0f32; 16],
            &[0.0f32; 16]
        ),
        Err(Error::DeviceLost(_))
    ));
}
