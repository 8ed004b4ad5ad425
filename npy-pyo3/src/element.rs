//! What `#[derive(NpyRecord)] #[npy(pyo3)]` expands to call: rust-numpy's `Element` for a
//! record, its dtype being the record's memory (`NpyRecord::native_dtype`).

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use npy_core::NpyRecord;
use numpy::PyArrayDescr;
use pyo3::prelude::*;

use crate::dtype::to_numpy;

/// The NumPy dtypes made so far, one per record type (a dtype is made once per process).
static DTYPES: Mutex<Option<HashMap<TypeId, Py<PyArrayDescr>>>> = Mutex::new(None);

/// Fails compilation (it runs in a `const` block) for types NumPy could make invalid:
/// skipped fields (NumPy copies their bytes as padding) and fields with invalid byte
/// patterns (`char`, enums), which NumPy code could write.
pub const fn assert_element<T: NpyRecord>() {
    assert!(!T::HAS_SKIPPED, "#[npy(pyo3)] needs every field stored: NumPy would copy #[npy(skip)] fields as padding");
    assert!(
        !T::NEEDS_CHECK,
        "#[npy(pyo3)] needs fields that any bytes make valid: char and enum fields are not (NumPy could write invalid ones)"
    );
}

/// `T`'s memory as a NumPy dtype: `T::native_dtype()` through [`to_numpy`], made once.
///
/// # Panics
/// When NumPy cannot be imported or refuses the dtype, as rust-numpy's own `Element`
/// implementations do (the trait's method cannot fail).
pub fn element_dtype<T: NpyRecord>(py: Python<'_>) -> Bound<'_, PyArrayDescr> {
    let key = TypeId::of::<T>();
    let cached = DTYPES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .and_then(|m| m.get(&key).map(|d| d.clone_ref(py)));
    if let Some(dtype) = cached {
        return dtype.into_bound(py);
    }
    // Made without the lock held: making it runs Python code, which may switch threads.
    let dtype = to_numpy(py, &T::native_dtype())
        .unwrap_or_else(|e| panic!("NumPy refused the dtype of {}: {e}", std::any::type_name::<T>()));
    DTYPES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .insert(key, dtype.clone().unbind());
    dtype
}
