//! [`Memo`]: what was built once per key (shader modules, pipelines), shared between threads.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

use crate::error::{Error, Result};

/// A map from a key to the value built for it on first use. Building holds the lock, so two
/// threads asking for the same new key build it once.
#[derive(Debug)]
pub(crate) struct Memo<K, V> {
    what: &'static str,
    built: Mutex<HashMap<K, V>>,
}

impl<K: Eq + Hash, V: Clone> Memo<K, V> {
    /// An empty memo; `what` names its values in errors ("pipeline", "module").
    pub(crate) fn new(what: &'static str) -> Self {
        Memo {
            what,
            built: Mutex::new(HashMap::new()),
        }
    }

    /// The value of `key`, built by `build` if there is none yet (a failed build is not
    /// remembered).
    pub(crate) fn get_or_build(&self, key: K, build: impl FnOnce(&K) -> Result<V>) -> Result<V> {
        let mut built = self
            .built
            .lock()
            .map_err(|_| Error::Pipeline(format!("{} cache poisoned", self.what)))?;
        if let Some(value) = built.get(&key) {
            return Ok(value.clone());
        }
        let value = build(&key)?;
        built.insert(key, value.clone());
        Ok(value)
    }
}
