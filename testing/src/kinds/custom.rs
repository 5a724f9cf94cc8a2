//! Custom resources: the objects a CustomResourceDefinition serves, with the custom resource
//! strategy's differences from the generic registry
//! (`apiextensions-apiserver/pkg/registry/customresource/strategy.go`). Their schema's
//! validation, defaulting and pruning are [`crate::schema`]'s; their columns are the
//! definition's `additionalPrinterColumns`.

use super::Strategy;

/// Custom resources' [`Strategy`].
pub(crate) struct CustomResources;

impl Strategy for CustomResources {
    /// `AllowUnconditionalUpdate` is false: a PUT names the resourceVersion it replaces.
    fn allows_unconditional_update(&self) -> bool {
        false
    }

    /// The custom resource field-label conversion (`metadata.name`, `metadata.namespace` and
    /// the definition's selectable fields).
    fn converts_field_labels(&self) -> bool {
        true
    }
}
