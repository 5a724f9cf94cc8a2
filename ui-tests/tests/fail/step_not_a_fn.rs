#[kubeward::step("render")]
struct Manifest;

trait Deploy {
    #[kubeward::step("deploy")]
    fn deploy(&self);
}

fn main() {}
