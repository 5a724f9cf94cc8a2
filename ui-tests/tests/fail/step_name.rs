#[kubeward::step("Render Manifest")]
fn render() {}

#[kubeward::step("render", krate = "::kubeward")]
fn other() {}

#[kubeward::step(render)]
fn unquoted() {}

fn main() {}
