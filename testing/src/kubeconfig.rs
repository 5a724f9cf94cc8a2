//! A kubeconfig for `kubectl --kubeconfig`.

/// The kubeconfig YAML pointing at `url`, bearing `token` when given (without one, the server
/// treats the requests as the administrator's unless tokens are configured).
pub fn render(url: &str, token: Option<&str>) -> String {
    let user = match token {
        // Tokens are minted or configured by the test author; quoting keeps any of them YAML.
        Some(token) => format!("{{token: {}}}", serde_json::Value::from(token)),
        None => "{}".to_owned(),
    };
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
  user: {user}
preferences: {{}}
"
    )
}
