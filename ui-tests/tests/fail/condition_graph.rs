// Every mistake in one declaration is reported at once, each at its token.
#[kubeward::condition(type = "UpToDate")]
#[transitions(
    Applying -> Applied | Aplied,
    Applied -> Applying | Missing,
    Applying -> Applied,
)]
pub enum UpToDate {
    #[reason(Unknown)]
    Applying,
    #[reason(True)]
    Applied,
    #[reason(False)]
    Orphan,
}

fn main() {}
