//! A bounded table that forgets the entry heard least recently when a new
//! one comes and it is full (sans-IO). `usim nmea` keeps its vehicles,
//! their pacing and the AIS targets it hears in such tables, so that a
//! burst of one-off names or MMSIs cannot fill them for the life of the
//! process and shut out a vehicle that starts later (issue 37 item 11).
use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

/// At most `cap` entries; [`Recent::heard`] marks an entry as the newest.
#[derive(Debug, Clone)]
pub struct Recent<K, V> {
    map: HashMap<K, (u64, V)>,
    /// Entries by the number of the hearing that last touched them.
    order: BTreeMap<u64, K>,
    next: u64,
    cap: usize,
}

impl<K: Hash + Eq + Clone, V> Recent<K, V> {
    /// An empty table of at most `cap` entries (at least 1).
    pub fn new(cap: usize) -> Recent<K, V> {
        Recent {
            map: HashMap::new(),
            order: BTreeMap::new(),
            next: 0,
            cap: cap.max(1),
        }
    }

    /// The entry of `key`, made the most recently heard; a new key gets
    /// `make()`, after the least recently heard entry is forgotten if the
    /// table is full (returned as `.1`).
    pub fn heard<Q>(&mut self, key: &Q, make: impl FnOnce() -> V) -> (&mut V, Option<(K, V)>)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let n = self.next;
        self.next += 1;
        let mut forgotten = None;
        if let Some((seq, _)) = self.map.get(key) {
            let old = *seq;
            if let Some(k) = self.order.remove(&old) {
                self.order.insert(n, k);
            }
        } else {
            if self.map.len() >= self.cap {
                if let Some((_, oldest)) = self.order.pop_first() {
                    forgotten = self.map.remove::<K>(&oldest).map(|(_, v)| (oldest, v));
                }
            }
            let owned = key.to_owned();
            self.order.insert(n, owned.clone());
            self.map.insert(owned, (n, make()));
        }
        let Some(entry) = self.map.get_mut(key) else {
            unreachable!("the key was inserted above");
        };
        entry.0 = n;
        (&mut entry.1, forgotten)
    }

    /// The entry of `key`, without touching its age.
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get(key).map(|(_, v)| v)
    }

    /// The entry of `key`, mutable, without touching its age.
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get_mut(key).map(|(_, v)| v)
    }

    /// Whether `key` is in the table.
    pub fn contains<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.contains_key(key)
    }

    /// Forget `key`.
    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let (seq, v) = self.map.remove(key)?;
        self.order.remove(&seq);
        Some(v)
    }

    /// Forget and return the entry heard least recently.
    pub fn pop_oldest(&mut self) -> Option<(K, V)> {
        let (_, k) = self.order.pop_first()?;
        let (_, v) = self.map.remove::<K>(&k)?;
        Some((k, v))
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// No entry held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every entry, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.map.iter().map(|(k, (_, v))| (k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_heard_is_forgotten_first() {
        let mut t: Recent<String, u32> = Recent::new(3);
        for (i, k) in ["a", "b", "c"].into_iter().enumerate() {
            let (v, gone) = t.heard(k, || i as u32);
            assert_eq!((*v, gone), (i as u32, None));
        }
        // `a` heard again: `b` is now the oldest.
        *t.heard("a", || 99).0 += 10;
        let (_, gone) = t.heard("d", || 3);
        assert_eq!(gone, Some(("b".to_string(), 1)));
        assert_eq!(t.get("a"), Some(&10));
        assert!(!t.contains("b"));
        assert_eq!(t.len(), 3);
        // get and get_mut do not make an entry younger.
        *t.get_mut("c").unwrap() += 1;
        let (_, gone) = t.heard("e", || 4);
        assert_eq!(gone, Some(("c".to_string(), 3)));
        assert_eq!(t.remove("a"), Some(10));
        assert_eq!(t.heard("f", || 5).1, None, "room after a remove");
        let mut keys: Vec<&String> = t.iter().map(|(k, _)| k).collect();
        keys.sort();
        assert_eq!(keys, ["d", "e", "f"]);
        assert_eq!(t.pop_oldest(), Some(("d".to_string(), 3)));
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn a_burst_of_one_off_keys_never_grows_it_past_its_cap() {
        let mut t: Recent<u32, ()> = Recent::new(100);
        for k in 0..10_000 {
            t.heard(&k, || ());
            assert!(t.len() <= 100);
        }
        assert_eq!(t.order.len(), t.map.len());
        assert!(t.contains(&9_999) && !t.contains(&9_899));
    }
}
