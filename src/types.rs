//! Element types: what the matrices hold in memory and what the kernels accumulate in.

use std::fmt;

/// A scalar type a matrix can be stored or accumulated in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary16.
    F16,
    /// bfloat16 (8-bit exponent, 7-bit mantissa).
    BF16,
    /// Signed 8-bit integer.
    I8,
    /// Signed 32-bit integer.
    I32,
}

impl DType {
    /// Bytes one element occupies.
    ///
    /// ```
    /// assert_eq!(coopgemm::DType::F16.size_bytes(), 2);
    /// ```
    pub const fn size_bytes(self) -> u64 {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::F16 | DType::BF16 => 2,
            DType::I8 => 1,
        }
    }

    /// The short lowercase name used in logs, benchmarks and command lines (`f32`, `f16`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I8 => "i8",
            DType::I32 => "i32",
        }
    }

    /// Unit roundoff of the type (half the distance from 1 to the next value); 0 for integers.
    pub const fn unit_roundoff(self) -> f64 {
        match self {
            DType::F32 => 5.960_464_477_539_063e-8, // 2^-24
            DType::F16 => 4.882_812_5e-4,           // 2^-11
            DType::BF16 => 3.906_25e-3,             // 2^-8
            DType::I8 | DType::I32 => 0.0,
        }
    }

    /// The largest rounding error below the type's normal range, where the spacing of its
    /// values is fixed: half the smallest subnormal (0 for integers). A result near zero
    /// rounds by this much, whatever its relative precision.
    pub const fn subnormal_roundoff(self) -> f64 {
        match self {
            DType::F32 => 7.006_492_321_624_085e-46,  // 2^-150
            DType::F16 => 2.980_232_238_769_531_3e-8, // 2^-25
            DType::BF16 => 4.591_774_807_899_561e-41, // 2^-134
            DType::I8 | DType::I32 => 0.0,
        }
    }

    /// Whether the type is an integer type.
    pub const fn is_integer(self) -> bool {
        matches!(self, DType::I8 | DType::I32)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The element types of one GEMM: A and B share `input`, the kernel sums in `accumulate`,
/// and C is stored as `output`.
///
/// ```
/// use coopgemm::{DType, GemmTypes};
/// assert_eq!(GemmTypes::F16_F32.input, DType::F16);
/// assert_eq!(GemmTypes::F16_F32.to_string(), "f16*f16->f32");
/// assert_eq!(GemmTypes::parse("bf16"), Some(GemmTypes::BF16_F32));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GemmTypes {
    /// Storage type of A and B.
    pub input: DType,
    /// Type the products are summed in.
    pub accumulate: DType,
    /// Storage type of C.
    pub output: DType,
}

impl GemmTypes {
    /// f32 × f32 → f32, summed in f32.
    pub const F32: GemmTypes = GemmTypes::new(DType::F32, DType::F32, DType::F32);
    /// f16 × f16 → f32, summed in f32 (the tensor-core workhorse).
    pub const F16_F32: GemmTypes = GemmTypes::new(DType::F16, DType::F32, DType::F32);
    /// f16 × f16 → f16, summed in f16 (fastest, and may overflow to Inf for large sums).
    pub const F16_ACC_F16: GemmTypes = GemmTypes::new(DType::F16, DType::F16, DType::F16);
    /// bf16 × bf16 → f32, summed in f32.
    pub const BF16_F32: GemmTypes = GemmTypes::new(DType::BF16, DType::F32, DType::F32);
    /// i8 × i8 → i32, summed in i32.
    pub const I8_I32: GemmTypes = GemmTypes::new(DType::I8, DType::I32, DType::I32);
    /// f16 × f16 → f16, summed in f32 (the sum is rounded to f16 once, in the epilogue).
    pub const F16_F32_F16: GemmTypes = GemmTypes::new(DType::F16, DType::F32, DType::F16);
    /// bf16 × bf16 → bf16, summed in f32 (rounded to bf16 once, in the epilogue).
    pub const BF16_F32_BF16: GemmTypes = GemmTypes::new(DType::BF16, DType::F32, DType::BF16);
    /// f32 × f32 → f16, summed in f32 (e.g. a layer whose activations are stored in half).
    pub const F32_F32_F16: GemmTypes = GemmTypes::new(DType::F32, DType::F32, DType::F16);
    /// f32 × f32 → bf16, summed in f32.
    pub const F32_F32_BF16: GemmTypes = GemmTypes::new(DType::F32, DType::F32, DType::BF16);

