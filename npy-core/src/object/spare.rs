//! One value kept from one use for the next (a buffer, for its capacity: memory already
//! faulted in), shared by threads without ever waiting: a thread that finds the lock
//! held goes without, so a child forked while another thread held it never waits.

use std::sync::Mutex;

pub(crate) struct Spare<T>(Mutex<Option<T>>);

impl<T> Spare<T> {
    pub(crate) const fn new() -> Self {
        Spare(Mutex::new(None))
    }

    /// The kept value, if there is one and no other thread holds the lock.
    pub(crate) fn take(&self) -> Option<T> {
        self.0.try_lock().ok().and_then(|mut kept| kept.take())
    }

    /// Keeps `value` unless one is kept already or another thread holds the lock.
    pub(crate) fn keep(&self, value: T) {
        if let Ok(mut kept) = self.0.try_lock() {
            kept.get_or_insert(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_is_kept_and_a_held_lock_is_never_waited_for() {
        let spare = Spare::new();
        spare.keep(1);
        spare.keep(2);
        assert_eq!(spare.take(), Some(1));
        assert_eq!(spare.take(), None);
        spare.keep(3);
        let held = spare.0.lock().unwrap();
        spare.keep(4);
        assert_eq!(spare.take(), None);
        drop(held);
        assert_eq!(spare.take(), Some(3));
    }
}
