//! The crate's error type.
//!
//! Every failure that bad input can cause is reported here, before anything is
//! encoded, with the offending values. Nothing in the crate panics on user input.

use std::fmt;

use crate::kind::BackendKind;
use crate::types::GemmTypes;

/// Names one operand of `C = alpha * op(A) * op(B) + beta * C`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operand {
    /// The left input, `m × k`.
    A,
    /// The right input, `k × n`.
    B,
    /// The output (and, when `beta != 0`, an input), `m × n`.
    C,
    /// The epilogue's bias vector (f32).
    Bias,
    /// A network's input rows ([`MlpBuffers::input`](crate::MlpBuffers)).
    Input,
    /// A network's output rows ([`MlpBuffers::output`](crate::MlpBuffers)).
    Output,
    /// A network's per-row weight-set indices
    /// ([`MlpBuffers::with_set_indices`](crate::MlpBuffers::with_set_indices)).
    SetIndices,
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operand::A => "A",
            Operand::B => "B",
            Operand::C => "C",
            Operand::Bias => "bias",
            Operand::Input => "network input",
            Operand::Output => "network output",
            Operand::SetIndices => "network set indices",
        })
    }
}

/// Everything that can go wrong in coopgemm.
///
/// ```
/// use coopgemm::{Error, Operand};
/// let e = Error::LeadingDimensionTooSmall { operand: Operand::A, leading_dimension: 3, minimum: 4 };
/// assert!(e.to_string().contains("leading dimension 3"));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// No wgpu adapter matched the request.
    NoAdapter(String),
    /// The adapter refused to create a device.
    RequestDevice(String),
    /// A leading dimension is smaller than the contiguous extent of the matrix.
    LeadingDimensionTooSmall {
        /// Which operand.
        operand: Operand,
        /// The leading dimension given, in elements.
        leading_dimension: u64,
        /// The smallest valid value, in elements.
        minimum: u64,
    },
    /// A buffer is smaller than the elements the description addresses.
    BufferTooSmall {
        /// Which operand.
        operand: Operand,
        /// Bytes the description reaches (offset, all rows, all batches).
        required_bytes: u64,
        /// The buffer's size in bytes.
        buffer_bytes: u64,
    },
    /// A buffer lacks a usage the GEMM needs (`STORAGE`, or `COPY_*` for host transfers).
    MissingBufferUsage {
        /// Which operand.
        operand: Operand,
        /// The usages that are missing.
        missing: wgpu::BufferUsages,
    },
    /// The elements addressed by one operand do not fit the kernels' 32-bit index arithmetic.
    IndexOverflow {
        /// Which operand.
        operand: Operand,
        /// The index of the last element the description reaches.
        last_index: u64,
        /// The largest index the kernels can form.
        limit: u64,
    },
    /// The range one operand needs is larger than the device lets a shader bind.
    BindingTooLarge {
        /// Which operand.
        operand: Operand,
        /// Bytes that would have to be bound.
        bytes: u64,
        /// The device's `max_storage_buffer_binding_size`.
        limit: u64,
    },
    /// The output overlaps an input in the same buffer: the result would race with its own inputs.
    OutputAliasesInput {
        /// The input that C overlaps.
        input: Operand,
    },
    /// Two batches of C overlap (a C batch stride smaller than one C matrix): their writes would race.
    OverlappingOutputBatches {
        /// The C batch stride given, in elements.
        batch_stride: u64,
        /// The smallest stride that keeps batches apart, in elements.
        minimum: u64,
    },
    /// A host slice has the wrong number of elements for the description.
    HostDataLength {
        /// Which operand.
        operand: Operand,
        /// Elements the description needs.
        expected: u64,
        /// Elements given.
        actual: u64,
    },
    /// A host slice's element type does not match the description's types.
    HostTypeMismatch {
        /// Which operand.
        operand: Operand,
        /// The types the description asks for.
        types: GemmTypes,
    },
    /// The GEMM needs more workgroups along one grid dimension than the device allows.
    TooManyWorkgroups {
        /// Grid dimension (0 = x, 1 = y, 2 = z).
        dimension: u32,
        /// Workgroups needed.
        count: u64,
        /// The device's `max_compute_workgroups_per_dimension`.
        limit: u32,
    },
    /// The chosen backend cannot run this GEMM.
    Unsupported {
        /// The backend that refused.
        backend: BackendKind,
        /// Why.
        reason: String,
    },
    /// No backend available on this device can run this GEMM.
    NoBackend {
        /// Each backend and why it was not usable.
        reasons: Vec<(BackendKind, String)>,
    },
    /// [`Order::ColumnPanels`](crate::Order::ColumnPanels) was given for A or C, or with width 0.
    PanelsOnlyForB {
        /// The operand.
        operand: Operand,
    },
    /// The epilogue has a bias or an activation but C is an integer type.
    EpilogueNeedsFloatOutput {
        /// The GEMM's types.
        types: GemmTypes,
    },
    /// The epilogue has a bias but [`GemmBuffers::bias`](crate::GemmBuffers) is `None`.
    MissingBiasBuffer,
    /// [`GemmBuffers::bias`](crate::GemmBuffers) is set but the epilogue has no bias.
    UnexpectedBiasBuffer,
    /// A shader or pipeline could not be built.
    Pipeline(String),
    /// A buffer larger than the device's `max_buffer_size` was asked for.
    BufferTooLarge {
        /// Bytes asked for.
        bytes: u64,
        /// The device's `max_buffer_size`.
        limit: u64,
    },
    /// The device was lost (driver reset, `Device::destroy`, ...); create a new context.
    DeviceLost(String),
    /// The device reported an error (out of memory, validation failure).
    Device(String),
    /// Reading a result back to the host failed.
    Readback(String),
    /// A network ([`MlpDesc`](crate::MlpDesc)) has no layers.
    MlpNoLayers,
    /// A network's width is 0 or above the limit.
    MlpWidth {
        /// 0 for the input, `l + 1` for layer `l`'s output.
        position: usize,
        /// The width given.
        width: u32,
        /// The largest width accepted.
        limit: u32,
    },
    /// A layer's activation cannot be used.
    MlpActivation {
        /// The layer.
        layer: usize,
        /// Why.
        reason: String,
    },
    /// A network's weights do not match its shape.
    MlpWeights {
        /// The weight set.
        set: usize,
        /// The layer.
        layer: usize,
        /// `layers`, `weights` or `bias`.
        what: &'static str,
        /// How many were expected.
        expected: usize,
        /// How many were given.
        actual: usize,
    },
    /// A network was given no weight sets, or more than the library takes.
    MlpSets {
        /// The number of sets given.
        sets: usize,
        /// The most sets a network takes.
        limit: usize,
    },
    /// A row's weight-set index (checked on the host) is not below the number of sets.
    MlpSetIndex {
        /// The row.
        row: usize,
        /// Its set index.
        set: u32,
        /// The network's number of sets.
        sets: usize,
    },
    /// No network kernel on this device can run the network (or the forced one cannot).
    MlpNoKernel {
        /// Each kernel considered and why it could not.
        reasons: Vec<(crate::kind::MlpKernel, String)>,
    },
    /// A network's input or output rows are of a type other than f16 and f32.
    MlpRowType {
        /// Input or output.
        operand: Operand,
        /// The type given.
        dtype: crate::types::DType,
    },
    /// A row stride of a network's input or output is smaller than its width.
    MlpRowStride {
        /// Input or output.
        operand: Operand,
        /// The stride given, in elements.
        stride: u32,
        /// The width of a row.
        width: u32,
    },
    /// A [`PreparedGemm`](crate::PreparedGemm) was launched on a context other than the
    /// one that prepared it (or its clones): its pipeline and bindings belong to that one.
    PreparedElsewhere,
    /// An option's value does not parse: an environment variable read by
    /// [`ContextOptions::from_env`](crate::ContextOptions::from_env), or a kernel
    /// configuration's name parsed with `str::parse`.
    InvalidOption {
        /// The variable (`COOPGEMM_SPLIT_K`) or the kind of value (`SIMT configuration`).
        name: String,
        /// The value given.
        value: String,
        /// What would have been accepted.
        expected: String,
    },
}

