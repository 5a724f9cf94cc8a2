//! ServiceAccounts (`pkg/registry/core/serviceaccount`): the generic registry with their typed
//! decoding, answering a DELETE with the deleted object.

use super::Strategy;
use crate::validation::gotypes;

/// ServiceAccounts' [`Strategy`].
pub(crate) struct ServiceAccounts;

impl Strategy for ServiceAccounts {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(&gotypes::SERVICE_ACCOUNT)
    }

    fn update_revalidates_metadata(&self) -> bool {
        true
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }
}
