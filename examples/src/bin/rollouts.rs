//! `rollouts`: the kubeward example rollout operator.
//!
//! ```text
//! rollouts                                  scripted scenario on the embedded API server
//! rollouts --serve [--kubeconfig-out PATH]  the scenario, then keep serving for kubectl
//! rollouts run [--kubeconfig PATH] [--metrics-addr ADDR] [--leader-election] [--namespace NS]...
//!                                           the operator against a real cluster
//! rollouts crd                              print the CustomResourceDefinition
//! rollouts rbac [--leader-election [--lease-namespace NS]] [--namespace NS]...
//!               [--service-account-namespace NS]
//!                                          print the ClusterRole (a Role and RoleBinding per NS,
//!                                          and for the Lease)
//! rollouts alerts [--rules | --tests | --out DIR]
//!                                           print the PrometheusRule (or the rule file, or its
//!                                           promtool tests), or write all three to DIR
//! ```

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kubeward::manifest::to_yaml;
use kubeward::ops::OpsServer;
use kubeward_examples::rollouts::operator::{self, LeaseOptions, Operator, OperatorOptions};
use kubeward_examples::rollouts::rbac;
use kubeward_examples::rollouts::scenario::{self, RunningOperator, ScenarioOptions};

/// The kubeward example rollout operator. Without a subcommand, runs a scripted scenario on an
/// embedded in-process API server and prints what happens.
#[derive(Debug, Parser)]
#[command(name = "rollouts", version)]
struct Cli {
    /// After the scenario (which then keeps the Rollout), keep the API server (the embedded
    /// one; a real kube-apiserver with KUBEWARD_TEST_APISERVER=real and KUBEBUILDER_ASSETS) and
    /// the operator running until Ctrl-C, for kubectl.
    #[arg(long)]
    serve: bool,
    /// With --serve: where to write the kubeconfig for kubectl.
    #[arg(
        long,
        value_name = "PATH",
        default_value = "rollouts.kubeconfig",
        requires = "serve"
    )]
    kubeconfig_out: PathBuf,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the operator against a cluster (KUBECONFIG, ~/.kube/config or in-cluster).
    Run {
        /// The kubeconfig to use instead of the usual resolution.
        #[arg(long, value_name = "PATH")]
        kubeconfig: Option<PathBuf>,
        /// Serve /metrics, /healthz and /readyz on this address.
        #[arg(long, value_name = "ADDR")]
        metrics_addr: Option<SocketAddr>,
        /// Reconcile only while holding the Lease `kubeward-rollouts` (for several replicas;
        /// `rollouts rbac --leader-election` includes the Lease rule).
        #[arg(long)]
        leader_election: bool,
        /// The namespace of the Lease (default: the first --namespace, else `default`).
        #[arg(long, value_name = "NAMESPACE")]
        lease_namespace: Option<String>,
        /// Watch and reconcile the Rollouts of this namespace alone (repeat it for several:
        /// one watch each), with the Roles that `rollouts rbac --namespace` prints; default:
        /// the whole cluster.
        #[arg(long = "namespace", value_name = "NAMESPACE")]
        namespaces: Vec<String>,
    },
    /// Print the Rollout CustomResourceDefinition as YAML.
    Crd,
    /// Print the ClusterRole the operator needs as YAML (with --namespace, a Role and a
    /// RoleBinding to the service account `rollouts` in each namespace given, and with
    /// --leader-election one more of each for the Lease in its namespace).
    Rbac {
        /// Include the Lease rule that --leader-election needs.
        #[arg(long)]
        leader_election: bool,
        /// With --namespace: the namespace of the Lease, as given to `rollouts run` (default:
        /// the first --namespace).
        #[arg(
            long,
            value_name = "NAMESPACE",
            requires_all = ["leader_election", "namespaces"]
        )]
        lease_namespace: Option<String>,
        /// For `rollouts run --namespace NAMESPACE` (repeat it as there).
        #[arg(long = "namespace", value_name = "NAMESPACE")]
        namespaces: Vec<String>,
        /// The namespace of the service account `rollouts` the bindings name (where the
        /// operator runs; default: the first --namespace).
        #[arg(long, value_name = "NAMESPACE", requires = "namespaces")]
        service_account_namespace: Option<String>,
    },
    /// Print the alert rules generated from the operator's declaration, as a Prometheus Operator
    /// PrometheusRule (`rollouts alerts | kubectl apply -f -`).
    Alerts {
        /// Print the plain Prometheus rule file (for `rule_files:`) instead.
        #[arg(long, conflicts_with_all = ["tests", "out"])]
        rules: bool,
        /// Print the `promtool test rules` scenarios instead.
        #[arg(long, conflicts_with = "out")]
        tests: bool,
        /// Write the rule file, the PrometheusRule and the promtool tests into this directory.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Crd) => print_yaml(&operator::crd()),
        Some(Command::Rbac {
            leader_election,
            lease_namespace,
            namespaces,
            service_account_namespace,
        }) => {
            // The Lease's namespace as `rollouts run` picks it.
            let lease_namespace = leader_election.then(|| {
                lease_namespace
                    .or_else(|| namespaces.first().cloned())
                    .unwrap_or_else(|| "default".to_owned())
            });
            print_rbac(lease_namespace, &namespaces, service_account_namespace)
        }
        Some(Command::Alerts { rules, tests, out }) => alerts(rules, tests, out.as_deref()),
        Some(Command::Run {
            kubeconfig,
            metrics_addr,
            leader_election,
            lease_namespace,
            namespaces,
        }) => {
            let lease_namespace = lease_namespace
                .or_else(|| namespaces.first().cloned())
                .unwrap_or_else(|| "default".to_owned());
            run(
                kubeconfig,
                metrics_addr,
                leader_election,
                &lease_namespace,
                namespaces,
            )
            .await
        }
        None if cli.serve => serve(&cli.kubeconfig_out).await,
        None => scenario().await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let mut message = format!("rollouts: error: {error}");
            let mut source = error.source();
            while let Some(cause) = source {
                message.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn print_yaml(value: &impl serde::Serialize) -> Result<(), BoxError> {
    let value = serde_json::to_value(value)?;
    print!("{}", to_yaml(&value));
    Ok(())
}

/// The ClusterRole, or a Role and RoleBinding per namespace and, with leader election (the
/// Lease's namespace), one for the Lease (YAML documents).
fn print_rbac(
    lease_namespace: Option<String>,
    namespaces: &[String],
    service_account_namespace: Option<String>,
) -> Result<(), BoxError> {
    let Some(first) = namespaces.first() else {
        return print_yaml(&rbac::cluster_role(lease_namespace.is_some()));
    };
    let service_account_namespace = service_account_namespace.unwrap_or_else(|| first.clone());
    let roles = namespaces
        .iter()
        .map(|namespace| rbac::namespaced(namespace, &service_account_namespace))
        .chain(lease_namespace.map(|lease| rbac::lease(&lease, &service_account_namespace)));
    for (index, (role, binding)) in roles.enumerate() {
        if index > 0 {
            println!("---");
        }
        print_yaml(&role)?;
        println!("---");
        print_yaml(&binding)?;
    }
    Ok(())
}

fn alerts(rules: bool, tests: bool, out: Option<&std::path::Path>) -> Result<(), BoxError> {
    let alerts = operator::alert_rules()?;
    match out {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            for (name, contents) in alerts.files() {
                let path = dir.join(name);
                std::fs::write(&path, contents)
                    .map_err(|e| format!("writing {}: {e}", path.display()))?;
                println!("wrote {}", path.display());
            }
        }
        None if rules => print!("{}", alerts.rules()),
        None if tests => print!("{}", alerts.tests()),
        None => print!("{}", alerts.prometheus_rule()),
    }
    Ok(())
}

async fn scenario() -> Result<(), BoxError> {
    let mut stdout = std::io::stdout();
    scenario::run_embedded(&ScenarioOptions::default(), &mut stdout).await?;
    Ok(())
}

async fn serve(kubeconfig_out: &std::path::Path) -> Result<(), BoxError> {
    let options = ScenarioOptions {
        keep: true,
        ..ScenarioOptions::default()
    };
    // The embedded API server, or the real one when KUBEWARD_TEST_APISERVER=real.
    let server = scenario::cluster().await?;
    let client = server.client()?;
    let mut stdout = std::io::stdout();
    writeln!(
        stdout,
        "kubeward rollout operator: scripted scenario on the {} at {}",
        server.describe(),
        server.url()
    )?;
    let running = RunningOperator::start(client.clone(), &options.operator())?;
    if let Err(error) = scenario::drive(&client, &running, &options, &mut stdout).await {
        let _ = running.stop().await;
        return Err(error.into());
    }
    server.write_kubeconfig(kubeconfig_out)?;
    let path = kubeconfig_out.display();
    writeln!(
        stdout,
        "\nServing the API server with the operator running. Try:\n  \
         kubectl --kubeconfig {path} get rollouts\n  \
         kubectl --kubeconfig {path} describe rollout {name}\n  \
         kubectl --kubeconfig {path} get deployments,services,pods\n  \
         kubectl --kubeconfig {path} get pods -w\n\
         Ctrl-C to stop.",
        name = options.name
    )?;
    stdout.flush()?;
    let _ = tokio::signal::ctrl_c().await;
    running.stop().await?;
    Ok(())
}

async fn run(
    kubeconfig: Option<PathBuf>,
    metrics_addr: Option<SocketAddr>,
    leader_election: bool,
    lease_namespace: &str,
    namespaces: Vec<String>,
) -> Result<(), BoxError> {
    let client = match kubeconfig {
        Some(path) => {
            let config = kube::Config::from_custom_kubeconfig(
                Kubeconfig::read_from(path)?,
                &KubeConfigOptions::default(),
            )
            .await?;
            kube::Client::try_from(config)?
        }
        None => kube::Client::try_default().await?,
    };
    let identity = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "rollouts".to_owned());
    let options = OperatorOptions {
        instance: Some(identity),
        leader_election: leader_election.then(|| LeaseOptions::new(lease_namespace)),
        namespaces,
        ..OperatorOptions::default()
    };
    let Operator {
        controller,
        registry,
    } = Operator::new(client, &options)?;
    if let Some(addr) = metrics_addr {
        let ops = OpsServer::bind(addr)
            .await?
            .with_registry(registry)
            .with_readiness(controller.readiness());
        eprintln!(
            "rollouts: serving /metrics, /healthz, /readyz on {}",
            ops.local_addr()?
        );
        tokio::spawn(ops.serve());
    }
    eprintln!(
        "rollouts: running {} (Ctrl-C or SIGTERM stops)",
        controller.name()
    );
    controller.run().await?;
    Ok(())
}
