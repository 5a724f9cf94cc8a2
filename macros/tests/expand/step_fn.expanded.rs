/// Renders the manifest.
pub fn render(rollout: &Rollout) -> anyhow::Result<Manifest> {
    ::kubeward::__private::try_step_sync::<
        anyhow::Result<Manifest>,
    >(
        const { ::kubeward::__private::StepName::from_static("render") },
        move || { Ok(Manifest::from(rollout)) },
    )
}
#[doc(hidden)]
#[allow(dead_code, non_upper_case_globals)]
pub const __kubeward_step_render: ::kubeward::__private::StepName = ::kubeward::__private::StepName::from_static(
    "render",
);