impl Error {
    /// An [`Error::InvalidOption`].
    pub(crate) fn invalid_option(
        name: impl Into<String>,
        value: impl Into<String>,
        expected: impl Into<String>,
    ) -> Error {
        Error::InvalidOption {
            name: name.into(),
            value: value.into(),
            expected: expected.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoAdapter(why) => write!(f, "no GPU adapter found: {why}"),
            Error::RequestDevice(why) => write!(f, "could not create a device: {why}"),
            Error::LeadingDimensionTooSmall { operand, leading_dimension, minimum } => write!(
                f,
                "{operand}: leading dimension {leading_dimension} is smaller than the contiguous extent {minimum}"
            ),
            Error::BufferTooSmall { operand, required_bytes, buffer_bytes } => write!(
                f,
                "{operand}: buffer holds {buffer_bytes} bytes but the description reaches {required_bytes}"
            ),
            Error::MissingBufferUsage { operand, missing } => {
                write!(f, "{operand}: buffer lacks usage {missing:?}")
            }
            Error::IndexOverflow { operand, last_index, limit } => write!(
                f,
                "{operand}: element index {last_index} exceeds the kernels' 32-bit limit {limit}"
            ),
            Error::BindingTooLarge { operand, bytes, limit } => write!(
                f,
                "{operand}: {bytes} bytes would be bound but the device allows {limit}"
            ),
            Error::OutputAliasesInput { input } => {
                write!(f, "C overlaps {input} in the same buffer")
            }
            Error::OverlappingOutputBatches { batch_stride, minimum } => write!(
                f,
                "C batch stride {batch_stride} makes batches overlap (needs at least {minimum})"
            ),
            Error::HostDataLength { operand, expected, actual } => write!(
                f,
                "{operand}: host data has {actual} elements, the description needs {expected}"
            ),
            Error::HostTypeMismatch { operand, types } => write!(
                f,
                "{operand}: host element type does not match the GEMM types {types}"
            ),
            Error::TooManyWorkgroups { dimension, count, limit } => write!(
                f,
                "grid dimension {dimension} needs {count} workgroups, the device allows {limit}"
            ),
            Error::Unsupported { backend, reason } => write!(f, "{backend} backend: {reason}"),
            Error::NoBackend { reasons } => {
                write!(f, "no backend can run this GEMM")?;
                for (backend, why) in reasons {
                    write!(f, "; {backend}: {why}")?;
                }
                Ok(())
            }
            Error::PanelsOnlyForB { operand } => write!(
                f,
                "{operand}: column panels (of non-zero width) are a layout of B only"
            ),
            Error::EpilogueNeedsFloatOutput { types } => write!(
                f,
                "a bias or activation needs a floating-point C, but the types are {types}"
            ),
            Error::MissingBiasBuffer => {
                write!(f, "the epilogue adds a bias but no bias buffer was given")
            }
            Error::UnexpectedBiasBuffer => write!(
                f,
                "a bias buffer was given but the epilogue has no bias (set Gemm::bias)"
            ),
            Error::Pipeline(why) => write!(f, "pipeline creation failed: {why}"),
            Error::BufferTooLarge { bytes, limit } => write!(
                f,
                "a buffer of {bytes} bytes exceeds the device's limit of {limit}"
            ),
            Error::DeviceLost(why) => write!(f, "device lost: {why}"),
            Error::Device(why) => write!(f, "device error: {why}"),
            Error::Readback(why) => write!(f, "readback failed: {why}"),
            Error::MlpNoLayers => write!(f, "the network has no layers"),
            Error::MlpWidth { position, width, limit } => write!(
                f,
                "network width {width} at position {position} is not in 1..={limit}"
            ),
            Error::MlpActivation { layer, reason } => {
                write!(f, "network layer {layer}: {reason}")
            }
            Error::MlpWeights { set, layer, what, expected, actual } => write!(
                f,
                "network weight set {set}, layer {layer}: {actual} {what} given, {expected} expected"
            ),
            Error::MlpSets { sets, limit } => write!(
                f,
                "{sets} network weight sets given, a network takes 1 to {limit}"
            ),
            Error::MlpSetIndex { row, set, sets } => write!(
                f,
                "row {row} has weight set {set}, the network has {sets} (0..{sets})"
            ),
            Error::MlpNoKernel { reasons } => {
                write!(f, "no network kernel can run this network")?;
                for (kernel, why) in reasons {
                    write!(f, "; {kernel}: {why}")?;
                }
                Ok(())
            }
            Error::MlpRowType { operand, dtype } => write!(
                f,
                "{operand}: rows of {} (networks take f16 or f32 rows)",
                dtype.name()
            ),
            Error::MlpRowStride { operand, stride, width } => write!(
                f,
                "{operand}: row stride {stride} is smaller than the row width {width}"
            ),
            Error::PreparedElsewhere => write!(
                f,
                "the GEMM was prepared on another context: launch it on that one"
            ),
            Error::InvalidOption { name, value, expected } => {
                write!(f, "{name}: {value:?} is not {expected}")
            }
        }
    }
}

impl std::error::Error for Error {}

/// Shorthand for `Result<T, coopgemm::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;
