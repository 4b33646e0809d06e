//! [`Memo`]: what was built once per key (shader modules, pipelines), shared between threads.
//!
//! Each key has a slot of its own: the map's lock is held only to find or add a slot, and a
//! build holds only its key's slot. Two threads that ask for the same new key build it once
//! (the second waits for the first); a thread that asks for another key, built or not, never
//! waits for a build it does not need (a coopmat2 pipeline takes seconds to compile on a GPU
//! driver, an emulated one on lavapipe longer).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};

/// One key's value: `None` until built (and again after a failed build, which is not
/// remembered: the next caller tries again).
type Slot<V> = Arc<Mutex<Option<V>>>;

/// A map from a key to the value built for it on first use.
#[derive(Debug)]
pub(crate) struct Memo<K, V> {
    what: &'static str,
    slots: Mutex<HashMap<K, Slot<V>>>,
}

impl<K: Eq + Hash + Clone, V: Clone> Memo<K, V> {
    /// An empty memo; `what` names its values in errors ("pipeline", "module").
    pub(crate) fn new(what: &'static str) -> Self {
        Memo {
            what,
            slots: Mutex::new(HashMap::new()),
        }
    }

    fn poisoned(&self) -> Error {
        Error::Pipeline(format!("{} cache poisoned", self.what))
    }

    /// The value of `key`, built by `build` if there is none yet (a failed build is not
    /// remembered). Only callers of the same key wait for `build`.
    pub(crate) fn get_or_build(&self, key: K, build: impl FnOnce(&K) -> Result<V>) -> Result<V> {
        let slot = {
            let mut slots = self.slots.lock().map_err(|_| self.poisoned())?;
            Arc::clone(slots.entry(key.clone()).or_default())
        };
        let mut value = slot.lock().map_err(|_| self.poisoned())?;
        if let Some(value) = value.as_ref() {
            return Ok(value.clone());
        }
        let built = build(&key)?;
        *value = Some(built.clone());
        Ok(built)
    }

    /// How many values are built (a key whose build is under way or failed is not counted;
    /// its slot is skipped rather than waited for).
    // `len` and `drain` serve the raw-Vulkan interop (object counts, destroying handles).
    #[cfg_attr(not(vulkan_interop), allow(dead_code))]
    pub(crate) fn len(&self) -> usize {
        let Ok(slots) = self.slots.lock() else {
            return 0;
        };
        slots
            .values()
            .filter(|slot| slot.try_lock().is_ok_and(|value| value.is_some()))
            .count()
    }

    /// Takes every built value out (for destroying raw objects when their owner drops;
    /// nothing else can be building then).
    #[cfg_attr(not(vulkan_interop), allow(dead_code))]
    pub(crate) fn drain(&self) -> Vec<V> {
        let Ok(mut slots) = self.slots.lock() else {
            return Vec::new();
        };
        slots
            .drain()
            .filter_map(|(_, slot)| slot.lock().ok().and_then(|mut value| value.take()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    /// A slow build of one key does not hold up a key that is built already, nor the build
    /// of another new key; two callers of the same new key build it once.
    #[test]
    fn a_build_blocks_only_its_own_key() {
        let memo: &Memo<u32, u32> = &Memo::new("value");
        let builds = &AtomicUsize::new(0);
        memo.get_or_build(1, |_| Ok(10)).unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        std::thread::scope(|scope| {
            let slow = scope.spawn(move || {
                memo.get_or_build(2, |_| {
                    builds.fetch_add(1, Ordering::SeqCst);
                    started_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                    Ok(20)
                })
            });
            started_rx.recv().unwrap();
            let same = scope.spawn(|| {
                memo.get_or_build(2, |_| {
                    builds.fetch_add(1, Ordering::SeqCst);
                    Ok(21)
                })
            });
            // While key 2 is being built: key 1 answers at once, key 3 builds.
            let before = Instant::now();
            assert_eq!(memo.get_or_build(1, |_| Ok(11)).unwrap(), 10);
            assert_eq!(memo.get_or_build(3, |_| Ok(30)).unwrap(), 30);
            assert!(before.elapsed() < Duration::from_secs(5));
            assert_eq!(memo.len(), 2, "key 2 is still building");
            release_tx.send(()).unwrap();
            assert_eq!(slow.join().unwrap().unwrap(), 20);
            assert_eq!(same.join().unwrap().unwrap(), 20);
        });
        assert_eq!(builds.load(Ordering::SeqCst), 1);
        assert_eq!(memo.len(), 3);
        let mut values = memo.drain();
        values.sort();
        assert_eq!(values, [10, 20, 30]);
    }

    #[test]
    fn a_failed_build_is_tried_again() {
        let memo: Memo<u32, u32> = Memo::new("value");
        assert!(memo
            .get_or_build(1, |_| Err(Error::Pipeline("no".into())))
            .is_err());
        assert_eq!(memo.len(), 0);
        assert_eq!(memo.get_or_build(1, |_| Ok(5)).unwrap(), 5);
    }
}
