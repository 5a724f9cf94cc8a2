#[kubeward::condition]
#[transitions(
    Applying -> Applied,
    Applied -> Applying,
    Applying -> Applied,
)]
pub enum UpToDate {
    #[reason(Unknown)]
    Applying,
    #[reason(True)]
    Applied,
    #[reason(True)]
    Applied,
}

fn main() {}
