//! A kubeconfig for `kubectl --kubeconfig`.

use super::auth::tls::IssuedCertificate;
use super::validation::base64;

/// How the kubeconfig's user authenticates.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Credentials<'a> {
    /// A bearer token.
    Token(&'a str),
    /// A client certificate and its key.
    Certificate(&'a IssuedCertificate),
    /// A bearer token whose user impersonates `user` in `groups` (`kubectl --as`,
    /// `--as-group`).
    Impersonating {
        /// The token.
        token: &'a str,
        /// The user impersonated.
        user: &'a str,
        /// The groups impersonated.
        groups: &'a [String],
    },
}

/// A YAML scalar for `value` (JSON strings are YAML).
fn quoted(value: &str) -> String {
    serde_json::Value::from(value).to_string()
}

/// The kubeconfig YAML pointing at `url`, trusting `ca_pem` when the server serves https, with
/// `credentials` when given (without them, the server treats the requests as the
/// administrator's unless tokens are configured).
pub(crate) fn render(
    url: &str,
    ca_pem: Option<&str>,
    credentials: Option<Credentials<'_>>,
) -> String {
    let user = match credentials {
        Some(Credentials::Token(token)) => format!("{{token: {}}}", quoted(token)),
        Some(Credentials::Certificate(certificate)) => format!(
            "{{client-certificate-data: {}, client-key-data: {}}}",
            base64::encode(certificate.cert_pem.as_bytes()),
            base64::encode(certificate.key_pem.as_bytes())
        ),
        Some(Credentials::Impersonating {
            token,
            user,
            groups,
        }) => {
            let groups: Vec<String> = groups.iter().map(|g| quoted(g)).collect();
            format!(
                "{{token: {}, as: {}, as-groups: [{}]}}",
                quoted(token),
                quoted(user),
                groups.join(", ")
            )
        }
        None => "{}".to_owned(),
    };
    let authority = ca_pem
        .map(|pem| {
            format!(
                "\n    certificate-authority-data: {}",
                base64::encode(pem.as_bytes())
            )
        })
        .unwrap_or_default();
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: kubeward
  cluster:
    server: {url}{authority}
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impersonating_user_carries_its_token_and_whom_it_acts_as() {
        let groups = ["ops".to_owned(), "on call".to_owned()];
        let text = render(
            "https://127.0.0.1:6443",
            None,
            Some(Credentials::Impersonating {
                token: "t0k",
                user: "system:serviceaccount:default:op",
                groups: &groups,
            }),
        );
        let config: serde_json::Value = serde_yaml_ng::from_str(&text).unwrap();
        assert_eq!(
            config["users"][0]["user"],
            serde_json::json!({
                "token": "t0k",
                "as": "system:serviceaccount:default:op",
                "as-groups": ["ops", "on call"],
            })
        );
    }
}
