/// Renders the manifest.
pub fn render(rollout: &Rollout) -> anyhow::Result<Manifest> {
    ::kubeward::__private::try_step_sync::<
        anyhow::Result<Manifest>,
    >(
        const { ::kubeward::__private::StepName::from_static("render") },
        move || { Ok(Manifest::from(rollout)) },
    )
}
