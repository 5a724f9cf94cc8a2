//! Custom resources: the objects a CustomResourceDefinition serves, with the custom resource
//! strategy's differences from the generic registry
//! (`apiextensions-apiserver/pkg/registry/customresource/strategy.go`). Their schema's
//! validation, defaulting and pruning are [`crate::schema`]'s; their columns are the
//! definition's `additionalPrinterColumns`.

use std::borrow::Cow;

use serde_json::Value;

use super::{Strategy, served_as};
use crate::resources::ResourceInfo;
use crate::schema;

/// Custom resources' [`Strategy`].
pub(crate) struct CustomResources;

impl Strategy for CustomResources {
    /// Defaults added to the definition's schema after an object was stored show on read, as
    /// the storage decoder defaults.
    fn to_served<'a>(&self, info: &ResourceInfo, stored: &'a Value) -> Cow<'a, Value> {
        let mut served = served_as(info, stored.clone());
        schema::default_on_read(info, &mut served);
        Cow::Owned(served)
    }

    /// `AllowUnconditionalUpdate` is false: a PUT names the resourceVersion it replaces.
    fn allows_unconditional_update(&self) -> bool {
        false
    }

    /// The custom resource field-label conversion: `field label not supported: x` for a field
    /// other than `metadata.name` and `metadata.namespace` (a definition's `selectableFields`
    /// are not served).
    fn unsupported_field_label(&self, field: &str) -> Option<String> {
        super::core_field_label_error(field)
    }
}
