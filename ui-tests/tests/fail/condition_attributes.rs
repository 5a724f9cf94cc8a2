// Malformed declarations: every one reported, at its token.
#[kubeward::condition(typ = "UpToDate")]
#[transitions(Applying -> Applied | GateAndFailure)]
pub enum UpToDate {
    #[reason(Maybe)]
    Applying,
    #[reason(True, event = Loud)]
    Applied,
    Forgotten,
    #[reason(event = Normal)]
    NoStatus,
    #[reason(False)]
    WithData(String),
    #[reason(False, gate, event = Warning)]
    GateAndFailure,
}

#[kubeward::condition]
pub struct NotAnEnum;

fn main() {}
