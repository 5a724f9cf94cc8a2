//! A kubeconfig for `kubectl --kubeconfig`.

/// The kubeconfig YAML pointing at `url` (no credentials: the server treats anonymous as admin).
pub fn render(url: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: kubeward
  cluster:
    server: {url}
contexts:
- name: kubeward
  context:
    cluster: kubeward
    namespace: default
    user: kubeward
current-context: kubeward
users:
- name: kubeward
  user: {{}}
preferences: {{}}
"
    )
}