    /// Every combination the crate knows, in the order benchmarks list them.
    pub const ALL: [GemmTypes; 9] = [
        GemmTypes::F32,
        GemmTypes::F16_F32,
        GemmTypes::F16_ACC_F16,
        GemmTypes::BF16_F32,
        GemmTypes::I8_I32,
        GemmTypes::F16_F32_F16,
        GemmTypes::BF16_F32_BF16,
        GemmTypes::F32_F32_F16,
        GemmTypes::F32_F32_BF16,
    ];

    /// Builds a combination from its three types.
    pub const fn new(input: DType, accumulate: DType, output: DType) -> GemmTypes {
        GemmTypes {
            input,
            accumulate,
            output,
        }
    }

    /// Parses the short names used on command lines: `f32`, `f16` (= f16*f16->f32),
    /// `f16acc16`, `bf16`, `i8`, `INPUT-ACCUMULATE-OUTPUT` (e.g. `f16-f32-f16`), or the
    /// full `f16*f16->f32` spelling of [`Display`](fmt::Display).
    ///
    /// ```
    /// use coopgemm::GemmTypes;
    /// assert_eq!(GemmTypes::parse("bf16-f32-bf16"), Some(GemmTypes::BF16_F32_BF16));
    /// assert_eq!(GemmTypes::parse("f16-f32-f16").unwrap().short_name(), "f16-f32-f16");
    /// ```
    pub fn parse(name: &str) -> Option<GemmTypes> {
        match name {
            "f32" => Some(GemmTypes::F32),
            "f16" => Some(GemmTypes::F16_F32),
            "f16acc16" => Some(GemmTypes::F16_ACC_F16),
            "bf16" => Some(GemmTypes::BF16_F32),
            "i8" => Some(GemmTypes::I8_I32),
            other => GemmTypes::ALL
                .into_iter()
                .find(|t| t.to_string() == other || t.short_name() == other),
        }
    }

    /// A short name for command lines and benchmark records (the inverse of [`GemmTypes::parse`]).
    pub fn short_name(&self) -> String {
        match *self {
            GemmTypes::F32 => "f32".into(),
            GemmTypes::F16_F32 => "f16".into(),
            GemmTypes::F16_ACC_F16 => "f16acc16".into(),
            GemmTypes::BF16_F32 => "bf16".into(),
            GemmTypes::I8_I32 => "i8".into(),
            other => format!("{}-{}-{}", other.input, other.accumulate, other.output),
        }
    }
}

impl fmt::Display for GemmTypes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.accumulate == self.output {
            write!(f, "{0}*{0}->{1}", self.input, self.output)
        } else {
            write!(
                f,
                "{0}*{0}->{1} (sum in {2})",
                self.input, self.output, self.accumulate
            )
        }
    }
}

/// A host element type that can be uploaded into, or read back from, a GEMM operand.
///
/// Implemented for `f32`, [`half::f16`], [`half::bf16`], `i8` and `i32`.
///
/// ```
/// use coopgemm::{DType, Element};
/// assert_eq!(<half::f16 as Element>::DTYPE, DType::F16);
/// assert_eq!(half::f16::from_f64_lossy(1.5).to_f64(), 1.5);
/// ```
pub trait Element: bytemuck::Pod + Send + Sync + 'static {
    /// The matching [`DType`].
    const DTYPE: DType;
    /// Widens to f64 (exactly).
    fn to_f64(self) -> f64;
    /// Narrows from f64, rounding to nearest (saturating for integers).
    fn from_f64_lossy(value: f64) -> Self;
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64_lossy(value: f64) -> Self {
        value as f32
    }
}

