impl Rollouts {
    async fn apply(
        &self,
        rollout: &Rollout,
        pass: &mut Pass<Rollout>,
    ) -> Result<Action, Error> {
        let manifest = ::kubeward::__private::try_step_sync(
            const { ::kubeward::__private::StepName::from_static("render") },
            || render(rollout),
        )?;
        ::kubeward::__private::try_step(
                const { ::kubeward::__private::StepName::from_static("deploy") },
                self.deploy(&manifest),
            )
            .await?;
        let probed = ::kubeward::__private::step_with(
                const { ::kubeward::__private::StepName::from_static("probe") },
                self.probe(),
                |value| ::kubeward::__private::Probe(value).is_failure(),
            )
            .await;
        if let up_to_date::State::Applied(now) = pass.condition::<UpToDate>() {
            pass.set(now.to(up_to_date::Applying, "rolling out"));
        }
        Ok(Action::await_change())
    }
    async fn publish(&self, m: &Manifest) -> Result<(), Error> {
        ::kubeward::__private::try_step::<
            Result<(), Error>,
            _,
        >(
                const { ::kubeward::__private::StepName::from_static("publish") },
                async move { self.client.apply(m).await },
            )
            .await
    }
    async fn cleanup(
        &self,
        rollout: &Rollout,
        pass: &mut Pass<Rollout>,
    ) -> Result<Action, Error> {
        Ok(Action::await_change())
    }
}
const _: () = ::kubeward::__private::unique_step(
    checks::__kubeward_step_verify,
    &[
        ::kubeward::observe::StepName::from_static("render"),
        ::kubeward::observe::StepName::from_static("deploy"),
        ::kubeward::observe::StepName::from_static("probe"),
        ::kubeward::observe::StepName::from_static("publish"),
    ],
    "duplicate step name: the `#[step]` fn `checks::verify` in `steps(..)` has the name of another step of this reconciler; each step is its own metric series, name one differently",
);
impl ::kubeward::Reconciler for Rollouts {
    type Resource = Rollout;
    type Error = Error;
    const NAME: ::core::option::Option<&'static str> = ::core::option::Option::Some(
        "demo.kubeward.dev/rollouts",
    );
    const FINALIZER: ::core::option::Option<&'static str> = ::core::option::Option::Some(
        "demo.kubeward.dev/cleanup",
    );
    const CONDITIONS: &'static [&'static ::kubeward::vocabulary::Vocabulary] = &[
        <UpToDate as ::kubeward::vocabulary::ConditionType>::VOCABULARY,
    ];
    const STEPS: &'static [::kubeward::observe::StepName] = &[
        ::kubeward::observe::StepName::from_static("render"),
        ::kubeward::observe::StepName::from_static("deploy"),
        ::kubeward::observe::StepName::from_static("probe"),
        ::kubeward::observe::StepName::from_static("publish"),
        checks::__kubeward_step_verify,
    ];
    const KSTATUS: ::core::option::Option<::kubeward::kstatus::Kstatus> = ::core::option::Option::Some(
        ::kubeward::kstatus::Kstatus::DEFAULT,
    );
    fn relations() -> ::kubeward::relations::Relations<Self::Resource> {
        ::kubeward::relations::Relations::new()
            .owns::<ConfigMap>()
            .watches::<Secret, _>(secret_users)
    }
    fn apply(
        &self,
        object: &Self::Resource,
        pass: &mut ::kubeward::Pass<Self::Resource>,
    ) -> impl ::core::future::Future<
        Output = ::core::result::Result<::kubeward::Action, Self::Error>,
    > + ::core::marker::Send {
        <Rollouts>::apply(self, object, pass)
    }
    fn cleanup(
        &self,
        object: &Self::Resource,
        pass: &mut ::kubeward::Pass<Self::Resource>,
    ) -> impl ::core::future::Future<
        Output = ::core::result::Result<::kubeward::Action, Self::Error>,
    > + ::core::marker::Send {
        <Rollouts>::cleanup(self, object, pass)
    }
}
#[allow(dead_code)]
impl Rollouts {
    /// The ready-to-run controller of this reconciler against the cluster `client`
    /// talks to; configure it further and `run()` it.
    pub fn controller(
        self,
        client: ::kubeward::__private::kube::Client,
    ) -> ::kubeward::controller::Controller<Self> {
        ::kubeward::controller::Controller::new(self, client)
    }
    /// The RBAC rules this controller needs (its resource, status, finalizer, events, the
    /// kinds it owns and watches and, with `leader_election`, leases), as a ClusterRole's
    /// rules.
    pub fn rbac_rules(
        leader_election: bool,
    ) -> ::std::vec::Vec<::kubeward::__private::k8s_openapi::api::rbac::v1::PolicyRule> {
        ::kubeward::rbac::rules::<Self>(leader_election)
    }
}
