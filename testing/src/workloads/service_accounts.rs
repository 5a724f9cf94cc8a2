//! The service account controller (`pkg/controller/serviceaccount/serviceaccounts_controller.go`):
//! every active namespace has a `default` ServiceAccount, created when the namespace is and
//! again when it is deleted, so pods (which the `ServiceAccount` admission plugin refuses
//! without their account) can be created in any namespace.

use jiff::Timestamp;
use serde_json::json;

use super::context::{NAMESPACES, SERVICE_ACCOUNTS, is_deleting};
use super::{Controller, Ctx, Keys};
use crate::registry::State;
use crate::store::{Change, ChangeType, ObjectKey, StorageKey};

const MANAGER: &str = "kube-controller-manager";
const ACCOUNT: &str = "default";

/// The controller: its keys are namespaces.
#[derive(Debug, Default)]
pub(crate) struct ServiceAccounts;

impl Controller for ServiceAccounts {
    fn primary(&self) -> StorageKey {
        NAMESPACES.storage()
    }

    fn observe(&mut self, change: &Change, _state: &State, keys: &mut Keys) {
        let meta = &change.object["metadata"];
        if change.storage == NAMESPACES.storage() && change.kind != ChangeType::Deleted {
            keys.insert((
                String::new(),
                meta["name"].as_str().unwrap_or_default().into(),
            ));
        } else if change.storage == SERVICE_ACCOUNTS.storage()
            && change.kind == ChangeType::Deleted
            && meta["name"] == ACCOUNT
        {
            keys.insert((
                String::new(),
                meta["namespace"].as_str().unwrap_or_default().into(),
            ));
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let namespace = ctx.get(NAMESPACES, "", &key.1)?;
        if is_deleting(&namespace) || ctx.get(SERVICE_ACCOUNTS, &key.1, ACCOUNT).is_some() {
            return None;
        }
        let account = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                             "metadata": {"name": ACCOUNT, "namespace": key.1}});
        let _ = ctx.create(MANAGER, SERVICE_ACCOUNTS, account);
        None
    }
}
