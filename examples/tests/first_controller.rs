//! The README's first controller and its test, as the README shows them (`readme.rs` keeps the
//! two the same): a resource, a single-fn reconciler, and a test on the embedded API server.

// README resource: begin
use kube::CustomResource;
use kubeward::conditions::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Someone to greet.
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "demo.kubeward.dev", version = "v1", kind = "Greeting")]
#[kube(namespaced, status = "GreetingStatus")]
pub struct GreetingSpec {
    pub name: String,
}

/// Written by the runtime: the conditions and the generation they were computed from.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GreetingStatus {
    pub conditions: Vec<Condition>,
    pub observed_generation: Option<i64>,
}
// README resource: end

// README controller: begin
use kubeward::{Action, Pass};

/// The condition `Greeted`, declared once: its one reason is True, so its event is Normal.
#[kubeward::condition]
pub enum Greeted {
    #[reason(True)]
    SaidHello,
}

/// Greets each Greeting in its condition `Greeted`. The runtime stores it, publishes its event
/// once and derives kstatus' `Ready`; the declaration also yields its metrics and RBAC rules.
#[kubeward::reconciler(
    resource = Greeting,
    controller = "demo.kubeward.dev/greeter",
    conditions(Greeted)
)]
async fn greeter(greeting: &Greeting, pass: &mut Pass<Greeting>) -> Result<Action, kube::Error> {
    let hello = format!("hello, {}", greeting.spec.name);
    let greeted = pass.condition::<Greeted>();
    if let Some(said) = greeted.try_to(Greeted::SaidHello, hello) {
        pass.set(said);
    }
    Ok(Action::await_change())
}
// README controller: end

// README test: begin
use kube::{Api, CustomResourceExt};
use kubeward_testing::{ApiServer, ConditionMatch, wait_for_condition};
#[tokio::test]
async fn greets_each_greeting() -> Result<(), Box<dyn std::error::Error>> {
    let server = ApiServer::start().await?;
    server.install_crd(&Greeting::crd())?;
    tokio::spawn(Greeter.controller(server.client()?).run());
    let greetings = Api::<Greeting>::namespaced(server.client()?, "default");
    let ada = Greeting::new("ada", GreetingSpec { name: "Ada".into() });
    greetings.create(&Default::default(), &ada).await?;
    let greeted = ConditionMatch::new("Greeted").reason("SaidHello");
    let within = std::time::Duration::from_secs(10);
    wait_for_condition(&greetings, "ada", &greeted, within).await?;
    Ok(())
}
// README test: end

/// What the controller's doc comment promises beyond the condition: kstatus' `Ready`, and one
/// Normal event for the transition.
#[tokio::test]
async fn the_greeting_is_ready_and_its_event_is_normal() -> Result<(), Box<dyn std::error::Error>> {
    use kubeward_testing::{EventMatch, wait_for_event};
    let server = ApiServer::start().await?;
    server.install_crd(&Greeting::crd())?;
    let client = server.client()?;
    tokio::spawn(Greeter.controller(client.clone()).run());
    let greetings = Api::<Greeting>::namespaced(client.clone(), "default");
    let ada = Greeting::new("ada", GreetingSpec { name: "Ada".into() });
    greetings.create(&Default::default(), &ada).await?;
    let within = std::time::Duration::from_secs(10);
    let ready = ConditionMatch::new("Ready").status("True");
    let stored = wait_for_condition(&greetings, "ada", &ready, within).await?;
    let status = stored.status.expect("a status");
    assert_eq!(status.observed_generation, Some(1));
    let greeted = status.conditions.iter().find(|c| c.type_ == "Greeted");
    assert_eq!(greeted.map(|c| c.message.as_str()), Some("hello, Ada"));
    let hello = EventMatch::regarding("ada")
        .reason("SaidHello")
        .type_("Normal");
    wait_for_event(&client, "default", &hello, within).await?;
    Ok(())
}
