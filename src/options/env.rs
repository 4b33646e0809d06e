//! [`ContextOptions::from_env`]: the one place that reads coopgemm's environment variables
//! (the location variables of [`DiskCache::Default`] aside), each parsed into its field's
//! type once, a bad value an [`Error::InvalidOption`].

use crate::backend::BackendKind;
use crate::error::{Error, Result};

use super::{AutotuneChoice, BackendChoice, ContextOptions, SplitKChoice, StageBChoice};
use crate::disk_cache::DiskCache;

impl ContextOptions {
    /// The defaults with the environment variables named on each field applied on top
    /// (`ContextOptions::default().with_env()`), in wgpu's style (`Backends::from_env`,
    /// `InstanceFlags::with_env`). What the examples, benchmarks and tests use; an
    /// application decides whether its users' shells may steer it.
    ///
    /// A variable that is set but empty counts as unset. A value that does not parse is an
    /// [`Error::InvalidOption`] naming the variable, not a warning.
    ///
    /// ```
    /// # if std::env::var_os("COOPGEMM_SPLIT_K").is_none() {
    /// let options = coopgemm::ContextOptions::from_env()?;
    /// assert_eq!(options.split_k, coopgemm::SplitKChoice::Auto);
    /// # }
    /// # Ok::<(), coopgemm::Error>(())
    /// ```
    pub fn from_env() -> Result<ContextOptions> {
        ContextOptions::default().with_env()
    }

    /// `self` with the variables that are set applied on top: each one set overrides its
    /// field, the others keep `self`'s values. See [`ContextOptions::from_env`].
    pub fn with_env(self) -> Result<ContextOptions> {
        self.with_variables(&|name| std::env::var(name).ok())
    }

