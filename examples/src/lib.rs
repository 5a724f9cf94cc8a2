//! Runnable kubeward operators. The rollout operator arrives with the example-operator issue.