impl Element for half::f16 {
    const DTYPE: DType = DType::F16;
    fn to_f64(self) -> f64 {
        half::f16::to_f64(self)
    }
    fn from_f64_lossy(value: f64) -> Self {
        half::f16::from_f64(value)
    }
}

impl Element for half::bf16 {
    const DTYPE: DType = DType::BF16;
    fn to_f64(self) -> f64 {
        half::bf16::to_f64(self)
    }
    fn from_f64_lossy(value: f64) -> Self {
        half::bf16::from_f64(value)
    }
}

impl Element for i8 {
    const DTYPE: DType = DType::I8;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64_lossy(value: f64) -> Self {
        value.round().clamp(i8::MIN as f64, i8::MAX as f64) as i8
    }
}

impl Element for i32 {
    const DTYPE: DType = DType::I32;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64_lossy(value: f64) -> Self {
        value.round().clamp(i32::MIN as f64, i32::MAX as f64) as i32
    }
}

/// One entry of the device's list of cooperative-matrix shapes
/// (`vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR`): what a
/// [`CoopmatConfig`](crate::config::CoopmatConfig) runs with. The type exists on every
/// platform; only Vulkan devices list any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CoopmatShape {
    /// Rows of the A and result matrices.
    pub m: u32,
    /// Columns of the B and result matrices.
    pub n: u32,
    /// Columns of A, rows of B.
    pub k: u32,
    /// Element type of A (`None`: a type coopgemm does not know).
    pub a_type: Option<DType>,
    /// Element type of B.
    pub b_type: Option<DType>,
    /// Element type of C.
    pub c_type: Option<DType>,
    /// Element type of the result.
    pub result_type: Option<DType>,
    /// Raw component types, for printing unknown ones.
    pub raw_types: [i32; 4],
    /// Whether the multiply-add saturates.
    pub saturating: bool,
    /// Whether the scope is a subgroup (the only scope the kernels use).
    pub subgroup_scope: bool,
}

/// The name of a raw `VkComponentTypeKHR` that [`DType`] does not cover.
fn component_name(raw: i32, known: Option<DType>) -> String {
    match (known, raw) {
        (Some(dtype), _) => dtype.name().to_string(),
        (None, 2) => "f64".into(),
        (None, 7) => "u8".into(),
        (None, 9) => "u32".into(),
        (None, raw) => format!("type{raw}"),
    }
}

impl std::fmt::Display for CoopmatShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let known = [self.a_type, self.b_type, self.c_type, self.result_type];
        let [a, b, c, r] = [0, 1, 2, 3].map(|i| component_name(self.raw_types[i], known[i]));
        write!(
            f,
            "M{} N{} K{} A {a} B {b} C {c} R {r}{} scope {}",
            self.m,
            self.n,
            self.k,
            if self.saturating { " saturating" } else { "" },
            if self.subgroup_scope {
                "subgroup"
            } else {
                "other"
            }
        )
    }
}

/// A square cooperative-matrix shape the kernel can multiply with: `size` × `size` × `size`
/// tiles of `input` A and B summed into `accumulate` (one entry of
/// `wgpu::Adapter::cooperative_matrix_properties`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CoopShape {
    /// 8 (`coop_mat8x8`) or 16 (`coop_mat16x16`).
    pub size: u32,
    /// Element type of A and B (f16 or f32).
    pub input: DType,
    /// Element type of the accumulators (f16 or f32).
    pub accumulate: DType,
}

impl std::fmt::Display for CoopShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{0}x{0}x{0} {1}->{2}",
            self.size, self.input, self.accumulate
        )
    }
}