    /// [`ContextOptions::with_env`] with the variables that `var` reads.
    pub(crate) fn with_variables(
        mut self,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ContextOptions> {
        let var = |name: &str| var(name).filter(|value| !value.is_empty());
        fn parse<T>(name: &str, value: &str, expected: &str, parsed: Option<T>) -> Result<T> {
            parsed.ok_or_else(|| Error::invalid_option(name, value, expected))
        }
        let flag = |name: &'static str| -> Result<Option<bool>> {
            var(name)
                .map(|value| {
                    let parsed = match value.as_str() {
                        "0" => Some(false),
                        "1" => Some(true),
                        _ => None,
                    };
                    parse(name, &value, "0 or 1", parsed)
                })
                .transpose()
        };
        // A configuration name, parsed by its type (whose error names the type): the error
        // names the variable too.
        fn config<T: std::str::FromStr<Err = Error>>(
            name: &'static str,
            value: Option<String>,
        ) -> Result<Option<T>> {
            value
                .map(|value| {
                    value.parse::<T>().map_err(|error| match error {
                        Error::InvalidOption {
                            name: what,
                            expected,
                            ..
                        } => Error::invalid_option(name, value, format!("a {what}: {expected}")),
                        other => other,
                    })
                })
                .transpose()
        }

        if let Some(list) = var("WGPU_BACKEND") {
            let backends = wgpu::Backends::from_comma_list(&list);
            let expected = "a comma list of wgpu backends (vulkan, metal, dx12, gl, webgpu)";
            self.wgpu_backends = parse("WGPU_BACKEND", &list, expected, {
                (!backends.is_empty()).then_some(backends)
            })?;
        }
        if let Some(name) = var("WGPU_ADAPTER_NAME") {
            self.adapter_name = Some(name);
        }
        if let Some(value) = var("COOPGEMM_BACKEND") {
            let parsed = match value.as_str() {
                "auto" => Some(BackendChoice::Auto),
                name => BackendKind::parse(name).map(BackendChoice::Force),
            };
            let expected = "simt, coopmat, wgsl-coopmat or auto";
            self.backend = parse("COOPGEMM_BACKEND", &value, expected, parsed)?;
        }
        if let Some(value) = var("COOPGEMM_SPLIT_K") {
            let parsed = value.parse::<u32>().ok().map(|slices| match slices {
                0 | 1 => SplitKChoice::Off,
                slices => SplitKChoice::Slices(slices),
            });
            let expected = "a number of slices (0 or 1: off)";
            self.split_k = parse("COOPGEMM_SPLIT_K", &value, expected, parsed)?;
        }
        if let Some(stage) = flag("COOPGEMM_STAGE_B")? {
            self.stage_b = if stage {
                StageBChoice::Always
            } else {
                StageBChoice::Never
            };
        }
        if let Some(tune) = flag("COOPGEMM_AUTOTUNE")? {
            self.autotune = if tune {
                AutotuneChoice::OnFirstUse
            } else {
                AutotuneChoice::Off
            };
        }
        self.instance_flags = self.instance_flags.with_env();
        if flag("COOPGEMM_CACHE")? == Some(false) {
            self.disk_cache = DiskCache::Off;
        }
        if let Some(statistics) = flag("COOPGEMM_PIPELINE_STATS")? {
            self.pipeline_statistics = statistics;
        }
        if let Some(robust) = flag("COOPGEMM_ROBUST_KERNELS")? {
            self.robust_kernels = robust;
        }
        let overrides = &mut self.kernel_overrides;
        if let Some(config) = config("COOPGEMM_SIMT_CONFIG", var("COOPGEMM_SIMT_CONFIG"))? {
            overrides.simt_config = Some(config);
        }
        if let Some(vector_loads) = flag("COOPGEMM_SIMT_VECTOR_LOADS")? {
            overrides.simt_vector_loads = Some(vector_loads);
        }
        if let Some(coopmat2) = flag("COOPGEMM_COOPMAT2")? {
            overrides.coopmat2 = coopmat2;
        }
        if let Some(value) = var("COOPGEMM_SKINNY_ROWS") {
            let rows = value.parse().ok();
            overrides.skinny_rows = Some(parse(
                "COOPGEMM_SKINNY_ROWS",
                &value,
                "a number of rows",
                rows,
            )?);
        }
        if let Some(tile) = config("COOPGEMM_SKINNY_CONFIG", var("COOPGEMM_SKINNY_CONFIG"))? {
            overrides.skinny_config = Some(tile);
        }
        if let Some(value) = var("COOPGEMM_DECODE_ROWS") {
            let rows = value.parse().ok();
            overrides.decode_rows = Some(parse(
                "COOPGEMM_DECODE_ROWS",
                &value,
                "a number of rows",
                rows,
            )?);
        }
        if let Some(tile) = config("COOPGEMM_DECODE_CONFIG", var("COOPGEMM_DECODE_CONFIG"))? {
            overrides.decode_config = Some(tile);
        }
        if let Some(value) = var("COOPGEMM_COOPMAT_SHAPE") {
            let numbers: Option<Vec<u32>> = value.split('x').map(|n| n.parse().ok()).collect();
            let parsed = match numbers.as_deref() {
                Some(&[m, n, k]) => Some([m, n, k]),
                _ => None,
            };
            let shape = parse("COOPGEMM_COOPMAT_SHAPE", &value, "MxNxK", parsed)?;
            overrides.coopmat_shape = Some(shape);
        }
        let tiling = var("COOPGEMM_COOPMAT_TILING");
        if let Some(tiling) = config("COOPGEMM_COOPMAT_TILING", tiling)? {
            overrides.coopmat_tiling = Some(tiling);
        }
        if let Some(tile) = config("COOPGEMM_COOPMAT2_TILE", var("COOPGEMM_COOPMAT2_TILE"))? {
            overrides.coopmat2_tile = Some(tile);
        }
        let wgsl_config = var("COOPGEMM_WGSL_COOPMAT_CONFIG");
        if let Some(config) = config("COOPGEMM_WGSL_COOPMAT_CONFIG", wgsl_config)? {
            overrides.wgsl_coopmat_config = Some(config);
        }
        if let Some(checked) = flag("COOPGEMM_WGSL_COOPMAT_CHECKS")? {
            overrides.wgsl_coopmat_checked = checked;
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::KernelOverrides;
    use crate::config::{CoopmatTiling, SimtConfig, SkinnyTile, WorkgroupScopeTile};
    use crate::disk_cache::resolve_directory;
    use std::ffi::OsString;

    fn try_with(pairs: &[(&str, &str)]) -> Result<ContextOptions> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ContextOptions::default().with_variables(&move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
    }

    fn with(pairs: &[(&str, &str)]) -> ContextOptions {
        try_with(pairs).unwrap()
    }

    #[test]
    fn directory_follows_the_documented_order() {
        fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| OsString::from(value))
            }
        }
        let all = [
            ("COOPGEMM_CACHE_DIR", "/c"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        let default = DiskCache::Default;
        assert_eq!(resolve_directory(&default, env(&all)), Some("/c".into()));
        assert_eq!(
            resolve_directory(&default, env(&all[1..])),
            Some("/x/coopgemm".into())
        );
        assert_eq!(
            resolve_directory(&default, env(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")])),
            Some("/h/.cache/coopgemm".into())
        );
        assert_eq!(resolve_directory(&default, env(&[])), None);
        let dir = DiskCache::Dir("/mine".into());
        assert_eq!(resolve_directory(&dir, env(&all)), Some("/mine".into()));
        assert_eq!(resolve_directory(&DiskCache::Off, env(&all)), None);
    }

    /// Each variable sets its field; without any, the built-in defaults.
    #[test]
    fn variables_set_their_fields() {
        let builtin = with(&[]);
        assert_eq!(builtin.backend, BackendChoice::Auto);
        assert_eq!(builtin.split_k, SplitKChoice::Auto);
        assert_eq!(builtin.stage_b, StageBChoice::Auto);
        assert_eq!(builtin.autotune, AutotuneChoice::OnRequest);
        assert_eq!(builtin.disk_cache, DiskCache::Default);
        assert_eq!(builtin.kernel_overrides, KernelOverrides::default());
        assert!(!builtin.pipeline_statistics && !builtin.robust_kernels);
        assert_eq!(builtin.wgpu_backends, wgpu::Backends::all());

        let set = with(&[
            ("COOPGEMM_BACKEND", "simt"),
            ("COOPGEMM_SPLIT_K", "4"),
            ("COOPGEMM_AUTOTUNE", "1"),
            ("COOPGEMM_CACHE", "0"),
            ("COOPGEMM_PIPELINE_STATS", "1"),
            ("COOPGEMM_ROBUST_KERNELS", "1"),
            ("COOPGEMM_COOPMAT2", "0"),
            ("COOPGEMM_COOPMAT2_TILE", "128x256x32x8"),
            ("COOPGEMM_COOPMAT_TILING", "2x4x4x2x1x2"),
            ("COOPGEMM_COOPMAT_SHAPE", "16x16x32"),
            ("COOPGEMM_SKINNY_CONFIG", "1x64x8x2"),
            ("COOPGEMM_SIMT_CONFIG", "64x64x16-t4x4"),
            ("COOPGEMM_SIMT_VECTOR_LOADS", "0"),
            ("COOPGEMM_WGSL_COOPMAT_CONFIG", "c16-128x128x32-w4x2"),
            ("COOPGEMM_WGSL_COOPMAT_CHECKS", "1"),
            ("COOPGEMM_STAGE_B", "1"),
            ("WGPU_BACKEND", "gl"),
            ("WGPU_ADAPTER_NAME", "llvmpipe"),
        ]);
        assert_eq!(set.backend, BackendChoice::Force(BackendKind::Simt));
        assert_eq!(set.split_k, SplitKChoice::Slices(4));
        assert_eq!(set.stage_b, StageBChoice::Always);
        assert_eq!(set.autotune, AutotuneChoice::OnFirstUse);
        assert_eq!(set.disk_cache, DiskCache::Off);
        assert!(set.pipeline_statistics && set.robust_kernels);
        let overrides = &set.kernel_overrides;
        assert!(!overrides.coopmat2);
        assert_eq!(
            overrides.coopmat2_tile,
            Some("128x256x32x8".parse::<WorkgroupScopeTile>().unwrap())
        );
        assert_eq!(overrides.coopmat2_tile.unwrap().k_unroll, Some(8));
        assert_eq!(
            overrides.coopmat_tiling,
            CoopmatTiling::parse("2x4x4x2x1x2")
        );
        assert_eq!(overrides.coopmat_shape, Some([16, 16, 32]));
        assert_eq!(
            overrides.skinny_config,
            Some("1x64x8x2".parse::<SkinnyTile>().unwrap())
        );
        assert_eq!(overrides.simt_config, SimtConfig::by_name("64x64x16-t4x4"));
        assert_eq!(
            overrides.wgsl_coopmat_config.map(|c| c.to_string()),
            Some("c16-128x128x32-w4x2".into())
        );
        assert!(overrides.wgsl_coopmat_checked);
        assert_eq!(overrides.simt_vector_loads, Some(false));
        assert_eq!(set.wgpu_backends, wgpu::Backends::GL);
        assert_eq!(set.adapter_name.as_deref(), Some("llvmpipe"));

        assert_eq!(
            with(&[("COOPGEMM_SPLIT_K", "1")]).split_k,
            SplitKChoice::Off
        );
        assert_eq!(
            with(&[("COOPGEMM_AUTOTUNE", "0")]).autotune,
            AutotuneChoice::Off
        );
        assert_eq!(
            with(&[("COOPGEMM_STAGE_B", "0")]).stage_b,
            StageBChoice::Never
        );
        // Empty is unset.
        assert_eq!(
            with(&[("COOPGEMM_BACKEND", "")]).backend,
            BackendChoice::Auto
        );
    }

    /// A value that means nothing is an error naming the variable, not a silent default.
    #[test]
    fn bad_values_are_typed_errors() {
        for (name, value) in [
            ("COOPGEMM_BACKEND", "cuda"),
            ("COOPGEMM_SPLIT_K", "many"),
            ("COOPGEMM_SIMT_VECTOR_LOADS", "yes"),
            ("COOPGEMM_STAGE_B", "2"),
            ("COOPGEMM_AUTOTUNE", "always"),
            ("COOPGEMM_CACHE", "no"),
            ("COOPGEMM_SIMT_CONFIG", "128x128x8-t9x9"),
            ("COOPGEMM_COOPMAT_TILING", "2x4x4x4"),
            ("COOPGEMM_COOPMAT2_TILE", "128x256"),
            ("COOPGEMM_COOPMAT_SHAPE", "16x16"),
            ("COOPGEMM_WGSL_COOPMAT_CONFIG", "c16-64x64-w2x2"),
            ("WGPU_BACKEND", "cuda"),
        ] {
            match try_with(&[(name, value)]) {
                Err(Error::InvalidOption {
                    name: got,
                    value: given,
                    ..
                }) => assert_eq!((got.as_str(), given.as_str()), (name, value)),
                other => panic!("{name}={value}: {other:?}"),
            }
        }
        let error = try_with(&[("COOPGEMM_SIMT_CONFIG", "typo")]).unwrap_err();
        assert!(error.to_string().contains("128x128x8-t8x8"), "{error}");
    }

    /// `with_env` keeps the caller's fields where no variable is set.
    #[test]
    fn variables_layer_over_the_callers_options() {
        let mine = ContextOptions::default()
            .with_split_k(SplitKChoice::Slices(3))
            .with_stage_b(StageBChoice::Never);
        let layered = mine
            .with_variables(&|name| (name == "COOPGEMM_STAGE_B").then(|| "1".to_string()))
            .unwrap();
        assert_eq!(layered.split_k, SplitKChoice::Slices(3));
        assert_eq!(layered.stage_b, StageBChoice::Always);
    }

    /// `ContextOptions::default()` reads no variable, even one that is set in this process;
    /// `from_env()` reads it. (The variable is one that nothing else in this test binary
    /// reads, and it is put back as it was.)
    #[test]
    fn default_reads_no_environment() {
        let name = "COOPGEMM_SPLIT_K";
        let before = std::env::var_os(name);
        std::env::set_var(name, "4");
        let default = ContextOptions::default();
        let from_env = ContextOptions::from_env();
        match before {
            Some(value) => std::env::set_var(name, value),
            None => std::env::remove_var(name),
        }
        assert_eq!(default.split_k, SplitKChoice::Auto);
        assert_eq!(from_env.unwrap().split_k, SplitKChoice::Slices(4));
    }
}
